"""Links and all-reduce on a real node with two or more GPUs, at small sizes: every copy
verified, the checker catches a wrong copy, every all-reduce sums right, NVLS stays off."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.gpu

MiB = 2**20


def _gpus() -> int:
    try:
        from rooflab.cuda.gpu import cupy

        return int(cupy().cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001
        return 0


needs_two = pytest.mark.skipif(_gpus() < 2, reason="needs at least 2 GPUs")


@pytest.fixture(scope="module")
def links_section():
    from rooflab.measure import links

    return links.run(links.LinksConfig(nbytes=4 * MiB + 16, reps=3, warmup=1))


@needs_two
def test_every_link_copy_is_verified(links_section):
    sec = links_section
    n = len(sec["devices"])
    assert len(sec["ce_uni"]) == n * (n - 1) and len(sec["ce_bidir"]) == n * (n - 1) // 2
    for key in ("ce_uni", "ce_bidir", "sm_uni", "sm_bidir"):
        for r in sec[key]:
            if key.startswith("sm") and "peer access" in (r.get("error") or ""):
                continue  # no P2P between these two: the kernel copy cannot run, and says so
            assert r["verified"] and r["verified_after"], (key, r)
            assert r["gbs"] > 0 and len(r["timing"]["times_ms"]) == 3
    for h in sec["host"]:
        assert h["h2d"]["verified"] and h["d2h"]["verified"], h
    assert sec["errors"] == []
    assert all(p["link"]["type"] for p in sec["pairs"])


@needs_two
def test_the_checker_catches_a_wrong_copy():
    from rooflab.measure import links

    node = links._Node(links.LinksConfig(nbytes=MiB, reps=1, warmup=0))
    node.poison([1])
    node.ce(0, 1, on=0)
    node.sync([0])
    assert node.holds(1, 0) and not node.holds(1, 1)  # GPU 0's pattern arrived, not GPU 1's
    node.poison([1])
    assert not node.holds(1, 0)


@needs_two
def test_short_allreduce_sums_right():
    from rooflab.model.fleet import nccl_math
    from rooflab.measure import collectives

    sec = collectives.run(collectives.AllreduceConfig(min_bytes=1024, max_bytes=4 * MiB, factor=4, reps=3, warmup=1))
    if not sec["available"]:
        pytest.skip(sec["reason"])
    assert sec["env"]["NCCL_NVLS_ENABLE"] == "0" and os.environ["NCCL_NVLS_ENABLE"] == "0"
    n = sec["ranks"]
    assert [r["bytes"] for r in sec["rows"]] == nccl_math.sizes(1024, 4 * MiB, 4)
    for r in sec["rows"]:
        assert r["verified"] and r["verified_after"], r
        assert r["busbw_gbs"] == pytest.approx(r["algbw_gbs"] * 2 * (n - 1) / n)
    assert sec["errors"] == []
