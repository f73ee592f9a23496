"""The results document as one record, its format history and the migration of older formats.

Every format rooflab has written, with what changed; a document of an older format is upgraded
one step at a time (`upgrade`) before it is validated, so files recorded by an earlier rooflab
still load and render.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

from rooflab.schema.bandwidth import Bandwidth
from rooflab.schema.bench import Bench
from rooflab.schema.device import Device, Host, RunInfo
from rooflab.schema.fleet import Fleet, FleetGpuTag
from rooflab.schema.flops import Flops
from rooflab.schema.gemm import Gemm, Tune
from rooflab.schema.memory import Memory
from rooflab.schema.profile import Profile
from rooflab.schema.specs import GpuSpecEntry, TableData
from rooflab.schema.sweep import Sweep
from rooflab.schema.trace import Trace
from rooflab.schema.typed import Record, field

FORMAT = 2

HISTORY = {
    1: "rooflab 0.1 and 0.2: the version under the key schema_version",
    2: "the version under the key format; every section has a typed record (rooflab.schema) and the JSON "
       "Schema is generated from them",
}


@dataclass(kw_only=True)
class Document(Record):
    """One run of rooflab: the device, and one section per command that measured. Strict where
    rooflab's renderers read a field (its type, and that it is there); everything else, including
    unknown sections and new fields in known ones, is allowed."""

    format: int = field(required=True, minimum=FORMAT, maximum=FORMAT)
    rooflab_version: str
    created: str
    command: str
    host: Host = field()
    device: Device | None = field()
    report: RunInfo = field()
    gemm: Gemm = field()
    bandwidth: Bandwidth = field()
    flops: Flops = field()
    memory: Memory = field()
    profile: Profile = field()
    sweep: Sweep = field()
    trace: Trace = field()
    bench: Bench = field()
    tune: Tune = field()
    fleet: Fleet = field()
    fleet_gpu: FleetGpuTag = field()
    specs: list[GpuSpecEntry] = field()
    ridge: list[TableData] = field()

    KEY = "document"


SECTIONS = tuple(f.name for f in dataclasses.fields(Document) if f.name not in ("format", "rooflab_version", "created",
                                                                       "command", "extra"))


def format_of(doc) -> int | None:
    """The document's format version (1 for a file that names it schema_version), or None."""
    if not isinstance(doc, dict):
        return None
    version = doc.get("format", doc.get("schema_version") if "format" not in doc else None)
    return version if type(version) is int else None


def _from_1(doc: dict) -> dict:
    doc = {("format" if k == "schema_version" else k): v for k, v in doc.items()}
    fleet = doc.get("fleet")
    gpus = fleet.get("gpus") if isinstance(fleet, dict) else None
    for gpu in gpus.values() if isinstance(gpus, dict) else ():
        if isinstance(gpu, dict) and format_of(gpu.get("document")) == 1:
            gpu["document"] = upgrade(gpu["document"])
    return doc


MIGRATIONS = {1: _from_1}  # format n -> format n + 1


def upgrade(doc: dict) -> dict:
    """`doc` in the current format (a copy where anything changed; the same dict where nothing did)."""
    version = format_of(doc)
    if version is None or version >= FORMAT or version not in MIGRATIONS:  # no format before 1: validation says so
        return doc
    doc = copy.deepcopy(doc)
    while version < FORMAT:
        doc = MIGRATIONS[version](doc)
        doc["format"] = version = version + 1
    return doc
