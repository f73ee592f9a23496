"""The SGEMM ladder, in order. Each rung: NAME.cu (the kernel) beside NAME.py (its record)."""

from rooflab.rungs.coalesced import RUNG as COALESCED
from rooflab.rungs.cublas import RUNG as CUBLAS
from rooflab.rungs.naive import RUNG as NAIVE
from rooflab.rungs.record import Rung
from rooflab.rungs.regtile import RUNG as REGTILE
from rooflab.rungs.tiled import TILED16, TILED32

LADDER: tuple[Rung, ...] = (NAIVE, COALESCED, TILED16, TILED32, REGTILE, CUBLAS)
BY_NAME: dict[str, Rung] = {r.name: r for r in LADDER}
