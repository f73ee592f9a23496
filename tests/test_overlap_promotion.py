"""The overlapped promotion (include/overlap.cuh, FLUSH / PROMOTE -U) replayed with no GPU: the order in
which overlap::run issues a k-tile's MMAs into a partial, waits, adds a partial to the FP32 accumulator
and releases a slot, checked against wgmma's rules (wait_group N leaves the N newest commit groups in
flight; a partial is read only once no group in flight writes it, and restarted from zero only once its
sum was added) and the ring's (each slot released once, in order, after its MMAs retired). The sums it
adds are the flushed path's: k-tile by k-tile in order for U = 1, so FP32 adds give the same bits as
FLUSH 1 / PROMOTE 1. Planted mistakes in the schedule fail the replay. The kernels themselves: the
records' tests, tests/test_kernels_compile.py (ptxas: no spill, no serialised wgmma) and the GPU tests."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

HEADER = Path(__file__).resolve().parents[1] / "src" / "rooflab" / "include" / "overlap.cuh"
PASS_KTILES = int(re.search(r"#define PASS_KTILES (\d+)", HEADER.read_text()).group(1))


def schedule(kt_count: int, u: int, pass_ktiles: int = PASS_KTILES, plant: str = "") -> list[tuple]:
    """overlap::run's events in order: ("issue", kt, partial, accumulate), ("wait", n), ("add", partial),
    ("release", kt). `plant` puts one mistake in: "wait2" (wait_group 2 where the step waits for 1),
    "no_drain" (the pass's last k-tile adds its own partial without wait_group 0), "early" (a step
    releases its own k-tile's slot, not the previous one's), "no_opens" (the pass's first k-tile adds
    the partial the last pass already added)."""
    pairs = pass_ktiles // (2 * u)
    length = 2 * u * pairs
    ev: list[tuple] = []
    kt = 0

    def step(cur, prev, j, at):
        opens, closes = at == 0 and j == 0, at == 2 and j == u - 1
        ev.append(("issue", kt, cur, j > 0))
        ev.append(("wait", 2 if plant == "wait2" else 1))
        if j == 0 and (not opens or plant == "no_opens"):
            ev.append(("add", prev))
        if not opens:
            ev.append(("release", kt if plant == "early" else kt - 1))
        if closes:
            if plant != "no_drain":
                ev.append(("wait", 0))
            ev.extend([("add", cur), ("release", kt)])

    while kt + length <= kt_count:
        for v in range(pairs):
            for j in range(u):
                step(0, 1, j, 0 if v == 0 else 1)
                kt += 1
            for j in range(u):
                step(1, 0, j, 2 if v == pairs - 1 else 1)
                kt += 1
    while kt < kt_count:  # the tail, flushed k-tile by k-tile
        ev += [("issue", kt, 0, False), ("wait", 0), ("add", 0), ("release", kt)]
        kt += 1
    ev.append(("wait", 0))
    return ev


def play(events: list[tuple], kt_count: int) -> list[tuple[int, ...]]:
    """Run the events under wgmma's and the ring's rules; the groups of k-tiles added to the FP32
    accumulator, in the order added. AssertionError where a rule is broken."""
    in_flight: list[tuple[int, int]] = []  # (k-tile, partial) of each commit group not retired, oldest first
    holds: dict[int, list[int]] = {0: [], 1: []}  # the k-tiles summed in a partial and not added yet
    groups, released, issued = [], [], set()
    for ev in events:
        kind = ev[0]
        if kind == "issue":
            _, kt, part, accumulate = ev
            if accumulate:
                assert holds[part], f"k-tile {kt} continues partial {part}, which holds nothing"
            else:
                assert not holds[part], f"k-tile {kt} restarts partial {part} before {holds[part]} were added"
            holds[part] = [*holds[part], kt] if accumulate else [kt]
            in_flight.append((kt, part))
            issued.add(kt)
        elif kind == "wait":
            del in_flight[:max(0, len(in_flight) - ev[1])]
        elif kind == "add":
            part = ev[1]
            busy = [kt for kt, p in in_flight if p == part]
            assert not busy, f"partial {part} read while k-tiles {busy} may still write it"
            assert holds[part], f"partial {part} added twice"
            groups.append(tuple(holds[part]))
            holds[part] = []
        elif kind == "release":
            kt = ev[1]
            assert kt in issued and all(k != kt for k, _p in in_flight), f"slot of k-tile {kt} released under its MMAs"
            released.append(kt)
    assert not in_flight and not holds[0] and not holds[1], (in_flight, holds)
    assert released == list(range(kt_count)), released  # every slot once, in order
    return groups


@pytest.mark.parametrize("u", (1, 2, 4))
@pytest.mark.parametrize("kt_count", (1, 2, 3, 7, 8, 9, 15, 16, 17, 33, 64))
def test_every_k_tile_is_added_once_in_order_and_never_read_in_flight(kt_count, u):
    groups = play(schedule(kt_count, u), kt_count)
    assert [kt for g in groups for kt in g] == list(range(kt_count))
    whole = kt_count // PASS_KTILES * PASS_KTILES
    assert all(len(g) == u for g in groups if g[0] < whole)  # groups of U in the passes
    assert all(len(g) == 1 for g in groups if g[0] >= whole)  # the tail's one at a time


def test_u1_adds_what_the_flushed_path_adds_bit_for_bit():
    """U = 1: the partial of every k-tile added in order, as FLUSH 1 / PROMOTE 1 do, so FP32 adds of
    the same partials give the same bits."""
    rng = np.random.default_rng(3)
    for kt_count in (1, 5, 8, 13, 64):
        partials = rng.standard_normal((kt_count, 97)).astype(np.float32) * np.float32(1e3)
        groups = play(schedule(kt_count, 1), kt_count)
        assert groups == [(kt,) for kt in range(kt_count)]
        flushed, overlapped = np.zeros(97, np.float32), np.zeros(97, np.float32)
        for kt in range(kt_count):
            flushed = flushed + partials[kt]
        for (kt,) in groups:
            overlapped = overlapped + partials[kt]
        assert flushed.tobytes() == overlapped.tobytes()


@pytest.mark.parametrize("plant,needle", [("wait2", "may still write|released under its MMAs"),
                                          ("no_drain", "may still write"), ("early", "released under its MMAs"),
                                          ("no_opens", "added twice")])
def test_the_replay_catches_a_planted_mistake(plant, needle):
    caught = 0
    for kt_count in (8, 17, 33):
        for u in (1, 2):
            try:
                play(schedule(kt_count, u, plant=plant), kt_count)
            except AssertionError as exc:
                assert re.search(needle, str(exc)), (plant, str(exc))
                caught += 1
    assert caught == 6, plant


def test_the_replay_is_the_header():
    """The pieces of overlap::run the replay mirrors, as they stand in the header."""
    src = HEADER.read_text()
    step = src[src.index("__device__ __forceinline__ void step("):src.index("// the U k-tiles of a group")]
    order = ["s.issue(cur, J > 0);", "wgmma_wait<1>();", "if constexpr (J == 0 && !opens) s.add(prev);",
             "if constexpr (!opens) s.give_back(s.kt - 1);", "if constexpr (closes) {", "wgmma_wait<0>();",
             "s.add(cur);", "s.give_back(s.kt);", "s.kt++;"]
    at = [step.index(x) for x in order]
    assert at == sorted(at), at
    assert "opens = AT == 0 && J == 0, closes = AT == 2 && J == U - 1" in step
    assert "group<U, 0, V == 0 ? 0 : 1>(s, p0, p1);" in src
    assert "group<U, 0, V == PAIRS - 1 ? 2 : 1>(s, p1, p0);" in src
    assert "PAIRS = PASS_KTILES / (2 * U), PASS = 2 * U * PAIRS" in src
    assert "while (kt + PASS <= KT) pass<U, PAIRS, 0>(s, p0, p1);" in src
    tail = src[src.index("for (; kt < KT; kt++) {"):]
    tail = tail[:tail.index("}")]
    at = [tail.index(x) for x in ("issue(p0, false);", "wgmma_wait<0>();", "add(p0);", "give_back(kt);")]
    assert at == sorted(at), at
    assert "if (ok) release(k);" in src  # no slot goes back once a wait timed out
