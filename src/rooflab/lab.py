"""`rooflab report`: the whole lab in one run, written to a folder.

Steps, in order: device, specs, flops, bandwidth, gemm, profile, roofline. After
each measured step the results so far are saved atomically to
DIR/results.partial.json, so an interruption loses nothing that finished; the
final files are each written to a temporary name and renamed into place.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rooflab import results
from rooflab.errors import ToolError

PARTIAL = "results.partial.json"
STEPS = ("device", "specs", "flops", "bandwidth", "gemm", "profile", "roofline")


@dataclass
class ReportConfig:
    out_dir: str
    n: int = 4096
    quick: bool = False
    profile: bool = True
    gpu: str | None = None  # a spec-table key: spec-only report, nothing measured


def spec_device_entry(key: str) -> dict:
    """A device entry built from the spec table alone (no GPU): peaks, no attributes."""
    from rooflab.model.specs import find_spec  # noqa: PLC0415

    s = find_spec(key)
    return {"name": s.name, "spec_key": s.key, "spec_only": True, "cc": list(s.cc), "arch": s.arch,
            "sm_count": s.sms, "fp32_cores_per_sm": s.fp32_cores_per_sm, "sm_clock_max_mhz": s.boost_clock_mhz,
            "fp32_peak_flops": s.fp32_peak_flops, "hbm_peak_bytes_per_s": s.bandwidth_bytes_per_s,
            "tensor_peaks": {p: v * 1e12 for p, v in s.tensor_tflops.items()}, "tensor_peaks_source": s.source}


def run(cfg: ReportConfig, *, on_step: Callable[[str], None] | None = None,
        progress: Callable[[str], None] | None = None, doc: dict | None = None) -> dict:
    """Measure (or, with cfg.gpu, only compute) everything; returns the results document.

    `doc` receives the sections as they finish, so a caller that is interrupted
    still holds what was done. The output files are written by `write_outputs`.
    """
    step = on_step or (lambda _s: None)
    say = progress or (lambda _m: None)
    out = Path(cfg.out_dir)
    doc = doc if doc is not None else {}
    doc.update(results.new_document(results.command_line(), None))
    doc["report"] = {"quick": cfg.quick, "profile": cfg.profile, "n": cfg.n, "finished_steps": []}

    def done(name: str) -> None:
        doc["report"]["finished_steps"].append(name)
        if doc.get("device") and not doc["device"].get("spec_only"):
            results.write_atomic(out / PARTIAL, results.dumps(doc))

    step("device")
    if cfg.gpu:
        doc["device"] = spec_device_entry(cfg.gpu)
        doc["report"]["spec_only"] = True
        done("device")
        step("specs")
        done("specs")
        step("roofline")
        done("roofline")
        return doc
    from rooflab.cuda.device import detect, document_entry  # noqa: PLC0415

    dev = detect()
    doc["device"] = document_entry(dev)
    done("device")
    step("specs")
    done("specs")

    step("flops")
    from rooflab.measure import flops  # noqa: PLC0415

    fcfg = flops.FlopsConfig(occupancies=((4, 256), (1, 128)) if cfg.quick else flops.FlopsConfig().occupancies)
    doc["flops"] = flops.run(fcfg, dev, say)
    done("flops")

    step("bandwidth")
    from rooflab.measure import bandwidth  # noqa: PLC0415

    bcfg = bandwidth.BandwidthConfig(sweep=not cfg.quick, rounds=1 if cfg.quick else 2)
    doc["bandwidth"] = bandwidth.run(bcfg, dev, say)
    done("bandwidth")

    step("gemm")
    from rooflab.measure import gemm  # noqa: PLC0415

    n = min(cfg.n, 2048) if cfg.quick else cfg.n
    doc["gemm"] = gemm.run(gemm.GemmConfig(m=n, n=n, k=n, reps=10 if cfg.quick else 20), dev, say)
    done("gemm")

    step("profile")
    if cfg.profile:
        from rooflab.measure import profiling  # noqa: PLC0415

        try:
            doc["profile"] = profiling.run(with_gemm=True, n=n, size=bcfg.n, progress=say)
        except ToolError as exc:
            doc["report"]["profile_skipped"] = str(exc)
    else:
        doc["report"]["profile_skipped"] = "--no-profile"
    done("profile")
    step("roofline")
    done("roofline")
    return doc


def write_outputs(doc: dict, out_dir: str) -> list[str]:
    """Write report.md, results.json, one CSV per table, roofline.png/.svg. Returns the names."""
    from rooflab.report import document as render_report  # noqa: PLC0415
    from rooflab.report.picture import plot  # noqa: PLC0415

    out = Path(out_dir)
    results.save_document(out / "results.json", doc)  # first: whatever fails after it, the results are kept
    written = ["results.json"]
    rl = render_report.roofline_for(doc)
    for suffix in ("png", "svg"):
        fd, tmp = tempfile.mkstemp(dir=out, prefix=".roofline.", suffix=f".{suffix}")
        os.close(fd)
        try:
            plot(rl, **{f"{suffix}_path": tmp})
            results.publish(tmp, out / f"roofline.{suffix}")  # the umask's permissions, not 0600
        finally:
            Path(tmp).unlink(missing_ok=True)
        written.append(f"roofline.{suffix}")
    for name, text in render_report.files(doc, rl).items():
        if name in written:
            continue
        results.write_atomic(out / name, text)
        written.append(name)
    (out / PARTIAL).unlink(missing_ok=True)
    return written
