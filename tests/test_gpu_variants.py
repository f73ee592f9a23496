"""Every launch variant of every rung that declares them (the pipelined instances, the tensor-core and
Triton configurations), not only each rung's default, through the harness's own checks: guarded
NaN-poisoned output, normwise and componentwise bounds, determinism, at an odd shape and the check
size. A variant this GPU cannot run (sm_90a code elsewhere, Triton absent, more shared memory than a
block may have) is passed over, as the harness passes it over. The Triton configurations compile for
minutes, so they run where ROOFLAB_TRITON_VARIANTS=1 asks for them (`rooflab tune` checks each too)."""

import os

import pytest

pytestmark = pytest.mark.gpu


def _rungs_with_variants(triton: bool) -> list[str]:
    from rooflab import rungs
    from rooflab.rungs.triton import TRITON_RUNGS

    in_triton = {r.name for r in TRITON_RUNGS}
    # the TMA rungs' variants: tests/test_gpu_tma.py, at shapes of their own
    return [r.name for r in rungs.LADDER if r.variants and r.staging != "tma" and (r.name in in_triton) == triton]


@pytest.fixture(scope="module")
def device():
    from rooflab.cuda.device import detect

    return detect()


@pytest.fixture(scope="module")
def inputs():
    from rooflab.measure.gemm import GemmConfig, _Inputs

    return _Inputs(GemmConfig(m=1000, n=777, k=1234, reps=1, check_n=67), seed=11)


def _check_every_variant(device, inputs, name):
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


@pytest.mark.parametrize("name", _rungs_with_variants(triton=False))
def test_every_cuda_variant_is_correct(device, inputs, name):
    _check_every_variant(device, inputs, name)


@pytest.mark.skipif(os.environ.get("ROOFLAB_TRITON_VARIANTS") != "1",
                    reason="a Triton compile per configuration, minutes: ROOFLAB_TRITON_VARIANTS=1 runs them")
@pytest.mark.parametrize("name", _rungs_with_variants(triton=True))
def test_every_triton_variant_is_correct(device, inputs, name):
    _check_every_variant(device, inputs, name)
