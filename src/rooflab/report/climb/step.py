"""Two rungs of one run as a climb paragraph sees them, and what may be said of any step from the
run alone: the ratio, Nsight Compute's evidence, the paragraph of a step with no prose of its own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


class Share(float):
    """A percentage of a roof that may be unknown (an architecture missing from the tables):
    formats as a number when known, as "?" when not, so no paragraph fails on it."""

    def __format__(self, spec: str) -> str:
        return "?" if self != self else super().__format__(spec)


def known(metrics: dict) -> dict:
    """A rung's figures with pct_peak always formattable (rooflab.model.metrics.rung_metrics)."""
    pct = metrics.get("pct_peak")
    return {**metrics, "pct_peak": Share(float("nan") if pct is None else pct)}


@dataclass(frozen=True)
class Step:
    """Two rungs of one run: `prev` and `this` are their figures (rooflab.model.metrics.rung_metrics:
    ms, gflops, pct_peak, speedup), `prev_rec`/`this_rec` their records in the results document
    (model, flops, checks), `profile` Nsight Compute's figures per rung label (dram_gb, dram_pct,
    sm_pct, warp state) where the run was profiled."""

    prev: dict
    this: dict
    prev_rec: dict
    this_rec: dict
    profile: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """time(prev) / time(this): how many times faster this rung ran."""
        return self.prev["ms"] / self.this["ms"]

    def rec(self, which: str = "this") -> dict:
        return self.this_rec if which == "this" else self.prev_rec

    def ncu(self, which: str = "this") -> dict | None:
        return self.profile.get(self.rec(which)["kernel"])

    def evidence(self, which: str = "this") -> str:
        """What Nsight Compute saw of one rung, as a sentence ("" where it was not profiled):
        issue-slot use, achieved occupancy, registers, the top stall reasons, bank conflicts."""
        p = self.ncu(which)
        if not p or "issue_pct" not in p:
            return ""
        parts = [f"issue slots {p['issue_pct']:.0f}% busy"]
        if "occupancy_pct" in p:
            parts.append(f"achieved occupancy {p['occupancy_pct']:.0f}%")
        if "registers" in p:
            parts.append(f"{p['registers']:.0f} registers per thread")
        stalls = list((p.get("stalls") or {}).items())[:3]
        if stalls:
            parts.append("top stalls " + ", ".join(f"{r.replace('_', ' ')} {v:.2f}" for r, v in stalls)
                         + " warps per issued instruction")
        if "bank_conflicts" in p and "shared_wavefronts" in p and p["shared_wavefronts"]:
            parts.append(f"shared-load bank conflicts {p['bank_conflicts'] / p['shared_wavefronts']:.0%} of "
                         f"{p['shared_wavefronts'] / 1e9:.2f} G wavefronts")
        return f" Nsight Compute on {self.rec(which)['kernel']}: " + "; ".join(parts) + "."

    def both_evidence(self) -> str:
        return self.evidence("prev") + self.evidence()

    def evidence_or_hint(self) -> str:
        """Both rungs' Nsight Compute sentences, or how to get them where the run was not profiled."""
        return self.both_evidence() or " (Run with profiling for the counters that show where the time went.)"

    def norm(self, which: str = "this") -> float | None:
        vals = [c["value"] for c in self.rec(which).get("checks", []) if c["name"] == "normwise"]
        return vals[-1] if vals else None

    def norm_text(self, which: str = "this") -> str:
        """The normwise error as a paragraph writes it ("?" where the record has none)."""
        v = self.norm(which)
        return "?" if v is None else f"{v:.1e}"


Paragraph = Callable[[Step], str]


def change(ratio: float) -> str:
    """How a step moved the time, in words that do not call run-to-run spread a gain."""
    if ratio >= 1.02:
        return f"{ratio:.2f}× as fast"
    if ratio <= 0.98:
        return f"slower ({ratio:.2f}× the speed)"
    return f"no faster ({ratio:.2f}×, within run-to-run spread)"


def generic_heading(s: Step) -> str:
    return f"{s.prev_rec['title']} → {s.this_rec['title']}"


def generic(s: Step) -> str:
    """The paragraph of a step whose rungs have no prose for it: the run's figures and, where it
    was profiled, Nsight Compute's."""
    this = s.this
    return (f"{s.this_rec['title']} against {s.prev_rec['title']}: {change(s.ratio)} ({s.prev['ms']:.3f} → "
            f"{this['ms']:.3f} ms, {this['gflops'] / 1e3:,.1f} TFLOP/s, {this['pct_peak']:.1f}% of its roof)."
            + s.both_evidence())
