"""`rooflab bench` and rooflab.bench() with no GPU: the harness's host code against a fake CuPy
(tests/fake_cupy.py), the command line in-process with the GPU faked, and the options that a
target or an op would ignore refused before anything runs."""

from __future__ import annotations

import sys
import textwrap
import types

import numpy as np
import pytest

import fake_cupy
from rooflab import api, cli as cli_mod
from rooflab.errors import CallableError, CompileError, UsageError
from rooflab.ops.stream import stream
from rooflab.targets import Callable, CudaKernel, grid_function

KERNELS = __import__("pathlib").Path(__file__).parent / "data" / "kernels"


@pytest.fixture
def gpu(monkeypatch):
    """A fake GPU under the whole pipeline: CuPy, device detection, kernel compilation."""
    cp = fake_cupy.install(monkeypatch)
    import rooflab.cuda.device as device_mod
    import rooflab.measure.bench as bench_mod

    monkeypatch.setattr(device_mod, "detect", lambda *a, **k: fake_cupy.device())
    launches = []

    class Kernel:
        def __init__(self, name):
            self.name = name

        def allow_shared(self, nbytes):
            pass

        def resources(self):
            return {"registers": 16}

        def launch(self, grid, block, args, shared_mem=0):
            launches.append((tuple(grid), tuple(block)))
            x, y, count = args
            y[: int(count)] = 2 * x[: int(count)]

    monkeypatch.setattr(bench_mod, "get_kernel", lambda path, name, **kw: Kernel(name))
    cp.launches = launches
    return cp


def run_cli(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["rooflab", *args])
    code = 0
    try:
        cli_mod.main()
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def user_module(tmp_path, body: str, name="mine"):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


# ---------------------------------------------------------------- a callable that raises (its kernel FAILS)

def test_a_raising_callable_fails_its_kernel_and_the_others_are_measured(gpu):
    from rooflab.measure import bench

    def boom(x, y):
        raise ValueError("the tile size must divide n\nlast line: bad tile 48")

    def twice(x, y):
        y[...] = 2 * x

    sec = bench.run([Callable(boom), Callable(twice)], stream("2*x", 1), (1000,), fake_cupy.device(), reps=2, seed=1)
    bad, good = sec["rows"]
    assert not bad["passed"] and bad["timing"] is None
    assert bad["error"] == "boom raised ValueError: last line: bad tile 48"
    assert good["passed"] and good["timing"]["median_ms"] > 0


def test_a_raising_callable_in_the_gemm_harness_fails_only_itself(gpu):
    from rooflab.measure.gemm import GemmConfig, run

    def boom(a, b, c):
        raise RuntimeError("no")

    def fine(a, b, c):
        c[...] = a @ b

    extra = [Callable(boom).rung(), Callable(fine).rung()]
    sec = run(GemmConfig(m=64, n=64, k=64, reps=2, kernels=["boom", "fine"], replicas=1, seed=3),
              fake_cupy.device(), extra=extra)
    bad, good = sec["rungs"]
    assert bad["error"] == "boom raised RuntimeError: no" and not bad["passed"]
    assert good["passed"], good["checks"]


def test_cupy_arrays_handed_to_a_torch_function_name_the_fix():
    def triton_wrapper(a, b, c):
        return a.data_ptr()

    call = Callable(triton_wrapper).wrap()
    with pytest.raises(CallableError) as exc:
        call(np.zeros(2), np.zeros(2), np.zeros(2))
    msg = str(exc.value)
    assert msg.startswith("triton_wrapper raised AttributeError: ")
    assert "data_ptr" in msg and "--framework torch" in msg


def test_the_cli_reports_a_raising_callable_as_failed_exit_1(gpu, monkeypatch, capsys, tmp_path):
    mod = user_module(tmp_path, """
        def scale(x, y):
            raise KeyError("tile")
    """)
    code, out, err = run_cli(monkeypatch, capsys, "bench", f"{mod}:scale", "--op", "stream", "--n", "1000")
    assert code == 1
    assert "FAILED: scale raised KeyError: 'tile'" in " ".join(out.split())
    last = err.strip().splitlines()[-1]
    assert last.startswith("rooflab: error: scale FAILED") and "internal error" not in err
    assert "Traceback" not in err


# ---------------------------------------------------------------- stream ops: n, 1-D blocks, overlapping launches

def test_a_stream_grid_expression_sees_the_element_count_as_n():
    grid = grid_function("cdiv(n,256)", (256, 1, 1), "stream")
    assert grid(1, 10_000, 1) == (40, 1, 1)
    with pytest.raises(UsageError, match="n .the element count."):
        grid_function("cdiv(m,256)", (256, 1, 1), "stream")
    assert grid_function(None, (128, 1, 1), "stream")(1, 1000, 1) == (8, 1, 1)
    assert grid_function("cdiv(n,16),cdiv(m,16)", (16, 16, 1), "gemm")(32, 64, 8) == (4, 2, 1)


def test_the_readme_stream_example_launches_one_thread_per_element(gpu):
    from rooflab.measure import bench

    k = CudaKernel(str(KERNELS / "my_sgemm.cu"), "scale2")  # no block given
    rec = bench.run([k], stream("2*x", 1), (1 << 20,), fake_cupy.device(), reps=2, seed=1)["rows"][0]
    assert rec["passed"] and rec["launch"]["block"] == [256, 1, 1] and rec["launch"]["grid"] == [4096, 1, 1]
    assert rec["warnings"] == []
    k = CudaKernel(str(KERNELS / "my_sgemm.cu"), "scale2", grid="cdiv(n,256)", block=(256,))
    rec = bench.run([k], stream("2*x", 1), (1 << 20,), fake_cupy.device(), reps=2, seed=1)["rows"][0]
    assert rec["launch"]["grid"] == [4096, 1, 1]


def test_a_2d_block_over_a_stream_kernel_is_warned_about(gpu, monkeypatch, capsys):
    from rooflab.measure import bench

    k = CudaKernel(str(KERNELS / "my_sgemm.cu"), "scale2", block=(16, 16))
    rec = bench.run([k], stream("2*x", 1), (1 << 20,), fake_cupy.device(), reps=2, seed=1)["rows"][0]
    assert len(rec["warnings"]) == 1 and "16 threads per element" in rec["warnings"][0]
    code, out, err = run_cli(monkeypatch, capsys, "bench", str(KERNELS / "my_sgemm.cu"), "--kernel", "scale2",
                             "--op", "stream", "--n", "1M", "--block", "16,16", "--expr", "2*x")
    assert code == 0, out + err
    assert "warning: scale2: the launch (grid (65536, 1, 1), block (16, 16, 1)) has 16 threads per element" in err


# ---------------------------------------------------------------- options a target or an op would ignore

REFUSED = [
    (["--op", "stream", "--vs", "tiled32"], "--vs"),
    (["--op", "stream", "--m", "64"], "--m"),
    (["--op", "stream", "--k", "64"], "--k"),
    (["--op", "stream", "--check-n", "64"], "--check-n"),
    (["--framework", "torch"], "--framework"),
    (["--precision", "tf32"], "--precision"),
    (["--expr", "2*x"], "--expr"),
    (["--op-module", "x.py"], "--op-module"),
]


@pytest.mark.parametrize(("extra", "mention"), REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_options_a_cu_target_or_its_op_would_ignore_are_refused(extra, mention, monkeypatch, capsys):
    import rooflab.cuda.gpu

    monkeypatch.setattr(rooflab.cuda.gpu, "cupy", lambda: pytest.fail("a GPU was looked for"))
    code, out, err = run_cli(monkeypatch, capsys, "bench", str(KERNELS / "my_sgemm.cu"), "--kernel", "scale2", *extra)
    assert code == 2 and err.count("\n") == 1 and err.startswith("rooflab: error: ")
    assert f"{mention} has no effect" in err


@pytest.mark.parametrize("extra", [["--kernel", "matmul"], ["--block", "256"], ["--grid", "cdiv(n,4)"],
                                   ["--option", "-DX=1"], ["--shared-mem", "1024"]], ids=" ".join)
def test_kernel_options_for_a_python_target_are_refused(extra, monkeypatch, capsys, tmp_path):
    mod = user_module(tmp_path, "def matmul(a, b, c):\n    pass\n")
    code, _, err = run_cli(monkeypatch, capsys, "bench", f"{mod}:matmul", *extra)
    assert code == 2 and f"{extra[0]} has no effect for a Python callable" in err, err


def test_the_api_refuses_gemm_arguments_for_a_stream_op():
    k = CudaKernel(str(KERNELS / "my_sgemm.cu"), "scale2")
    for kw in ({"vs": ["cublas"]}, {"m": 64}, {"check_n": 64}):
        with pytest.raises(UsageError, match="apply to op='gemm' only"):
            api.sections(k, op="stream", **kw)


# ---------------------------------------------------------------- --profile: kernels that passed only

def test_profile_runs_only_on_kernels_that_passed(monkeypatch):
    from rooflab import lab
    from rooflab.measure import profiling

    seen = {}

    def fake_profile(**kw):
        seen.update(kw)
        return {"kernels": [{"label": x} for x in kw["labels"]], "skipped": []}

    monkeypatch.setattr(profiling, "run", fake_profile)
    gemm = lambda dev, say: {"rungs": [{"kernel": "mine", "passed": False, "checks": []},  # noqa: E731
                                       {"kernel": "cublas", "passed": True},
                                       {"kernel": "wgmma_tf32", "passed": False, "skipped": "sm_90a"}]}
    run_gemm, run_profile = lab.gemm_then_profile(gemm, n=64, size=0)
    run_gemm(None, None)
    sec = run_profile(None, None)
    assert seen["labels"] == ["cublas"]
    assert sec["skipped"] == ["mine: not profiled, it FAILED its check"]
    # nothing passed: no ncu at all
    seen.clear()
    run_gemm, run_profile = lab.gemm_then_profile(lambda d, s: {"rungs": [{"kernel": "mine", "passed": False}]},
                                                  n=64, size=0)
    run_gemm(None, None)
    sec = run_profile(None, None)
    assert sec["kernels"] == [] and not seen and sec["config"]["gemm"] is False
    # ... and the section still loads back: what would have run it is named, as in a profiled one
    from rooflab.schema.profile import Profile

    assert Profile.from_dict(sec).command.split()[1:3] == ["--clock-control", "none"]
    assert sec["skipped"] == ["mine: not profiled, it FAILED its check"]


def test_a_tools_failure_line_never_holds_a_traceback():
    from rooflab.measure.profiling import error_line

    out = textwrap.dedent("""\
        ==PROF== Connected to process 4242
        Traceback (most recent call last):
          File "/x/rooflab/measure/profile_target.py", line 78, in <module>
            sys.exit(main())
          File "/x/rooflab/cuda/gpu.py", line 78, in cuda_call
            raise KernelError(kernel, call, _cuda_message(exc)) from exc
        rooflab.errors.KernelError: mine: cuLaunchKernel failed: cudaErrorIllegalAddress
        ==PROF== Disconnected from process 4242
    """)
    line = error_line(out)
    assert line == "rooflab.errors.KernelError: mine: cuLaunchKernel failed: cudaErrorIllegalAddress"
    assert error_line("==ERROR== something\nrooflab: error: no kernel named x\n") == "no kernel named x"
    assert error_line("") == "no output"


# ---------------------------------------------------------------- --roofline .pdf, --seed, suffixes, compile errors

def test_bench_takes_pdf_seed_and_suffixed_sizes(monkeypatch, capsys, tmp_path):
    got = {}

    def sections(t, **kw):
        got.update(kw)
        raise UsageError("stop here")

    monkeypatch.setattr(api, "sections", sections)
    code, _, err = run_cli(monkeypatch, capsys, "bench", str(KERNELS / "my_sgemm.cu"), "--kernel", "my_sgemm",
                           "--roofline", str(tmp_path / "r.pdf"), "--seed", "17", "--m", "1K", "--k", "2K")
    assert code == 2 and "stop here" in err
    assert got["seed"] == 17 and got["m"] == 1024 and got["k"] == 2048


def test_a_compile_error_shows_before_no_gpu_where_nvrtc_is_here(monkeypatch, capsys):
    import rooflab.cuda.compile as compile_mod
    import rooflab.cuda.gpu as gpu_mod

    def nvrtc(code, options, filename, names):
        assert "undeclared_name" in code and "-std=c++17" in options
        raise CompileError(filename, f'{filename}(4): error: identifier "undeclared_name" is undefined\n'
                                     f'1 error detected in the compilation of "{filename}".')

    monkeypatch.setattr(gpu_mod, "gpu_available", lambda: False)
    monkeypatch.setattr(compile_mod, "_nvrtc_compile", nvrtc)
    code, _, err = run_cli(monkeypatch, capsys, "bench", str(KERNELS / "broken.cu"), "--kernel", "broken")
    lines = err.strip().splitlines()
    assert code == 2 and "undeclared_name" in lines[0]
    assert lines[-1].startswith("rooflab: error: ") and lines[-1].endswith("does not compile (1 compiler error above)")

    def no_nvrtc(*_a):
        raise LookupError("no NVRTC here")

    monkeypatch.setattr(compile_mod, "_nvrtc_compile", no_nvrtc)
    code, _, err = run_cli(monkeypatch, capsys, "bench", str(KERNELS / "broken.cu"), "--kernel", "broken")
    assert code == 3, err  # nothing to compile with: "no GPU", as before


def test_nvrtc_alone_is_asked_with_the_file_name_only(monkeypatch):
    """CuPy writes the source under `filename` in a folder of its own: a full path there would
    write over the user's file. A missing header is not judged without the GPU run's include path."""
    import rooflab.cuda.compile as compile_mod

    class CompileException(Exception):
        def get_message(self):
            return self.args[0]

    calls = []

    def compile_using_nvrtc(code, options, arch=None, filename="kern.cu", name_expressions=None):
        calls.append((filename, arch, name_expressions))
        if "missing" in code:
            raise CompileException('k.cu(1): catastrophic error: cannot open source file "cuda_fp16.h"')
        raise CompileException('k.cu(4): error: identifier "undeclared_name" is undefined')

    compiler = types.SimpleNamespace(compile_using_nvrtc=compile_using_nvrtc, CompileException=CompileException)
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.ModuleType("cupy.cuda")
    cupy.cuda.compiler = compiler
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupy.cuda", cupy.cuda)
    monkeypatch.setitem(sys.modules, "cupy.cuda.compiler", compiler)
    with pytest.raises(CompileError) as exc:
        compile_mod._nvrtc_compile("x", ("-std=c++17",), "/home/u/k.cu", ("mm<32>",))
    assert str(exc.value).startswith("/home/u/k.cu does not compile") and "undeclared_name" in exc.value.log
    assert calls == [("k.cu", compile_mod.CHECK_ARCH, ("mm<32>",))]
    with pytest.raises(LookupError):
        compile_mod._nvrtc_compile("missing", (), "/home/u/k.cu", None)


def test_a_custom_ops_own_code_that_raises_fails_the_kernel(gpu):
    from rooflab.measure import bench
    from rooflab.ops.record import Op

    def reference(xp, x):
        raise ZeroDivisionError("division by zero")

    op = Op("sumsq", inputs=lambda xp, n, seed: (xp.ones(n[0], xp.float32),), reference=reference,
            out_shape=lambda n: (1,), args=lambda ins, out, n: (*ins, out, np.uint64(n[0])),
            flops=lambda n: 2.0 * n[0], bytes=lambda n: 4.0 * n[0] + 4)
    rec = bench.run_one(Callable(lambda x, y: None, name="mine"), op, (100,), fake_cupy.device(), reps=2,
                        seed=1)
    assert rec["error"] == "the op 'sumsq' (reference) raised ZeroDivisionError: division by zero"
    assert not rec["passed"] and rec["timing"] is None
    k = CudaKernel(str(KERNELS / "my_sgemm.cu"), "scale2", grid=lambda m, n, k: 1 // 0)
    rec = bench.run_one(k, stream("2*x"), (100,), fake_cupy.device(), reps=2, seed=1)
    assert rec["error"] == "scale2's grid function raised ZeroDivisionError: integer division or modulo by zero"


class _Exported:
    """An array as CuPy hands it over: the CUDA Array Interface with the producer's current stream."""

    def __init__(self, stream):
        self.__cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "data": (0, False), "version": 3,
                                         "stream": stream}


def _fake_torch(monkeypatch, log: list):
    import contextlib  # noqa: PLC0415
    import types  # noqa: PLC0415

    @contextlib.contextmanager
    def on(stream):
        log.append(("enter", stream))
        yield
        log.append(("exit", stream))

    cuda = types.SimpleNamespace(stream=on, ExternalStream=lambda ptr: ("external", ptr))
    torch = types.SimpleNamespace(cuda=cuda, as_tensor=lambda a, device: ("tensor", a))
    monkeypatch.setitem(sys.modules, "torch", torch)


@pytest.mark.parametrize("stream, expected", [(0x7F00, ("external", 0x7F00)), (1, None), (2, None), (None, None)])
def test_a_torch_callable_launches_on_the_harness_stream(monkeypatch, stream, expected):
    # a Triton or torch launch goes to torch's current stream: unless that is the harness's, it escapes the
    # timing events, the graph capture and the concurrent replicas' streams
    log = []
    _fake_torch(monkeypatch, log)

    def fn(a, b, c):
        log.append(("fn", a[0]))

    arrays = [_Exported(stream) for _ in range(3)]
    Callable(fn, framework="torch").wrap()(*arrays)
    if expected is None:  # the default streams: torch's own default stream is ordered with them
        assert log == [("fn", "tensor")]
    else:
        assert log == [("enter", expected), ("fn", "tensor"), ("exit", expected)]
