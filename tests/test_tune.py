"""The tuning cache: the fastest passing variant wins, is keyed by the device, and is reused."""

from types import SimpleNamespace

import pytest

from rooflab.measure import tune
from rooflab.rungs.record import Rung, Variant, cdiv


def grid(m, n, k):
    return (cdiv(n, 128), cdiv(m, 128), 1)


VARIANTS = tuple(Variant(f"v{i}", f"mm<{i}>", (256, 1, 1), grid) for i in range(3))
RUNG = Rung(name="tunable", title="t", stage="s", explain="e", loads_per_fma=None, source="rungs/x.cu",
            kernel="mm<0>", variants=VARIANTS)
DEV = SimpleNamespace(name="NVIDIA H200", cc=(9, 0), driver_version="580.159.04")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLAB_CACHE", str(tmp_path))
    return tmp_path


def test_default_is_the_first_variant_until_tuned():
    rung, info = tune.choose(RUNG, DEV)
    assert rung.kernel == "mm<0>" and info == {"config": "v0", "tuned": False, "tried": 0, "candidates": 3,
                                               "tuned_at_n": None}


def test_search_caches_the_fastest_that_passed(cache):
    times = {"mm<0>": 3.0, "mm<1>": None, "mm<2>": 2.0}  # v1 failed its check: never the winner
    res = tune.search(RUNG, DEV, lambda r: times[r.kernel], n=2048)
    assert res["winner"] == "v2" and res["tried"] == 3
    rung, info = tune.choose(RUNG, DEV)
    assert rung.kernel == "mm<2>" and info["tuned"] and info["tried"] == 3 and info["tuned_at_n"] == 2048
    assert (cache / "tune.json").is_file()


def test_cache_is_per_device_and_version(monkeypatch):
    tune.search(RUNG, DEV, lambda r: {"mm<0>": 3.0, "mm<1>": 1.0, "mm<2>": 2.0}[r.kernel])
    other = SimpleNamespace(name="NVIDIA A100", cc=(8, 0), driver_version="580.159.04")
    assert tune.choose(RUNG, other)[1]["tuned"] is False
    monkeypatch.setattr(tune, "__version__", "9.9")
    assert tune.choose(RUNG, DEV)[1]["tuned"] is False


def test_nothing_passes_nothing_cached():
    res = tune.search(RUNG, DEV, lambda r: None)
    assert res["winner"] is None and tune.cached(RUNG, DEV) is None


def test_variants_that_need_more_shared_memory_than_the_device_has():
    big = (Variant("big", "mm<9>", (256, 1, 1), grid, shared_mem=100 * 1024),) + VARIANTS
    rung = Rung(name="tunable", title="t", stage="s", explain="e", loads_per_fma=None, source="rungs/x.cu",
                kernel="mm<9>", variants=big)
    assert tune.choose(rung, DEV)[0].kernel == "mm<9>"  # H200: 227 KB per block
    t4 = SimpleNamespace(name="Tesla T4", cc=(7, 5), driver_version="580.159.04")
    r, info = tune.choose(rung, t4)  # 64 KB: the first variant that fits is the default
    assert r.kernel == "mm<0>" and r.shared_mem == 0 and info["config"] == "v0"
    measured = []
    res = tune.search(rung, t4, lambda r: measured.append(r.kernel) or 1.0)
    assert "mm<9>" not in measured and res["times_ms"]["big"] is None and res["winner"] == "v0"


def test_search_in_rounds_measures_every_fitting_variant_at_once(cache):
    """measure_all (tune --rounds) gets the variants that fit, in order, and its medians pick the winner."""
    big = (Variant("big", "mm<9>", (256, 1, 1), grid, shared_mem=100 * 1024),) + VARIANTS
    rung = Rung(name="tunable", title="t", stage="s", explain="e", loads_per_fma=None, source="rungs/x.cu",
                kernel="mm<9>", variants=big)
    t4 = SimpleNamespace(name="Tesla T4", cc=(7, 5), driver_version="580.159.04")
    calls = []

    def measure_all(cands):
        calls.append([(label.split(":")[1].split("(")[0].strip(), r.kernel) for label, r in cands])
        return [3.0, None, 2.0]

    res = tune.search(rung, t4, lambda r: pytest.fail("measured one at a time"), measure_all=measure_all)
    assert calls == [[("v0", "mm<0>"), ("v1", "mm<1>"), ("v2", "mm<2>")]]
    assert res["winner"] == "v2" and list(res["times_ms"]) == ["big", "v0", "v1", "v2"]
    assert res["times_ms"] == {"big": None, "v0": 3.0, "v1": None, "v2": 2.0}
