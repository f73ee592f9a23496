"""rooflab's command line with one step made slow, for the signal tests (tests/test_hardening.py).

SLOW_AT=write: the report is built (every file drawn and written into the build folder), then
it waits before moving it in. SLOW_AT=measure: the run has "measured" the device and the FMA
peak (the recorded H200 run, saved to results.partial.json as the pipeline does) and waits in
the next step. Either way it writes "SLOW" to stderr first, so the test signals it at a known
point, and sleeps; SLOW_TWICE=1 sleeps again in the cleanup that follows the first signal.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from rooflab import cli, lab, report_folder, results  # noqa: E402

H200 = Path(__file__).parent / "data" / "h200_results.json"


def _wait():
    sys.stderr.write("SLOW\n")
    sys.stderr.flush()
    time.sleep(60)


if os.environ.get("SLOW_AT") == "write":
    real = lab.write_outputs

    def slow_write(doc, folder):
        names = real(doc, folder)
        _wait()
        return names

    lab.write_outputs = slow_write

elif os.environ.get("SLOW_AT") == "measure":
    def slow_run(cfg, *, on_step=None, progress=None, doc=None):
        recorded = results.upgrade(json.loads(H200.read_text(encoding="utf-8")))
        doc.update({k: recorded[k] for k in ("format", "rooflab_version", "created", "command", "host",
                                             "device", "flops")})
        doc["report"] = {"finished_steps": ["device", "flops"]}
        results.write_atomic(Path(cfg.out_dir) / lab.PARTIAL, results.dumps(doc))
        on_step("bandwidth")
        _wait()

    lab.run = slow_run

if os.environ.get("SLOW_TWICE"):
    real_save = report_folder.save_partial

    def slow_save(folder, doc):
        sys.stderr.write("SLOW AGAIN\n")
        sys.stderr.flush()
        time.sleep(1.5)
        return real_save(folder, doc)

    report_folder.save_partial = slow_save

cli.main()
