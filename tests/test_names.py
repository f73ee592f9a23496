"""Nothing in the product (code, comments, help, headings, kernels) refers to the project's issues:
things are named for what they are."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "rooflab"
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+\b(?! x )")  # "issue 64 x 256 MMAs" is the verb


def test_no_issue_numbers_in_the_product():
    found = [f"{p.relative_to(SRC)}:{i}: {line.strip()}"
             for p in sorted(SRC.rglob("*")) if p.suffix in (".py", ".cu", ".cuh", ".json")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if ISSUE.search(line)]
    assert not found, "\n".join(found)


def test_the_pattern_catches_one():
    assert ISSUE.search("The hierarchical roofline (issue 11)") and ISSUE.search("as recorded in issue 12")
    assert not ISSUE.search("a warpgroup can issue 64 x 256 x 16 MMAs")
