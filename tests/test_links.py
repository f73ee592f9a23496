"""measure/links.py's SM copy, with the GPUs faked: the kernel is built with the peer-copy record's
constants and launched at the record's grid over the record's element count. CPU only."""

from __future__ import annotations

import contextlib
import types

import numpy as np

from rooflab import ceilings
from rooflab.measure import links


def test_the_sm_copy_is_built_and_sized_from_its_record(monkeypatch):
    import rooflab.cuda.compile as compile_mod

    builds, launches = [], []

    class Kernel:
        def launch(self, grid, block, args):
            launches.append((grid, block, args))

    def get_kernel(source, name, options=()):
        builds.append((source, name, options))
        return Kernel()

    monkeypatch.setattr(compile_mod, "get_kernel", get_kernel)
    monkeypatch.setattr(ceilings, "PEER_COPY", ceilings.PEER_COPY.with_defines(PEER_UNROLL=8))
    node = links._Node.__new__(links._Node)  # the buffers and streams of two GPUs, without the GPUs
    node.cp = types.SimpleNamespace(cuda=types.SimpleNamespace(Device=lambda _d: contextlib.nullcontext()))
    node.cfg = links.LinksConfig(nbytes=2**20, block=256)
    buf = types.SimpleNamespace(data=types.SimpleNamespace(ptr=4096))
    node.src, node.dst = [buf, buf], [buf, buf]
    node.streams = [contextlib.nullcontext(), contextlib.nullcontext()]
    node.grid = [ceilings.PEER_COPY.grid(sm, 2048, 256) for sm in (132, 66)]
    node.sm(0, 1)
    assert builds == [("ceilings/peer_copy.cu", "peer_copy_uint4", ("-DPEER_UNROLL=8",))]
    (grid, block, args), = launches
    assert grid == (66 * 8, 1, 1) and block == (256, 1, 1)  # one resident wave on the destination
    assert args[2] == np.uint64(2**20 // 16)
