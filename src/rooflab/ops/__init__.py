"""Operations a kernel can be benchmarked as: each a record of its input generator, float64
reference, tolerance per precision, FLOP count and compulsory bytes (rooflab.ops.record.Op).

`gemm` (C = A·B, any M, N, K) runs through the ladder's harness; `stream` (y = f(x)
elementwise over N floats, the copy and y = a·x family) and a user's own Op (`--op custom`)
through rooflab.measure.bench.
"""

from rooflab.ops.record import Op
from rooflab.ops.stream import stream

OPS = ("gemm", "stream", "custom")

__all__ = ["OPS", "Op", "stream"]
