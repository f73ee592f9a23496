"""Write rooflab's tune cache ($ROOFLAB_CACHE/tune.json) so that each named kernel is its rung's winner on
this GPU: a way to run a non-default variant through every rooflab command (the sanitizers, ncu's
profile target) without a search. Usage: python3 scripts/dev/pin_variant.py KERNEL [KERNEL ...]"""

import datetime as dt
import json
import sys

from rooflab import results, rungs
from rooflab.cuda.device import detect
from rooflab.measure import tune


def main(kernels: list[str]) -> int:
    key = tune.device_key(detect())
    data = tune._load()
    for kernel in kernels:
        found = [(r, v) for r in rungs.by_name().values() for v in r.variants if v.kernel == kernel]
        if not found:
            print(f"pin_variant: no rung has a variant {kernel}", file=sys.stderr)
            return 2
        rung, v = found[0]
        data.setdefault(key, {})[rung.name] = {"winner": v.label, "tried": 0, "n": 0, "times_ms": {},
                                              "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
        print(f"pinned {rung.name}: {v.label}")
    tune.cache_path().parent.mkdir(parents=True, exist_ok=True)
    results.write_atomic(tune.cache_path(), json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
