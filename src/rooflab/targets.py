"""A user's kernel, as rooflab takes it in: a CUDA C file (CudaKernel) or any Python callable
(Callable: a Triton kernel's wrapper, a CuPy or torch function). Pure records: the harness
(rooflab.measure) compiles and launches them."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable as _Fn
from dataclasses import dataclass, field
from pathlib import Path

from rooflab.errors import CallableError, UsageError
from rooflab.rungs.record import Rung, cdiv

Geometry = tuple[int, ...] | _Fn | str | None


def _triple(t) -> tuple[int, int, int]:
    t = tuple(int(x) for x in t)
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise UsageError(f"a block or grid needs 1 to 3 positive sizes, got {t}")
    return (t + (1, 1))[:3]


GRID_NAMES = {"gemm": {"m", "n", "k"}, "stream": {"n"}}
DEFAULT_BLOCK = {"gemm": (16, 16, 1), "stream": (256, 1, 1)}


def grid_function(grid: Geometry, block: tuple[int, int, int], op: str) -> _Fn:
    """grid(m, n, k) from a tuple, a function, an expression (in m, n, k and cdiv for gemm; in n, the
    element count, and cdiv for the other ops), or the default: one thread per output element (x over
    columns, y over rows for gemm; x over the n elements otherwise). Other ops call it as grid(1, n, 1)."""
    kind = "gemm" if op == "gemm" else "stream"
    if grid is None:
        if kind == "gemm":
            return lambda m, n, k: (cdiv(n, block[0]), cdiv(m, block[1]), 1)
        return lambda m, n, k: (cdiv(n, block[0]), 1, 1)
    if callable(grid):
        return lambda m, n, k: _triple(grid(m, n, k))
    if isinstance(grid, str):
        try:
            tree = ast.parse(f"({grid},)", mode="eval")
        except SyntaxError as exc:
            raise UsageError(f"--grid {grid!r} is not an expression ({exc.msg})") from None
        allowed = GRID_NAMES[kind] | {"cdiv"}
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        if names - allowed:
            what = "m, n, k" if kind == "gemm" else "n (the element count)"
            raise UsageError(f"--grid for --op {op} may use {what} and cdiv, not "
                             f"{', '.join(sorted(names - allowed))}")
        code = compile(tree, "<grid>", "eval")
        return lambda m, n, k: _triple(eval(code, {"__builtins__": {}}, {"m": m, "n": n, "k": k, "cdiv": cdiv}))  # noqa: S307
    fixed = _triple(grid)
    return lambda m, n, k: fixed


def coverage_warning(grid: tuple[int, ...], block: tuple[int, ...], count: int) -> str | None:
    """A launch of an elementwise op with more than a block's worth of threads beyond its elements
    writes some elements more than once (a 2-D block over a 1-D kernel): it runs, and is slow."""
    threads = 1
    for x in (*grid, *block):
        threads *= int(x)
    per_block = int(block[0]) * int(block[1]) * int(block[2])
    if threads <= count + per_block:
        return None
    return (f"the launch (grid {tuple(grid)}, block {tuple(block)}) has {threads / count:.3g} threads per element: "
            f"a one-thread-per-element kernel writes elements more than once; for --op stream give a 1-D "
            f"--block (e.g. 256) and a grid over n")


@dataclass
class CudaKernel:
    """A kernel in a .cu file, compiled at run time with NVRTC for the GPU found.

    For op="gemm" the kernel takes (const float* A, const float* B, float* C, int M, int N, int K),
    row-major; for op="stream" (const float* x, float* y, unsigned long long n), launched with a
    1-D block (256 unless given) and a grid over the n elements (a grid expression uses n).

        k = rooflab.CudaKernel("my_sgemm.cu", "my_sgemm", block=(16, 16),
                               grid=lambda m, n, k: (rooflab.cdiv(n, 16), rooflab.cdiv(m, 16)))
    """

    path: str
    name: str
    block: tuple[int, ...] | None = None  # None: (16, 16) for op="gemm", 256 for the other ops
    grid: Geometry = None  # tuple, function of (m, n, k), expression string, or None (one thread per output)
    options: tuple[str, ...] = ()
    shared_mem: int = 0
    title: str | None = None
    label: str | None = None  # the name in tables (default: the kernel's name)

    def __post_init__(self):
        p = Path(self.path).expanduser()
        if not p.is_file():
            raise UsageError(f"{self.path}: no such kernel file")
        self.path = str(p.resolve())
        self.block = None if self.block is None else _triple(self.block)

    def block_for(self, op: str) -> tuple[int, int, int]:
        return self.block or DEFAULT_BLOCK["gemm" if op == "gemm" else "stream"]

    def rung(self, op: str = "gemm") -> Rung:
        block = self.block_for(op)
        return Rung(name=self.label or self.name, title=self.title or f"{self.name} ({Path(self.path).name})",
                    stage="your kernel", explain=f"{self.name} from {self.path}.", loads_per_fma=None,
                    source=self.path, kernel=self.name, block=block,
                    grid=grid_function(self.grid, block, op), options=tuple(self.options),
                    shared_mem=self.shared_mem)


def _exported_stream(arrays) -> int | None:
    """The stream the arrays' producer has current, from the CUDA Array Interface (v3's "stream":
    None or 1/2 for the legacy and per-thread default streams, which torch's default stream already
    orders with), or None."""
    for a in arrays:
        ptr = (getattr(a, "__cuda_array_interface__", None) or {}).get("stream")
        if isinstance(ptr, int) and ptr > 2:
            return ptr
    return None


@dataclass
class Callable:
    """Any Python function that computes the op on the GPU: a Triton kernel's wrapper, a CuPy or
    torch function. It is called as fn(*inputs, out) and must write into out; with
    framework="torch" the arrays arrive as torch tensors sharing the same memory (no copies).

        def my_matmul(a, b, c):          # torch tensors
            torch.matmul(a, b, out=c)
        res = rooflab.bench(rooflab.Callable(my_matmul, framework="torch"), op="gemm", n=4096)
    """

    fn: _Fn
    name: str | None = None
    precision: str = "fp32"
    framework: str = "cupy"  # "cupy" or "torch"
    title: str | None = None
    import_path: str | None = None  # "module:function", so Nsight Compute's process can find it
    options: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.framework not in ("cupy", "torch"):
            raise UsageError(f"framework must be 'cupy' or 'torch', got {self.framework!r}")
        if not callable(self.fn):
            raise UsageError(f"{self.fn!r} is not callable")
        self.name = self.name or getattr(self.fn, "__name__", "callable")

    def wrap(self):
        """fn over CuPy arrays (converted to torch tensors without copies where asked). Whatever fn
        raises is the user's: it becomes a CallableError, which FAILS this kernel and no other."""
        torch = None
        if self.framework == "torch":
            import torch  # noqa: PLC0415

        def run(args):
            try:
                return self.fn(*args)
            except Exception as exc:
                raise CallableError(self.name, exc, self._hint(exc)) from exc

        def call(*arrays):
            if torch is None:
                return run(arrays)
            args = tuple(torch.as_tensor(a, device="cuda") for a in arrays)
            stream = _exported_stream(arrays)
            if stream is None:
                return run(args)
            # torch (and Triton, which launches on torch's current stream) on the harness's stream, so
            # its launches are the ones timed, captured into a graph and run as concurrent replicas
            with torch.cuda.stream(torch.cuda.ExternalStream(stream)):
                return run(args)

        return call

    def _hint(self, exc: Exception) -> str:
        """The likely fix, where the exception makes it plain."""
        text = str(exc)
        if self.framework == "cupy" and isinstance(exc, AttributeError) and (
                "ndarray" in text or any(w in text for w in ("data_ptr", "stride", "is_cuda", "element_size"))):
            return ("it was given CuPy arrays; a Triton or torch function needs torch tensors: "
                    "--framework torch (framework='torch' in Python)")
        return ""

    def rung(self, op: str = "gemm") -> Rung:
        call = self.wrap()

        def make(m, n, k):
            return lambda a, b, c: call(a, b, c)

        make.import_path = self.import_path  # for Nsight Compute's process (rooflab.measure.profiling)
        make.framework = self.framework

        try:
            where = inspect.getsourcefile(self.fn) or "?"
        except TypeError:
            where = "?"
        return Rung(name=self.name, title=self.title or f"{self.name} (Python callable)", stage="your kernel",
                    explain=f"{self.name} from {where}.", loads_per_fma=None, launcher=make,
                    precision=self.precision, block=(0, 0, 0))


def load_callable(path: str):
    """'module:function' or 'path/to/file.py:function' -> the function."""
    import importlib  # noqa: PLC0415
    import importlib.util  # noqa: PLC0415

    module, sep, name = path.rpartition(":")
    if not sep or not module or not name:
        raise UsageError(f"{path!r}: give a Python callable as module:function or file.py:function")
    try:
        if module.endswith(".py"):
            file = Path(module).expanduser().resolve()
            if not file.is_file():
                raise UsageError(f"{module}: no such file")
            spec = importlib.util.spec_from_file_location(file.stem, file)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
        else:
            mod = importlib.import_module(module)
    except UsageError:
        raise
    except Exception as exc:  # the user's module failed to import: their error, one line
        raise UsageError(f"cannot import {module}: {exc.__class__.__name__}: {exc}") from None
    fn = getattr(mod, name, None)
    if fn is None:
        raise UsageError(f"{module} has no {name}")
    return fn
