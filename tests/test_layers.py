"""The layer rules in pyproject.toml hold (import-linter), and would catch a break."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("importlinter")

ROOT = Path(__file__).resolve().parents[1]


def lint(src: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(src)}
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(ROOT / 'pyproject.toml')!r}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          cwd=src)


def test_layer_rules_hold():
    proc = lint(ROOT / "src")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "broken" in proc.stdout and "0 broken" in proc.stdout


@pytest.mark.parametrize("module, line, contract", [
    ("model/metrics.py", "from rooflab.cuda import gpu", "never touch CUDA"),
    ("report/table.py", "from rooflab.measure import gemm", "never touch CUDA"),
    ("model/ridge.py", "import matplotlib", "draws nothing"),
    ("cuda/timing.py", "from rooflab import lab", "top to bottom"),
    ("model/fleet/summary.py", "from rooflab.fleet import spawn", "never touch CUDA"),
    ("measure/links.py", "from rooflab.fleet import orchestrate", "top to bottom"),
    ("fleet/merge.py", "from rooflab.cli import fleet", "top to bottom"),
    ("schema/typed.py", "from rooflab.measure import gemm", "never touch CUDA"),
    ("schema/document.py", "from rooflab.report import table", "draws nothing"),
])
def test_a_planted_break_is_caught(tmp_path, module, line, contract):
    shutil.copytree(ROOT / "src" / "rooflab", tmp_path / "rooflab")
    f = tmp_path / "rooflab" / module
    f.write_text(line + "  # planted\n" + f.read_text())
    proc = lint(tmp_path)
    assert proc.returncode != 0
    assert contract in proc.stdout and "BROKEN" in proc.stdout


def test_no_process_rooflab_starts_runs_a_command_line_module():
    """The worker processes run `rooflab.fleet.worker`, which imports no CLI module."""
    from rooflab.fleet import spawn

    cmd = spawn.worker_cmd("worker")
    assert cmd[1:3] == ["-m", "rooflab.fleet.worker"]
    text = (ROOT / "src" / "rooflab" / "fleet" / "worker.py").read_text()
    assert "rooflab.cli" not in text and "rooflab import cli" not in text
