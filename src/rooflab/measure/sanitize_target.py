"""The process compute-sanitizer watches (rooflab.measure.sanitize): one kernel's checks at a small
odd shape, one timed launch, and one result line on standard output.

    python -m rooflab.measure.sanitize_target SPEC.json
"""

from __future__ import annotations

import json
import sys


def _rung(spec: dict):
    from rooflab import rungs  # noqa: PLC0415
    from rooflab.targets import Callable, CudaKernel, load_callable  # noqa: PLC0415

    if spec["kind"] == "rung":
        return rungs.get(spec["name"]), None
    if spec["kind"] == "cuda":
        grid = tuple(spec["grid"]) if isinstance(spec["grid"], list) else spec["grid"]
        target = CudaKernel(spec["path"], spec["kernel"], block=spec["block"], grid=grid,
                            options=tuple(spec["options"]), shared_mem=spec["shared_mem"], label=spec["name"])
    else:
        target = Callable(load_callable(spec["callable"]), name=spec["name"], framework=spec["framework"],
                          precision=spec["precision"], import_path=spec["callable"])
    return (target.rung("gemm") if spec["op"] == "gemm" else None), target


def _op(spec: dict):
    if spec["op"] == "custom":
        from rooflab.targets import load_callable  # noqa: PLC0415

        return load_callable(f"{spec['op_module']}:OP")
    from rooflab.ops.stream import stream  # noqa: PLC0415

    return stream(spec["expr"], spec["flops_per_element"])


def run(spec: dict) -> dict:
    from rooflab.cuda.device import detect  # noqa: PLC0415

    dev = detect()
    rung, target = _rung(spec)
    if spec["op"] == "gemm":
        from rooflab.measure.gemm import GemmConfig  # noqa: PLC0415
        from rooflab.measure.gemm import run as run_gemm  # noqa: PLC0415

        m, n, k = spec["shape"]
        cfg = GemmConfig(m=m, n=n, k=k, reps=1, check_n=spec["check_n"], kernels=[rung.name], replicas=2, seed=1)
        rec = run_gemm(cfg, dev, extra=[rung] if spec["kind"] != "rung" else None)["rungs"][0]
    else:
        from rooflab.measure import bench  # noqa: PLC0415

        rec = bench.run([target], _op(spec), tuple(spec["shape"]), dev, reps=1, seed=1)["rows"][0]
    return {"kernel": spec["name"], "passed": rec["passed"], "skipped": rec.get("skipped"), "error": rec.get("error")}


def main(argv: list[str] | None = None) -> int:
    from rooflab.measure.sanitize import MARK  # noqa: PLC0415

    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(open(args[0]).read())
    sys.stdout.write(MARK + json.dumps(run(spec)) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
