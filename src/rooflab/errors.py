"""The errors rooflab raises. The CLI turns each into one line and a non-zero exit."""


class RooflabError(Exception):
    """Base class: a message fit to show a user as it is."""

    exit_code = 1


class UsageError(RooflabError):
    """Bad input from the user (a size, a kernel name, a file)."""

    exit_code = 2


class NoGPUError(RooflabError):
    """No usable NVIDIA GPU, driver or CuPy here."""

    exit_code = 3


class KernelError(RooflabError):
    """A CUDA call failed; the message names the kernel, the call and the CUDA error string."""

    def __init__(self, kernel: str, call: str, detail: str):
        self.kernel, self.call, self.detail = kernel, call, detail
        super().__init__(f"{kernel}: {call} failed: {detail}")


class CallableError(KernelError):
    """A user's Python callable raised: that kernel FAILED (the exception is the user's, not rooflab's).
    The message names the callable, the exception's last line and, where it is plain, the likely fix."""

    def __init__(self, kernel: str, exc: BaseException, hint: str = ""):
        lines = [ln.strip() for ln in str(exc).strip().splitlines() if ln.strip()]
        detail = f"{type(exc).__name__}: {lines[-1]}" if lines else type(exc).__name__
        self.kernel, self.call, self.detail = kernel, "the Python callable", detail + (f" ({hint})" if hint else "")
        RooflabError.__init__(self, f"{kernel} raised {self.detail}")


class ToolError(RooflabError):
    """An external tool (ncu, nvcc) is missing or refused."""

    exit_code = 4


class CompileError(UsageError):
    """A kernel file that NVRTC refused; `log` holds the compiler's lines."""

    def __init__(self, source: str, log: str):
        self.source, self.log = source, log
        errors = sum(1 for ln in log.splitlines() if ": error" in ln)
        super().__init__(f"{source} does not compile ({errors or 'see the'} compiler error"
                         f"{'s' if errors != 1 else ''} above)")


class OutputError(RooflabError):
    """An output file could not be written; the message says where the results went instead."""

    exit_code = 1


class TraceError(RooflabError):
    """The program `rooflab trace` runs failed to give a trace; each cause has its own exit code."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


TRACE_NOT_FOUND = 127  # the command does not exist (the shell's convention)
TRACE_PROGRAM_FAILED = 6  # it ran and exited non-zero
TRACE_NO_KERNELS = 7  # it ran and launched no GPU kernel
TRACE_OVER_BUDGET = 124  # it ran past the time budget (timeout's convention)
