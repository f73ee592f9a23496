"""Run the Triton GEMM kernels under Triton's interpreter on CPU torch tensors and print, as JSON,
each configuration's normwise error against a float64 product (tests/test_triton.py runs this in a
subprocess: TRITON_INTERPRET=1 must be set before the kernels' module is imported).

    python tests/triton_interpret.py M N K "<precision> <config>" ...
"""

import json
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton.language as tl  # noqa: E402
import triton.runtime.interpreter as interp  # noqa: E402

_patch_tensor = interp._patch_lang_tensor


def _patched(tensor, scope):
    # Triton 3.6's interpreter holds scalars as 1-element arrays and int() of those fails on
    # numpy >= 2.4 (`for k in range(tl.cdiv(K, BLOCK_K))`): index the element instead
    _patch_tensor(tensor, scope)
    scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))


interp._patch_lang_tensor = _patched
_create_dot = interp.InterpreterBuilder.create_dot


def _dot_bf16(self, a, b, d, input_precision, max_num_imprecise_acc):
    # the interpreter keeps BF16 as uint16 bit patterns and np.matmul would multiply the integers:
    # widen them to the FP32 values they encode (exact), as the tensor core does
    if a.dtype.scalar == tl.bfloat16:
        a = interp.TensorHandle((a.data.astype(np.uint32) << 16).view(np.float32), tl.float32)
        b = interp.TensorHandle((b.data.astype(np.uint32) << 16).view(np.float32), tl.float32)
    return _create_dot(self, a, b, d, input_precision, max_num_imprecise_acc)


interp.InterpreterBuilder.create_dot = _dot_bf16

from rooflab.cuda import triton_kernels  # noqa: E402
from rooflab.model.check import round_inputs  # noqa: E402
from rooflab.rungs.triton import parse  # noqa: E402


def main(argv: list[str]) -> dict:
    m, n, k = map(int, argv[:3])
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    out = {}
    for spec in argv[3:]:
        cfg = parse(spec)
        if cfg.precision == "bf16":
            ra, rb = round_inputs(np, a, "bf16"), round_inputs(np, b, "bf16")
            ta, tb = torch.from_numpy(ra).to(torch.bfloat16), torch.from_numpy(rb).to(torch.bfloat16)
        else:
            ra, rb = a, b
            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        ref = ra.astype(np.float64) @ rb.astype(np.float64)
        c = torch.full((m, n), float("nan"), dtype=torch.float32)
        path = triton_kernels.matmul(ta, tb, c, cfg)
        got = c.numpy().astype(np.float64)
        err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref)) if np.isfinite(got).all() else float("inf")
        out[spec] = {"error": err, "path": path, "unwritten": int(np.isnan(got).sum())}
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
