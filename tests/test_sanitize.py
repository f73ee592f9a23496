"""`--sanitize` with no GPU: compute-sanitizer's logs read, hazards turned into FAILED checks on the
kernel's record, a missing compute-sanitizer one line and exit 4, and the subprocess path run
against a stand-in compute-sanitizer script."""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap

import pytest

from rooflab.errors import ToolError
from rooflab.measure import sanitize
from rooflab.model.check import Check

RACE_LOG = textwrap.dedent("""\
    ========= COMPUTE-SANITIZER
    ========= Error: Race reported between Write access at mm_pipelined+0x1a30 in pipelined.cu:88
    =========     and Read access at mm_pipelined+0x1c70 in pipelined.cu:97 [384 hazards]
    =========
    ========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
""")
MEMCHECK_LOG = textwrap.dedent("""\
    ========= COMPUTE-SANITIZER
    ========= Invalid __global__ write of size 4 bytes
    =========     at my_sgemm_row_past+0x2d0 in my_sgemm.cu:37
    ========= ERROR SUMMARY: 45 errors
""")
CLEAN_LOG = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"


def test_logs_are_read_into_errors_and_the_first_problem():
    assert sanitize.summary(RACE_LOG) == (1, 0, "Error: Race reported between Write access at mm_pipelined+0x1a30 "
                                                "in pipelined.cu:88")
    assert sanitize.summary(MEMCHECK_LOG) == (45, 0, "Invalid __global__ write of size 4 bytes")
    assert sanitize.summary(CLEAN_LOG) == (0, 0, "")
    assert sanitize.summary("RACECHECK SUMMARY: 3 hazards displayed (0 errors, 3 warnings)")[:2] == (0, 3)


def fake_runner(results):
    def runner(spec, tool, path):
        return {"errors": 0, "warnings": 0, "first": "", "skipped": None, **results.get((spec["name"], tool), {})}
    return runner


def test_a_hazard_fails_the_kernel_and_takes_its_throughput(monkeypatch):
    monkeypatch.setattr(sanitize, "find_sanitizer", lambda: "/fake/compute-sanitizer")
    specs = [sanitize.rung_spec("pipelined"), sanitize.rung_spec("tiled32")]
    sec = sanitize.run(specs, runner=fake_runner({("pipelined", "racecheck"): {"errors": 384, "first": "Race"}}))
    pipelined, tiled = sec["kernels"]
    assert not pipelined["passed"] and tiled["passed"]
    assert [c["name"] for c in tiled["checks"]] == ["memcheck", "racecheck", "synccheck"]
    doc = {"gemm": {"rungs": [{"kernel": "pipelined", "passed": True, "timing": {"median_ms": 1.0}, "checks": []},
                              {"kernel": "tiled32", "passed": True, "timing": {"median_ms": 2.0}, "checks": []}]},
           "sanitize": sec}
    sanitize.apply(doc)
    p, t = doc["gemm"]["rungs"]
    assert not p["passed"] and p["timing"] is None
    assert t["passed"] and t["timing"] and len(t["checks"]) == 3
    bad = Check.from_dict(next(c for c in p["checks"] if not c["passed"]))
    assert bad.line() == "compute-sanitizer racecheck @ 67x45x70: 384 errors reported (Race)"
    from rooflab.report.gemm import status
    assert status(p).startswith("FAILED: compute-sanitizer racecheck")


def test_a_kernel_that_needs_aligned_sizes_is_sanitized_at_odd_multiples():
    assert sanitize.rung_spec("wgmma_bf16", 64)["shape"] == [192, 64, 320]
    assert sanitize.rung_spec("tiled32")["shape"] == [67, 45, 70]


@pytest.mark.parametrize("args", [["gemm", "--sanitize", "--kernels", "tiled32"],
                                  ["bench", "tests/data/kernels/my_sgemm.cu", "--kernel", "my_sgemm", "--sanitize"]],
                         ids=" ".join)
def test_no_compute_sanitizer_is_one_line_exit_4_before_any_gpu(args, monkeypatch, capsys):
    import rooflab.cuda.device
    import rooflab.cuda.gpu
    from rooflab import cli as cli_mod

    monkeypatch.setattr(sanitize.shutil, "which", lambda _name: None)
    monkeypatch.setattr(sanitize.os.path, "exists", lambda _p: False)
    monkeypatch.setattr(rooflab.cuda.gpu, "gpu_available", lambda: False)  # the compile check's probe
    monkeypatch.setattr(rooflab.cuda.device, "detect", lambda *a: pytest.fail("a GPU was looked for"))
    monkeypatch.setattr(rooflab.cuda.gpu, "cupy", lambda: pytest.fail("a GPU was looked for"))
    monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    monkeypatch.setattr(sys, "argv", ["rooflab", *args])
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
    err = capsys.readouterr().err
    assert exc.value.code == ToolError.exit_code == 4
    assert err.count("\n") == 1 and err.startswith("rooflab: error: compute-sanitizer not found")


def test_the_bench_cli_fails_a_callable_with_hazards(monkeypatch, capsys, tmp_path):
    import fake_cupy
    import rooflab.cuda.device as device_mod
    from rooflab import cli as cli_mod

    fake_cupy.install(monkeypatch)
    monkeypatch.setattr(device_mod, "detect", lambda *a, **k: fake_cupy.device())
    monkeypatch.setattr(sanitize, "find_sanitizer", lambda: "/fake/compute-sanitizer")
    monkeypatch.setattr(sanitize, "run_one", fake_runner({("mm", "racecheck"): {"errors": 2, "first": "Race"}}))
    mod = tmp_path / "mine.py"
    mod.write_text("def mm(a, b, c):\n    c[...] = a @ b\n")
    monkeypatch.setattr(sys, "argv", ["rooflab", "bench", f"{mod}:mm", "--n", "64", "--vs", "", "--sanitize"])
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
    out, err = capsys.readouterr()
    assert exc.value.code == 1
    assert "compute-sanitizer racecheck @ 67x45x70: 2 errors reported" in " ".join(out.split()), err
    assert err.strip().splitlines()[-1].startswith("rooflab: error: mm FAILED")


def fake_sanitizer(tmp_path, log: str, run_target: bool) -> str:
    """A stand-in compute-sanitizer: writes `log` to --log-file and, if asked, runs the command."""
    script = tmp_path / "compute-sanitizer"
    script.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import subprocess, sys
        args = sys.argv[1:]
        log = args[args.index("--log-file") + 1]
        cmd = args[args.index("--print-limit") + 2:]
        open(log, "w").write({log!r})
        sys.exit(subprocess.run(cmd).returncode if {run_target!r} else 0)
    """))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_the_subprocess_path_reads_the_log_of_a_real_child(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONPATH", raising=False)  # the child finds this rooflab all the same
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    spec = sanitize.rung_spec("tiled32")
    # hazards in the log: FAILED, even though the child never ran the kernel
    r = sanitize.run_one(spec, "racecheck", fake_sanitizer(tmp_path, RACE_LOG, run_target=False))
    assert r["errors"] == 1 and r["first"].startswith("Error: Race")
    # a clean log from a child that could not run (no GPU here): a one-line tool error, no traceback
    with pytest.raises(ToolError) as exc:
        sanitize.run_one(spec, "memcheck", fake_sanitizer(tmp_path, CLEAN_LOG, run_target=True))
    msg = str(exc.value)
    assert "did not run it" in msg and "Traceback" not in msg and "File \"" not in msg
    assert "NoGPUError" in msg or "CuPy" in msg


def test_a_users_kernel_is_rebuilt_in_the_target_process_as_given(tmp_path):
    from rooflab.measure.sanitize_target import _rung
    from rooflab.targets import CudaKernel

    k = CudaKernel("tests/data/kernels/my_sgemm.cu", "my_sgemm", block=(16, 16), grid="cdiv(n,16),cdiv(m,16)",
                   options=("-DX=1",))
    spec = json.loads(json.dumps(sanitize.target_spec(k, "gemm")))
    rung, _ = _rung(spec)
    assert rung.grid(67, 45, 70) == k.rung("gemm").grid(67, 45, 70) == (3, 5, 1)
    assert rung.options == ("-DX=1",) and rung.source == k.path and spec["shape"] == [67, 45, 70]
    spec = json.loads(json.dumps(sanitize.target_spec(CudaKernel(k.path, "scale2"), "stream", expr="2*x")))
    assert spec["shape"] == [sanitize.STREAM_N] and spec["expr"] == "2*x"
