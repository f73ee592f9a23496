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
from rooflab.targets import Callable, CudaKernel, grid_function

DEFAULT_VS = ("cublas",)


def _rung_for(kernel):
    if isinstance(kernel, (CudaKernel, Callable)):
        return kernel.rung("gemm")
    raise UsageError(f"bench takes a rooflab.CudaKernel or rooflab.Callable, got {type(kernel).__name__}")


def sections(kernel, *, op: str | Op = "gemm", m: int | None = None, n: int = 4096, k: int | None = None,
             vs=None, reps: int = 20, check_n: int | None = None, profile: bool = False, timing: str = "auto",
             seed: int | None = None, expr: str = "x", flops_per_element: float = 0.0) -> dict:
    """The pipeline sections for one bench run (validated here, before any GPU is looked for).
    m, k, vs and check_n belong to op="gemm"; another op refuses them rather than ignore them. profile
    profiles the GEMM kernels that passed, or a stream op's kernel, at the size that was timed."""
    if isinstance(op, str) and op == "gemm":
        rung = _rung_for(kernel)
        _compiles(kernel)
        m, k = (n if m is None else m), (n if k is None else k)
        vs = DEFAULT_VS if vs is None else vs
        names = [rung.name, *[v for v in vs if v != rung.name]]
        gemm = lab.gemm_section([rung], m=m, n=n, k=k, reps=reps, check_n=512 if check_n is None else check_n,
                                kernels=names, seed=seed, timing=timing)
        if not profile:
            return {"gemm": gemm}
        gemm, prof = lab.gemm_then_profile(gemm, m=m, n=n, k=k, size=0, extra=[rung])
        return {"gemm": gemm, "profile": prof}
    given = [name for name, v in (("m", m), ("k", k), ("vs", vs), ("check_n", check_n)) if v is not None]
    if given:
        raise UsageError(f"{', '.join(given)} apply to op='gemm' only; this op would ignore "
                         f"{'them' if len(given) > 1 else 'it'}")
    if isinstance(op, str) and op == "stream":
        from rooflab.ops.stream import stream  # noqa: PLC0415

        op = stream(expr, flops_per_element)
    if not isinstance(op, Op):
        raise UsageError(f"op must be 'gemm', 'stream' or a rooflab.Op, got {op!r}")
    if not isinstance(kernel, (CudaKernel, Callable)):
        raise UsageError(f"bench takes a rooflab.CudaKernel or rooflab.Callable, got {type(kernel).__name__}")
    if n < 1:
        raise UsageError(f"n must be a positive integer, got {n}")
    if isinstance(kernel, CudaKernel):  # a grid expression in names this op does not have fails now
        grid_function(kernel.grid, kernel.block_for(op.name), op.name)
    _compiles(kernel)
    from rooflab.measure import bench as harness  # noqa: PLC0415

    out = {"bench": lambda dev, say: harness.run([kernel], op, (n,), dev, reps=reps, seed=seed, timing=timing,
                                                 progress=say)}
    if profile:  # the op's kernel at the size it was timed
        out["profile"] = lab.op_profile_section(kernel, op.name, expr, flops_per_element, (n,))
    return out


def _compiles(kernel) -> None:
    """A .cu kernel that does not compile is bad input: shown before a GPU is looked for where NVRTC
    is here without one (with a GPU the run compiles it first thing)."""
    if isinstance(kernel, CudaKernel):
        from rooflab.cuda.compile import check_compiles  # noqa: PLC0415

        check_compiles(kernel.path, kernel.name, tuple(kernel.options))


def bench(kernel, *, op: str | Op = "gemm", progress=None, **kw) -> Result:
    """Check, time (and with profile=True, profile) a kernel; returns a Result.

    op="gemm": C = A·B at m×n×k (m and k default to n), beside the built-in rungs named in `vs`.
    op="stream": y = f(x) over n floats, f given as expr (numpy syntax in x, e.g. "2*x").
    op=rooflab.Op(...): your own operation (a reduction, a softmax...).
    """
    doc = lab.measure(sections(kernel, op=op, **kw), progress=progress)
    return Result(doc)


class _Tables:
    """What a results object shows: its tables (rich in a terminal, HTML in Jupyter), its
    document as JSON, and its first table as a pandas DataFrame."""

    doc: dict

    def tables(self):
        raise NotImplementedError

    def table(self):
        """The results table: rich in a terminal; in Jupyter the returned object shows as HTML."""
        from rooflab.report.bench import RichTables  # noqa: PLC0415

        return RichTables(self.tables())

    def to_json(self) -> str:
        return results.dumps(self.doc)

    def to_pandas(self):
        """One row per kernel (pandas is optional: imported here only)."""
        import pandas as pd  # noqa: PLC0415

        t = self.tables()[0]
        return pd.DataFrame(t.rows, columns=t.columns)


@dataclass
class Result(_Tables):
    """One bench run: its results document (the same JSON `rooflab report` writes)."""

    doc: dict

    @property
    def warnings(self) -> list[str]:
        """What the run noticed and went on with (e.g. a launch that writes elements more than once)."""
        rows = (self.doc.get("bench") or {}).get("rows", [])
        return [f"{r['kernel']}: {w}" for r in rows for w in r.get("warnings", [])]

    def _records(self) -> list[dict]:
        return (self.doc.get("gemm") or {}).get("rungs", []) + (self.doc.get("bench") or {}).get("rows", [])

    @property
    def passed(self) -> bool:
        return all(r.get("passed") or r.get("skipped") for r in self._records())

    @property
    def failed(self) -> list[str]:
        """The kernels that FAILED a check or raised."""
        return [r["kernel"] for r in self._records() if not r.get("passed") and not r.get("skipped")]

    def tables(self):
        from rooflab.report.bench import tables  # noqa: PLC0415

        return tables(self.doc)

    def roofline(self):
        """A matplotlib Figure with every measured kernel on this device's roofline."""
        from rooflab.model import placement  # noqa: PLC0415
        from rooflab.report.picture import plot  # noqa: PLC0415

        return plot(placement.roofline(self.doc))


class Trace(_Tables):
    """Every kernel the block under `with rooflab.trace() as t:` launched, grouped by kernel and
    launch shape and ranked by time. In-process traces carry times only; `rooflab trace -- python
    script.py` also profiles the top groups with Nsight Compute and places them on the roofline."""

    def __init__(self):
        self.doc: dict = {}
        self._collector = None

    def __enter__(self) -> Trace:
        from rooflab.measure.trace import TorchCollector, torch_reason  # noqa: PLC0415

        why = torch_reason()
        if why:
            raise UsageError(f"rooflab.trace() collects through torch.profiler: {why}")
        self._collector = TorchCollector()
        self._collector.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        from rooflab.model import trace as model  # noqa: PLC0415

        self._collector.__exit__(*exc)
        groups = model.group(self._collector.launches)
        self.doc = results.new_document(results.command_line(), None)
        self.doc["trace"] = model.section(groups, [], command=None, levels=[], roofs=[],
                                          ceilings_source="none (an in-process trace: times only)",
                                          collector="torch.profiler (CUPTI), in process",
                                          profiler_note="in-process: no Nsight Compute counters")

    def tables(self):
        from rooflab.report.trace import ranked_table  # noqa: PLC0415

        return [ranked_table(self.doc)]

    def roofline(self, path: str):
        from rooflab.report.trace import plot  # noqa: PLC0415

        plot(self.doc, path)


def trace() -> Trace:
    """`with rooflab.trace() as t: step()` then `t.table()`, `t.to_pandas()`, `t.to_json()`."""
    return Trace()
