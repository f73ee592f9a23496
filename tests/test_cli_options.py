"""cli/options.py: the shared option parsers (a count with a binary suffix)."""

from __future__ import annotations

import pytest

from rooflab import cli as cli_mod
from rooflab.errors import UsageError


@pytest.mark.parametrize(("text", "value"), [("1", 1), ("256M", 256 * 2**20), ("1K", 1024), ("1.5K", 1536),
                                             (" 2g ", 2 * 2**30), ("1048576", 1048576)])
def test_parse_count_accepts(text, value):
    assert cli_mod.options.parse_count(text) == value


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "1e400", "-1", "-256M", "0", "0K", "", "K", "abc", "1.5",
                                  "1e30", "99999999999G", "1e-3M"])
def test_parse_count_rejects(text):
    with pytest.raises(UsageError):
        cli_mod.options.parse_count(text)
