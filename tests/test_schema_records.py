"""The typed records of the results document (rooflab.schema): the schema file is what they
generate, every section of the recorded H200 documents (and of documents the producers make from
them: bench, tune, fleet, sweep, trace, specs, ridge) validates alone, a wrong type planted in
each section is refused with one line naming its path, with or without jsonschema, the records
round-trip the documents, and an older format is upgraded."""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import fake_cupy
from fleet_fixtures import allreduce_section, links_section, scaled
from rooflab import results
from rooflab.errors import UsageError
from rooflab.schema import document, generate, typed
from rooflab.schema.common import Timing
from rooflab.schema.document import Document

DATA = Path(__file__).parent / "data"
RECORDED = sorted(f for f in DATA.glob("*.json") if not f.name.endswith("_constructed.json"))


def recorded(name: str) -> dict:
    return results.upgrade(json.loads((DATA / name).read_text(encoding="utf-8")))


def _bench_section(monkeypatch) -> dict:
    from rooflab.measure import bench
    from rooflab.ops.stream import stream
    from rooflab.targets import Callable

    fake_cupy.install(monkeypatch)

    def boom(x, y):
        raise ValueError("bad tile")

    def twice(x, y):
        y[...] = 2 * x

    return bench.run([Callable(twice), Callable(boom)], stream("2*x", 1), (1000,), fake_cupy.device(), reps=2, seed=1)


def _tune_section(monkeypatch, tmp: Path) -> dict:
    from rooflab.measure import tune
    from rooflab.rungs.record import Rung, Variant

    monkeypatch.setenv("ROOFLAB_CACHE", str(tmp))
    variants = tuple(Variant(f"v{i}", f"mm<{i}>", (256, 1, 1), lambda m, n, k: (1, 1, 1)) for i in range(3))
    rung = Rung(name="tunable", title="t", stage="s", explain="e", loads_per_fma=None, source="rungs/x.cu",
                kernel="mm<0>", variants=variants)
    dev = SimpleNamespace(name="NVIDIA H200", cc=(9, 0), driver_version="580.159.04")
    times = {"mm<0>": 3.0, "mm<1>": None, "mm<2>": 2.0}
    found = tune.search(rung, dev, lambda r: times[r.kernel], n=2048)
    none = tune.search(rung, dev, lambda r: None)
    return {"config": {"m": 2048, "n": 2048, "k": 2048, "seed": 1}, "cache": str(tune.cache_path()),
            "rungs": [found, none]}


def _fleet_documents(h200: dict) -> tuple[dict, dict]:
    from rooflab.fleet import merge

    ranks = [scaled(h200, 1.0, uuid="GPU-0", index=0), scaled(h200, 0.9, uuid="GPU-1", index=1)]
    node = {"format": results.FORMAT, "kind": merge.NODE_KIND, "host": "node-a", "links": links_section(),
            "allreduce": allreduce_section(), "gpus": [], "steps": [], "errors": []}
    return merge.merge([(d, f"gpus/{i}.json") for i, d in enumerate(ranks)], [node], command="rooflab fleet"), ranks[1]


def _trace_document() -> dict:
    from trace_fixtures import chrome_trace, h200_doc, ncu_rows

    from rooflab.model import trace as model
    from rooflab.model.hierarchy import levels
    from rooflab.tracing import roofs_of

    d = {**results.new_document("rooflab trace", None), **h200_doc()}
    lv, roofs = levels(d), roofs_of(d)
    t = chrome_trace()
    groups = model.group(model.in_window(t, model.launches_from_chrome_trace(t), "step"))
    samples = model.ncu_samples(ncu_rows(), groups)
    placed = [model.place(g, samples.get(g.key, []), lv, roofs) for g in model.choose(groups, 0.9)]
    d["trace"] = model.section(groups, placed, command=["python3", "x.py"], levels=lv, roofs=roofs,
                               ceilings_source="constructed", traced_step_s=1.1e-3, untraced_step_s=1e-3,
                               collector="torch.profiler (CUPTI)")
    return json.loads(results.dumps(d))


def _spec_document() -> dict:
    from rooflab.model.specs import SPECS
    from rooflab.report.specs import ridge_tables

    doc = results.new_document("rooflab specs", None)
    doc["specs"] = [s.to_dict() for s in SPECS]
    doc["ridge"] = [t.to_dict() for t in ridge_tables(None)[0]]
    return json.loads(results.dumps(doc))


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> dict[str, dict]:
    """Every recorded H200 document, and documents the producers make from them."""
    from test_sweep import sweep_doc

    docs = {p.name: recorded(p.name) for p in RECORDED}
    memory = json.loads((DATA / "h200_memory_constructed.json").read_text(encoding="utf-8"))
    docs["memory (constructed)"] = {**recorded("h200_results.json"), "memory": memory}
    with pytest.MonkeyPatch.context() as mp:
        base = results.new_document("rooflab bench", recorded("h200_results.json")["device"])
        docs["bench"] = json.loads(results.dumps({**base, "bench": _bench_section(mp)}))
        docs["tune"] = json.loads(results.dumps({**base, "tune": _tune_section(mp, tmp_path_factory.mktemp("tune"))}))
    docs["fleet"], docs["fleet rank"] = (json.loads(results.dumps(d)) for d in _fleet_documents(recorded("h200_results.json")))
    docs["sweep"] = json.loads(results.dumps(sweep_doc(sizes=(1024, 2048), kernels=("naive", "cublas"))))
    docs["trace"] = _trace_document()
    docs["specs and ridge"] = _spec_document()
    return docs


# ---------------------------------------------------------------- the schema file


def test_the_committed_schema_is_the_generated_one():
    assert generate.SCHEMA_FILE.read_text(encoding="utf-8") == generate.text(), \
        "run: PYTHONPATH=src python -m rooflab.schema.generate"
    assert generate.main(["--check"]) == 0


def test_the_schema_covers_every_section():
    props = generate.results_schema()["properties"]
    for name in ("device", "report", "gemm", "bandwidth", "flops", "memory", "profile", "sweep", "trace", "bench",
                 "tune", "fleet", "specs", "ridge"):
        assert props[name].get("$ref") or props[name].get("items", {}).get("$ref"), name
    assert props["format"] == {"type": "integer", "minimum": results.FORMAT, "maximum": results.FORMAT}


def _part(s: dict, name: str) -> dict:
    """The schema of one section alone: its property schema, with the document's $defs."""
    return {"$schema": s["$schema"], "$defs": s["$defs"], **s["properties"][name]}


@pytest.mark.parametrize("section", document.SECTIONS)
def test_every_section_validates_alone(section, documents):
    jsonschema = pytest.importorskip("jsonschema")
    part = _part(generate.results_schema(), section)
    holders = {name: doc for name, doc in documents.items() if section in doc}
    assert holders, f"no recorded or produced document holds a {section} section"
    field = next(f for f in typed.fields_of(Document) if f.name == section)
    for name, doc in holders.items():
        errors = list(jsonschema.Draft202012Validator(part).iter_errors(doc[section]))
        assert not errors, (name, [f"{results.field_path(e.absolute_path)}: {e.message}"[:200] for e in errors[:3]])
        assert typed.dump(typed.load(field.type, doc[section], section, field.meta)) == doc[section]


@pytest.mark.parametrize("name", [p.name for p in RECORDED] + ["bench", "tune", "fleet", "fleet rank", "sweep",
                                                                 "trace", "specs and ridge", "memory (constructed)"])
def test_every_document_validates_and_round_trips(name, documents):
    doc = documents[name]
    assert results.schema_problem(doc) is None
    assert results.record_problem(doc) is None
    typed_doc = Document.from_dict(doc)
    assert typed_doc.to_dict() == doc
    assert Document.from_dict(typed_doc.to_dict()) == typed_doc


def test_the_records_hold_what_the_renderers_read(documents):
    """The recorded sections come back as records, not as dicts: the typed fields are typed."""
    d = Document.from_dict(documents["h200_report_levels.json"])
    rung = d.gemm.rungs[0]
    assert rung.timing.median_ms > 0 and rung.checks[0].passed in (True, False)
    assert d.memory.l2_sweep.rows[0].rounds[0].rate > 0
    assert d.bandwidth.memcpy[0].verified and d.device.sm_count == 132
    f = Document.from_dict(documents["fleet"]).fleet
    assert f.gpus["GPU-1"].index == 1 and f.allreduce["node-a"].rows[-1].busbw_gbs > 0
    assert f.outliers and f.outliers[0].uuid == "GPU-1"


# ---------------------------------------------------------------- a wrong type in each section

PLANTED = {
    "host": ("h200_results.json", lambda d: d["host"].__setitem__("python", 3), "host.python: 3 is not of type 'string'"),
    "device": ("h200_results.json", lambda d: d["device"].__setitem__("sm_count", "132"),
               "device.sm_count: '132' is not of type 'integer'"),
    "report": ("h200_report.json", lambda d: d["report"].__setitem__("n", "big"), "report.n: 'big' is not of type 'integer'"),
    "gemm": ("h200_results.json", lambda d: d["gemm"]["rungs"][0]["timing"].__setitem__("median_ms", "fast"),
             "gemm.rungs[0].timing.median_ms: 'fast' is not of type 'number'"),
    "bandwidth": ("h200_results.json", lambda d: d["bandwidth"]["memcpy"][0].__setitem__("gbs", "fast"),
                  "bandwidth.memcpy[0].gbs: 'fast' is not of type 'number'"),
    "flops": ("h200_results.json", lambda d: d["flops"]["rows"][0].__setitem__("iters", 1.5),
              "flops.rows[0].iters: 1.5 is not of type 'integer'"),
    "memory": ("h200_report_levels.json", lambda d: d["memory"]["l2_sweep"]["rows"][0].__setitem__("rate", "fast"),
               "memory.l2_sweep.rows[0].rate: 'fast' is not of type 'number'"),
    "profile": ("h200_results.json", lambda d: d["profile"]["kernels"][0].__setitem__("label", 7),
                "profile.kernels[0].label: 7 is not of type 'string'"),
    "sweep": ("sweep", lambda d: d["sweep"]["gemm"]["rows"][0].__setitem__("n", "big"),
              "sweep.gemm.rows[0].n: 'big' is not of type 'integer'"),
    "trace": ("trace", lambda d: d["trace"].__setitem__("gpu_time_s", "long"),
              "trace.gpu_time_s: 'long' is not of type 'number'"),
    "bench": ("bench", lambda d: d["bench"]["rows"][0].__setitem__("passed", "yes"),
              "bench.rows[0].passed: 'yes' is not of type 'boolean'"),
    "tune": ("tune", lambda d: d["tune"]["rungs"][0]["times_ms"].__setitem__("v0", "fast"),
             "tune.rungs[0].times_ms.v0: 'fast' is not of type 'number' or 'null'"),
    "fleet": ("fleet", lambda d: d["fleet"]["gpus"]["GPU-0"].__setitem__("index", "zero"),
              "fleet.gpus.GPU-0.index: 'zero' is not of type 'integer' or 'null'"),
    "fleet_gpu": ("fleet rank", lambda d: d["fleet_gpu"].__setitem__("host", 7),
                  "fleet_gpu.host: 7 is not of type 'string'"),
    "specs": ("specs and ridge", lambda d: d["specs"][0].__setitem__("sms", "many"),
              "specs[0].sms: 'many' is not of type 'integer'"),
    "ridge": ("specs and ridge", lambda d: d["ridge"][0].__setitem__("columns", "x"),
              "ridge[0].columns: 'x' is not of type 'array'"),
}


def test_a_wrong_type_is_planted_in_every_section():
    assert set(PLANTED) == set(document.SECTIONS)


@pytest.fixture(params=["jsonschema", "records alone"])
def validator(request, monkeypatch):
    """results.load as it runs with jsonschema, and where it is not installed (some GPU images)."""
    if request.param == "jsonschema":
        pytest.importorskip("jsonschema")
    else:
        monkeypatch.setitem(sys.modules, "jsonschema", None)
    return request.param


@pytest.mark.parametrize("section", sorted(PLANTED))
def test_a_wrong_type_in_each_section_is_refused_naming_its_path(section, validator, documents, tmp_path):
    source, plant, message = PLANTED[section]
    doc = copy.deepcopy(documents[source])
    plant(doc)
    p = tmp_path / "results.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UsageError) as exc:
        results.load(p)
    text = str(exc.value)
    assert text == f"{p}: {message}"
    assert "\n" not in text


MISSING = [
    (lambda d: d["gemm"]["rungs"][0]["timing"]["telemetry"]["sm_mhz"].pop("min"),
     "gemm.rungs[0].timing.telemetry.sm_mhz: 'min' is a required property"),
    (lambda d: d["memory"]["l2_sweep"]["rows"][0]["rounds"][0]["telemetry"]["power_w"].pop("max"),
     "memory.l2_sweep.rows[0].rounds[0].telemetry.power_w: 'max' is a required property"),
    (lambda d: d["flops"]["rows"][0].pop("accumulators"), "flops.rows[0]: 'accumulators' is a required property"),
]


@pytest.mark.parametrize(("plant", "message"), MISSING, ids=[m for _, m in MISSING])
def test_a_missing_field_the_renderers_read_is_refused(plant, message, validator, tmp_path):
    doc = recorded("h200_report_levels.json")
    plant(doc)
    p = tmp_path / "results.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(UsageError) as exc:
        results.load(p)
    assert str(exc.value) == f"{p}: {message}"


def test_without_jsonschema_a_recorded_document_loads(monkeypatch):
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    assert results.load(DATA / "h200_report_levels.json") == recorded("h200_report_levels.json")


def test_load_document_gives_the_record():
    d = results.load_document(DATA / "h200_results.json")
    assert isinstance(d, Document) and d.format == results.FORMAT and d.gemm.rungs[0].kernel == "naive"


# ---------------------------------------------------------------- the format history


def test_every_format_has_its_history_and_a_way_up():
    assert sorted(document.HISTORY) == list(range(1, results.FORMAT + 1))
    assert sorted(document.MIGRATIONS) == list(range(1, results.FORMAT))


def test_a_format_1_document_is_upgraded_when_loaded():
    raw = json.loads((DATA / "h200_results.json").read_text(encoding="utf-8"))
    assert raw["schema_version"] == 1 and "format" not in raw
    doc = results.load(DATA / "h200_results.json")
    assert doc["format"] == results.FORMAT and "schema_version" not in doc
    assert {k: v for k, v in doc.items() if k != "format"} == {k: v for k, v in raw.items() if k != "schema_version"}
    assert raw["schema_version"] == 1  # the caller's dict is left as it was


def test_a_current_document_is_not_copied():
    doc = results.new_document("rooflab x", None)
    assert results.upgrade(doc) is doc


def test_the_gpu_documents_inside_a_fleet_document_are_upgraded(documents):
    fleet = copy.deepcopy(documents["fleet"])
    for gpu in fleet["fleet"]["gpus"].values():
        gpu["document"] = json.loads((DATA / "h200_results.json").read_text(encoding="utf-8"))
    fleet["schema_version"] = 1
    del fleet["format"]
    up = results.upgrade(fleet)
    assert all(g["document"]["format"] == results.FORMAT for g in up["fleet"]["gpus"].values())
    assert results.schema_problem(fleet) is None


def test_new_documents_are_written_in_the_current_format():
    doc = json.loads(results.dumps(results.new_document("rooflab x", None)))
    assert doc["format"] == results.FORMAT and "schema_version" not in doc


# ---------------------------------------------------------------- the records themselves


@dataclasses.dataclass(kw_only=True)
class Point(typed.Record):
    KEY = "test_point"

    x: float = typed.field(required=True, minimum=0)
    label: str | None
    tags: list[str] = typed.field()


def test_an_absent_field_stays_absent_and_null_stays_null():
    p = Point.from_dict({"x": 1, "label": None})
    assert p.tags is typed.ABSENT and p.label is None
    assert p.to_dict() == {"x": 1, "label": None}


def test_undeclared_keys_survive_a_round_trip():
    p = Point.from_dict({"x": 1.5, "label": "a", "newer": {"k": [1]}})
    assert p.extra == {"newer": {"k": [1]}} and p.to_dict()["newer"] == {"k": [1]}


@pytest.mark.parametrize(("data", "message"), [
    ({"label": None}, "'x' is a required property"),
    ({"x": True, "label": None}, "x: True is not of type 'number'"),
    ({"x": -1, "label": None}, "x: -1 is not at least 0"),
    ({"x": 1, "label": 3}, "label: 3 is not of type 'string' or 'null'"),
    ({"x": 1, "label": None, "tags": ["a", 2]}, "tags[1]: 2 is not of type 'string'"),
    ([1], "[1] is not of type 'object'"),
])
def test_a_record_names_what_is_wrong(data, message):
    with pytest.raises(typed.DocumentError) as exc:
        Point.from_dict(data)
    assert str(exc.value) == message


def test_its_schema_says_the_same(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    defs: dict = {}
    ref = Point.json_schema(defs)
    s = {"$defs": defs, "type": "object", **ref}
    v = jsonschema.Draft202012Validator(s)
    assert v.is_valid({"x": 1, "label": None}) and v.is_valid({"x": 0.5, "label": "a", "tags": [], "more": 1})
    for bad in ({"label": None}, {"x": True, "label": None}, {"x": -1, "label": None}, {"x": 1, "label": 3}):
        assert not v.is_valid(bad), bad


def test_two_records_may_not_share_a_schema_name():
    with pytest.raises(TypeError, match="already has a record named test_point"):
        @dataclasses.dataclass(kw_only=True)
        class Other(typed.Record):
            KEY = "test_point"


@dataclasses.dataclass(kw_only=True)
class Answer(typed.Record):
    """A section added from outside, as a typed record."""

    KEY = "test_answer"

    value: float
    timing: Timing | None = typed.field()


def test_a_section_added_as_a_record_joins_the_schema(monkeypatch):
    pytest.importorskip("jsonschema")
    monkeypatch.setitem(results.SECTION_SCHEMAS, "answer", generate.section_schema(Answer))
    doc = recorded("h200_results.json")
    doc["answer"] = {"value": 42.0, "timing": doc["gemm"]["rungs"][0]["timing"]}
    assert results.schema_problem(doc) is None
    doc["answer"]["timing"]["median_ms"] = "fast"
    assert results.schema_problem(doc) == "answer.timing.median_ms: 'fast' is not of type 'number'"
    assert Answer.from_dict({"value": 1}).to_dict() == {"value": 1}
