"""What the command line writes, and what happens when it cannot.

- A write that fails (a folder that cannot be created, a path under a regular file,
  /proc) is one line `rooflab: error: cannot write …`, never a traceback, and the
  results document is saved to a fallback file named in that line: a measurement
  is never lost because its output path was wrong.
- Output files get the permissions the umask asks for (0666 & ~umask), not mkstemp's 0600.
- `report` into a folder that holds an earlier report removes the files of that
  report which this run does not write again (listed in the folder's manifest),
  never a file rooflab did not write, and says so in one line.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rooflab import cli as cli_mod
from rooflab import results

DATA = Path(__file__).parent / "data"
H200 = DATA / "h200_results.json"
SRC = str(Path(__file__).resolve().parents[1] / "src")


def rooflab(*args, cwd=None, umask: int | None = None, tmpdir: Path | None = None):
    env = {**os.environ, "PYTHONPATH": SRC, "CUDA_VISIBLE_DEVICES": ""}
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    pre = (lambda: os.umask(umask)) if umask is not None else None
    return subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True, text=True, env=env, check=False,
                          cwd=cwd, timeout=120, preexec_fn=pre)


def error_line(proc) -> str:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("rooflab: error: "), proc.stderr
    assert sum(ln.startswith("rooflab: error:") for ln in lines) == 1, proc.stderr
    assert all(ln.startswith(("warning: ", "… ")) for ln in lines[:-1]), proc.stderr
    return lines[-1]


def saved_to(line: str) -> Path:
    assert "; the results were saved to " in line, line
    return Path(line.rsplit("; the results were saved to ", 1)[1].rstrip("."))


# ---------------------------------------------------------------- writes that fail


def test_report_into_proc_is_one_line_and_the_results_are_saved(tmp_path):
    fallback = tmp_path / "tmp"
    fallback.mkdir()
    p = rooflab("report", "--from", str(H200), "--out", "/proc/forbidden", tmpdir=fallback)
    line = error_line(p)
    assert "/proc/forbidden" in line
    if p.returncode == 2:  # not root: refused before anything ran
        assert "cannot write" in line
        return
    assert p.returncode == 1, p.stderr
    assert line.startswith("rooflab: error: cannot write /proc/forbidden/results.json (")
    saved = saved_to(line)
    assert saved.parent == fallback and saved.name.startswith("rooflab-results-") and saved.suffix == ".json"
    assert results.load(saved) == results.load(H200) | {"command": results.load(saved)["command"]}


def test_specs_md_into_proc_is_one_line(tmp_path):
    p = rooflab("specs", "--format", "md", "--out", "/proc/x.md", tmpdir=tmp_path)
    line = error_line(p)
    assert p.returncode == 2  # found before anything runs, like any other folder that takes no file
    assert "--out /proc/x.md: cannot write there" in line
    assert p.stdout == ""


@pytest.mark.parametrize("fmt", ["json", "md", "csv"])
def test_failed_write_keeps_the_measurement(fmt, tmp_path, monkeypatch, capsys):
    """What a GPU run does when it saves: here with a measured section faked and the write refused."""
    doc = results.load(H200)

    def fake_measure(title, **sections):
        return json.loads(json.dumps(doc))

    out = tmp_path / "sub" / f"gemm.{fmt}"
    real_write = results.write_atomic

    def refuse(path, text):
        if Path(path) == out:
            raise PermissionError(13, "Permission denied", str(path))
        real_write(path, text)

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(cli_mod.measuring, "measure", fake_measure)  # gemm is a measuring command
    monkeypatch.setattr(results, "write_atomic", refuse)
    monkeypatch.setattr(sys, "argv", ["rooflab", "gemm", "--format", fmt, "--out", str(out)])
    with pytest.raises(SystemExit) as exc:
        cli_mod.main()
    err = capsys.readouterr().err
    assert exc.value.code == 1, err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"rooflab: error: cannot write {out} (Permission denied)"), line
    saved = saved_to(line)
    assert results.load(saved)["gemm"] == doc["gemm"]
    assert not out.exists()


def test_fallback_goes_to_the_current_folder_when_tmp_is_unusable(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", "/proc/no-such-tmp")
    monkeypatch.chdir(tmp_path)
    from rooflab.errors import OutputError  # noqa: PLC0415

    with pytest.raises(OutputError) as exc:
        results.save_document("/proc/forbidden/r.json", {"schema_version": 1, "x": 1})
    msg = str(exc.value)
    saved = Path(msg.rsplit("; the results were saved to ", 1)[1])
    assert saved.parent.resolve() == tmp_path.resolve()
    assert json.loads(saved.read_text())["x"] == 1


def test_out_under_a_regular_file_is_refused_before_anything_runs(tmp_path):
    (tmp_path / "somefile.txt").write_text("x\n")
    p = rooflab("report", "--from", str(H200), "--out", "somefile.txt/sub", cwd=tmp_path)
    line = error_line(p)
    assert p.returncode == 2
    assert "somefile.txt" in line and "not a folder" in line


# ---------------------------------------------------------------- permissions follow the umask


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_output_files_respect_the_umask(umask, tmp_path):
    p = rooflab("specs", "--format", "md", "--out", "specs.md", cwd=tmp_path, umask=umask)
    assert p.returncode == 0, p.stderr
    assert _mode(tmp_path / "specs.md") == 0o666 & ~umask
    p = rooflab("report", "--from", str(H200), "--out", "r", cwd=tmp_path, umask=umask)
    assert p.returncode == 0, p.stderr
    for f in (tmp_path / "r").iterdir():
        assert _mode(f) == 0o666 & ~umask, (f.name, oct(_mode(f)))


def test_umask_is_read_once_and_left_as_it_was():
    before = os.umask(0o027)
    results.current_umask.cache_clear()
    try:
        assert results.current_umask() == 0o027
        assert os.umask(0o027) == 0o027  # reading it did not change it
        os.umask(0o022)
        assert results.current_umask() == 0o027  # read once: later calls take no risk of a race
    finally:
        os.umask(before)
        results.current_umask.cache_clear()


# ---------------------------------------------------------------- a report folder that holds an earlier run


def test_report_over_an_earlier_report_removes_only_its_stale_files(tmp_path):
    out = tmp_path / "r"
    p = rooflab("report", "--from", str(H200), "--out", str(out))
    assert p.returncode == 0, p.stderr
    first = {f.name for f in out.iterdir()}
    assert {"gemm.csv", "bandwidth.csv", "flops.csv"} <= first
    (out / "my-notes.txt").write_text("mine\n")
    (out / "extra.csv").write_text("mine too\n")

    p = rooflab("report", "--gpu", "t4", "--out", str(out))
    assert p.returncode == 0, p.stderr
    second = {f.name for f in out.iterdir()}
    assert "gemm.csv" not in second and "flops.csv" not in second and "bandwidth.csv" not in second
    assert {"my-notes.txt", "extra.csv", "report.md", "results.json", "roofline.png"} <= second
    said = [ln for ln in p.stdout.splitlines() if "removed" in ln]
    assert len(said) == 1, p.stdout
    for name in ("gemm.csv", "flops.csv", "bandwidth.csv"):
        assert name in said[0]
    assert json.loads((out / "results.json").read_text())["device"]["spec_only"]


def test_report_never_removes_files_it_did_not_write(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "gemm.csv").write_text("a user's file, no manifest names it\n")
    p = rooflab("report", "--gpu", "t4", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert (out / "gemm.csv").read_text() == "a user's file, no manifest names it\n"


def test_manifest_entries_outside_the_folder_are_ignored(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (out / results.MANIFEST).write_text(json.dumps({"files": ["../victim.txt", str(victim), "sub/x.csv"]}))
    p = rooflab("report", "--gpu", "t4", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert victim.read_text() == "keep me\n"
