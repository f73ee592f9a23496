"""Nsight Compute's evidence for each measured memory level (pure): the L2 figures come from
traffic that hits the L2 (hit rate >= 95%, DRAM bytes about 0), the HBM figure from traffic that
misses it (DRAM bytes >= 97% of the bytes read), and each level's rate agrees within 3% with ncu's
bytes through that level over the kernel's duration.

The profiled launches are kept in the profile section's "levels" list: {"level", "what",
"footprint_bytes", "kernel_bytes" (what the kernel reads), "metrics" (ncu's)}."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rooflab.model.ncu import DRAM_READ, DRAM_WRITE, DURATION, L2_BYTES

L2_HIT = "lts__t_sector_hit_rate.pct"
LEVEL_METRICS = (L2_HIT,)
HIT_RATE_MIN = 95.0  # % of L2 sectors that hit, for a figure to be an L2 figure
DRAM_SHARE_MAX_IN_L2 = 0.01  # DRAM bytes / bytes read, for the same
DRAM_SHARE_MIN = 0.97  # DRAM bytes read / bytes read, for a figure to be an HBM figure
AGREE = 0.03  # the level's rate and ncu's bytes / time


@dataclass
class Evidence:
    level: str  # "L2" or "DRAM"
    what: str  # "whole L2 (48 MiB)", "one partition (24 MiB)", "read stream, 1 GiB"
    footprint_bytes: float
    hit_rate_pct: float | None
    dram_share: float | None  # DRAM bytes (read for HBM; read + write for L2) / bytes the kernel read
    ncu_rate: float | None  # bytes through the level / ncu's duration
    proven: bool  # the traffic is where the figure says it is
    why: str  # one line: what the counters show

    def to_dict(self) -> dict:
        return asdict(self)


def evidence(entry: dict) -> Evidence:
    """Judge one profiled launch of the levels list."""
    m = entry.get("metrics") or {}
    level, nbytes = entry["level"], float(entry.get("kernel_bytes") or 0.0)
    dur = m.get(DURATION)
    hit = m.get(L2_HIT)
    if level == "L2":
        dram = m.get(DRAM_READ, 0.0) + m.get(DRAM_WRITE, 0.0)
        share = dram / nbytes if nbytes else None
        through = m.get(L2_BYTES)
        ok = hit is not None and hit >= HIT_RATE_MIN and share is not None and share <= DRAM_SHARE_MAX_IN_L2
        why = (f"L2 hit rate {hit:.1f}%" if hit is not None else "no L2 hit rate") + (
            f", DRAM bytes {100 * share:.2f}% of the bytes read" if share is not None else "")
    else:
        share = m.get(DRAM_READ, 0.0) / nbytes if nbytes else None
        through = m.get(DRAM_READ, 0.0) + m.get(DRAM_WRITE, 0.0)
        ok = share is not None and share >= DRAM_SHARE_MIN
        why = (f"DRAM bytes read {100 * share:.1f}% of the bytes read" if share is not None else "no byte count") + (
            f", L2 hit rate {hit:.1f}%" if hit is not None else "")
    rate = through / dur if through and dur else None
    return Evidence(level, entry.get("what", level), float(entry.get("footprint_bytes") or 0.0), hit, share, rate,
                    bool(ok), why)


def cross_check(rate: float, ev: Evidence) -> str | None:
    """Why a level's measured rate disagrees with ncu's bytes / time beyond 3%, or None."""
    if ev.ncu_rate is None:
        return "ncu gave no bytes or duration"
    off = rate / ev.ncu_rate - 1
    if abs(off) > AGREE:
        return f"{rate / 1e12:.2f} TB/s measured vs {ev.ncu_rate / 1e12:.2f} TB/s from ncu ({100 * off:+.1f}%)"
    return None


def level_evidence(doc: dict) -> list[Evidence]:
    """The profiled level launches, judged (those ncu failed on are left out: see level_errors)."""
    return [evidence(e) for e in (doc.get("profile") or {}).get("levels", []) if not e.get("error")]


def level_errors(doc: dict) -> list[str]:
    return [f"{e['level']} {e.get('what', '')}: not profiled ({e['error']})"
            for e in (doc.get("profile") or {}).get("levels", []) if e.get("error")]
