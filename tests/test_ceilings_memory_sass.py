"""The memory-level ceiling kernels' machine code (ceilings/smem.cu, l2.cu, fma64.cu, fma16.cu), where nvcc
and cuobjdump are at hand: the loads and FMAs they are meant to time."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest


from memory_fixtures import SRC


def _sass(tmp_path, name: str) -> dict[str, str]:
    cubin = tmp_path / f"{name}.cubin"
    subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", "-cubin", "-o", str(cubin), str(SRC / "ceilings" / name)],
                   check=True, capture_output=True)
    sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    return {f.split()[0]: f for f in re.split(r"\n\s*Function : ", sass)[1:]}


needs_cuda_tools = pytest.mark.skipif(not (shutil.which("nvcc") and shutil.which("cuobjdump")),
                                      reason="needs nvcc and cuobjdump")


@needs_cuda_tools
def test_smem_loop_is_lds128(tmp_path):
    for name, body in _sass(tmp_path, "smem.cu").items():
        loop = body[body.index("BAR.SYNC"):]  # after the fill
        loads = re.findall(r"\bLDS(\.\w+)?\b", loop)
        assert loads and all(m == ".128" for m in loads), (name, loads)
        assert not re.search(r"\b(LDG|LDL|STL)\b", body), name
        # the loop: LDS.128 and the adds that consume them, little else
        ops = [ln.split()[1] for ln in loop.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/\s+\w", ln)]
        ops = [o for o in ops if not o.startswith("@")]
        assert ops.count("LDS.128") >= 8 and ops.count("IADD3") >= 2 * ops.count("LDS.128"), name


@needs_cuda_tools
def test_l2_loads_bypass_l1(tmp_path):
    for name, body in _sass(tmp_path, "l2.cu").items():
        loads = re.findall(r"\bLDG\.E\.128(\.\w+)*", body)
        assert len(re.findall(r"LDG\.E\.128\.STRONG\.GPU", body)) >= 4, name  # ld.global.cg
        assert len(loads) == len(re.findall(r"LDG\.E\.128\.STRONG\.GPU", body)), name


@needs_cuda_tools
def test_fma_chains_are_dfma_and_hfma2(tmp_path):
    (body,) = _sass(tmp_path, "fma64.cu").values()
    assert body.count("DFMA") >= 128 and not re.search(r"\b(LDG|LDS|LDL|STL)\b", body)
    (body,) = _sass(tmp_path, "fma16.cu").values()
    assert not re.search(r"\b(LDG|LDS|LDL|STL)\b", body)
    # half the chains on the tensor-core pipe (HFMA2.MMA): without it sm_90 runs FP16 at the FP32 rate
    plain, mma = len(re.findall(r"HFMA2 ", body)), len(re.findall(r"HFMA2\.MMA ", body))
    assert plain >= 128 and mma >= 128 and 0.8 < mma / plain < 1.25, (plain, mma)
