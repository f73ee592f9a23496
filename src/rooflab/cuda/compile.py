"""Load a .cu file shipped in the package, compile it with NVRTC (through CuPy) for
the present device, and launch its kernels with checked errors."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from rooflab.cuda.gpu import cuda_call, cupy
from rooflab.errors import CompileError, KernelError, UsageError


def read_source(relpath: str) -> str:
    """Text of a kernel file: inside the package ('rungs/naive.cu') or an absolute path (a user's kernel)."""
    path = Path(relpath)
    if path.is_absolute():
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot read kernel source {relpath}: {exc.strerror or exc}") from None
    ref = resources.files("rooflab").joinpath(relpath)
    if not ref.is_file():
        raise UsageError(f"kernel source {relpath} is not in the package")
    return ref.read_text(encoding="utf-8")


def include_dir() -> str:
    """The folder of the headers the package's kernels include (include/ptx.cuh)."""
    return str(resources.files("rooflab").joinpath("include"))


@functools.cache
def _module(relpath: str, name_expressions: tuple[str, ...], options: tuple[str, ...]):
    cp = cupy()
    code = read_source(relpath)
    includes = () if Path(relpath).is_absolute() else (f"-I{include_dir()}",)
    try:
        with cuda_call(relpath, "NVRTC compile"):
            mod = cp.RawModule(code=code, options=("-std=c++17", *includes, *options),
                               name_expressions=name_expressions or None)
            mod.compile()
    except KernelError as exc:
        if Path(relpath).is_absolute():  # a user's kernel: their compile error is bad input
            get_log = getattr(exc.__cause__, "get_message", None)  # CuPy's CompileException: the whole log
            raise CompileError(relpath, str(get_log() if get_log else exc.detail)) from None
        raise
    return mod


@dataclass
class Kernel:
    """A compiled kernel; every launch goes through `launch`, which checks it."""

    label: str
    fn: object

    def launch(self, grid, block, args, shared_mem: int = 0) -> None:
        with cuda_call(self.label, "cuLaunchKernel"):
            self.fn(tuple(grid), tuple(block), tuple(args), shared_mem=shared_mem)

    def allow_shared(self, nbytes: int) -> None:
        """Dynamic shared memory above 48 KB must be opted into per kernel."""
        if nbytes > 48 * 1024:
            with cuda_call(self.label, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)"):
                self.fn.max_dynamic_shared_size_bytes = nbytes

    def resources(self) -> dict:
        """Registers, static shared memory and local (spill) bytes per thread."""
        attrs = self.fn.attributes
        return {
            "registers": attrs.get("num_regs"),
            "shared_bytes": attrs.get("shared_size_bytes"),
            "local_bytes": attrs.get("local_size_bytes"),
            "max_threads_per_block": attrs.get("max_threads_per_block"),
        }


CHECK_ARCH = "90"  # NVRTC alone, no GPU to ask: the newest architecture every supported CUDA 12 knows


def _nvrtc_compile(code: str, options: tuple[str, ...], path: str, name_expressions) -> None:
    """Compile to device code with CuPy's NVRTC wrapper and no device; raises CompileError with the
    log. Anything else (no CuPy, an NVRTC that cannot load) raises LookupError: nothing to check with."""
    try:
        from cupy.cuda import compiler  # noqa: PLC0415
    except Exception as exc:
        raise LookupError(str(exc)) from None
    try:  # the file name only: CuPy writes the source under that name in a folder of its own
        compiler.compile_using_nvrtc(code, options, arch=CHECK_ARCH, filename=Path(path).name,
                                     name_expressions=name_expressions)
    except compiler.CompileException as exc:
        log = str(exc.get_message())
        if "cannot open source file" in log:  # a header the GPU run's include path may hold
            raise LookupError(log) from None
        raise CompileError(path, log) from None
    except Exception as exc:  # an NVRTC library that does not load, an older CuPy's signature
        raise LookupError(str(exc)) from None


def check_compiles(path: str, name: str, options: tuple[str, ...] = ()) -> None:
    """Where no GPU is usable but NVRTC is, compile a user's kernel file anyway so that its compiler
    errors (bad input, exit 2) come before "no GPU" (exit 3). With a GPU, or with nothing to compile
    with, this does nothing: the run compiles it first thing."""
    from rooflab.cuda.gpu import gpu_available  # noqa: PLC0415

    if any(o.startswith(("-arch", "--gpu-architecture")) for o in options) or gpu_available():
        return
    code = read_source(path)
    try:
        _nvrtc_compile(code, ("-std=c++17", *options), path, (name,) if "<" in name else None)
    except LookupError:
        return


def get_kernel(relpath: str, name: str, options: tuple[str, ...] = (), *, label: str | None = None) -> Kernel:
    """Compile (cached per process; CuPy also caches on disk) and return one kernel.

    A template instance such as 'mm_tiled<32>' is compiled through name_expressions.
    """
    templated = "<" in name
    mod = _module(relpath, (name,) if templated else (), tuple(options))
    label = label or name
    with cuda_call(label, "cuModuleGetFunction"):
        fn = mod.get_function(name)
    return Kernel(label, fn)
