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


@pytest.mark.parametrize("name,section", [("h200_report_2026-12-02.json", "memory"),
                                          ("h200_report_2026-12-02.json", "sweep"),
                                          ("h200_bench_2026-12-02.json", "gemm"),
                                          ("h200_tune_2026-12-02.json", "tune"),
                                          ("h200_climb8192_2026-12-02.json", "gemm")])
def test_recorded_h200_sections_meet_their_typed_definitions(name, section, schema):
    """Each section of a recorded H200 run against its own generated definition, not a permissive
    fallback: every key it holds is a declared, typed property, and a wrong type in any of them is
    refused."""
    doc = results.upgrade(json.loads((DATA / name).read_text()))
    ref = schema["properties"][section]["$ref"].rsplit("/", 1)[-1]
    part = {**schema["$defs"][ref], "$defs": schema["$defs"]}
    validator = jsonschema.Draft202012Validator(part)
    validator.validate(doc[section])
    undeclared = set(doc[section]) - set(part["properties"])
    assert not undeclared, f"{section}: {sorted(undeclared)} ride on additionalProperties"
    for key in doc[section]:
        broken = {**doc[section], key: object()}  # no JSON type at all
        assert list(validator.iter_errors(broken)), f"{section}.{key} accepts anything"
