"""docs/your-kernel.md runs as written: its kernel, its bench command, its Python blocks."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "your-kernel.md").read_text()


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", PAGE, re.S)


def test_the_page_runs_as_written(tmp_path):
    (tmp_path / "my_sgemm.cu").write_text(blocks("cuda")[0])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for cmd in blocks("bash"):
        argv = shlex.split(cmd.strip())
        assert argv[0] == "rooflab"
        p = subprocess.run([sys.executable, "-m", "rooflab", *argv[1:]], capture_output=True, text=True, env=env,
                           cwd=tmp_path, timeout=600)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
        assert "my_sgemm" in p.stdout
    assert (tmp_path / "my_sgemm.png").stat().st_size > 10_000
    for code in blocks("python"):
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                           timeout=600)
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert (tmp_path / "my_sgemm_api.png").stat().st_size > 10_000
