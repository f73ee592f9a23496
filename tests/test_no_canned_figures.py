"""No canned device figures in any paragraph: render every paragraph from the recorded H200 run,
then from two copies whose measured numbers were scaled at random (down in one, up in the other).
A number that reads the same in all three did not come from the run: it must be a constant of the
device or the problem (listed below), or be labelled as a reference with its source and date."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from rooflab.report.climb import transitions as gemm_transitions
from rooflab.report.explain_ceilings import bandwidth_paragraphs, flops_paragraphs
from rooflab.report.memory import memory_paragraphs

DATA = Path(__file__).parent / "data"
# sizes and counts, not measurements
_KEEP = {"m", "n", "k", "flops", "bytes", "footprint_bytes", "n4", "step", "iters", "block", "grid", "threads",
         "reps", "warmup", "rounds"}
# what the device and the problem are, and the checks' errors (unchanged: scaling them would fail checks)
_SKIP = {"device", "config", "method", "theoretical", "model", "launch", "checks", "tuning"}
# numbers of the device (peaks from its clocks and units, the HBM pin rate), the problem (N, 2·N³,
# its modelled intensities), architecture constants (bytes per load, SMs, clock) and the checks
CONSTANTS = {"0.25", "0.5", "1.1", "3.1", "4.3", "4.81", "8.0", "33.45", "33.5", "66.9", "100", "128", "132",
             "133.8", "137.4", "164.8", "256", "494", "512", "550", "600", "683", "989", "1024", "1980"}
_TOKEN = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d{3,})")


def _perturb(x, rng: random.Random, lo: float, hi: float, top: bool = True):
    if isinstance(x, dict):
        return {k: (v if k in _SKIP or (k in _KEEP and not top) else _perturb(v, rng, lo, hi, False))
                for k, v in x.items()}
    if isinstance(x, list):
        return [_perturb(v, rng, lo, hi, False) for v in x]
    return x * rng.uniform(lo, hi) if isinstance(x, float) else x


def _text(doc: dict) -> str:
    paras = gemm_transitions(doc) + bandwidth_paragraphs(doc) + flops_paragraphs(doc) + memory_paragraphs(doc)
    return " ".join(t for _h, t in paras)


def _tokens(text: str) -> set[tuple[str, str]]:
    """(the two words before, the number) for every number with a decimal point or three digits."""
    out = set()
    for m in _TOKEN.finditer(text):
        before = " ".join(text[:m.start()].split()[-2:])
        out.add((before, m.group(1).rstrip(",")))
    return out


def unchanged_numbers(doc: dict) -> list[tuple[str, str, str]]:
    """(context, number, the rest of its sentence) for numbers the run's measurements do not move."""
    base = _text(doc)
    low = _text(_perturb(doc, random.Random(1), 0.5, 0.8))
    high = _text(_perturb(doc, random.Random(2), 1.25, 1.6))
    same = _tokens(base) & _tokens(low) & _tokens(high)
    out = []
    for before, num in sorted(same):
        i = base.find(num, base.find(before) if before else 0)
        end = base.find(". ", i + len(num))
        out.append((before, num, base[i:end if end > 0 else None]))  # the rest of its sentence
    return out


def test_every_paragraph_number_comes_from_the_run_or_is_labelled():
    doc = json.loads((DATA / "h200_report_levels.json").read_text())
    canned = [(before, num, after) for before, num, after in unchanged_numbers(doc)
              if num not in CONSTANTS and "reference" not in after]
    assert not canned, canned


def test_the_scan_finds_a_canned_figure(monkeypatch):
    """The scan itself: a paragraph with a fixed device figure is caught, a labelled one is not."""
    import rooflab.report.explain_ceilings as ec

    real = ec.bandwidth_paragraphs
    extra = (" On the H200 the read stream reaches 4,335 GB/s. A public kernel reached 4,610 GB/s (a reference: "
             "pranjalssh/fast.cu on the lab's H200, 2026-12-01).")
    monkeypatch.setattr(ec, "bandwidth_paragraphs", lambda d: [(h, t + extra) for h, t in real(d)])
    globals()["bandwidth_paragraphs"] = ec.bandwidth_paragraphs
    try:
        doc = json.loads((DATA / "h200_report_levels.json").read_text())
        found = {num: after for _b, num, after in unchanged_numbers(doc)}
    finally:
        globals()["bandwidth_paragraphs"] = real
    assert "4,335" in found and "4,335" not in CONSTANTS and "reference" not in found["4,335"]
    assert "reference" in found["4,610"]
