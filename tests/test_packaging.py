"""What `pip install` brings: the CUDA extras carry CuPy's CUDA toolkit
wheels (CuPy compiles kernels with NVRTC, which a driver-only machine lacks), the test
extra carries what the tests import, and the README says how to run the GPU tests."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONF = tomllib.loads((ROOT / "pyproject.toml").read_text())
EXTRAS = CONF["project"]["optional-dependencies"]


def _names(reqs: list[str]) -> set[str]:
    return {re.split(r"[<>=!~ ;]", r, maxsplit=1)[0].strip() for r in reqs}


def test_cuda_extras_bring_the_cuda_toolkit_wheels():
    assert _names(EXTRAS["cuda12"]) == {"cupy-cuda12x[ctk]"}
    assert _names(EXTRAS["cuda13"]) == {"cupy-cuda13x[ctk]"}


def test_no_unused_triton_extra():
    assert "triton" not in EXTRAS


def test_test_extra_has_what_the_tests_import():
    names = _names(EXTRAS["test"])
    assert {"pytest", "hypothesis", "import-linter", "setuptools", "wheel"} <= names


def test_readme_gives_the_gpu_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "pip install -e '.[cuda13,test]' && python -m pytest -q" in readme
    assert "[ctk]" in readme
