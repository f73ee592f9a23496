"""What the compiler made of the ceiling kernels, read from SASS (nvcc and cuobjdump, no GPU needed)."""

import shutil

import pytest


@pytest.mark.skipif(not (shutil.which("nvcc") and shutil.which("cuobjdump")), reason="needs nvcc and cuobjdump")
def test_fma_loop_is_ffma_with_no_memory_traffic(tmp_path):
    """P6: the FMA chains compile to FFMA on registers only; the sole memory access is the final store."""
    import re
    import subprocess
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "rooflab" / "ceilings" / "fma.cu"
    cubin = tmp_path / "fma.cubin"
    subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-o", str(cubin), str(src)], check=True)
    sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    funcs = re.split(r"\n\s*Function : ", sass)[1:]
    seen = {}
    for f in funcs:
        name = f.split()[0]
        m = re.search(r"fma_chainILi(\d+)E", name)
        if m:
            seen[int(m.group(1))] = f
    assert sorted(seen) == [1, 2, 4, 8]
    for acc, body in seen.items():
        assert body.count("FFMA") >= 16 * acc, (acc, body.count("FFMA"))
        assert not re.search(r"\b(LDG|LDL|STL|LDS|STS)\b", body), acc
        assert len(re.findall(r"\bSTG\b", body)) == 1, acc
