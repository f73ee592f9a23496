"""The command line with no GPU: one-line errors and the right exit codes, bad input
rejected before any GPU is looked for, and help for every command.

Exit codes and stderr are checked through a real `python -m rooflab` process (the
path users take: cli.main() runs click with standalone_mode=False and turns each
RooflabError into one line). CUDA_VISIBLE_DEVICES is emptied there, so these tests
see "no GPU" even on a machine that has one. Help text is checked in-process with
click's CliRunner.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import rooflab
from rooflab import cli as cli_mod
from rooflab.cli import cli
from rooflab.errors import NoGPUError, UsageError

SRC = Path(__file__).resolve().parents[1] / "src"


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    env["CUDA_VISIBLE_DEVICES"] = ""  # no GPU, even where there is one
    env.pop("ROOFLAB_NO_POOL", None)
    return subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True, text=True, env=env,
                          timeout=60, cwd=cwd)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("rooflab: error: "), lines[0]
    assert proc.stdout == ""
    return lines[0]


# ---------------------------------------------------------------- no GPU: exit 3


@pytest.mark.parametrize("args", [["gemm"], ["info"], ["bandwidth"], ["flops"], ["profile"],
                                  ["gemm", "--n", "64", "--kernels", "naive", "--format", "json"],
                                  ["info", "--format", "json"]],
                         ids=" ".join)
def test_no_gpu_is_one_line_and_exit_3(args):
    proc = run(*args)
    line = one_error_line(proc)
    assert proc.returncode == NoGPUError.exit_code == 3
    assert "GPU" in line or "CuPy" in line


# ---------------------------------------------------------------- bad input: exit 2, before detection

BAD_INPUT = [
    (["gemm", "--n", "0"], "positive integer"),
    (["gemm", "--m", "0"], "positive integer"),
    (["gemm", "--k", "-5"], "positive integer"),
    (["gemm", "--check-n", "0"], "positive integer"),
    (["gemm", "--kernels", "bogus"], "bogus"),
    (["gemm", "--kernels", "naive,tiled64"], "tiled64"),
    (["gemm", "--reps", "0"], "--reps"),
    (["gemm", "--out", "r.json"], "--out"),
    (["bandwidth", "--size", "abc"], "abc"),
    (["bandwidth", "--size", "100"], "--size"),
    (["bandwidth", "--reps", "10"], "--reps"),
    (["bandwidth", "--blocks", "100"], "block sizes"),
    (["bandwidth", "--blocks", "128,x"], "--blocks"),
    (["flops", "--reps", "0"], "--reps"),
    (["flops", "--out", "f.csv"], "--out"),
    (["profile", "--size", "abc"], "abc"),
]


@pytest.mark.parametrize(("args", "mention"), BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_is_one_line_and_exit_2(args, mention, tmp_path):
    proc = run(*args, cwd=tmp_path)
    line = one_error_line(proc)
    assert proc.returncode == UsageError.exit_code == 2, line  # 3 would mean the GPU was looked for first
    assert mention in line
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize(("args", "mention"), BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_rejected_before_device_detection(args, mention, monkeypatch):
    def detect_device():
        raise AssertionError("device detection reached with bad input")

    monkeypatch.setattr(cli_mod, "detect_device", detect_device)
    result = CliRunner().invoke(cli, args)
    assert isinstance(result.exception, UsageError), (result.exception, result.output)
    assert mention in str(result.exception)


USAGE_ERRORS = [
    (["gemm", "--n", "abc"], "gemm", "'abc'"),
    (["gemm", "--bogus-option"], "gemm", "--bogus-option"),
    (["bogus-command"], None, "bogus-command"),
    (["gemm", "--format", "xml"], "gemm", "xml"),
    (["gemm", "--n"], "gemm", "--n"),
    (["compare", "a.json"], "compare", "B"),
    (["report", "extra-argument"], "report", "extra-argument"),
]


@pytest.mark.parametrize(("args", "command", "mention"), USAGE_ERRORS, ids=[" ".join(a) for a, _, _ in USAGE_ERRORS])
def test_click_usage_errors_are_one_line_exit_2(args, command, mention):
    proc = run(*args)
    line = one_error_line(proc)
    assert proc.returncode == 2
    assert mention in line
    assert line.endswith(f"(see rooflab {command} --help)" if command else "(see rooflab --help)"), line
    assert "Usage:" not in proc.stderr and "Try " not in proc.stderr


def test_no_arguments_prints_help():
    proc = run()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: rooflab") and "report" in proc.stdout


# ---------------------------------------------------------------- main() in-process


def test_main_turns_errors_into_one_line(monkeypatch, capsys):
    def no_gpu():
        raise NoGPUError("no NVIDIA GPU found (test)")

    monkeypatch.setattr(cli_mod, "detect_device", no_gpu)
    monkeypatch.setattr(sys, "argv", ["rooflab", "flops"])
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
    assert exc.value.code == 3
    captured = capsys.readouterr()
    assert captured.err.strip() == "rooflab: error: no NVIDIA GPU found (test)"
    assert captured.out == ""


def test_main_does_not_interpret_markup_in_messages(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["rooflab", "gemm", "--kernels", "[red]x[/red]"])
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
    assert exc.value.code == 2
    assert "[red]x[/red]" in capsys.readouterr().err


# ---------------------------------------------------------------- help and version


def test_version():
    proc = run("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"rooflab, version {rooflab.__version__}"
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and rooflab.__version__ in result.output


def test_top_level_help_lists_commands():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in ("gemm", "bandwidth", "flops", "profile", "info"):
        assert name in result.output
    assert "FAILED" in result.output  # the promise about failed checks is stated up front
    assert CliRunner().invoke(cli, ["-h"]).output == result.output


HELP = {
    "gemm": ["--n", "--m", "--k", "--kernels", "--reps", "--check-n", "--flush-l2", "--seed", "--format", "--out",
             "naive,coalesced,tiled16,tiled32,cublas"],
    "bandwidth": ["--size", "--reps", "--rounds", "--blocks", "--no-sweep", "--format", "--out", "256M"],
    "flops": ["--reps", "--target-ms", "--format", "--out"],
    "info": ["--format"],
    "profile": ["--gemm", "--n", "--size", "--raw-dir", "--format", "--out"],
}


@pytest.mark.parametrize("command", sorted(HELP))
def test_command_help_mentions_key_options(command):
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert result.exception is None
    for opt in HELP[command]:
        assert opt in result.output, (command, opt)
    assert CliRunner().invoke(cli, [command, "-h"]).exit_code == 0


def test_every_command_has_help():
    """Including commands added after this test was written."""
    runner = CliRunner()
    assert set(HELP) <= set(cli.commands)
    for name, cmd in cli.commands.items():
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0, (name, result.output, result.exception)
        assert result.output.startswith("Usage:"), name
        assert cmd.help and cmd.help.strip(), f"{name} has no docstring"


def test_help_through_the_real_entry_point():
    proc = run("gemm", "--help")
    assert proc.returncode == 0
    assert "--kernels" in proc.stdout and proc.stderr == ""
