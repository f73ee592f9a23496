"""`rooflab trace` end to end without a GPU: the collector, Nsight Compute and the ceilings
replaced by the constructed trace of tests/trace_fixtures.py; and its one-line errors."""

from __future__ import annotations

import json

import pytest
from trace_fixtures import chrome_trace, h200_doc, ncu_rows

from rooflab import cli, results, tracing
from rooflab.errors import TRACE_OVER_BUDGET, TRACE_PROGRAM_FAILED, TraceError
from rooflab.measure import trace as collect
from rooflab.model import trace as model


def run_main(argv, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err


@pytest.fixture
def fake(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    doc = chrome_trace()
    launches = model.in_window(doc, model.launches_from_chrome_trace(doc), "step")
    monkeypatch.setattr(tracing, "ceilings_document", lambda cfg, say: (h200_doc(), "constructed"))
    monkeypatch.setattr(collect, "run_untraced", lambda argv, t: (1.0, 1.00e-3))
    monkeypatch.setattr(collect, "collect_command",
                        lambda argv, t, window=None: collect.Collected(launches, "fake collector", 1.3, 1.02e-3))
    calls = []

    def profile(argv, groups, **kw):
        calls.append([g.key for g in groups])
        return model.ncu_samples(ncu_rows(), groups, kw["per_group"]), None, ""

    monkeypatch.setattr(collect, "profile_groups", profile)
    return calls


def test_json_document_ranks_the_groups_and_validates(fake, capsys, tmp_path):
    code, out, err = run_main(["trace", "--format", "json", "--roofline", str(tmp_path / "t.png"), "--",
                               "python3", "-c", "pass"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert results.schema_problem(doc) is None
    sec = doc["trace"]
    assert sec["kernels"] == 3 and sec["launches"] == 4
    assert [p["profiled"] for p in sec["groups"]] == [True, True, False]
    assert sec["groups"][0]["headroom_s"] >= sec["groups"][1]["headroom_s"]
    assert sec["limits"]["tracing_overhead"] == pytest.approx(0.02)
    assert len(fake) == 1 and len(fake[0]) == 2  # the fewest groups holding 90% went to ncu
    assert (tmp_path / "t.png").stat().st_size > 10_000


def test_table_names_the_binding_levels_and_the_limits(fake, capsys):
    code, out, err = run_main(["trace", "--", "python3", "-c", "pass"], capsys)
    assert code == 0, err
    assert "ranked by the time there is to win" in out and "HBM" in out
    assert "not profiled" in out and "What was not measured" in out


def test_a_failing_program_is_one_line_with_its_own_code(monkeypatch, capsys):
    monkeypatch.setattr(tracing, "ceilings_document", lambda cfg, say: (h200_doc(), "constructed"))

    def fail(argv, t):
        raise TraceError("python3 exited with 3: ValueError: boom", TRACE_PROGRAM_FAILED)

    monkeypatch.setattr(collect, "run_untraced", fail)
    code, out, err = run_main(["trace", "--", "python3", "-c", "pass"], capsys)
    assert code == TRACE_PROGRAM_FAILED
    errors = [ln for ln in err.splitlines() if ln.startswith("rooflab: error:")]
    assert len(errors) == 1 and "ValueError: boom" in errors[0] and err.strip().endswith(errors[0])


def test_the_budget_ending_in_ncu_keeps_what_was_measured(fake, monkeypatch, capsys, tmp_path):
    def late(*a, **kw):
        raise TraceError("Nsight Compute ran past the 1 s budget", TRACE_OVER_BUDGET)

    monkeypatch.setattr(collect, "profile_groups", late)
    code, out, err = run_main(["trace", "--", "python3", "-c", "pass"], capsys)
    assert code == TRACE_OVER_BUDGET
    saved = err.split("what was measured is in ")[1].strip()
    kept = json.loads(open(saved).read())
    assert kept["trace"]["kernels"] == 3 and not any(p["profiled"] for p in kept["trace"]["groups"])


def test_command_not_found_and_no_command(capsys):
    code, out, err = run_main(["trace", "--", "no-such-program-here", "x"], capsys)
    assert code == 127 and "command not found: no-such-program-here" in err
    code, out, err = run_main(["trace"], capsys)
    assert code == 2


def test_options_are_checked_before_anything_runs(capsys):
    code, out, err = run_main(["trace", "--coverage", "0", "--", "python3"], capsys)
    assert code == 2 and "--coverage" in err


def test_python_commands_are_recognised():
    assert collect.is_python(["python3"]) and collect.is_python(["/usr/bin/python3.12", "x.py"])
    assert not collect.is_python(["./train"]) and not collect.is_python(["pythonic"])


def test_report_from_a_trace_document_renders_its_section(fake, capsys, tmp_path):
    code, out, err = run_main(["trace", "--format", "json", "--out", str(tmp_path / "t.json"), "--",
                               "python3", "-c", "pass"], capsys)
    assert code == 0, err
    code, out, err = run_main(["report", "--from", str(tmp_path / "t.json"), "--out", str(tmp_path / "rep")], capsys)
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## A program's kernels on this GPU's roofline" in md and "![the program's kernels](trace.png)" in md
    assert (tmp_path / "rep" / "trace.png").is_file()
    assert (tmp_path / "rep" / "trace.csv").read_text().count("\n") == 4  # header + three groups
