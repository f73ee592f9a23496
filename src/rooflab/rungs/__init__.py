"""The SGEMM ladder, in order: the one registry every list, help text, ratio and paragraph
derives from. Each rung: NAME.cu (the kernel) beside NAME.py (its record)."""

from rooflab.rungs.coalesced import RUNG as COALESCED
from rooflab.rungs.cublas import RUNG as CUBLAS
from rooflab.rungs.naive import RUNG as NAIVE
from rooflab.rungs.pipelined import RUNG as PIPELINED
from rooflab.rungs.record import Rung
from rooflab.rungs.regtile import RUNG as REGTILE
from rooflab.rungs.tensor import TENSOR_RUNGS
from rooflab.rungs.tiled import TILED16, TILED32
from rooflab.rungs.triton import TRITON_RUNGS
from rooflab.rungs.vec import RUNG as VEC
from rooflab.rungs.warptile import RUNG as WARPTILE

LADDER: list[Rung] = [NAIVE, COALESCED, TILED16, TILED32, REGTILE, VEC, WARPTILE, PIPELINED, CUBLAS, *TENSOR_RUNGS,
                     *TRITON_RUNGS]


def by_name() -> dict[str, Rung]:
    """name -> record, read from LADDER at call time (so a rung added to it is seen everywhere)."""
    return {r.name: r for r in LADDER}


def names() -> list[str]:
    return [r.name for r in LADDER]


def get(name: str) -> Rung | None:
    return by_name().get(name)
