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

import click
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
                          timeout=60, cwd=cwd, check=False)


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
    (["gemm", "--kernels", ","], "--kernels"),
    (["gemm", "--kernels", ""], "--kernels"),
    (["gemm", "--n", "2147483648"], "2147483647"),
    (["gemm", "--m", "99999999999999999999"], "2147483647"),
    (["gemm", "--n", "1e3"], "--n"),
    (["gemm", "--reps", "0"], "--reps"),
    (["gemm", "--seed", "-1"], "--seed"),
    (["gemm", "--out", "r.json"], "--out"),
    (["bandwidth", "--size", "abc"], "abc"),
    (["bandwidth", "--size", "100"], "--size"),
    (["bandwidth", "--size", "inf"], "inf"),
    (["bandwidth", "--size", "1e400"], "1e400"),
    (["memory", "--footprints", "1e400"], "got inf"),
    (["memory", "--footprints", "8,nan"], "got nan"),
    (["memory", "--footprints", "0"], "--footprints"),
    (["bandwidth", "--size", "nan"], "nan"),
    (["bandwidth", "--size", "-256M"], "-256M"),
    (["bandwidth", "--size", "0"], "--size"),
    (["bandwidth", "--size", "1e30"], "--size"),
    (["bandwidth", "--reps", "10"], "--reps"),
    (["bandwidth", "--rounds", "-5"], "--rounds"),
    (["gemm", "--rounds", "0"], "--rounds"),
    (["tune", "--rounds", "0"], "--rounds"),
    (["bandwidth", "--rounds", "0"], "--rounds"),
    (["bandwidth", "--blocks", "100"], "block sizes"),
    (["bandwidth", "--blocks", "128,x"], "--blocks"),
    (["bandwidth", "--blocks", ","], "--blocks"),
    (["flops", "--reps", "0"], "--reps"),
    (["flops", "--target-ms", "0"], "--target-ms"),
    (["flops", "--target-ms", "-5"], "--target-ms"),
    (["flops", "--target-ms", "nan"], "--target-ms"),
    (["flops", "--target-ms", "inf"], "--target-ms"),
    (["flops", "--target-ms", "1e9"], "--target-ms"),
    (["flops", "--out", "f.csv"], "--out"),
    (["profile", "--size", "abc"], "abc"),
    (["roofline", "--out", "x.txt"], "x.txt"),  # measuring would come first without --from/--gpu
    (["roofline", "--out", "roofline"], ".png, .svg or .pdf"),
    (["profile", "--size", "inf"], "inf"),
    (["profile", "--n", "0"], "--n"),
    (["profile", "--n", "-3"], "--n"),
    (["roofline", "--n", "0"], "--n"),
    (["report", "--n", "0"], "--n"),
    (["report", "--gpu", "voodoo5"], "voodoo5"),
    (["specs", "--gpu", "voodoo5"], "voodoo5"),
    (["specs", "--out", "s.md"], "--out"),
    (["ridge", "--out", "r.md"], "--out"),
    (["gemm", "--out", "somefile.txt/sub.json", "--format", "json"], "somefile.txt"),
    (["report", "--out", "somefile.txt/sub"], "somefile.txt"),
    (["profile", "--raw-dir", "somefile.txt/raw"], "somefile.txt"),
]


@pytest.mark.parametrize(("args", "mention"), BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_is_one_line_and_exit_2(args, mention, tmp_path):
    (tmp_path / "somefile.txt").write_text("a file, not a folder\n")
    proc = run(*args, cwd=tmp_path)
    line = one_error_line(proc)
    assert proc.returncode == UsageError.exit_code == 2, line  # 3 would mean the GPU was looked for first
    assert mention in line
    assert [f.name for f in tmp_path.iterdir()] == ["somefile.txt"]  # nothing written


@pytest.mark.parametrize(("args", "mention"), BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_rejected_before_device_detection(args, mention, monkeypatch, capsys, tmp_path):
    """In-process, with every way to the GPU replaced by an assertion: bad input must stop first."""
    import rooflab.cuda.device  # noqa: PLC0415
    import rooflab.cuda.gpu  # noqa: PLC0415

    def reached(*_a, **_k):
        raise AssertionError("device detection reached with bad input")

    for mod in (cli_mod.output, cli_mod.measuring, cli_mod.spec):  # every command module that detects
        monkeypatch.setattr(mod, "detect_device", reached)
    monkeypatch.setattr(rooflab.cuda.device, "detect", reached)
    monkeypatch.setattr(rooflab.cuda.gpu, "cupy", reached)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "somefile.txt").write_text("a file\n")
    monkeypatch.setattr(sys, "argv", ["rooflab", *args])
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert mention in err and err.count("\n") == 1 and err.startswith("rooflab: error: ")


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

    import rooflab.cuda.device

    monkeypatch.setattr(rooflab.cuda.device, "detect", no_gpu)
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


def test_top_level_help_lists_every_registered_command_with_its_summary():
    """The summary is computed from the commands, so a command added later is listed too."""
    result = CliRunner().invoke(cli, ["--help"], terminal_width=100)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    for name, cmd in cli.commands.items():
        line = next((ln for ln in lines if ln.split()[:2] == ["rooflab", name]), None)
        assert line is not None, f"rooflab {name} is missing from the top-level help"
        summary = cmd.get_short_help_str(limit=1000)
        assert summary and " ".join(line.split()[2:]) == summary, (name, line)
        assert not summary.endswith("..."), name
    assert "rooflab compare" in result.output


def test_gemm_kernels_help_lists_the_ladder():
    from rooflab.rungs import LADDER  # noqa: PLC0415

    opt = next(p for p in cli.commands["gemm"].params if p.name == "kernels")
    names = [r.name for r in LADDER]
    assert "regtile" in names
    assert "{ladder}" in opt.help  # filled in from the ladder when help is shown, never typed
    result = CliRunner().invoke(cli, ["gemm", "--help"], terminal_width=200)
    assert ", ".join(names) in " ".join(result.output.split())


def test_every_option_of_every_command_has_help():
    """Including options and commands added after this test was written."""
    missing = [f"{name} {p.opts[0]}" for name, cmd in cli.commands.items() for p in cmd.params
               if isinstance(p, click.Option) and not (p.help and p.help.strip())]
    assert not missing, f"options without help text: {missing}"


HELP = {
    "gemm": ["--n", "--m", "--k", "--kernels", "--reps", "--rounds", "--check-n", "--flush-l2", "--seed", "--format", "--out",
             "naive, coalesced, tiled16, tiled32, regtile, vec, warptile, pipelined, cublas"],
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
    text = " ".join(result.output.split())  # help wraps lines
    for opt in HELP[command]:
        assert opt in text, (command, opt)
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


def test_a_missing_dependency_is_named_not_called_a_bug(monkeypatch, capsys):
    def missing(*_a, **_k):
        raise ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")

    monkeypatch.setattr(cli_mod.output, "show", missing)
    monkeypatch.setattr(sys, "argv", ["rooflab", "ridge", "--no-detect"])
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
    assert exc.value.code == 4
    err_text = capsys.readouterr().err.strip()
    assert err_text.splitlines()[-1].startswith("rooflab: error: the Python package 'matplotlib' is not installed")
    assert "bug" not in err_text
