"""The `rooflab fleet` commands."""

from __future__ import annotations

import json
import signal
import sys
import time

import pytest

from rooflab.errors import UsageError

from fleet_fixtures import fake_node, h200  # noqa: F401 (pytest fixtures)


# ---------------------------------------------------------------- the command line

LAUNCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID")


def test_cli_report_and_merge(fake_node, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rooflab.cli import fleet as cli_fleet

    for k in LAUNCH_VARS:
        monkeypatch.delenv(k, raising=False)
    root = tmp_path / "f"
    res = CliRunner().invoke(cli_fleet.fleet, ["report", "--devices", "0,1", "--out", str(root), "--quick",
                                               "--link-size", "64M", "--ar-max", "256M"])
    assert res.exit_code == 0, res.output
    assert "GPUs: each figure as % of the fleet median" in res.output and "OUTLIER" in res.output
    links_call = next(c for c, _ in fake_node.calls if c[3] == "node-links")
    assert links_call[links_call.index("--size") + 1] == str(64 * 2**20)
    ar_call = next(c for c, _ in fake_node.calls if c[3] == "node-allreduce")
    assert ar_call[ar_call.index("--max") + 1] == str(256 * 2**20) and ar_call[ar_call.index("--factor") + 1] == "4"
    res = CliRunner().invoke(cli_fleet.fleet, ["merge", str(root), "--outlier-pct", "20", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads((root / "fleet.json").read_text())["fleet"]["outliers"] == []
    res = CliRunner().invoke(cli_fleet.fleet, ["merge", str(root), "--fail-on-outlier", "--outlier-pct", "1"])
    assert res.exit_code == 1


def test_cli_refuses_devices_under_a_launcher(fake_node, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rooflab.cli import fleet as cli_fleet

    for k, v in {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}.items():
        monkeypatch.setenv(k, v)
    res = CliRunner().invoke(cli_fleet.fleet, ["report", "--devices", "all", "--shared-dir", str(tmp_path)])
    assert isinstance(res.exception, UsageError) and "--devices" in str(res.exception)
    res = CliRunner().invoke(cli_fleet.fleet, ["report", "--link-size", "100", "--out", str(tmp_path)])
    assert isinstance(res.exception, UsageError)
    assert fake_node.calls == []  # bad input is refused before anything starts


def test_the_fleet_group_is_a_command_of_rooflab():
    from rooflab.cli import cli

    assert {"report", "merge", "links", "allreduce"} <= set(cli.commands["fleet"].commands)


# ---------------------------------------------------------------- one command line: the same error line as the others

def run_main(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """`rooflab ARGS` in this process, through the entry point every command shares."""
    from rooflab import cli as cli_mod

    monkeypatch.setattr(sys, "argv", ["rooflab", *args])
    code = 0
    try:
        cli_mod.main(list(args))
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def nothing_runs(monkeypatch):
    """Every way a fleet command measures, replaced by an assertion: bad input must stop first."""
    from rooflab.fleet import local, orchestrate

    def reached(*_a, **_k):
        raise AssertionError("a fleet measurement started on bad input")

    for mod, name in ((orchestrate, "run"), (local, "measure_links"), (local, "measure_allreduce"),
                      (local, "choose_devices")):
        monkeypatch.setattr(mod, name, reached)


# a fleet command and a command of the other modules given the same bad input
SAME_CAUSE = [
    (["fleet", "links", "--reps", "0"], ["gemm", "--reps", "0"]),
    (["fleet", "allreduce", "--reps", "abc"], ["gemm", "--reps", "abc"]),
    (["fleet", "report", "--n", "-3"], ["gemm", "--n", "-3"]),
    (["fleet", "links", "--out", "x.json"], ["gemm", "--out", "x.json"]),
    (["fleet", "allreduce", "--out", "somefile.txt/sub.json", "--format", "json"],
     ["gemm", "--out", "somefile.txt/sub.json", "--format", "json"]),
    (["fleet", "merge", "missing-folder", "--format", "xml"], ["gemm", "--format", "xml"]),
    (["fleet", "links", "--size", "abc"], ["bandwidth", "--size", "abc"]),
]


@pytest.mark.parametrize(("fleet_args", "other_args"), SAME_CAUSE, ids=[" ".join(a) for a, _ in SAME_CAUSE])
def test_bad_input_gives_the_line_and_exit_code_every_command_gives(fleet_args, other_args, monkeypatch, capsys,
                                                                     tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "somefile.txt").write_text("a file, not a folder\n")
    nothing_runs(monkeypatch)
    code, out, err = run_main(monkeypatch, capsys, *fleet_args)
    other_code, _, other_err = run_main(monkeypatch, capsys, *other_args)
    assert other_code == 2 and other_err.startswith("rooflab: error: ") and other_err.count("\n") == 1, other_err
    assert (code, out, err.count("\n")) == (other_code, "", 1), err
    fleet_path, other_path = f"rooflab fleet {fleet_args[1]}", f"rooflab {other_args[0]}"
    assert err.replace(fleet_path, other_path) == other_err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["somefile.txt"]


def test_interrupted_and_stopped_end_as_every_command_ends(monkeypatch, capsys, tmp_path):
    """Ctrl-C and SIGTERM during a fleet run: the line and exit code `rooflab gemm` gives
    (the children end through spawn.wait_all's unwinding, tested in test_fleet_orchestrate)."""
    from rooflab.cli import measuring
    from rooflab.fleet import orchestrate

    def stop(how):
        def run(*_a, **_k):
            if how == "sigterm":
                assert callable(signal.getsignal(signal.SIGTERM))  # the entry point's handler, else this ends pytest
                signal.raise_signal(signal.SIGTERM)
                time.sleep(5)  # the handler raises before this returns
            raise KeyboardInterrupt
        return run

    monkeypatch.chdir(tmp_path)
    for how, line, want in (("ctrl-c", "rooflab: error: interrupted\n", 130),
                            ("sigterm", "rooflab: error: stopped by SIGTERM\n", 143)):
        monkeypatch.setattr(orchestrate, "run", stop(how))
        monkeypatch.setattr(measuring, "measure", stop(how))
        for args in (["fleet", "report", "--out", "f"], ["gemm", "--n", "64"]):
            code, _out, err = run_main(monkeypatch, capsys, *args)
            assert (code, err) == (want, line), args


def test_failed_copies_and_unmeasured_allreduce_end_in_one_error_line(monkeypatch, capsys, tmp_path):
    from rooflab.fleet import allreduce, layout
    from rooflab.measure import links

    from fleet_fixtures import links_section

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(layout, "hostname", lambda: "node-a")
    monkeypatch.setattr(links, "run", lambda cfg, say: links_section(failed=((0, 1),)))
    code, out, err = run_main(monkeypatch, capsys, "fleet", "links", "--format", "json")
    assert json.loads(out)["fleet"]["links"]["node-a"]["ce_uni"][0]["verified"] is False  # the document still comes
    assert code == 1
    assert err.splitlines()[-1] == "rooflab: error: one or more copies FAILED their check or could not run"
    monkeypatch.setattr(allreduce, "measure_with_fallback",
                        lambda cfg, say, log_dir: {"available": False, "reason": "NCCL not available (test)"})
    code, out, err = run_main(monkeypatch, capsys, "fleet", "allreduce", "--format", "md", "--out", "ar.md")
    assert code == 1 and err.splitlines()[-1] == "rooflab: error: all-reduce not measured: NCCL not available (test)"
    assert (tmp_path / "ar.md").is_file() and out == ""


def test_a_run_with_problems_or_outliers_ends_in_one_error_line(monkeypatch, capsys, tmp_path, h200):
    from rooflab.fleet import launcher, merge, orchestrate

    from fleet_fixtures import scaled

    docs = [(scaled(h200, f, uuid=f"GPU-{i}", index=i), None) for i, f in enumerate((1.0, 0.5))]
    info = launcher.detect({})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(orchestrate, "run", lambda cfg, say, devices_given: (
        merge.merge(docs, errors=["node-a: links timed out"]), info))
    code, out, err = run_main(monkeypatch, capsys, "fleet", "report", "--out", "f")
    assert "GPUs: each figure as % of the fleet median" in out and "wrote f/: fleet.json" in out
    assert code == 1 and err.splitlines()[-1] == "rooflab: error: 1 problem(s); see f/fleet.md"
    monkeypatch.setattr(orchestrate, "run", lambda cfg, say, devices_given: (merge.merge(docs), info))
    assert run_main(monkeypatch, capsys, "fleet", "report", "--out", "f")[0] == 0  # outliers alone pass
    code, _out, err = run_main(monkeypatch, capsys, "fleet", "report", "--out", "f", "--fail-on-outlier")
    assert code == 1 and err.splitlines()[-1] == "rooflab: error: 1 GPU(s) flagged as outliers (--fail-on-outlier)"


def test_no_module_of_the_old_fleet_command_line_is_left():
    import importlib.util

    assert importlib.util.find_spec("rooflab.cli_fleet") is None


def test_report_devices_is_the_fleet_report(fake_node, monkeypatch, capsys, tmp_path):
    """`rooflab report --devices 0,1` runs `fleet report` with the options it was given."""
    for k in LAUNCH_VARS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.chdir(tmp_path)
    code, out, _err = run_main(monkeypatch, capsys, "report", "--devices", "0,1", "--out", "r", "--quick",
                               "--n", "512")
    assert code == 0 and "wrote r/: fleet.json" in out
    workers = [c for c, _ in fake_node.calls if c[3] == "worker"]
    assert len(workers) == 2 and all(c[c.index("--n") + 1] == "512" and "--quick" in c for c in workers)
    assert (tmp_path / "r" / "fleet.json").is_file()


def test_fleet_help_is_written_as_the_terminal_can_show_it():
    """A terminal that is not UTF-8 gets the fleet commands' help in plain ASCII, as every other command's."""
    import os
    import subprocess

    from fleet_fixtures import SRC

    env = {**os.environ, "PYTHONPATH": str(SRC.parent), "PYTHONIOENCODING": "ascii"}
    for args, plain in ((["gemm", "--help"], b"(G1-G11)"), (["fleet", "report", "--help"], b"(local rank -> GPU)")):
        proc = subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True, env=env, timeout=60,
                              check=False)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.isascii() and plain in b" ".join(proc.stdout.split()), args
