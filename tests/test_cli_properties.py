"""Property-based acceptance test of the command line.

Hypothesis drives the real click group with generated argument lists (commands
and options taken from the group itself, values from mixed generators: valid,
empty, negative, huge, inf, nan, random text, unicode) and with generated
malformed results documents (the recorded H200 run with keys deleted, types
changed, strings, nulls and negative numbers planted in nested fields) passed to
`report --from`, `roofline --from` and `compare`.

Whatever it generates, the CLI must:
- never print a traceback;
- exit only with a code the README lists: 0, 1, 2, 3, 4, 128 + a signal (129, 130, 143) or 141;
- on failure, print exactly one line starting `rooflab: error:` on stderr, and it
  is the last line. Lines before it may only be warnings (`warning: …`) or, where
  stderr is not a terminal, progress lines (`… step`), which is what the CLI
  prints while it works; nothing else.

It runs in-process (cli.main() with a patched sys.argv, SystemExit caught, output
taken with capsys) so that a few hundred runs fit in well under a minute, in a
fresh temporary directory per example so nothing lands in the checkout. No GPU is
ever used: CUDA_VISIBLE_DEVICES is emptied and device detection raises NoGPUError.
The roofline picture is replaced by a stub that does the picture's arithmetic
(axis limits and the points table) without matplotlib's rendering, which costs
about two seconds a report; the real picture is covered by test_report.py.

Paths include special files made in the example's temporary folder: a FIFO (drained by a
thread), a symlink to a file, a dangling symlink and a symlink to a folder; whatever the
command does, each is still what it was afterwards. Two further properties run the CLI as a
subprocess: under locales and stream encodings that are not UTF-8, and stopped by a signal at
a generated point of a report (tests/slow_rooflab.py).
"""

from __future__ import annotations

import copy
import json
import math
import os
import shutil
import select
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rooflab import cli as cli_mod
from rooflab.errors import (
    TRACE_NO_KERNELS,
    TRACE_NOT_FOUND,
    TRACE_OVER_BUDGET,
    TRACE_PROGRAM_FAILED,
    NoGPUError,
    TraceError,
)

DATA = Path(__file__).parent / "data"
H200 = DATA / "h200_results.json"
RECORDED = json.loads(H200.read_text())
EXIT_CODES = {0, 1, 2, 3, 4, 129, 130, 141, 143}
RECORDED_COPY = "recorded.json"  # the recorded run, copied into each example's folder: an output may overwrite it
SPECIAL = ("fifo.json", "link.json", "dangling.md", "dirlink")  # made in each example's folder
INPUTS = ("from_file", "a", "b", "target", "op_module")
TRACE_CODES = {TRACE_NOT_FOUND, TRACE_PROGRAM_FAILED, TRACE_NO_KERNELS, TRACE_OVER_BUDGET}
COMMANDS = sorted(cli_mod.cli.commands)

# ---------------------------------------------------------------- values

NASTY = ["", " ", "0", "-1", "-5", "1e400", "-1e400", "inf", "-inf", "nan", "NaN", "1e30", "99999999999999999999",
         "2147483648", "4294967297", "0x10", "1.5", "1K", "256M", "1G", "9999999G", "-256M", ",", ",,", "naive,",
         "a,b", "--", "-", "../x", "/proc/forbidden", "/proc/forbidden/sub", "/dev/null", "é", "日本", "\x7f",
         "[red]x[/red]", "%s", "{}", "null"]
VALID = ["1", "2", "16", "64", "512", "4096", "50", "100", "256M", "1K", "naive", "naive,tiled32", "cublas",
         "128,256", "h200", "t4", "h100-sxm", "10", "0.5"]

text_values = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                      max_size=12)
values = st.one_of(st.sampled_from(VALID), st.sampled_from(NASTY), text_values,
                   st.integers(min_value=-(2**70), max_value=2**70).map(str),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr))


def _value_for(param: click.Parameter, tmp: Path, draw) -> list[str]:
    """The argv words for one parameter (an option with its value, or an argument)."""
    name = param.opts[0] if isinstance(param, click.Option) else None
    if isinstance(param, click.Option) and param.is_flag:
        if param.secondary_opts and draw(st.booleans()):
            return [param.secondary_opts[0]]
        return [name]
    if isinstance(param.type, click.Choice):
        value = draw(st.one_of(st.sampled_from(list(param.type.choices)), values))
    elif isinstance(param.type, click.Path) or param.name in ("out_file", "out_dir", "out_png", "from_file",
                                                              "raw_dir", "a", "b"):
        value = draw(st.one_of(st.sampled_from([str(tmp / RECORDED_COPY), str(tmp / "out"), str(tmp / "o.json"), "rel/x.md",
                                                "/proc/forbidden", "/proc/forbidden/x.json",
                                                str(tmp / "file.txt" / "sub"), str(tmp / "missing.json"),
                                                str(tmp / "file.txt"),
                                                # special files as outputs (a FIFO read as an input would wait
                                                # for a writer, as any program's would)
                                                *(str(tmp / n) for n in SPECIAL if param.name not in INPUTS)]),
                                values))
    else:
        value = draw(values)
    return [name, value] if name else [value]


@st.composite
def argv(draw, tmp: Path):
    command = draw(st.sampled_from(COMMANDS))
    cmd = cli_mod.cli.commands[command]
    params = [p for p in cmd.params if p.name != "help"]
    words = [command]
    arguments = [p for p in params if isinstance(p, click.Argument)]
    options = [p for p in params if isinstance(p, click.Option)]
    chosen = draw(st.lists(st.sampled_from(options), max_size=4)) if options else []
    for p in chosen:
        words += _value_for(p, tmp, draw)
    for p in arguments:
        if draw(st.integers(0, 9)):  # now and then leave an argument out
            words += _value_for(p, tmp, draw)
    if not draw(st.integers(0, 14)):
        words.append(draw(st.sampled_from(["--bogus", "extra", "-x", "--out="])))
    return words


# ---------------------------------------------------------------- malformed documents


def _paths(obj, prefix=()):
    """Every (path) into a document, skipping the thousand ncu metrics (one is enough)."""
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "metrics" and len(prefix) > 2:
                out.append((*prefix, k))
                continue
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:2]):
            out += _paths(v, (*prefix, i))
    return out


PATHS = [p for p in _paths(RECORDED) if p]
BAD_VALUES = [None, "fast", "", -1, -1.5, 0, 1e308, -1e308, True, [], {}, [1, 2], {"x": 1}, "NaN", 2**64]


def _mutate(doc, path, op, value):
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    last = path[-1]
    if op == "delete":
        if isinstance(parent, dict):
            parent.pop(last, None)
        elif isinstance(parent, list) and last < len(parent):
            parent.pop(last)
    else:
        if isinstance(parent, (dict, list)):
            parent[last] = copy.deepcopy(value)


# (path, "delete" | "set", value): drawn as a short list, so a failing example prints small
mutations = st.lists(st.tuples(st.sampled_from(PATHS), st.sampled_from(["delete", "set"]),
                               st.sampled_from(BAD_VALUES)), min_size=1, max_size=3)


def malformed(muts) -> dict:
    doc = copy.deepcopy(RECORDED)
    for path, op, value in muts:
        try:
            _mutate(doc, path, op, value)
        except (KeyError, IndexError, TypeError):
            pass  # an earlier mutation removed the way there
    return doc


# ---------------------------------------------------------------- running


def _no_gpu(*_a, **_k):
    raise NoGPUError("no NVIDIA GPU found (property test)")


def _plot_stub(rl, png_path=None, svg_path=None):
    from rooflab.report import picture  # noqa: PLC0415

    picture._y_limits(rl, *picture._x_limits(rl)), rl.rows()
    for p in (png_path, svg_path):
        if p is not None:
            Path(p).write_bytes(b"stub")


def _no_program(argv):
    raise TraceError(f"command not found: {argv[0] if argv else ''} (property test)", TRACE_NOT_FOUND)


@pytest.fixture
def cli_env(monkeypatch):
    import rooflab.cuda.device  # noqa: PLC0415
    import rooflab.measure.trace  # noqa: PLC0415
    import rooflab.report.picture  # noqa: PLC0415

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("ROOFLAB_DEBUG", "1")  # an unexpected exception stays a traceback here, so it is caught
    monkeypatch.setattr(rooflab.cuda.device, "detect", _no_gpu)
    monkeypatch.setattr(rooflab.report.picture, "plot", _plot_stub)
    monkeypatch.setattr(rooflab.measure.trace, "check_command", _no_program)  # never run a generated command
    old = os.getcwd()
    yield monkeypatch
    os.chdir(old)


def run_cli(monkeypatch, capsys, words: list[str]) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["rooflab", *words])
    capsys.readouterr()
    code = 0
    escaped = ""
    try:
        cli_mod.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001  an exception that got out of main() is what a user sees as a traceback
        escaped = "".join(traceback.format_exc(limit=-4))
        code = -1
    out, err = capsys.readouterr()
    return code, out, err + escaped


def check_contract(words, code, out, err) -> None:
    where = f"rooflab {' '.join(map(repr, words))}\nexit {code}\nstdout:\n{out[-2000:]}\nstderr:\n{err[-2000:]}"
    assert "Traceback" not in out + err, where
    assert code in EXIT_CODES | (TRACE_CODES if words[:1] == ["trace"] else set()), where
    if code != 0:
        lines = err.rstrip("\n").splitlines()
        assert lines, where
        assert lines[-1].startswith("rooflab: error: "), where
        assert sum(ln.startswith("rooflab: error:") for ln in lines) == 1, where
        for ln in lines[:-1]:
            assert ln.startswith(("warning: ", "… ")), where


SETTINGS = settings(max_examples=150, deadline=None, derandomize=False, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


class Drain:
    """Reads a FIFO in a thread (opened without blocking, so a writer's open returns at once)."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            if select.select([self.fd], [], [], 0.02)[0] and not os.read(self.fd, 65536):
                time.sleep(0.01)

    def close(self):
        self.stop.set()
        self.thread.join(2)
        os.close(self.fd)


def make_special_files(tmp: Path) -> Drain:
    os.mkfifo(tmp / "fifo.json")
    (tmp / "target.json").write_text("the link's target\n")
    (tmp / "link.json").symlink_to(tmp / "target.json")
    (tmp / "dangling.md").symlink_to(tmp / "nowhere" / "t.md")
    (tmp / "folder").mkdir()
    (tmp / "dirlink").symlink_to(tmp / "folder")
    return Drain(tmp / "fifo.json")


def check_special_files(tmp: Path, where: str) -> None:
    assert stat.S_ISFIFO((tmp / "fifo.json").lstat().st_mode), where
    for name, target in (("link.json", "target.json"), ("dangling.md", "nowhere/t.md"), ("dirlink", "folder")):
        assert (tmp / name).is_symlink() and os.readlink(tmp / name) == str(tmp / target), (name, where)
    assert (tmp / "folder").is_dir() and (tmp / "target.json").is_file(), where


@SETTINGS
@given(data=st.data())
def test_generated_command_lines(cli_env, capsys, data):
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "file.txt").write_text("a regular file\n")
        shutil.copyfile(H200, tmp / RECORDED_COPY)
        drain = make_special_files(tmp)
        os.chdir(tmp)
        cli_env.setenv("TMPDIR", d)  # where a write that fails saves the results
        try:
            words = data.draw(argv(tmp), label="argv")
            code, out, err = run_cli(cli_env, capsys, words)
        finally:
            drain.close()
        check_contract(words, code, out, err)
        check_special_files(tmp, " ".join(words))


@pytest.mark.parametrize("words", [
    ["bandwidth", "--bogus"],  # found before item 6: click's four usage lines
    ["report", "--out", "/proc/forbidden"],  # found in CI: the no-GPU notice was not a warning line
])
def test_examples_found_by_the_properties(cli_env, capsys, words, tmp_path):
    os.chdir(tmp_path)
    cli_env.setenv("TMPDIR", str(tmp_path))
    code, out, err = run_cli(cli_env, capsys, words)
    check_contract(words, code, out, err)


@settings(SETTINGS, max_examples=60)
@given(muts=mutations, how=st.sampled_from(["report", "compare-a", "compare-b", "roofline"]),
       fmt=st.sampled_from(["table", "json", "csv", "md"]))
def test_malformed_results_documents(cli_env, capsys, muts, how, fmt):
    doc = malformed(muts)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        os.chdir(tmp)
        cli_env.setenv("TMPDIR", d)
        bad = tmp / "bad.json"
        bad.write_text(json.dumps(doc, allow_nan=False) if _finite(doc) else json.dumps(doc))
        words = {"report": ["report", "--from", str(bad), "--out", str(tmp / "r")],
                 "compare-a": ["compare", str(bad), str(H200), "--format", fmt],
                 "compare-b": ["compare", str(H200), str(bad), "--format", fmt],
                 "roofline": ["roofline", "--from", str(bad), "--out", str(tmp / "rl.png"), "--format", fmt]}[how]
        code, out, err = run_cli(cli_env, capsys, words)
        check_contract(words, code, out, err)


def _finite(obj) -> bool:
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(_finite(v) for v in obj.values())
    if isinstance(obj, list):
        return all(_finite(v) for v in obj)
    return True


# ---------------------------------------------------------------- as a subprocess: locales and signals

SRC = str(Path(__file__).resolve().parents[1] / "src")
SLOW = str(Path(__file__).parent / "slow_rooflab.py")
LOCALES = [
    {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"},  # an ASCII locale
    {"PYTHONIOENCODING": "ascii"},
    {"PYTHONIOENCODING": "latin-1"},
    {"PYTHONIOENCODING": "cp1252", "LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"},
]
LOCALE_COMMANDS = [["specs"], ["ridge"], ["specs", "--format", "md"], ["specs", "--format", "csv"],
                   ["report", "--gpu", "h200", "--out", "r"], ["report", "--from", str(H200), "--out", "r"],
                   ["compare", str(H200), str(H200)], ["report", "--help"], ["gemm", "--help"],
                   ["specs", "--format", "json", "--out", "s.json"], ["report", "--gpu", "nope"],
                   ["gemm", "--n", "é"]]
SUBPROCESS = settings(max_examples=8, deadline=None, derandomize=False, database=None,
                      suppress_health_check=[HealthCheck.too_slow])


def _default_signals() -> None:  # a background job's ignored SIGINT (or nohup's SIGHUP) is not inherited
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _env(extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LC_CTYPE", "PYTHONIOENCODING",
                                                              "PYTHONUTF8", "COLUMNS")}
    return {**env, "PYTHONPATH": SRC, "CUDA_VISIBLE_DEVICES": "", **extra}


def _decoded(raw: bytes, extra: dict) -> str:
    enc = extra.get("PYTHONIOENCODING", "ascii")
    return raw.decode(enc)  # all of it in the stream's encoding, or this raises


@SUBPROCESS
@given(extra=st.sampled_from(LOCALES), words=st.sampled_from(LOCALE_COMMANDS))
def test_locales_that_are_not_utf8(extra, words):
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([sys.executable, "-m", "rooflab", *words], capture_output=True, env=_env(extra), cwd=d,
                           timeout=120, check=False)
        out, err = _decoded(p.stdout, extra), _decoded(p.stderr, extra)
        check_contract(words, p.returncode, out, err)
        assert p.returncode in (0, 2), err
        for f in Path(d).rglob("*"):
            if f.suffix in (".md", ".csv", ".json"):
                f.read_bytes().decode("utf-8")  # files are UTF-8 whatever the locale


@SUBPROCESS
@given(sig=st.sampled_from([signal.SIGINT, signal.SIGTERM, signal.SIGHUP]), where=st.sampled_from(["write", "measure"]),
       earlier=st.booleans(), gpu=st.sampled_from(["t4", "h200", "l4"]))
def test_signals_leave_the_folder_whole(sig, where, earlier, gpu):
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "r"
        if earlier:
            p = subprocess.run([sys.executable, "-m", "rooflab", "report", "--from", str(H200), "--out", str(out)],
                               capture_output=True, env=_env({}), timeout=120, check=False)
            assert p.returncode == 0, p.stderr
        before = {f.name: f.read_bytes() for f in out.iterdir()} if earlier else {}
        args = ["report", "--out", str(out)] + (["--gpu", gpu] if where == "write" else [])
        proc = subprocess.Popen([sys.executable, SLOW, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=_env({"SLOW_AT": where}), cwd=d, preexec_fn=_default_signals)
        seen = ""
        while "SLOW" not in seen:
            line = proc.stderr.readline()
            assert line, seen
            seen += line
        proc.send_signal(sig)
        rest_out, rest_err = proc.communicate(timeout=60)
        err = "".join(ln + "\n" for ln in seen.splitlines() if ln != "SLOW") + rest_err
        check_contract(args, proc.returncode, rest_out, err)
        assert proc.returncode == 128 + sig, err
        after = {f.name: f.read_bytes() for f in out.iterdir()}
        assert "results.partial.json" in after, err
        after.pop("results.partial.json")
        before.pop("results.partial.json", None)
        assert after == before, err  # the earlier report whole (hidden files included: none are left)
