"""rooflab's Python API: put your own kernel through the harness the built-in rungs use.

    import rooflab
    k = rooflab.CudaKernel("my_sgemm.cu", "my_sgemm", block=(16, 16))
    res = rooflab.bench(k, op="gemm", m=4096, n=4096, k=4096, vs=["cublas", "tiled32"])
    res.table()       # a rich table in a terminal, HTML in Jupyter
    res.roofline()    # a matplotlib Figure (shows inline in Jupyter)
    res.to_json(); res.to_pandas()

A thin layer over the one pipeline (rooflab.lab): the CLI's `rooflab bench` calls the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from rooflab import lab, results
from rooflab.errors import UsageError
from rooflab.ops.record import Op
from rooflab.targets import Callable, CudaKernel

DEFAULT_VS = ("cublas",)


def _rung_for(kernel):
    if isinstance(kernel, (CudaKernel, Callable)):
        return kernel.rung("gemm")
    raise UsageError(f"bench takes a rooflab.CudaKernel or rooflab.Callable, got {type(kernel).__name__}")


def sections(kernel, *, op: str | Op = "gemm", m: int | None = None, n: int = 4096, k: int | None = None,
             vs=DEFAULT_VS, reps: int = 20, check_n: int = 512, profile: bool = False, timing: str = "auto",
             seed: int | None = None, expr: str = "x", flops_per_element: float = 0.0) -> dict:
    """The pipeline sections for one bench run (validated here, before any GPU is looked for)."""
    if isinstance(op, str) and op == "gemm":
        rung = _rung_for(kernel)
        m, k = (n if m is None else m), (n if k is None else k)
        names = [rung.name, *[v for v in vs if v != rung.name]]
        out = {"gemm": lab.gemm_section([rung], m=m, n=n, k=k, reps=reps, check_n=check_n, kernels=names,
                                        seed=seed, timing=timing)}
        if profile:
            out["profile"] = lab.profile_section(with_gemm=False, m=m, n=n, k=k, size=0, extra=[rung], labels=names)
        return out
    if isinstance(op, str) and op == "stream":
        from rooflab.ops.stream import stream  # noqa: PLC0415

        op = stream(expr, flops_per_element)
    if not isinstance(op, Op):
        raise UsageError(f"op must be 'gemm', 'stream' or a rooflab.Op, got {op!r}")
    if not isinstance(kernel, (CudaKernel, Callable)):
        raise UsageError(f"bench takes a rooflab.CudaKernel or rooflab.Callable, got {type(kernel).__name__}")
    if n < 1:
        raise UsageError(f"n must be a positive integer, got {n}")
    from rooflab.measure import bench as harness  # noqa: PLC0415

    out = {"bench": lambda dev, say: harness.run([kernel], op, (n,), dev, reps=reps, seed=seed, timing=timing,
                                                 progress=say)}
    if profile:  # the op's kernel at the size it was timed
        out["profile"] = lab.op_profile_section(kernel, op.name, expr, flops_per_element, (n,))
    return out


def bench(kernel, *, op: str | Op = "gemm", progress=None, **kw) -> Result:
    """Check, time (and with profile=True, profile) a kernel; returns a Result.

    op="gemm": C = A·B at m×n×k (m and k default to n), beside the built-in rungs named in `vs`.
    op="stream": y = f(x) over n floats, f given as expr (numpy syntax in x, e.g. "2*x").
    op=rooflab.Op(...): your own operation (a reduction, a softmax...).
    """
    doc = lab.measure(sections(kernel, op=op, **kw), progress=progress)
    return Result(doc)


@dataclass
class Result:
    """One bench run: its results document (the same JSON `rooflab report` writes)."""

    doc: dict

    @property
    def passed(self) -> bool:
        recs = (self.doc.get("gemm") or {}).get("rungs", []) + (self.doc.get("bench") or {}).get("rows", [])
        return all(r.get("passed") or r.get("skipped") for r in recs)

    def tables(self):
        from rooflab.report.bench import tables  # noqa: PLC0415

        return tables(self.doc)

    def table(self):
        """The results table: rich in a terminal; in Jupyter the returned object shows as HTML."""
        from rooflab.report.bench import RichTables  # noqa: PLC0415

        return RichTables(self.tables())

    def roofline(self):
        """A matplotlib Figure with every measured kernel on this device's roofline."""
        from rooflab.model import placement  # noqa: PLC0415
        from rooflab.report.picture import plot  # noqa: PLC0415

        return plot(placement.roofline(self.doc))

    def to_json(self) -> str:
        return results.dumps(self.doc)

    def to_pandas(self):
        """One row per kernel (pandas is optional: imported here only)."""
        import pandas as pd  # noqa: PLC0415

        t = self.tables()[0]
        return pd.DataFrame(t.rows, columns=t.columns)
