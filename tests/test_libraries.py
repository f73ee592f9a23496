"""measure/libraries.py: a library rung's record names its library; the registry holds the call,
and the results document records the call's name as the recorded H200 runs have it."""

from __future__ import annotations

import json
from pathlib import Path

from rooflab import rungs
from rooflab.cuda import cublas
from rooflab.measure import gemm, libraries

DATA = Path(__file__).parent / "data"


def test_cublas_is_called_by_the_rungs_precision_and_recorded_by_name(monkeypatch):
    calls = []
    for name in ("sgemm", "gemm_tf32", "gemm_bf16"):
        monkeypatch.setitem(libraries._CUBLAS, {"sgemm": "fp32", "gemm_tf32": "tf32", "gemm_bf16": "bf16"}[name],
                            _recording(getattr(cublas, name), calls))
    recorded = json.loads((DATA / "h200_report_levels.json").read_text())
    names = {r["kernel"]: r["launch"]["library"] for r in recorded["gemm"]["rungs"] if r["kernel"].startswith("cublas")}
    for rung_name, fn in (("cublas", "sgemm"), ("cublas_tf32", "gemm_tf32"), ("cublas_bf16", "gemm_bf16")):
        launch, info = gemm.prepare(rungs.get(rung_name), 64, 32, 16)
        assert launch == ("launch", fn, 64, 32, 16)
        assert info == {"library": names[rung_name]} == {"library": f"rooflab.cuda.cublas:{fn}"}
    assert len(calls) == 3


def _recording(fn, calls):
    def wrapper(m, n, k):
        calls.append(fn.__name__)
        return ("launch", fn.__name__, m, n, k)
    wrapper.__module__, wrapper.__name__ = fn.__module__, fn.__name__
    return wrapper


def test_a_users_python_callable_is_called_as_it_is():
    seen = []
    rung = rungs.Rung(name="mine", title="mine", stage="user", explain="", loads_per_fma=None,
                      launcher=lambda m, n, k: seen.append((m, n, k)) or "launch")
    assert gemm.prepare(rung, 5, 6, 7) == ("launch", {"library": "mine"}) and seen == [(5, 6, 7)]
