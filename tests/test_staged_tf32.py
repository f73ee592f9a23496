"""The staged TF32 / 3xTF32 wgmma rungs (rungs/wgmma_tf32.cu): records, kernels and the harness's
staging hook agree, with no GPU. The kernels' numbers are checked on the GPU (tests/test_gpu_variants.py,
through the harness)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rooflab.cuda import staging
from rooflab.rungs.tensor import WGMMA_3XTF32, WGMMA_TF32

RUNGS = (WGMMA_TF32, WGMMA_3XTF32)


def _instances(source: str) -> dict[str, tuple[str, tuple[int, ...]]]:
    """kernel name -> (body template, its arguments), from the .cu's extern "C" entry points."""
    found = re.findall(r'extern "C" __global__ void __launch_bounds__\((\d+), 1\)\s*\n(\w+)\(.*?\n\{.*?'
                       r'nt::(body(?:_ws)?)<([\d, ]+)>', source, flags=re.S)
    return {name: (body, int(threads), tuple(int(x) for x in args.split(","))) for threads, name, body, args in found}


@pytest.mark.parametrize("rung", RUNGS, ids=lambda r: r.name)
def test_every_variant_launches_its_kernel_as_the_kernel_is_built(rung):
    """Block, dynamic shared memory and block tile of each variant follow from the kernel's template
    arguments: a record that asked for less shared memory, or tiled the grid differently, would
    fault or leave C partly unwritten."""
    inst = _instances(rung.source_path().read_text())
    assert rung.variants and rung.kernel == rung.variants[0].kernel
    for v in rung.variants:
        body, threads, args = inst[v.kernel]
        if body == "body":
            wgs, bn, stages, _inflight, parts = args[:5]
            bm, block = 64 * wgs, 128 * wgs
        else:  # body_ws: one producer warpgroup + 2 consumers, 128 rows
            bn, stages, parts = args[:3]
            bm, block = 128, 384
        assert v.block == (block, 1, 1) and threads == block, v.label
        assert v.shared_mem == stages * parts * (bm + bn) * 128 + 1024, v.label
        assert v.shared_mem <= 227 * 1024
        assert parts == (2 if rung.precision == "3xtf32" else 1), v.label
        assert v.grid(1000, 777, 1234) == (-(-1000 // bm) * -(-777 // bn), 1, 1), v.label


@pytest.mark.parametrize("rung", RUNGS, ids=lambda r: r.name)
def test_the_staging_kernels_exist_for_the_rungs_scheme(rung):
    src = rung.source_path().read_text()
    assert rung.staging in staging.SCHEMES
    for kind in ("a", "bt"):
        assert re.search(rf'extern "C" __global__ void stage_{kind}_{rung.staging}\(', src)


def test_k_is_padded_to_whole_k_tiles():
    assert [staging.staged_k(k) for k in (1, 31, 32, 33, 70, 4096)] == [32, 32, 32, 64, 96, 4096]


def test_a_staged_rung_launches_its_kernel_on_the_staged_operands(monkeypatch):
    """prepare(): the pre-pass runs first, on the caller's arrays, and the kernel gets its outputs
    and the padded K; M and N are untouched."""
    from rooflab.measure import gemm

    calls = []

    class FakeKernel:
        def allow_shared(self, n):
            calls.append(("smem", n))

        def launch(self, grid, block, args, shared_mem=0):
            calls.append(("kernel", grid, block, args, shared_mem))

        def resources(self):
            return {"registers": 1}

    def fake_stager(source, options, scheme, m, n, k, label):
        assert (source, scheme, m, n, k) == (WGMMA_3XTF32.source, "3xtf32", 45, 33, 70)

        def stage(a, b):
            calls.append(("stage", a, b))
            return "A'", "B'"
        return stage, staging.staged_k(k)

    monkeypatch.setattr(gemm, "get_kernel", lambda *a, **k: FakeKernel())
    monkeypatch.setattr(gemm.staging, "stager", fake_stager)
    launch, info = gemm.prepare(WGMMA_3XTF32, 45, 33, 70)
    launch("A", "B", "C")
    assert calls[1] == ("stage", "A", "B")
    kind, grid, block, args, smem = calls[2]
    assert kind == "kernel" and grid == WGMMA_3XTF32.grid(45, 33, 70) and smem == WGMMA_3XTF32.shared_mem
    assert args[:3] == ("A'", "B'", "C") and [int(x) for x in args[3:]] == [45, 33, 96]
    assert all(isinstance(x, np.int32) for x in args[3:])
    assert info["staging"] == {"scheme": "3xtf32", "k": 96}


def test_an_unknown_scheme_is_refused():
    with pytest.raises(ValueError, match="unknown staging"):
        staging.stager("rungs/wgmma_tf32.cu", (), "fp8", 4, 4, 4, "x")
    # "<layout>_store" exists for the layouts rooflab.cuda.tma has, and only for them
    assert staging.takes_c("tma_fp8_b224_store") and "tma_fp8_b224_store" in staging.known()
    assert not staging.takes_c("tma_fp8_b100_store") and "tma_fp8_b100_store" not in staging.known()
    with pytest.raises(ValueError, match="unknown staging"):
        staging.stager("rungs/wgmma_fp8.cu", (), "tma_fp8_b100_store", 4, 4, 4, "x")
