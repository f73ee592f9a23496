"""Every launch variant of every rung that declares them (the pipelined instances, the tensor-core and
Triton configurations), not only each rung's default, through the harness's own checks: guarded
NaN-poisoned output, normwise and componentwise bounds, determinism, at an odd shape and the check
size. A variant this GPU cannot run (sm_90a code elsewhere, Triton absent, more shared memory than a
block may have) is passed over, as the harness passes it over."""

import pytest

pytestmark = pytest.mark.gpu


def _rungs_with_variants():
    from rooflab import rungs

    # the TMA rungs' variants: tests/test_gpu_tma.py, at shapes of their own
    return [r.name for r in rungs.LADDER if r.variants and r.staging != "tma"]


@pytest.fixture(scope="module")
def device():
    from rooflab.cuda.device import detect

    return detect()


@pytest.fixture(scope="module")
def inputs():
    from rooflab.measure.gemm import GemmConfig, _Inputs

    return _Inputs(GemmConfig(m=1000, n=777, k=1234, reps=1, check_n=67), seed=11)


@pytest.mark.parametrize("name", _rungs_with_variants())
def test_every_variant_is_correct(device, inputs, name):
    from rooflab import rungs
    from rooflab.measure.gemm import run_rung
    from rooflab.measure.tune import fits

    rung = rungs.get(name)
    for v in rung.variants:
        if not fits(v, device):
            continue
        rec = run_rung(rung.with_variant(v), inputs, device)
        if rec["skipped"]:
            continue
        assert rec["passed"], (v.label, rec["error"], rec["checks"])
        assert {"normwise", "componentwise", "guard zones", "deterministic"} <= {c["name"] for c in rec["checks"]}
