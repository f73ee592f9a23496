"""Outputs that never destroy anything, signals, locales, formats and the terminal.

Special files are made in temporary folders only (a FIFO, symlinks), never at /dev. Signals are
sent to a subprocess running the CLI with one step made slow (tests/slow_rooflab.py).
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import select
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rooflab import report_folder, results
from rooflab.errors import UsageError

DATA = Path(__file__).parent / "data"
H200 = DATA / "h200_results.json"
SRC = str(Path(__file__).resolve().parents[1] / "src")
SLOW = str(Path(__file__).parent / "slow_rooflab.py")


def default_signals() -> None:
    """In the child: SIGINT and SIGHUP as a terminal's user has them (a background job or nohup, which
    may have started this test run, ignores them, and a child inherits that)."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def env_for(**extra) -> dict:
    env = {**os.environ, "PYTHONPATH": SRC, "CUDA_VISIBLE_DEVICES": ""}
    env.pop("COLUMNS", None)
    env.update(extra)
    return env


def rooflab(*args, cwd=None, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True, text=True, check=False,
                          cwd=cwd, timeout=timeout, env=env or env_for())


def error_line(proc) -> str:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("rooflab: error: "), proc.stderr
    assert all(ln.startswith(("warning: ", "… ")) for ln in lines[:-1]), proc.stderr
    return lines[-1]


class FifoReader:
    """Drains a FIFO in a thread (opened without blocking, so a writer can open it at once)."""

    def __init__(self, path: Path):
        self.path, self.data, self.stop = path, b"", threading.Event()
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                chunk = os.read(self.fd, 65536)
                self.data += chunk
                if not chunk:
                    time.sleep(0.02)

    def close(self) -> bytes:
        time.sleep(0.1)
        self.stop.set()
        self.thread.join(2)
        os.close(self.fd)
        return self.data


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def hidden_leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".") and p.name != results.MANIFEST]


# ---------------------------------------------------------------- item 1: --out never replaces what is not a file


def test_out_fifo_is_written_through_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    p = rooflab("specs", "--format", "json", "--out", str(fifo), "--no-detect")
    data = reader.close()
    assert p.returncode == 0, p.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert json.loads(data)["specs"]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["pipe.json"]  # no temporary beside it


@pytest.mark.parametrize("dangling", [False, True])
def test_out_symlink_writes_its_target_and_stays_a_link(tmp_path, dangling):
    target = tmp_path / "real" / "specs.md"
    target.parent.mkdir()
    if not dangling:
        target.write_text("old\n")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    p = rooflab("specs", "--format", "md", "--out", str(link), "--no-detect")
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8").startswith("**Published specs")
    assert hidden_leftovers(target.parent) == [] and hidden_leftovers(tmp_path) == []


def test_publish_writes_through_a_fifo_and_into_a_links_target(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    tmp = tmp_path / "t1"
    tmp.write_bytes(b"picture")
    results.publish(tmp, fifo)
    assert reader.close() == b"picture" and not tmp.exists() and stat.S_ISFIFO(fifo.lstat().st_mode)
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    link = tmp_path / "l.png"
    link.symlink_to(elsewhere / "r.png")
    tmp = tmp_path / "t2"
    tmp.write_bytes(b"png")
    results.publish(tmp, link)  # the target is in another folder: written there, not renamed over the link
    assert link.is_symlink() and (elsewhere / "r.png").read_bytes() == b"png" and not tmp.exists()


def test_roofline_picture_to_a_symlink_keeps_the_link(tmp_path, monkeypatch):
    from rooflab.model import placement  # noqa: PLC0415
    from rooflab.report import picture  # noqa: PLC0415

    monkeypatch.setattr(picture, "plot", lambda rl, **kw: [Path(p).write_bytes(b"img") for p in kw.values() if p])
    target = tmp_path / "t.png"
    link = tmp_path / "l.png"
    link.symlink_to(target)
    picture.save(placement.roofline(results.load(H200)), link)
    assert link.is_symlink() and target.read_bytes() == b"img"


# ---------------------------------------------------------------- item 2: signals, and a report folder replaced whole


def _slow_report(tmp_path: Path, where: str, args: list[str], twice: bool = False):
    env = env_for(SLOW_AT=where, **({"SLOW_TWICE": "1"} if twice else {}))
    proc = subprocess.Popen([sys.executable, SLOW, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=tmp_path, preexec_fn=default_signals)
    seen = ""
    deadline = time.monotonic() + 60
    while "SLOW" not in seen and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
    assert "SLOW" in seen, seen
    return proc, seen


def _earlier_report(out: Path) -> dict[str, bytes]:
    p = rooflab("report", "--from", str(H200), "--out", str(out))
    assert p.returncode == 0, p.stderr
    return snapshot(out)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_while_writing_leaves_the_earlier_report_whole(tmp_path, sig, code):
    out = tmp_path / "r"
    before = _earlier_report(out)
    proc, _ = _slow_report(tmp_path, "write", ["report", "--gpu", "t4", "--out", str(out)])
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    line = stderr.strip().splitlines()[-1]
    assert line.startswith("rooflab: error: report ") and "Traceback" not in stderr, stderr
    after = snapshot(out)
    partial = after.pop(report_folder.PARTIAL)
    assert after == before  # every earlier file as it was: no T4 results.json beside the H200 report
    assert json.loads(partial)["device"]["spec_key"] == "t4"
    assert hidden_leftovers(out) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_measuring_keeps_what_was_measured(tmp_path, sig):
    out = tmp_path / "r"
    proc, _ = _slow_report(tmp_path, "measure", ["report", "--out", str(out)])
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, stderr
    line = stderr.strip().splitlines()[-1]
    assert f"results so far in {out / report_folder.PARTIAL}" in line and "during 'bandwidth'" in line, line
    assert "finished: device, flops" in line
    doc = results.load(out / report_folder.PARTIAL)
    assert doc["flops"] == json.loads(H200.read_text())["flops"]
    assert sorted(p.name for p in out.iterdir()) == [report_folder.PARTIAL]


def test_a_second_ctrl_c_still_exits_130(tmp_path):
    out = tmp_path / "r"
    proc, _ = _slow_report(tmp_path, "write", ["report", "--gpu", "h200", "--out", str(out)], twice=True)
    proc.send_signal(signal.SIGINT)
    assert proc.stderr.readline().strip() == "SLOW AGAIN"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1].startswith("rooflab: error: report interrupted")
    assert (out / report_folder.PARTIAL).exists() and hidden_leftovers(out) == []


def test_a_build_folder_left_by_a_killed_run_is_removed(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    dead = out / f"{report_folder.BUILD_PREFIX}999999999-abc"  # no such process
    dead.mkdir()
    (dead / ".roofline.png.x.png").write_bytes(b"half")
    mine = out / ".notes"  # the user's own hidden file: not rooflab's
    mine.write_text("keep\n")
    old_tmp = out / ".roofline.png.k2j4_x9a.png"  # a picture's temporary from a run killed outright
    old_tmp.write_bytes(b"half")
    os.utime(old_tmp, (time.time() - 7200,) * 2)
    young = out / ".report.md.abcdefgh.tmp"  # maybe another run's, writing now: left alone
    young.write_text("half")
    p = rooflab("report", "--gpu", "h200", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert not dead.exists() and not old_tmp.exists() and young.exists() and mine.read_text() == "keep\n"


def test_signals_handled_puts_the_handlers_back():
    from rooflab import signals  # noqa: PLC0415

    before = {s: signal.getsignal(s) for s in signals.SIGNALS}
    with signals.handled():
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
        signals.ignore_more()
    assert {s: signal.getsignal(s) for s in signals.SIGNALS} == before


# ---------------------------------------------------------------- item 3: locales that are not UTF-8

C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}


def test_report_under_an_ascii_locale_writes_utf8_files(tmp_path):
    p = rooflab("report", "--gpu", "h200", "--out", "r", cwd=tmp_path, env=env_for(**C_LOCALE))
    assert p.returncode == 0, p.stderr
    md = (tmp_path / "r" / "report.md").read_bytes().decode("utf-8")
    assert "—" in md or "×" in md  # UTF-8 text, not the locale's
    results.load(tmp_path / "r" / "results.json")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("args", [["specs", "--no-detect"], ["ridge", "--no-detect"], ["report", "--help"],
                                  ["specs", "--no-detect", "--format", "md"]])
def test_a_terminal_that_cannot_encode_gets_what_it_can(encoding, args, tmp_path):
    full = rooflab(*args, cwd=tmp_path)
    p = subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True, check=False, cwd=tmp_path,
                       env=env_for(PYTHONIOENCODING=encoding), timeout=120)
    assert p.returncode == 0, p.stderr
    text = p.stdout.decode(encoding)  # every byte in the terminal's encoding
    assert len(text.splitlines()) == len(full.stdout.splitlines())
    if encoding == "ascii" and "×" in full.stdout:
        assert "x" in text


# ---------------------------------------------------------------- item 4: odd documents and odd --out values


@pytest.mark.parametrize("depth", [500, 980])
def test_deeply_nested_document_is_refused_in_one_line(tmp_path, depth):
    text = H200.read_text().rstrip().rstrip("}")  # the recorded run, with an unknown field nested `depth` deep
    bad = tmp_path / "deep.json"
    bad.write_text(text + ', "unknown": ' + '{"x": ' * depth + "1" + "}" * depth + "}")
    p = rooflab("report", "--from", str(bad), "--out", str(tmp_path / "r"))
    assert p.returncode == 2, p.stderr
    assert "nested" in error_line(p) and "bug" not in p.stderr


@pytest.mark.parametrize("args", [["report", "--from", str(H200), "--out", ""],
                                  ["specs", "--format", "json", "--out", ""],
                                  ["roofline", "--gpu", "h200", "--out", ""],
                                  ["report", "--gpu", "h200", "--out", "-"]])
def test_empty_out_and_a_report_to_stdout_are_refused(tmp_path, args):
    (tmp_path / "report.md").write_text("a report that was here\n")
    p = rooflab(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    error_line(p)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["report.md"]


def test_out_dash_is_standard_output(tmp_path):
    p = rooflab("specs", "--format", "json", "--out", "-", "--no-detect", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["specs"] and list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- item 5: every table in every format


@pytest.mark.parametrize("args", [["specs", "--no-detect"], ["ridge", "--no-detect"],
                                  ["compare", str(H200), str(H200)]])
def test_csv_carries_every_table(args):
    md = rooflab(*args, "--format", "md")
    tables = sum(ln.startswith("|---") for ln in md.stdout.splitlines())
    p = rooflab(*args, "--format", "csv")
    assert p.returncode == 0, p.stderr
    blocks = [b for b in p.stdout.split("\n\n") if b.strip()]
    assert tables >= 2 and len(blocks) == tables, p.stdout
    for b in blocks:
        rows = list(csv.reader(io.StringIO(b)))
        assert len({len(r) for r in rows}) == 1, b


def test_ridge_json_holds_numbers():
    p = rooflab("ridge", "--no-detect", "--format", "json")
    assert p.returncode == 0, p.stderr
    seed = json.loads(p.stdout)["ridge"][0]
    i = seed["columns"].index("ridge FLOP/B")
    ridges = [row[i] for row in seed["rows"]]
    assert all(isinstance(r, float) for r in ridges) and max(ridges) > 1000  # 1125.0, not "1,125.0"


# ---------------------------------------------------------------- item 6: help and checks agree


def _help(*args) -> str:
    p = rooflab(*args, "--help", env=env_for(COLUMNS="200"))
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_memory_launch_ms_help_is_what_the_check_takes():
    from rooflab.measure.memory import MemoryConfig  # noqa: PLC0415

    assert "0.05 to 200 ms" in _help("memory")
    for ok in (0.05, 200.0):
        MemoryConfig(target_ms=ok).validate()
    for bad in ("500", "0.01", "201"):
        p = rooflab("memory", "--launch-ms", bad)
        assert p.returncode == 2 and "--launch-ms" in error_line(p)


def test_tune_offers_only_tunable_rungs():
    text = " ".join(_help("tune").split())
    assert "naive" not in text and "pipelined" in text
    for kernels, why in (("naive", "not tunable"), ("pipelined,pipelined", "more than once"), ("", "names no rung")):
        p = rooflab("tune", "--kernels", kernels)
        assert p.returncode == 2 and why in error_line(p), p.stderr


@pytest.mark.parametrize(("args", "why"), [(["gemm", "--kernels", "naive,naive"], "more than once"),
                                           (["memory", "--parts", ""], "names no part"),
                                           (["memory", "--parts", "l2,bogus"], "unknown part")])
def test_bad_lists_are_refused_before_the_gpu_is_looked_for(args, why):
    p = rooflab(*args)
    assert p.returncode == 2 and why in error_line(p), p.stderr


@pytest.mark.parametrize("command", ["report", "roofline", "specs"])
def test_gpu_option_help_lists_the_names(command):
    text = " ".join(_help(command).split())
    assert "h100-sxm" in text and "t4" in text and "h200" in text


def test_an_out_that_cannot_be_made_is_refused_alike(tmp_path):
    codes = {rooflab("specs", "--format", "json", "--out", o).returncode for o in ("/proc/self", "/proc/rooflab")}
    assert codes == {2}


# ---------------------------------------------------------------- item 7: options a run would ignore


@pytest.mark.parametrize("args", [["report", "--gpu", "t4", "--from", str(H200)],
                                  ["report", "--from", str(H200), "--n", "128"],
                                  ["report", "--from", str(H200), "--quick"],
                                  ["report", "--gpu", "t4", "--with", "k.cu:k"],
                                  ["roofline", "--gpu", "t4", "--from", str(H200)],
                                  ["roofline", "--from", str(H200), "--n", "128"]])
def test_ignored_options_are_refused(tmp_path, args):
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k() {}\n')
    p = rooflab(*args, "--out", str(tmp_path / ("r.png" if args[0] == "roofline" else "r")), cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    error_line(p)
    assert not (tmp_path / "r").exists() and not (tmp_path / "r.png").exists()


def test_with_and_no_gpu_warns_that_it_is_not_run(tmp_path):
    (tmp_path / "k.cu").write_text('extern "C" __global__ void k() {}\n')
    p = rooflab("report", "--with", "k.cu:k", "--out", "r", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert any(ln.startswith("warning: --with k.cu:k: not run") for ln in p.stderr.splitlines()), p.stderr


# ---------------------------------------------------------------- item 8: the terminal


def test_tables_at_80_columns_never_break_a_number():
    from rich.console import Console  # noqa: PLC0415

    from rooflab.report import document  # noqa: PLC0415
    from rooflab.report.terminal import to_rich  # noqa: PLC0415

    doc = results.load(H200)
    tables = document.all_tables(doc)
    assert len(tables) > 10
    for width in (80, 60):
        for t in tables:
            con = Console(width=width, file=io.StringIO(), color_system=None)
            con.print(to_rich(t, width))
            text = con.file.getvalue()
            # every number (a word with a digit; a long kernel name may be folded)
            words = {w for row in t.rows for v in row if v is not None for w in str(v).split()
                     if any(ch.isdigit() for ch in w) and len(w) <= 20}
            lines = text.splitlines()
            assert all(len(ln) <= width for ln in lines), (t.title, width)
            for w in words:
                assert any(w in ln for ln in lines), (t.title, width, w)


def _on_a_terminal(args: list[str], cwd: Path, **env) -> str:
    """stderr on a pseudo-terminal; what was drawn there."""
    try:
        master, slave = pty.openpty()
    except OSError as exc:
        pytest.skip(f"no pseudo-terminal here ({exc})")
    proc = subprocess.Popen([sys.executable, "-m", "rooflab", *args], stdout=subprocess.DEVNULL, stderr=slave,
                            cwd=cwd, env=env_for(**env))
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    proc.wait(60)
    os.close(master)
    assert proc.returncode == 0
    return data.decode("utf-8", "replace")


def test_term_dumb_draws_no_progress_bar(tmp_path):
    drawn = _on_a_terminal(["report", "--gpu", "h200", "--out", "r"], tmp_path, TERM="dumb")
    assert "━" not in drawn and "\x1b[" not in drawn, repr(drawn)


def test_piped_output_follows_columns():
    p = rooflab("ridge", "--no-detect", env=env_for(COLUMNS="60"))
    assert p.returncode == 0, p.stderr
    assert max(len(ln) for ln in p.stdout.splitlines()) <= 60


def test_no_progress_line_before_a_warning_when_stderr_is_not_a_terminal(tmp_path):
    p = rooflab("report", "--out", "r", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert [ln for ln in p.stderr.splitlines() if not ln.startswith("warning: ")] == [], p.stderr


@pytest.mark.parametrize("args", [["specs", "--no-detect"], ["specs", "--no-detect", "--format", "json"],
                                  ["gemm", "--help"]])
def test_a_closed_pipe_ends_quietly(args):
    r, w = os.pipe()
    os.close(r)  # the reader is gone before the first write, as `| head -1` is after its line
    p = subprocess.run([sys.executable, "-m", "rooflab", *args], stdout=w, stderr=subprocess.PIPE, text=True,
                       env=env_for(), check=False, timeout=120)
    os.close(w)
    assert p.returncode in (0, 141), p.stderr
    assert p.stderr == ""


# ---------------------------------------------------------------- item 9: a user's file in a report folder


def test_a_users_file_named_like_a_report_csv_is_never_replaced(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "gemm.csv").write_text("my own numbers\n")
    p = rooflab("report", "--from", str(H200), "--out", str(out))
    assert p.returncode == 1, p.stderr
    assert "gemm.csv" in error_line(p) and "not written by rooflab" in p.stderr
    assert sorted(x.name for x in out.iterdir()) == ["gemm.csv"]
    assert (out / "gemm.csv").read_text() == "my own numbers\n"
    p = rooflab("report", "--gpu", "t4", "--out", str(out))  # a report that does not write gemm.csv
    assert p.returncode == 0, p.stderr
    assert "gemm.csv" not in results.read_manifest(out)
    p = rooflab("report", "--gpu", "h200", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert (out / "gemm.csv").read_text() == "my own numbers\n"


def test_a_users_report_md_is_found_before_anything_runs(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "report.md").write_text("my notes\n")
    p = rooflab("report", "--out", str(out))
    assert p.returncode == 2 and "report.md" in error_line(p), p.stderr
    assert sorted(x.name for x in out.iterdir()) == ["report.md"]


def test_check_writable_refuses_an_empty_name():
    with pytest.raises(UsageError):
        results.check_writable("", "--out")
    with pytest.raises(UsageError):
        results.check_writable("-", "--out", folder=True)
    results.check_writable("-", "--out")


def test_a_signal_held_back_while_the_report_moves_in_says_the_report_is_there(tmp_path, monkeypatch):
    from rooflab import signals  # noqa: PLC0415

    out = tmp_path / "r"
    stage = tmp_path / "stage"
    stage.mkdir()
    (stage / "report.md").write_text("new\n")
    real_replace = os.replace

    def replace_then_signal(a, b):
        real_replace(a, b)
        os.kill(os.getpid(), signal.SIGTERM)  # held back until every file is in place

    out.mkdir()
    monkeypatch.setattr(os, "replace", replace_then_signal)
    with signals.handled(), pytest.raises(signals.Interrupted) as exc:
        report_folder.move_in(out, stage, ["report.md"])
    monkeypatch.setattr(os, "replace", real_replace)
    assert exc.value.report_in_place
    assert (out / "report.md").read_text() == "new\n" and results.read_manifest(out) == ["report.md"]


def test_a_saved_document_renders_into_its_own_folder(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    saved = out / "results.json"
    saved.write_text(results.dumps(results.load(H200)))  # as `rooflab gemm --format json --out` writes it
    p = rooflab("report", "--from", str(saved), "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert (out / "report.md").exists() and results.load(saved)["gemm"] == results.load(H200)["gemm"]


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_any_command_stopped_by_a_signal_ends_in_one_line_and_its_code(tmp_path, sig, code):
    fifo = tmp_path / "nobody-reads.json"
    os.mkfifo(fifo)  # the write waits for a reader that never comes
    proc = subprocess.Popen([sys.executable, "-m", "rooflab", "specs", "--no-detect", "--format", "json", "--out",
                             str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_for(),
                            preexec_fn=default_signals)
    time.sleep(3)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert stderr.startswith("rooflab: error: ") and stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nobody-reads.json"]


def test_deferred_holds_a_signal_back_even_with_other_threads():
    from rooflab import signals  # noqa: PLC0415

    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)  # a thread that could take a masked signal
    other.start()
    done = []
    try:
        with signals.handled(), pytest.raises(signals.Interrupted):
            with signals.deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)
                done.append("the block ran to its end")
    finally:
        stop.set()
    assert done == ["the block ran to its end"]
