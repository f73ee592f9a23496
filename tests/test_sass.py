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


@pytest.mark.skipif(not (shutil.which("nvcc") and shutil.which("cuobjdump")), reason="needs nvcc and cuobjdump")
def test_read_variants_keep_their_loads_in_flight(tmp_path):
    """The batched read-only streams issue all UNROLL 16-byte loads of a step back to back (the point
    of the variants: more bytes in flight per SM); the unrolled ones, whose adds ptxas schedules right
    behind their loads, keep only two or three in flight (which is why the batched ones exist). Each
    with the load flavour its hint asks for."""
    import re
    import subprocess
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "rooflab" / "ceilings" / "copy.cu"
    cubin = tmp_path / "copy.cubin"
    subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-o", str(cubin), str(src)], check=True)
    sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True, capture_output=True, text=True).stdout
    funcs = {f.split()[0]: f for f in re.split(r"\n\s*Function : ", sass)[1:]}
    for kind, unroll, hint in (("unroll", 4, 0), ("unroll", 8, 0), ("unroll", 16, 0), ("unroll", 8, 1),
                               ("unroll", 8, 2), ("batched", 8, 0), ("batched", 16, 0)):
        body = next(b for n, b in funcs.items() if f"read_float4_{kind}ILi{unroll}ELi{hint}E" in n)
        ops = re.findall(r"\b(LDG\.E[\w.]*|FADD)\b", body)
        # the longest run of 128-bit loads with no FADD between them
        run = best = 0
        for op in ops:
            run = run + 1 if op.startswith("LDG") and "128" in op else (0 if op == "FADD" else run)
            best = max(best, run)
        if kind == "batched":
            assert best >= unroll, (kind, unroll, hint, best)
        else:  # what ptxas makes of the plain unrolled loop: fewer than UNROLL in flight
            assert 2 <= best < unroll, (kind, unroll, hint, best)
        if hint == 1:
            assert re.search(r"LDG\.E\.EF\.128|LDG\.E\.128\.EF|\.EF\b", body), "evict-first load"
        if hint == 2:
            assert re.search(r"LDG\.E\.(NA\.)?.*CONSTANT|\.NA\b", body), "no-allocate read-only load"
