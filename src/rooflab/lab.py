"""The one pipeline: detect -> measure the sections asked for -> results document -> write.

Every measuring command (`report`, `gemm`, `bandwidth`, `flops`, `profile`, `roofline`,
`bench`) and the Python API go through `measure`; `report` adds its plan (which
sections, with the quick settings) and the spec-only fallback where there is no GPU.
After each measured section the results so far are saved atomically to
DIR/results.partial.json when a folder is given, so an interruption loses nothing that
finished; the final files are each written to a temporary name and renamed into place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rooflab import results
from rooflab.errors import NoGPUError, ToolError
from rooflab.report_folder import PARTIAL

FALLBACK_GPU = "h100-sxm"  # the spec-only report where no GPU is found

Progress = Callable[[str], None]
Section = Callable[[object, Progress], dict]  # (DeviceInfo, progress) -> a document section


def _quiet(_msg: str) -> None:
    pass


@dataclass
class ReportConfig:
    out_dir: str | None = None
    n: int = 4096
    quick: bool = False
    profile: bool = True
    gpu: str | None = None  # a spec-table key: spec-only report, nothing measured
    extra: list = field(default_factory=list)  # the user's kernels (rung records) beside the ladder


def spec_device_entry(key: str) -> dict:
    """A device entry built from the spec table alone (no GPU): peaks, no attributes."""
    from rooflab.model.specs import find_spec  # noqa: PLC0415

    s = find_spec(key)
    return {"name": s.name, "spec_key": s.key, "spec_only": True, "cc": list(s.cc), "arch": s.arch,
            "sm_count": s.sms, "fp32_cores_per_sm": s.fp32_cores_per_sm, "sm_clock_max_mhz": s.boost_clock_mhz,
            "fp32_peak_flops": s.fp32_peak_flops, "hbm_peak_bytes_per_s": s.bandwidth_bytes_per_s,
            "tensor_peaks": {p: v * 1e12 for p, v in s.tensor_tflops.items()}, "tensor_peaks_source": s.source}


def measure(sections: dict[str, Section], *, progress: Progress | None = None,
            on_step: Callable[[str], None] | None = None, doc: dict | None = None,
            partial_dir: str | None = None) -> dict:
    """Detect the GPU, then run each section in order into one results document.

    `doc` receives the sections as they finish, so a caller that is interrupted still
    holds what was done; with `partial_dir` it is also saved there after each section.
    """
    from rooflab.cuda.device import detect, document_entry  # noqa: PLC0415

    say, step = progress or _quiet, on_step or _quiet
    doc = doc if doc is not None else {}
    doc.update(results.new_document(results.command_line(), None))
    doc.setdefault("report", {})["finished_steps"] = []

    def done(name: str) -> None:
        doc["report"]["finished_steps"].append(name)
        if partial_dir:
            results.write_atomic(Path(partial_dir) / PARTIAL, results.dumps(doc))

    step("device")
    dev = detect()
    doc["device"] = document_entry(dev)
    done("device")
    for name, fn in sections.items():
        step(name)
        doc[name] = fn(dev, say)
        done(name)
    return doc


# ---------------------------------------------------------------- the sections

def flops_section(quick: bool = False, **kw) -> Section:
    from rooflab.measure import flops  # noqa: PLC0415

    cfg = flops.FlopsConfig(**kw)
    if quick:
        cfg.occupancies = ((4, 256), (1, 128))
    cfg.validate()
    return lambda dev, say: flops.run(cfg, dev, say)


def bandwidth_section(quick: bool = False, **kw) -> Section:
    from rooflab.measure import bandwidth  # noqa: PLC0415

    cfg = bandwidth.BandwidthConfig(**kw)
    if quick:
        cfg.sweep, cfg.rounds = False, 1
    cfg.validate()
    return lambda dev, say: bandwidth.run(cfg, dev, say)


def memory_section(quick: bool = False, **kw) -> Section:
    from rooflab.measure import memory  # noqa: PLC0415

    cfg = memory.MemoryConfig(**kw)
    if quick:
        cfg.rounds = 1
    cfg.validate()
    return lambda dev, say: memory.run(cfg, dev, say)


def gemm_section(extra: list | None = None, **kw) -> Section:
    from rooflab.measure import gemm  # noqa: PLC0415

    cfg = gemm.GemmConfig(**kw)
    cfg.validate(known=[*gemm.rungs.names(), *(r.name for r in extra or [])])
    return lambda dev, say: gemm.run(cfg, dev, say, extra=extra)


def sweep_section(quick: bool = False, **kw) -> Section:
    """Speed against problem size; `quick` (the report's) keeps to a few sizes."""
    from rooflab.measure import sweep  # noqa: PLC0415

    cfg = sweep.SweepConfig(**kw)
    cfg.validate()
    return lambda dev, say: sweep.run(cfg, dev, say)


def profile_section(*, with_gemm: bool, n: int, size: int, raw_dir: str | None = None,
                    extra: list | None = None, labels: list[str] | None = None,
                    m: int | None = None, k: int | None = None, levels: bool = False) -> Section:
    """levels: profile the memory levels' launches too (their evidence; needs the device's L2 size)."""
    from rooflab.measure import profiling  # noqa: PLC0415

    return lambda dev, say: profiling.run(with_gemm=with_gemm, m=m, n=n, k=k, size=size, progress=say,
                                          raw_dir=raw_dir, extra=extra, labels=labels,
                                          l2_bytes=dev.l2_bytes if levels else None)


def op_profile_section(target, op_name: str, expr: str, flops_per_element: float, n: tuple[int, ...]) -> Section:
    from rooflab.measure import profiling  # noqa: PLC0415

    spec = profiling.op_spec(target, op_name, expr, flops_per_element, n)
    return lambda dev, say: profiling.run_op(target, spec, progress=say)


def gemm_then_profile(gemm: Section, *, n: int, size: int, extra: list | None = None, ceilings: bool = False,
                      m: int | None = None, k: int | None = None, levels: bool = False) -> tuple[Section, Section]:
    """The GEMM section, and a profile section to run after it that profiles only the kernels that
    passed their checks (a FAILED kernel's counters describe a wrong computation), at the shape that
    was timed: the ceilings too with `ceilings`, the memory levels' evidence with `levels`. Each
    kernel left out is named in the section's "skipped"."""
    from rooflab.measure import profiling  # noqa: PLC0415

    seen: dict = {}

    def run_gemm(dev, say):
        seen["gemm"] = sec = gemm(dev, say)
        return sec

    def run_profile(dev, say):
        recs = (seen.get("gemm") or {}).get("rungs", [])
        passed = [r["kernel"] for r in recs if r.get("passed")]
        failed = [f"{r['kernel']}: not profiled, it FAILED its check" for r in recs
                  if not r.get("passed") and not r.get("skipped")]
        labels = [*(profiling.CEILING_LABELS if ceilings else ()), *passed]
        if labels:
            sec = profiling.run(with_gemm=False, m=m, n=n, k=k, size=size, progress=say, extra=extra, labels=labels,
                                l2_bytes=dev.l2_bytes if levels else None)
        else:
            sec = profiling.section({"m": m or n, "n": n, "k": k or n, "size": size}, [], [])
        sec.setdefault("config", {})["gemm"] = bool(passed)
        sec["skipped"] = [*sec.get("skipped", []), *failed]
        return sec

    return run_gemm, run_profile


MEASUREMENTS: dict[str, Callable[[ReportConfig], Section]] = {}  # sections beyond the built-in ones


def register_measurement(name: str, factory: Callable[[ReportConfig], Section]) -> None:
    """`rooflab report` also measures this section: factory(cfg) -> (device, progress) -> doc[name].
    Its rendering is a rooflab.report.section.Section of the same name."""
    MEASUREMENTS[name] = factory


def report_sections(cfg: ReportConfig) -> dict[str, Section]:
    """What `rooflab report` measures, with the quick settings applied, in the order of the report's
    sections (rooflab.report.sections): the ladder before the profile that profiles its rungs."""
    from rooflab.report import sections  # noqa: PLC0415

    plan = {**_built_in(cfg), **{name: factory(cfg) for name, factory in MEASUREMENTS.items()}}
    order = [s.name for s in sorted(sections.SECTIONS.values(), key=lambda s: (s.order, s.name))]
    return dict(sorted(plan.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def steps(cfg: ReportConfig) -> list[str]:
    """The report's steps, in order: the device, then each section it measures."""
    return ["device", *report_sections(cfg)]


def _built_in(cfg: ReportConfig) -> dict[str, Section]:
    n = min(cfg.n, 2048) if cfg.quick else cfg.n
    names = [*gemm_names(), *(r.name for r in cfg.extra)]
    sections = {
        "flops": flops_section(cfg.quick),
        "bandwidth": bandwidth_section(cfg.quick),
        "memory": memory_section(cfg.quick),
        "gemm": gemm_section(cfg.extra, m=n, n=n, k=n, reps=10 if cfg.quick else 20, kernels=names),
        "sweep": sweep_section(**report_sweep(cfg.quick)),
    }
    if cfg.profile:
        from rooflab.measure.bandwidth import BandwidthConfig  # noqa: PLC0415

        sections["gemm"], prof = gemm_then_profile(sections["gemm"], n=n, size=BandwidthConfig().n, extra=cfg.extra,
                                                   ceilings=True, levels=True)

        def profile_or_skip(dev, say):
            try:
                return prof(dev, say)
            except ToolError as exc:
                return {"tool_error": str(exc)}  # no ncu here: the report says why, and goes on

        sections["profile"] = profile_or_skip
    return sections


def report_sweep(quick: bool) -> dict:
    """The report's size sweep: a few sizes, within its time budget (the `sweep` command goes wider)."""
    from rooflab.measure import sweep  # noqa: PLC0415

    if quick:
        return {"sizes": [1024, 4096], "reps": 5, "copy_sizes": sweep.parse_bytes("1M,16M,256M")}
    return {"sizes": sweep.REPORT_SIZES, "reps": 10, "copy_sizes": sweep.parse_bytes("1M..1G")}


def gemm_names() -> list[str]:
    from rooflab import rungs  # noqa: PLC0415

    return rungs.names()


def roofline_sections(n: int) -> dict[str, Section]:
    """The least that places every kernel: one FMA configuration, one copy, the ladder."""
    return {
        "flops": flops_section(occupancies=((4, 256),), accumulators=(8,)),
        "bandwidth": bandwidth_section(sweep=False, rounds=1),
        "gemm": gemm_section(m=n, n=n, k=n),
    }


def spec_only(key: str, note: str | None = None) -> dict:
    doc = results.new_document(results.command_line(), spec_device_entry(key))
    doc["report"] = {"spec_only": True, "finished_steps": ["device", "specs", "roofline"]}
    if note:
        doc["report"]["no_gpu"] = note
    return doc


def run(cfg: ReportConfig, *, on_step: Callable[[str], None] | None = None,
        progress: Progress | None = None, doc: dict | None = None) -> dict:
    """The report's document: measured here, or spec-only (cfg.gpu, or no GPU found).

    A missing GPU is not an error for the report: it falls back to the spec-only report
    of FALLBACK_GPU and says why in doc["report"]["no_gpu"].
    """
    doc = doc if doc is not None else {}
    if cfg.gpu:
        doc.update(spec_only(cfg.gpu))
        return doc
    try:
        measure(report_sections(cfg), progress=progress, on_step=on_step, doc=doc, partial_dir=cfg.out_dir)
    except NoGPUError as exc:
        if doc.get("device"):
            raise
        doc.clear()
        doc.update(spec_only(FALLBACK_GPU, str(exc)))
        return doc
    prof = doc.get("profile") or {}
    if "tool_error" in prof:
        doc.pop("profile")
        doc["report"]["profile_skipped"] = prof["tool_error"]
    elif not cfg.profile:
        doc["report"]["profile_skipped"] = "--no-profile"
    doc["report"].update(quick=cfg.quick, profile=cfg.profile, n=cfg.n)
    return doc


def write_outputs(doc: dict, out_dir: str) -> list[str]:
    """Write results.json (first), every picture of the sections the document holds (roofline.png/.svg;
    with a memory section roofline-levels.png, with a timed sweep sweep.png, ...), report.md, one CSV
    per table, and report.html where Plotly is installed. Returns the names."""
    from rooflab.report import document as render_report  # noqa: PLC0415
    from rooflab.report import section  # noqa: PLC0415  (after document: its sections are registered)

    out = Path(out_dir)
    results.save_document(out / "results.json", doc)  # first: whatever fails after it, the results are kept
    written = ["results.json", *write_drawings(out, doc, section.drawings(doc))]
    for name, text in render_report.files(doc).items():
        if name in written:
            continue
        results.write_atomic(out / name, text)
        written.append(name)
    (out / PARTIAL).unlink(missing_ok=True)
    return written


def write_drawings(out: Path, doc: dict, drawings: list) -> list[str]:
    """Draw each of a section's pictures (rooflab.report.section.Drawing) into ``out``. Returns the names."""
    for d in drawings:
        write_picture(out, d.file, lambda path, d=d: d.draw(doc, path))
    return [d.file for d in drawings]


def write_picture(out: Path, name: str, draw: Callable[[str], object]) -> None:
    """Draw a picture into a temporary file in ``out``, then rename it to ``name``."""
    import os  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.", suffix=Path(name).suffix)
    os.close(fd)
    try:
        draw(tmp)
        results.publish(tmp, out / name)  # the umask's permissions, not mkstemp's 0600
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_sweep_outputs(doc: dict, out_dir: str) -> list[str]:
    """`rooflab sweep`: results.json (first), the sweep section's picture (sweep.png) and CSVs.
    Returns the names."""
    from rooflab.report.sweep import SECTION  # noqa: PLC0415

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results.save_document(out / "results.json", doc)
    written = ["results.json", *write_drawings(out, doc, [d for d in SECTION.pictures if d.when(doc)])]
    for t in SECTION.tables(doc):
        results.write_atomic(out / f"{t.key}.csv", t.to_csv())
        written.append(f"{t.key}.csv")
    return written
