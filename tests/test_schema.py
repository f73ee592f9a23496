"""The results document's JSON Schema (src/rooflab/schema/results.schema.json, generated from the
records in rooflab.schema), and results.load validating against it.

Strict where the renderers depend on a field (number types, the keys that
rendering reads), permissive elsewhere: unknown sections and new fields in known
ones are allowed, so sections other engineers add do not break older readers.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")  # a dependency; absent on some GPU images that run only -m gpu

from rooflab import results
from rooflab.errors import UsageError

DATA = Path(__file__).parent / "data"
# results documents (the constructed memory fixture is a section, not a document)
FIXTURES = sorted(f for f in DATA.glob("*.json") if not f.name.endswith("_constructed.json"))
SRC = str(Path(__file__).resolve().parents[1] / "src")
SCHEMA_FILE = Path(SRC) / "rooflab" / "schema" / "results.schema.json"


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text())


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads((DATA / "h200_results.json").read_text())


def test_schema_is_valid_draft_2020_12(schema):
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_recorded_fixture_validates(path, schema):
    assert FIXTURES, "no recorded results documents in tests/data"
    doc = results.upgrade(json.loads(path.read_text()))  # recorded in format 1
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=str)
    assert not errors, [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]]
    assert results.load(path) == doc


def _write(tmp_path: Path, doc: dict, name: str = "results.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


MALFORMED = [
    (lambda d: d.__setitem__("device", {"name": "x"}), "device: 'cc', 'arch', 'sm_count',"),
    (lambda d: d["gemm"].__setitem__("rungs", "oops"), "gemm.rungs: 'oops' is not of type 'array'"),
    (lambda d: d["gemm"]["rungs"][0]["timing"].__setitem__("median_ms", "fast"),
     "gemm.rungs[0].timing.median_ms: 'fast' is not of type 'number'"),
    (lambda d: d["gemm"]["rungs"][2]["timing"].__setitem__("median_ms", -3.0), "gemm.rungs[2].timing.median_ms"),
    (lambda d: d["gemm"]["rungs"][1].pop("kernel"), "gemm.rungs[1]: 'kernel' is a required property"),
    (lambda d: d["gemm"]["rungs"][0].__setitem__("checks", [{"name": "normwise"}]), "gemm.rungs[0].checks[0]"),
    (lambda d: d["bandwidth"]["memcpy"][0].pop("gbs"), "bandwidth.memcpy[0]: 'gbs' is a required property"),
    (lambda d: d["bandwidth"]["sweep"][0].__setitem__("block", "big"), "bandwidth.sweep[0].block"),
    (lambda d: d["flops"]["rows"][0].__setitem__("tflops", None), "flops.rows[0].tflops"),
    (lambda d: d["profile"]["kernels"][0].__setitem__("label", 7), "profile.kernels[0].label"),
    (lambda d: d["profile"]["kernels"][0]["metrics"].__setitem__("x", "y"), "profile.kernels[0].metrics.x"),
    (lambda d: d["device"].__setitem__("sm_count", "132"), "device.sm_count: '132' is not of type 'integer'"),
    (lambda d: d["device"]["tensor_peaks"].__setitem__("bf16", "lots"), "device.tensor_peaks.bf16"),
    (lambda d: d.__setitem__("gemm", []), "gemm: [] is not of type 'object'"),
    (lambda d: d.pop("created"), "'created' is a required property"),
    (lambda d: d["gemm"]["rungs"][0]["timing"]["telemetry"]["sm_mhz"].__setitem__("max", None),
     "gemm.rungs[0].timing.telemetry.sm_mhz.max"),
]


@pytest.mark.parametrize(("mutate", "message"), MALFORMED, ids=[m for _, m in MALFORMED])
def test_load_names_the_wrong_field(mutate, message, recorded, tmp_path):
    doc = copy.deepcopy(recorded)
    mutate(doc)
    p = _write(tmp_path, doc)
    with pytest.raises(UsageError) as exc:
        results.load(p)
    text = str(exc.value)
    assert text.startswith(f"{p}: "), text
    assert message in text, text
    assert "\n" not in text and len(text) < 400


def test_load_shortens_huge_values(recorded, tmp_path):
    doc = copy.deepcopy(recorded)
    doc["gemm"]["rungs"] = {"k": "v" * 10_000}
    with pytest.raises(UsageError) as exc:
        results.load(_write(tmp_path, doc))
    assert "gemm.rungs" in str(exc.value) and len(str(exc.value)) < 400


def test_permissive_where_nothing_reads(recorded, tmp_path):
    """Sections this rooflab does not know, new fields in rungs and runs, and a device without spec
    extras still load."""
    doc = copy.deepcopy(recorded)
    doc["newer_section"] = {"anything": [1, "two"]}
    doc["another"] = [{"host": "a"}]
    doc["memory"] = {"new_part": {"x": 1}}
    doc["gemm"]["rungs"][0]["new_field"] = {"x": 1}
    doc["gemm"]["rungs"][0]["checks"][0]["new_field"] = "ok"
    doc["bandwidth"]["memcpy"][0]["extra"] = 1
    doc["device"]["new_attribute"] = 3
    back = results.load(_write(tmp_path, doc))
    assert back["newer_section"] == {"anything": [1, "two"]} and back["memory"] == {"new_part": {"x": 1}}


def test_spec_only_and_command_documents_validate(tmp_path):
    from rooflab.lab import spec_device_entry  # noqa: PLC0415

    doc = results.new_document("rooflab report --gpu t4", spec_device_entry("t4"))
    results.load(_write(tmp_path, json.loads(results.dumps(doc)), "spec.json"))
    doc = results.new_document("rooflab specs", None)
    doc["specs"] = [{"key": "h100-sxm"}]
    results.load(_write(tmp_path, json.loads(results.dumps(doc)), "specs.json"))


def test_nan_literals_are_rejected(recorded, tmp_path):
    p = tmp_path / "nan.json"
    p.write_text(json.dumps(recorded).replace('"median_ms": 141.1475372314453', '"median_ms": NaN', 1))
    with pytest.raises(UsageError, match="NaN"):
        results.load(p)


def test_importing_rooflab_does_not_import_jsonschema():
    env = {**os.environ, "PYTHONPATH": SRC}
    code = "import sys, rooflab, rooflab.cli, rooflab.results; print('jsonschema' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_schema_ships_as_package_data():
    import tomllib  # noqa: PLC0415

    conf = tomllib.loads((Path(SRC).parent / "pyproject.toml").read_text())
    assert "schema/*.json" in conf["tool"]["setuptools"]["package-data"]["rooflab"]
    assert any(d.startswith("jsonschema>=4.18") for d in conf["project"]["dependencies"])


VALID_VARIANTS = [
    ("a check with a field this rooflab does not know", lambda d: d["gemm"]["rungs"][0]["checks"][0].update(new=1)),
    ("ncu without a DRAM figure", lambda d: [k.update(dram_pct=None, dram_bytes=None) for k in d["profile"]["kernels"]]),
    ("an architecture with no FP32-core count", lambda d: d["device"].update(fp32_cores_per_sm=None)),
    ("sections this rooflab does not know", lambda d: d.update(newer={"x": 1}, other=[], more={"rows": [{"a": 1}]})),
]


@pytest.mark.parametrize(("what", "change"), VALID_VARIANTS, ids=[w for w, _ in VALID_VARIANTS])
def test_what_the_schema_accepts_renders(what, change, recorded, tmp_path):
    """Permissive must not mean fragile: a document the schema accepts renders every table."""
    from rooflab.report import document  # noqa: PLC0415

    doc = copy.deepcopy(recorded)
    change(doc)
    doc = results.load(_write(tmp_path, doc))
    rl = document.roofline_for(doc)
    files = document.files(doc, rl)
    assert "report.md" in files and "gemm.csv" in files


# The recorded H200 documents held section by section to their typed definitions, and the sections each
# holds (a fleet document's sections, and those of every GPU document inside it). A recording listed here
# that tests/data does not hold yet is skipped, naming the step that records it (PENDING); any other
# listed file must be there.
RECORDED = {
    "h200_report_levels.json": {"host", "device", "report", "flops", "bandwidth", "memory", "gemm", "profile"},
    "h200_report_2026-12-02.json": {"host", "device", "report", "flops", "bandwidth", "memory", "gemm", "sweep"},
    "h200_bench_2026-12-02.json": {"host", "device", "report", "gemm"},
    "h200_tune_2026-12-02.json": {"host", "device", "report", "tune"},
    "h200_climb8192_2026-12-02.json": {"host", "device", "report", "gemm"},
    "h200_fleet_2026-12-02.json": {"host", "fleet", "fleet/device", "fleet/host", "fleet/report", "fleet/flops",
                                   "fleet/bandwidth", "fleet/memory", "fleet/gemm", "fleet/sweep",
                                   "fleet/fleet_gpu"},
}
PENDING = {"h200_fleet_2026-12-02.json": "`scripts/gpu-check fleet1` on one H200 writes it as $OUT/fleet.json"}
# the sections no recorded H200 document holds, and why
UNRECORDED = {
    "trace": "the traced transformer step (`scripts/gpu-check programs`) was never kept as a fixture",
    "bench": "written by rooflab.bench() for an op other than GEMM; the bench command's document holds gemm",
    "specs": "the spec table, not a measurement (`rooflab specs`)",
    "ridge": "the spec table's ridge points, not a measurement (`rooflab ridge`)",
}


def _typed_sections(doc: dict, schema: dict, prefix: str = "") -> dict[str, tuple[dict, dict]]:
    """Each object section of a document that the schema types, by name (prefix/name inside a fleet's
    GPU documents), with its definition."""
    out = {}
    for name, value in doc.items():
        ref = (schema["properties"].get(name) or {}).get("$ref")
        if isinstance(value, dict) and ref:
            out[prefix + name] = (value, {**schema["$defs"][ref.rsplit("/", 1)[-1]], "$defs": schema["$defs"]})
    for gpu in (doc.get("fleet") or {}).get("gpus", {}).values():
        out.update(_typed_sections(results.upgrade(gpu["document"]), schema, prefix="fleet/"))
    return out


def _held_to_their_definitions(doc: dict, schema: dict) -> set[str]:
    """Each typed section against its own generated definition, not a permissive fallback: every key it
    holds is a declared, typed property, and a wrong type in any of them is refused. Returns their names."""
    sections = _typed_sections(doc, schema)
    for where, (section, part) in sections.items():
        validator = jsonschema.Draft202012Validator(part)
        validator.validate(section)
        undeclared = set(section) - set(part["properties"])
        assert not undeclared, f"{where}: {sorted(undeclared)} ride on additionalProperties"
        for key in section:
            broken = {**section, key: object()}  # no JSON type at all
            assert list(validator.iter_errors(broken)), f"{where}.{key} accepts anything"
    return set(sections)


@pytest.mark.parametrize("name", list(RECORDED))
def test_recorded_h200_sections_meet_their_typed_definitions(name, schema):
    """Every section of each recorded H200 run, the fleet's GPU documents' included, meets its typed
    definition."""
    if not (DATA / name).is_file():
        assert name in PENDING, f"tests/data/{name} is listed in RECORDED but missing"
        pytest.skip(f"{name} not recorded yet: {PENDING[name]}")
    doc = results.upgrade(json.loads((DATA / name).read_text()))
    assert _held_to_their_definitions(doc, schema) == RECORDED[name]


def test_a_fleet_of_one_is_held_like_its_recording_will_be(schema, tmp_path, monkeypatch):
    """Before the fleet document is recorded: one built as `fleet report` builds it on one H200 (the
    worker's document, here the recorded report with lab.run and NVML stood in for, merged with its
    node's links) has the sections RECORDED expects, each meeting its definition."""
    from rooflab import lab  # noqa: PLC0415
    from rooflab.cuda import inventory  # noqa: PLC0415
    from rooflab.fleet import merge, worker  # noqa: PLC0415

    from fleet_fixtures import links_section  # noqa: PLC0415

    report = results.upgrade(json.loads((DATA / "h200_report_2026-12-02.json").read_text()))
    gpu = {"index": 0, "uuid": "GPU-0", "name": "NVIDIA H200", "pci_bus_id": "00000000:07:00.0", "serial": "S0"}
    monkeypatch.setattr(lab, "run", lambda cfg, **_kw: copy.deepcopy(report))
    monkeypatch.setattr(inventory, "read_one", lambda **_kw: gpu)
    out = tmp_path / "gpu0.json"
    worker.measure_one(out_json=str(out), report_dir=str(tmp_path / "gpu0"), host="h", index=0, uuid="GPU-0",
                       quick=True, n=1024, profile=False, render=False)
    node = {"host": "h", "gpus": [gpu], "links": links_section(n=1), "allreduce": None, "torch_peer": None,
            "steps": [], "errors": [], "inventory": [gpu]}
    doc = json.loads(results.dumps(merge.merge([(json.loads(out.read_text()), "gpus/gpu0.json")], [node])))
    assert _held_to_their_definitions(doc, schema) == RECORDED["h200_fleet_2026-12-02.json"]


def test_every_section_kind_has_a_recorded_h200_document():
    """A section added to the document record needs a recording above, or a reason it has none."""
    from rooflab.schema.document import SECTIONS  # noqa: PLC0415

    covered = {where.rsplit("/", 1)[-1] for sections in RECORDED.values() for where in sections}
    assert set(SECTIONS) - covered == set(UNRECORDED), "record the section, or say in UNRECORDED why not"


@pytest.mark.parametrize("version", [-1, 0])
def test_a_format_before_the_first_is_refused_in_one_line(tmp_path, version):
    """No migration starts below format 1: such a document is refused by validation, not a KeyError."""
    from rooflab.schema.document import upgrade

    doc = {"format": version, "rooflab_version": "0.2.0"}
    assert upgrade(doc) is doc
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="format"):
        results.load(path)
