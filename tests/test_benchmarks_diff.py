"""scripts/benchmarks-diff: two BENCHMARKS.md files, table by table. A removed row, a removed table and a
change past the threshold are reported and make the exit status 1; run-to-run noise is not flagged; one
command's tables on two days pair though their headings carry the command line and the time."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

OLD = """# Benchmarks

## SGEMM ladder (G9)

**SGEMM ladder (G9)**

| N | kernel | ms | GFLOP/s | check |
|---|---|---|---|---|
| 4096 | naive | 141.113 | 974 | max-rel 1.4e-06 |
| 4096 | tiled (TILE=16) | 16.892 | 8,136 | max-rel 1.4e-06 |
| 4096 | cuBLAS | 2.683 | 51,221 | max-rel 4.5e-07 |

## Copy bandwidth, `rooflab bandwidth --size 1G`, 2026-11-30T16:31:38+00:00

| what | GB/s |
|---|---|
| best kernel | 4,279 |
| y = a·x: 535 GFLOP/s | 4,281 |

## Nsight Compute (P8)

| kernel | DRAM GB |
|---|---|
| naive | 1.2 |
"""

# naive within noise, tiled16 gone, cuBLAS 20% slower, a rung added; the copy run of another day
NEW = """# Benchmarks

## SGEMM ladder (G9)

**SGEMM ladder (G9)**

| N | kernel | ms | GFLOP/s | check |
|---|---|---|---|---|
| 4096 | naive | 141.5 | 971 | max-rel 1.4e-06 |
| 4096 | cuBLAS | 3.220 | 42,684 | max-rel 4.5e-07 |
| 4096 | wgmma BF16 | 0.258 | 532,974 | max-rel 1.2e-06 |

### Copy bandwidth, `rooflab report --no-profile`, 2026-12-02T04:47:46+00:00

| what | GB/s |
|---|---|
| best kernel | 4,262 |
| y = a·x: 533 GFLOP/s | 4,262 |

# Earlier runs

## Nsight Compute (P8)

| kernel | DRAM GB |
|---|---|
| naive | 1.2 |
"""


@pytest.fixture(scope="module")
def bd():
    path = ROOT / "scripts" / "benchmarks-diff"
    loader = importlib.machinery.SourceFileLoader("benchmarks_diff", str(path))
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader("benchmarks_diff", loader))
    sys.modules[mod.__name__] = mod  # its dataclasses look their module up
    try:
        loader.exec_module(mod)
        yield mod
    finally:
        del sys.modules[mod.__name__]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "old.md").write_text(OLD)
    (tmp_path / "new.md").write_text(NEW)
    return str(tmp_path / "old.md"), str(tmp_path / "new.md")


def test_a_removed_row_and_a_large_change_are_reported(bd, files, capsys):
    assert bd.main([*files, "--stop", "^# Earlier runs"]) == 1
    out = capsys.readouterr().out
    assert "- row only in old: 4096 | tiled (TILE=16)" in out
    assert "+ row only in new: 4096 | wgmma BF16" in out
    assert "! 4096 | cuBLAS · ms: 2.683 → 3.220 (+20.0%)" in out
    assert "! 4096 | cuBLAS · GFLOP/s: 51,221 → 42,684 (-16.7%)" in out
    # within noise: listed, not flagged
    assert "  4096 | naive · ms: 141.113 → 141.5 (+0.3%)" in out
    assert "table only in old: Nsight Compute (P8)" in out  # cut off in the new one


def test_the_parts_pair_by_name_rows_by_key_and_noise_stays_below_the_threshold(bd, files):
    old, new = (bd.parse(bd.read_text(f), stop="^# Earlier runs") for f in files)
    d = bd.diff(old, new, threshold=0.05)
    by = {p.new.name: p for p in d.pairs}
    assert set(by) == {"SGEMM ladder (G9)", "Copy bandwidth"}  # command and time left out of the name
    ladder, copy = by["SGEMM ladder (G9)"], by["Copy bandwidth"]
    assert ladder.rows_only_old == ["4096 | tiled (TILE=16)"] and ladder.rows_only_new == ["4096 | wgmma BF16"]
    assert {(c.key, c.column) for c in ladder.flagged} == {("4096 | cuBLAS", "ms"), ("4096 | cuBLAS", "GFLOP/s")}
    # a figure in a row's key: the row pairs by the text around it and its figure is compared
    assert not copy.rows_only_old and not copy.rows_only_new and not copy.flagged
    assert {c.column: round(c.rel, 4) for c in copy.changes if c.key.startswith("y")} == {
        "what": round(533 / 535 - 1, 4), "GB/s": round(4262 / 4281 - 1, 4)}
    assert [t.name for t in d.tables_only_old] == ["Nsight Compute (P8)"] and not d.tables_only_new
    # a threshold above every change flags none; the removed row is still a difference
    loose = bd.diff(old, new, threshold=0.5)
    assert not any(p.flagged for p in loose.pairs) and not loose.clean


def test_a_file_against_itself_is_clean(bd, files, capsys):
    assert bd.main([files[1], files[1]]) == 0
    assert "changed beyond 5%: 0" in capsys.readouterr().out


def test_numbers_leave_names_and_ranges_alone(bd):
    assert bd.numbers("FP32 66.9") == ("FP32 #", [66.9])
    assert bd.numbers("max-rel 1.4e-06, norm 1.1e-06") == ("max-rel #, norm #", [1.4e-06, 1.1e-06])
    assert bd.numbers("3,916–3,918") == ("#–#", [3916.0, 3918.0])
    assert bd.numbers("sm_90 e4m3 −2.5%") == ("sm_90 e4m3 #%", [-2.5])


def test_a_reworded_caption_pairs_by_its_header_and_rows(bd):
    old = bd.parse("## M\n\n**L2 bandwidth (issue 11)**\n\n| MiB | TB/s |\n|---|---|\n| 8 | 9.1 |\n| 16 | 9.3 |\n")
    new = bd.parse("## M\n\n**L2 bandwidth**\n\n| MiB | TB/s |\n|---|---|\n| 8 | 9.1 |\n| 16 | 9.3 |\n")
    d = bd.diff(old, new)
    assert [(p.old.name, p.new.name) for p in d.pairs] == [("M / L2 bandwidth (issue 11)", "M / L2 bandwidth")]
    assert not d.clean and "renamed from: M / L2 bandwidth (issue 11)" in "\n".join(bd.render(d, 0.05))


def test_a_git_spec_is_read_with_git_show(bd, tmp_path, capsys, monkeypatch):
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    git("init", "-q")
    (tmp_path / "BENCHMARKS.md").write_text(OLD)
    git("add", "BENCHMARKS.md")
    git("commit", "-qm", "old")
    (tmp_path / "BENCHMARKS.md").write_text(NEW)
    monkeypatch.chdir(tmp_path)
    assert bd.main(["HEAD:BENCHMARKS.md", "BENCHMARKS.md", "--stop", "^# Earlier runs", "--flagged-only"]) == 1
    out = capsys.readouterr().out
    assert "row only in old: 4096 | tiled (TILE=16)" in out and "\n    4096 | naive · ms" not in out
    assert bd.main(["NOPE:BENCHMARKS.md", "BENCHMARKS.md"]) == 2
