import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))


def _gpu() -> bool:
    from rooflab.cuda.gpu import gpu_available

    return gpu_available()


def pytest_collection_modifyitems(config, items):
    if any("gpu" in item.keywords for item in items) and not _gpu():
        skip = pytest.mark.skip(reason="no NVIDIA GPU with CuPy here")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
