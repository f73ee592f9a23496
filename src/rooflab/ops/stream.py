"""y = f(x) elementwise over N floats: the copy (f(x) = x) and y = a·x ceilings' family.

The user gives f as a numpy expression in x (evaluated in float64 for the reference) and
the FLOPs it costs per element; bytes are 8 per element (x read once, y written once).
Kernels take (const float* x, float* y, unsigned long long n).
"""

from __future__ import annotations

import ast

import numpy as np

from rooflab.errors import UsageError
from rooflab.ops.record import Op

_ALLOWED = {"x", "sqrt", "exp", "log", "sin", "cos", "tanh", "abs", "maximum", "minimum", "where"}


def _compile(expr: str):
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise UsageError(f"--expr {expr!r} is not an expression ({exc.msg})") from None
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    bad = sorted(names - _ALLOWED) + ["." for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    if bad:
        raise UsageError(f"--expr may use x, numbers and {', '.join(sorted(_ALLOWED - {'x'}))}; "
                         f"got {', '.join(bad)}")
    return compile(tree, "<expr>", "eval")


def stream(expr: str = "x", flops_per_element: float = 0.0) -> Op:
    """y = expr(x) over n floats; x uniform in [-1, 1)."""
    code = _compile(expr)

    def inputs(xp, n, seed):
        return (xp.random.RandomState(seed).uniform(-1.0, 1.0, n[0], dtype=xp.float32),)

    def reference(xp, x):
        ns = {name: getattr(xp, name) for name in _ALLOWED - {"x"}}
        # the names were checked against _ALLOWED in _compile: no builtins are reachable from expr
        return xp.asarray(eval(code, {}, {**ns, "x": x.astype(xp.float64)}), dtype=xp.float64)  # noqa: S307

    return Op(
        name="stream",
        inputs=inputs,
        reference=reference,
        out_shape=lambda n: (n[0],),
        args=lambda ins, out, n: (ins[0], out, np.uint64(n[0])),
        flops=lambda n: float(flops_per_element) * n[0],
        bytes=lambda n: 8.0 * n[0],
        describe=f"y = {expr} over n floats (x read once, y written once: 8 bytes per element)",
    )
