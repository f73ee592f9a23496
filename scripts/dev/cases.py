"""What the diagnostics in scripts/dev take: the kernels to run (CASES=rung[:kernel],... overrides a script's own
list; a rung alone is its default variant) and the same random square inputs for each."""

import os


def cases(default: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    spec = os.environ.get("CASES")
    if not spec:
        return default
    return [(c.split(":")[0], c.split(":")[1] if ":" in c else None) for c in spec.split(",")]


def rung_of(name: str, kernel: str | None):
    """The rung, or the rung running its variant `kernel`."""
    from rooflab import rungs

    r = rungs.get(name)
    return r.with_variant(next(v for v in r.variants if v.kernel == kernel)) if kernel else r


def square_inputs(cp, n: int):
    """A and B, n x n FP32 uniform in [-1, 1) from a fixed seed, and an n x n FP32 C."""
    rs = cp.random.RandomState(11)
    a0, b0 = (rs.uniform(-1, 1, (n, n), dtype=cp.float32) for _ in range(2))
    return a0, b0, cp.empty((n, n), dtype=cp.float32)
