"""A measured ceiling as one record: from it come the ceiling's row of the bracketed table
(witness ≤ ceiling ≤ physical limit, and the roof between them) in report.md, report.html and
brackets.csv, its row of the summary's roofs table (its figure against the rate published for it)
and of `rooflab compare`'s ceilings, its section's part of the results schema and, for one beyond
rooflab's own, its line in the roofline pictures, flat and hierarchical
(rooflab.model.placement.added_ceilings: a roof for FLOP/s, a slope for B/s).

    register(Ceiling(name="FP32 add chains", unit="FLOP/s", level="compute", section="fadd",
                     figure=best_add, witness=fma_issue_rate, limit=add_limit,
                     kernel=ADD_CHAINS, schema=section_schema(Fadd)))

`figure(doc)` is rooflab's own kernel's figure read from the document, `witness(doc)` the best
other path the same run measured (both None where the document has none), `limit(doc)` the
physical limit, `published(doc)` the vendor's rate where that is not the physical limit (a tensor
core's dense rate assumes a clock below the maximum); a ceiling gets a row of the bracketed table
where the document holds its figure or its witness, of the others where it holds its figure. Pure:
it reads documents only, so `report --from` brackets on a machine with no GPU. What measures the
section is the harness's, bound for `rooflab report` with `rooflab.lab.register_measurement`.
rooflab's own ceilings are registered in rooflab.model.brackets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

from rooflab import results
from rooflab.ceilings.record import KernelFile
from rooflab.model.limits import Bracket, Limit


class Figure(NamedTuple):
    value: float  # B/s or FLOP/s
    what: str  # the kernel or path that reached it, as the table names it


Reader = Callable[[dict], Figure | None]


def _none(doc: dict) -> Figure | None:
    return None


@dataclass(frozen=True)
class Ceiling:
    name: str  # the row's name
    unit: str  # "B/s" | "FLOP/s"
    level: str  # where a figure above the limit came from instead (rooflab.model.limits.CONTAMINATION)
    section: str  # the results document's key its figure is read from
    figure: Reader
    limit: Callable[[dict], Limit]
    witness: Reader = _none
    no_witness: str = "none"  # the witness cell where the run measured none
    kernel: KernelFile | None = None  # the kernel file that measures it (rooflab.ceilings)
    schema: dict | None = None  # JSON Schema of doc[section] (rooflab's own: in schema/results.schema.json)
    order: int = 100  # place among the registered ceilings
    published: Callable[[dict], float | None] | None = None  # None: the physical limit is what is published

    @property
    def key(self) -> str:
        return self.name

    def published_rate(self, doc: dict) -> float | None:
        """The rate published for it: the vendor's, else its physical limit (None: neither is known)."""
        return self.published(doc) if self.published is not None else self.limit(doc).value

    def brackets(self, doc: dict) -> list[Bracket]:
        fig, wit = self.figure(doc), self.witness(doc)
        if fig is None and wit is None:
            return []
        return [Bracket(self.name, self.unit, fig.value if fig else None, fig.what if fig else "none",
                        wit.value if wit else None, wit.what if wit else self.no_witness, self.limit(doc),
                        self.level)]

    def ceilings(self, doc: dict) -> list[Ceiling]:
        return [self]


@dataclass(frozen=True)
class Family:
    """Ceilings of one kind whose members are what the document measured (a tensor-core roof per
    precision it timed)."""

    key: str
    members: Callable[[dict], list[Ceiling]]
    order: int = 100

    def ceilings(self, doc: dict) -> list[Ceiling]:
        return self.members(doc)

    def brackets(self, doc: dict) -> list[Bracket]:
        return [b for c in self.members(doc) for b in c.brackets(doc)]


CEILINGS: dict[str, Ceiling | Family] = {}
Entry = TypeVar("Entry", Ceiling, Family)


def register(entry: Entry) -> Entry:
    """Add a ceiling (replacing one of the same name); its section's schema joins the results schema."""
    CEILINGS[entry.key] = entry
    if isinstance(entry, Ceiling) and entry.schema is not None:
        results.SECTION_SCHEMAS[entry.section] = entry.schema
    return entry


def registered() -> list[Ceiling | Family]:
    """The registered ceilings in their order (the order they came in among equals)."""
    return sorted(CEILINGS.values(), key=lambda c: c.order)
