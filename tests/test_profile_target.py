"""measure/profile_target.py's ceiling launches, with the GPU faked: each goes through its harness's
launcher at the geometry its record gives (no grid of its own), and prints the bytes or FLOPs the
record's model counts. CPU only."""

from __future__ import annotations

import dataclasses
import types

import numpy as np
import pytest

from rooflab import ceilings
from rooflab.cuda.device import DeviceInfo

SMS, THREADS_PER_SM, SIZE = 132, 2048, (1 << 20) + 3


@pytest.fixture
def profiled(monkeypatch):
    """Run profile_target.main on a fake GPU; returns [(source, kernel, options, grid, block, args)]."""
    import rooflab.cuda.device as device_mod
    import rooflab.cuda.gpu as gpu_mod
    from rooflab.measure import flops, memory, profile_target, streams

    launches = []

    def get_kernel(source, name, options=()):
        def launch(grid, block, args):
            launches.append((source, name, tuple(options), grid[0], block[0], args))
        return types.SimpleNamespace(launch=launch)

    rs = types.SimpleNamespace(uniform=lambda lo, hi, n, dtype: np.zeros(n, dtype))
    cp = types.SimpleNamespace(float32=np.float32, empty=lambda n, dtype=None: np.empty(n, dtype),
                               empty_like=np.empty_like, random=types.SimpleNamespace(RandomState=lambda _s: rs),
                               cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(
                                   deviceGetAttribute=lambda _a, _d: THREADS_PER_SM)))
    dev = DeviceInfo(index=0, name="Fake H200", cc=(9, 0), arch="Hopper", sm_count=SMS, fp32_cores_per_sm=128,
                     sm_clock_max_mhz=1980.0, mem_clock_max_mhz=3201.0, bus_width_bits=6016, l2_bytes=60 << 20,
                     memory_bytes=141 << 30)
    for mod in (flops, memory, streams):
        monkeypatch.setattr(mod, "get_kernel", get_kernel)
    monkeypatch.setattr(memory, "cupy", lambda: cp)
    monkeypatch.setattr(memory, "_fit_iters", lambda make, label, target_ms, **_k: 1000)
    monkeypatch.setattr(gpu_mod, "cupy", lambda: cp)
    monkeypatch.setattr(device_mod, "detect", lambda: dev)
    monkeypatch.setattr(profile_target, "_profiled", lambda _cp, launch, _label: launch())

    def run(*argv):
        assert profile_target.main(list(argv)) == 0
        return launches
    return run


def test_the_copies_launch_at_their_records_profile_grid(profiled):
    (src, name, opts, grid, block, args), = profiled("copy", "--size", str(SIZE))
    assert (src, name, opts, block) == ("ceilings/copy.cu", "copy_float4", (), 256)
    assert grid == -(-(-(-SIZE // 4)) // 256) and int(args[2]) == SIZE  # one grid-stride step per thread
    (_, name, _, grid, block, _), = profiled("copy_scalar", "--size", str(SIZE))[1:]
    assert (name, grid, block) == ("copy_scalar", SMS * 4, 256)  # the seed's 4 blocks of 256 per SM


def test_a_changed_record_moves_the_profiled_grid(profiled, monkeypatch):
    monkeypatch.setattr(ceilings, "COPY_SCALAR", dataclasses.replace(ceilings.COPY_SCALAR, profile_blocks_per_sm=2,
                                                                       block=128))
    (_, name, _, grid, block, _), = profiled("copy_scalar", "--size", str(SIZE))
    assert (name, grid, block) == ("copy_scalar", SMS * 2, 128)


def test_the_read_stream_and_its_bytes(profiled, capsys):
    (_, name, _, grid, block, args), = profiled("read_stream", "--size", str(SIZE))
    assert (name, grid, block) == ("read_float4", ceilings.READ.grid(SIZE), 256) and len(args[1]) == grid * 256
    assert f"bytes={4 * SIZE}" in capsys.readouterr().out


def test_the_fma_chain_and_its_flops(profiled, capsys):
    (src, name, opts, grid, block, args), = profiled("fma")
    assert (src, name, opts) == ("ceilings/fma.cu", "fma_chain<8>", ("-DFMA_PER_CHAIN_PER_ITER=16",))
    assert (grid, block, int(args[1])) == (SMS * 4, 256, 4096)
    assert f"flops={SMS * 4 * 256 * 4096 * 16 * 8 * 2}" in capsys.readouterr().out


def test_the_l2_read_at_the_sweeps_geometry(profiled, capsys):
    (src, name, opts, grid, block, args), = profiled("l2_read", "--size", str(8 << 20))
    assert (src, name, opts) == ("ceilings/l2.cu", "l2_read", ("-DL2_UNROLL=4", "-DL2_BLOCK=256"))
    threads = SMS * (THREADS_PER_SM // 256) * 256
    assert (grid, block) == (SMS * 8, 256) and int(args[2]) == (8 << 20) // 16 and int(args[3]) == threads % ((8 << 20) // 16)
    assert f"bytes={16 * threads * 4 * 1000}" in capsys.readouterr().out


def test_a_rungs_variant_is_profiled_by_its_entry_name(profiled, monkeypatch, capsys):
    from rooflab.measure import gemm, profile_target
    from rooflab.model import check

    prepared = []
    monkeypatch.setattr(profile_target, "_gemm_operands", lambda _cp, m, n, k: (None, None, None))
    monkeypatch.setattr(check, "operands", lambda _cp, a, b, _inputs: (a, b))
    monkeypatch.setattr(gemm, "prepare", lambda rung, m, n, k: (prepared.append(rung.kernel) or (lambda *_: None), {}))
    profiled("wgmma_fp8_persistent", "--n", "256", "--variant", "mm_wgmma_fp8_persistent_overlap")
    profiled("wgmma_fp8_persistent", "--n", "256")
    from rooflab.rungs.wgmma_fp8 import WGMMA_FP8_PERSISTENT

    # the variant asked for, then the rung's default (its first variant), never the last one asked for
    assert prepared == ["mm_wgmma_fp8_persistent_overlap", WGMMA_FP8_PERSISTENT.variants[0].kernel]
    assert prepared[1] != prepared[0]
    assert profile_target.main(["wgmma_fp8_persistent", "--variant", "nope"]) == 2
    assert "wgmma_fp8_persistent has no variant nope" in capsys.readouterr().err
