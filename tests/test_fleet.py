"""Many GPUs without a GPU: merging per-GPU documents, outliers, launcher environments,
nccl-tests arithmetic, link theoretical rates, rendering, and NVLS staying off in every
process the fleet code starts (a fake Popen stands in for the measuring processes, so
the whole `--devices all` and launcher paths run here end to end)."""

from __future__ import annotations

import ast
import copy
import json
import os
import subprocess
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from rooflab.errors import UsageError
from rooflab.cuda import inventory
from rooflab.cuda import safe_env as safety
from rooflab.fleet import allreduce, launcher, layout, merge, orchestrate
from rooflab.model.fleet import nccl_math, outliers, topology
from rooflab.model.fleet.summary import summarize_gpu
from rooflab.report import fleet as render

DATA = Path(__file__).parent / "data"
SRC = Path(__file__).resolve().parents[1] / "src" / "rooflab"


@pytest.fixture(scope="module")
def h200() -> dict:
    return json.loads((DATA / "h200_results.json").read_text())


def scaled(doc: dict, factor: float, *, uuid: str, host: str = "node-a", index: int = 0, **fleet_gpu) -> dict:
    """A copy of a results document whose copy, FMA and cuBLAS figures are `factor` times the original."""
    d = copy.deepcopy(doc)
    bw = d["bandwidth"]
    for run in bw["memcpy"] + [r for row in bw["sweep"] for r in row["runs"]]:
        if run.get("gbs"):
            run["gbs"] *= factor
    for row in d["flops"]["rows"]:
        if row.get("tflops"):
            row["tflops"] *= factor
    for rung in d["gemm"]["rungs"]:
        if rung.get("timing"):
            rung["timing"]["median_ms"] /= factor
    d["fleet_gpu"] = {"uuid": uuid, "host": host, "index": index, "serial": f"S{index}",
                      "pci_bus_id": f"0000:{index + 1:02x}:00.0", **fleet_gpu}
    return d


def gpus_of(docs: list[dict]) -> list[dict]:
    return [merge.gpu_entry(d) for d in docs]


# ---------------------------------------------------------------- merging

def test_summary_reads_the_recorded_h200(h200):
    s = summarize_gpu(h200)
    assert s["copy_gbs"] == pytest.approx(4254, rel=1e-3)  # float4, median of the two rounds
    assert s["fma_tflops"] == pytest.approx(65.34, rel=1e-3)
    assert s["sgemm_tflops"] == pytest.approx(51.22, rel=1e-3)
    assert s["bf16_tflops"] is None  # no bf16 rung in this run
    assert s["telemetry"]["sm_mhz_load"] == 1980 and s["telemetry"]["reasons"] == []


def test_bf16_read_generically_from_any_bf16_rung(h200):
    d = copy.deepcopy(h200)
    rung = copy.deepcopy(next(r for r in d["gemm"]["rungs"] if r["kernel"] == "cublas"))
    rung.update(kernel="cublas_bf16_tc", precision="bf16")
    rung["timing"]["median_ms"] = rung["flops"] / 600e12 * 1e3  # 600 TFLOP/s
    d["gemm"]["rungs"].append(rung)
    s = summarize_gpu(d)
    assert s["bf16_tflops"] == pytest.approx(600, rel=1e-9)
    assert s["sgemm_tflops"] == pytest.approx(51.22, rel=1e-3)  # the FP32 figure ignores it
    table = render.node_table(merge.merge([(d, "a.json")]))
    assert "BF16 TFLOP/s" in table.columns


def test_merge_keys_by_uuid_sorted_with_node_sections(h200):
    docs = [scaled(h200, 1.0, uuid="GPU-bbbb", host="node-b", index=0),
            scaled(h200, 1.0, uuid="GPU-aaa1", host="node-a", index=1),
            scaled(h200, 1.0, uuid="GPU-aaa0", host="node-a", index=0)]
    node = {"kind": merge.NODE_KIND, "host": "node-a", "gpus": [], "links": {"devices": []},
            "allreduce": {"available": False, "reason": "x"}, "torch_peer": None, "errors": ["boom"]}
    doc = merge.merge([(d, f"gpus/{i}.json") for i, d in enumerate(docs)], [node], command="test")
    f = doc["fleet"]
    assert list(f["gpus"]) == ["GPU-aaa0", "GPU-aaa1", "GPU-bbbb"]
    g = f["gpus"]["GPU-aaa1"]
    assert (g["host"], g["index"], g["serial"], g["pci_bus_id"]) == ("node-a", 1, "S1", "0000:02:00.0")
    assert g["document"]["gemm"]["rungs"]  # the whole per-GPU document travels along
    assert f["links"] == {"node-a": {"devices": []}} and "node-a" in f["allreduce"]
    assert f["errors"] == ["node-a: boom"]
    assert doc["schema_version"] == 1 and doc["device"] is None
    assert f["medians"]["fma_tflops"] == pytest.approx(65.34, rel=1e-3)


def test_merge_flags_two_documents_for_one_gpu(h200):
    a = scaled(h200, 1.0, uuid="GPU-same", index=0)
    b = scaled(h200, 1.0, uuid="GPU-same", index=1)
    f = merge.merge([(a, "a"), (b, "b")])["fleet"]
    assert len(f["gpus"]) == 1 and "two documents for GPU GPU-same" in f["errors"][0]


def test_merge_dir_roundtrip(tmp_path, h200):
    for i, fac in enumerate((1.0, 0.9)):
        p = layout.gpu_json(tmp_path, "node-a", i)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(scaled(h200, fac, uuid=f"GPU-{i}", index=i)))
    (tmp_path / "gpus" / "notes.json").write_text("[1, 2]")  # not a results document: ignored
    gpu_docs, node_docs, errs = merge.load_dir(tmp_path)
    assert len(gpu_docs) == 2 and node_docs == [] and errs == []
    doc = merge.merge(gpu_docs, node_docs)
    written = merge.write(doc, tmp_path)
    assert written == ["fleet.json", "fleet.md", "fleet_gpus.csv"]
    again = json.loads((tmp_path / "fleet.json").read_text())
    assert list(again["fleet"]["gpus"]) == ["GPU-0", "GPU-1"]
    assert "OUTLIER" in (tmp_path / "fleet.md").read_text()


# ---------------------------------------------------------------- outliers

@pytest.fixture(scope="module")
def four(h200):
    return [scaled(h200, 1.00, uuid="GPU-0", index=0), scaled(h200, 1.00, uuid="GPU-1", index=1),
            scaled(h200, 0.90, uuid="GPU-2", index=2), scaled(h200, 0.98, uuid="GPU-3", index=3)]


def test_ten_percent_low_is_flagged_two_percent_is_not(four):
    found = outliers.find(gpus_of(four), pct=5.0)
    assert {o["uuid"] for o in found} == {"GPU-2"}
    assert {o["figure"] for o in found} == {"copy_gbs", "fma_tflops", "sgemm_tflops"}
    o = next(x for x in found if x["figure"] == "fma_tflops")
    assert o["against"] == "fleet median" and o["pct_of_reference"] == pytest.approx(100 * 0.90 / 0.99, rel=1e-9)


def test_threshold_option_is_respected(four):
    assert {o["uuid"] for o in outliers.find(gpus_of(four), pct=0.5)} == {"GPU-2", "GPU-3"}
    assert outliers.find(gpus_of(four), pct=15.0) == []
    doc = merge.merge([(d, None) for d in four], outlier_pct=0.5)
    assert doc["fleet"]["config"]["outlier_pct"] == 0.5 and len({o["uuid"] for o in doc["fleet"]["outliers"]}) == 2


def test_outlier_carries_the_telemetry_that_may_explain_it(h200):
    slow = scaled(h200, 0.9, uuid="GPU-hot", index=2)
    for row in slow["flops"]["rows"]:
        t = row["timing"]["telemetry"]
        t["reasons"], t["throttled"] = ["sw_thermal_slowdown"], True
        t["sm_mhz"]["median"] = 1600
        t["temp_c"]["max"] = 91
    slow["fleet_gpu"]["inventory_after"] = {"ecc": {"volatile": {"corrected": 3, "uncorrected": 0}},
                                            "clocks_mhz": {"sm_max": 1980}, "power_limit_w": 700}
    docs = [scaled(h200, 1.0, uuid="GPU-0"), scaled(h200, 1.0, uuid="GPU-1", index=1), slow]
    o = next(x for x in outliers.find(gpus_of(docs)) if x["uuid"] == "GPU-hot")
    text = " ".join(o["explanations"])
    assert "sw_thermal_slowdown" in text and "91 °C" in text and "3 corrected ECC" in text and "MHz" in text
    table = render.outlier_table(merge.merge([(d, None) for d in docs]))
    assert any("sw_thermal_slowdown" in str(r[-1]) for r in table.rows)


def test_baseline_single_document_and_fleet_document(h200):
    alone = [scaled(h200, 0.9, uuid="GPU-x")]
    assert outliers.find(gpus_of(alone)) == []  # nothing to compare one GPU with
    found = outliers.find(gpus_of(alone), baseline=h200)
    assert {o["against"] for o in found} == {"baseline"} and len(found) == 3
    old = merge.merge([(scaled(h200, 1.2, uuid="GPU-x"), None)])
    found = outliers.find(gpus_of([scaled(h200, 1.0, uuid="GPU-x")]), baseline=old)
    assert {o["figure"] for o in found} == {"copy_gbs", "fma_tflops", "sgemm_tflops"}
    assert outliers.find(gpus_of([scaled(h200, 1.0, uuid="GPU-y")]), baseline=old) == []  # no UUID match


# ---------------------------------------------------------------- launchers

def test_no_launcher_is_one_process():
    info = launcher.detect({})
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.distributed) == ("none", 0, 1, 0, False)


def test_torchrun():
    env = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "1",
           "TORCHELASTIC_RUN_ID": "abc", "MASTER_ADDR": "n0", "MASTER_PORT": "29500",
           "SLURM_PROCID": "0", "SLURM_STEP_ID": "0", "SLURM_NTASKS": "4"}  # torchrun inside srun: torchrun wins
    info = launcher.detect(env)
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.local_world_size, info.node_rank) == \
        ("torchrun", 3, 8, 1, 2, 1)
    assert info.run_id == "torchrun:abc:n0:29500" and info.distributed
    # without --standalone/--rdzv-id every launch is "none": no token from the launcher
    assert launcher.detect({**env, "TORCHELASTIC_RUN_ID": "none"}).run_id is None


def test_srun_step_and_batch_script():
    env = {"SLURM_PROCID": "5", "SLURM_STEP_NUM_TASKS": "6", "SLURM_NTASKS": "12", "SLURM_LOCALID": "2",
           "SLURM_NODEID": "1", "SLURM_STEP_TASKS_PER_NODE": "3(x2)", "SLURM_JOB_ID": "77", "SLURM_STEP_ID": "0"}
    info = launcher.detect(env)
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.local_world_size, info.node_rank) == \
        ("slurm", 5, 6, 2, 3, 1)
    assert info.run_id == "slurm:77.0"
    # a batch script's own environment (no srun step) is one process, not SLURM_NTASKS of them
    assert launcher.detect({"SLURM_PROCID": "0", "SLURM_NTASKS": "8", "SLURM_JOB_ID": "77"}).launcher == "none"
    assert launcher._slurm_tasks_on_node("2(x3),1", 3) == 1 and launcher._slurm_tasks_on_node("4", 0) == 4


def test_mpirun_open_mpi_wins_over_inherited_slurm():
    env = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
           "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "PMIX_NAMESPACE": "prterun-x-123@1",
           "SLURM_PROCID": "0", "SLURM_STEP_ID": "4", "SLURM_NTASKS": "1"}
    info = launcher.detect(env)
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.local_world_size) == \
        ("openmpi", 1, 2, 1, 2)
    assert info.run_id == "openmpi:prterun-x-123@1"


def test_mpich_pmi_fallback():
    info = launcher.detect({"PMI_RANK": "2", "PMI_SIZE": "4", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "2"})
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.local_world_size) == ("mpich", 2, 4, 0, 2)


@pytest.mark.parametrize("env", [{"RANK": "x", "WORLD_SIZE": "2", "LOCAL_RANK": "0"},
                                 {"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0"},
                                 {"PMI_RANK": "0", "PMI_SIZE": "0"}])
def test_bad_launcher_values_are_usage_errors(env):
    with pytest.raises(UsageError):
        launcher.detect(env)


def test_pick_gpu_by_local_rank():
    info = launcher.detect({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"})
    assert launcher.pick_gpu(info, ["g0", "g1"]) == (1, None)
    assert launcher.pick_gpu(info, ["only"]) == (0, None)  # srun --gpus-per-task=1: the one it sees
    many = launcher.detect({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "4"})
    pos, note = launcher.pick_gpu(many, ["g0", "g1"])
    assert pos == 1 and "same GPU" in note
    with pytest.raises(UsageError):
        launcher.pick_gpu(info, [])


def test_visible_and_select_follow_cuda_visible_devices():
    inv = [{"index": i, "uuid": f"GPU-{i}{i}{i}{i}-x"} for i in range(4)]
    assert [g["index"] for g in inventory.visible(inv, None, use_env=False)] == [0, 1, 2, 3]
    assert [g["index"] for g in inventory.visible(inv, "2,GPU-0000", use_env=False)] == [2, 0]
    assert inventory.visible(inv, "", use_env=False) == []
    assert [g["index"] for g in inventory.select(inv, "0,2", "1,2,3", use_env=False)] == [1, 3]
    assert [g["index"] for g in inventory.select(inv, "all", None, use_env=False)] == [0, 1, 2, 3]
    assert [g["index"] for g in inventory.select(inv, "GPU-3333", None, use_env=False)] == [3]
    for bad in ("7", "0,0", "GPU-9", ","):
        with pytest.raises(UsageError):
            inventory.select(inv, bad, None, use_env=False)
    assert inventory.normalize_bus_id("00000000:1A:00.0") == inventory.normalize_bus_id("0000:1a:00.0")


# ---------------------------------------------------------------- arithmetic

@pytest.mark.parametrize(("n", "factor"), [(2, 1.0), (4, 1.5), (8, 1.75)])
def test_allreduce_bus_bandwidth(n, factor):
    assert nccl_math.busbw_factor("allreduce", n) == pytest.approx(factor)
    # 1 GiB in 4 ms: algbw 268.4 GB/s; busbw = algbw x 2(n-1)/n
    assert nccl_math.algbw_gbs(2**30, 4e-3) == pytest.approx(268.435456)
    assert nccl_math.busbw_gbs(2**30, 4e-3, n) == pytest.approx(268.435456 * factor)


def test_other_collectives_and_sizes():
    assert nccl_math.busbw_factor("allgather", 8) == pytest.approx(7 / 8)
    assert nccl_math.busbw_factor("broadcast", 8) == 1.0
    sizes = nccl_math.sizes(1024, 2**30, 4)
    assert sizes[0] == 1024 and sizes[-1] == 2**30 and len(sizes) == 11 and 16 * 2**20 in sizes
    assert len(nccl_math.sizes(1024, 2**30, 2)) == 21
    with pytest.raises(ValueError):
        nccl_math.busbw_factor("allreduce", 0)


def test_link_theoretical_rates():
    assert topology.nvlink_gbs(18, 4) == pytest.approx(478.125)  # H100/H200 NV18
    assert topology.nvlink_gbs(12, 3) == pytest.approx(300.0)  # A100 NV12
    assert topology.pcie_gbs(5, 16) == pytest.approx(63.0, abs=0.01)
    assert topology.pcie_gbs(4, 16) == pytest.approx(31.5, abs=0.01)
    assert topology.nvlink_gen(cc_major=9) == 4 and topology.nvlink_gen(arch="Ampere") == 3
    assert topology.nvlink_gen(nvml_version=6) == 4  # nvmlNvlinkVersion_t 6 = NVLink 4.0


def _gpu(bus, links, remote_type=None, remote=None, pcie=(5, 16)):
    return {"pci_bus_id": bus, "pcie": {"gen_max": pcie[0], "width_max": pcie[1]},
            "nvlink": {"links": [{"link": i, "active": True, "version": 6, "remote_bus_id": remote,
                                  "remote_type": remote_type} for i in range(links)]}}


def test_classify_pairs():
    a, b = "0000:07:00.0", "0000:0a:00.0"
    direct = topology.classify_pair(_gpu(a, 18, 0, b), _gpu(b, 18, 0, a), cc_major=9)
    assert (direct["type"], direct["label"], direct["theoretical_gbs"]) == ("NVLink", "NV18", pytest.approx(478.125))
    switch = topology.classify_pair(_gpu(a, 18, 2, "ffff:00:00.0"), _gpu(b, 18, 2, "ffff:00:00.0"), cc_major=9)
    assert switch["type"] == "NVLink (NVSwitch)" and switch["theoretical_gbs"] == pytest.approx(478.125)
    pcie = topology.classify_pair(_gpu(a, 0, pcie=(5, 16)), _gpu(b, 0, pcie=(4, 16)), p2p={"common_ancestor": "x"})
    assert pcie["type"] == "PCIe" and pcie["label"] == "PCIe gen4 x16" and pcie["theoretical_gbs"] == \
        pytest.approx(31.5, abs=0.01)
    host = topology.host_link(_gpu(a, 0))
    assert host["label"] == "PCIe gen5 x16" and host["theoretical_gbs"] == pytest.approx(63.0, abs=0.01)


# ---------------------------------------------------------------- rendering

def links_section(n=2, gbs=393.0, bidir=764.0, failed=()):
    devices = [{"ordinal": d, "index": d, "uuid": f"GPU-{d}", "pci_bus_id": f"0000:{d + 7:02x}:00.0"} for d in range(n)]
    link = {"type": "NVLink (NVSwitch)", "label": "NV18", "links": 18, "gen": 4, "theoretical_gbs": 478.125,
            "basis": "through NVSwitch"}

    def res(g, key):
        return {"verified": key not in failed, "gbs": g if key not in failed else None}

    return {"config": {"nbytes": 256 * 2**20, "reps": 20}, "devices": devices,
            "pairs": [{"src": i, "dst": j, "link": link} for i in range(n) for j in range(n) if i != j],
            "ce_uni": [{"src": i, "dst": j, **res(gbs, (i, j))} for i in range(n) for j in range(n) if i != j],
            "ce_bidir": [{"a": i, "b": j, **res(bidir, (i, j, "bi"))} for i in range(n) for j in range(i + 1, n)],
            "sm_uni": [], "sm_bidir": [],
            "host": [{"device": d, "h2d": {"verified": True, "gbs": 55.0}, "d2h": {"verified": True, "gbs": 54.0},
                      "link": {"label": "PCIe gen5 x16", "theoretical_gbs": 63.0}} for d in range(n)]}


def allreduce_section():
    rows = [nccl_math.sizes(1024, 2**30, 4)]
    rows = []
    for s in nccl_math.sizes(1024, 2**30, 4):
        t = s / 330e9 if s == 2**30 else s / 220e9
        rows.append({"bytes": s, "verified": True, "verified_after": True, "time_us": t * 1e6,
                     "algbw_gbs": nccl_math.algbw_gbs(s, t), "busbw_gbs": nccl_math.busbw_gbs(s, t, 2)})
    return {"available": True, "backend": "cupy.cuda.nccl", "nccl_version": 22703, "ranks": 2,
            "env": {"NCCL_NVLS_ENABLE": "0"}, "rows": rows}


def test_node_table_and_matrices(four):
    node = {"kind": merge.NODE_KIND, "host": "node-a", "links": links_section(failed=((0, 1),)),
            "allreduce": allreduce_section(), "torch_peer": {"available": False, "reason": "no torch"}}
    doc = merge.merge([(d, None) for d in four], [node])
    t = render.node_table(doc)
    assert len(t.rows) == 5 and t.rows[-1][0] == "median"
    assert "BF16 TFLOP/s" not in t.columns
    flags = {r[1]: r[-1] for r in t.rows[:-1]}
    assert flags["GPU2"].startswith("OUTLIER") and flags["GPU3"] == "ok"
    assert any("(90.9%)" in str(c) for c in t.rows[2])  # 0.90 / 0.99
    tables = render.link_tables(doc)
    titles = [x.title for x in tables]
    assert any("link between GPUs" in x for x in titles) and any("pinned host" in x for x in titles)
    ce = next(x for x in tables if "copy engine" in x.title and "one direction" in x.title)
    assert ce.rows[0][1:] == ["—", "FAILED"] and ce.rows[1][1:] == ["393 (82%)", "—"]
    bi = next(x for x in tables if "both directions" in x.title)
    assert bi.rows[0][2] == "764 (80%)"
    kind = next(x for x in tables if "link between" in x.title)
    assert kind.rows[0][2] == "NV18 · 478"
    assert "393 GB/s" in tables[-1].notes[-1]  # the torch reference, with its source
    ar = render.allreduce_tables(doc)[0]
    row16 = next(r for r in ar.rows if r[0] == "16 MiB")
    assert row16[3] == "220.0" and row16[5] == "220"
    assert next(r for r in ar.rows if r[0] == "1 GiB")[3] == "330.0"
    md = render.markdown(doc)
    assert "# rooflab fleet report" in md and "NCCL all-reduce" in md and "Outliers" in md


def test_a_link_faster_than_its_reported_kind_is_marked():
    sec = links_section()
    for p in sec["pairs"]:
        p["link"] = {"type": "PCIe", "label": "PCIe gen5 x16", "theoretical_gbs": 63.0}
    tables = render.link_tables({"fleet": {"links": {"h": sec}}})
    ce = next(x for x in tables if "copy engine" in x.title and "one direction" in x.title)
    assert ce.rows[0][2] == "393 (624% !)" and any("misreported" in n for n in ce.notes)


def test_nccl_unavailable_renders_cleanly():
    doc = {"fleet": {"allreduce": {"h": {"available": False, "reason": "NCCL not available through CuPy (x)"}}}}
    t = render.allreduce_tables(doc)[0]
    assert t.rows == [["NCCL not available through CuPy (x)"]]


# ---------------------------------------------------------------- NVLS off, and the whole flow with a fake Popen

def test_safe_env_overrides_and_children_cannot_turn_it_back_on(monkeypatch):
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    safety.apply_safe_env()
    assert os.environ["NCCL_NVLS_ENABLE"] == "0"
    env = safety.child_env({"NCCL_NVLS_ENABLE": "1", "NVSHMEM_DISABLE_NVLS": "0", "X": "y"},
                           base={"TORCH_SYMM_MEM_DISABLE_MULTICAST": "0"})
    assert safety.unsafe_keys(env) == [] and env["X"] == "y"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(SRC.parent)


class FakePopen:
    """Stands in for a measuring process: records its command and environment and
    writes the file it would have written."""

    calls: ClassVar[list[tuple[list[str], dict]]] = []
    h200: ClassVar[dict] = {}
    lock = threading.Lock()

    def __init__(self, cmd, *, env=None, **_kw):
        with FakePopen.lock:
            FakePopen.calls.append((list(cmd), dict(env or {})))
        self.pid, self.returncode = 999999, 0
        args = list(cmd)
        step = args[3]
        out = Path(args[args.index("--out") + 1])
        out.parent.mkdir(parents=True, exist_ok=True)
        if step == "worker":
            idx = int(args[args.index("--index") + 1])
            doc = scaled(FakePopen.h200, 0.9 if idx == 1 else 1.0, uuid=args[args.index("--uuid") + 1],
                         host=args[args.index("--host") + 1], index=idx)
            out.write_text(json.dumps(doc))
        elif step == "node-links":
            out.write_text(json.dumps(links_section()))
        elif step == "node-allreduce":
            out.write_text(json.dumps(allreduce_section()))
        else:
            out.write_text(json.dumps({"available": False, "reason": "fake"}))

    def poll(self):
        return 0

    def wait(self, timeout=None):
        return 0


FAKE_GPUS = [{"index": i, "uuid": f"GPU-fake-{i}", "name": "NVIDIA H200", "pci_bus_id": f"0000:{i + 7:02x}:00.0",
              "serial": f"S{i}"} for i in range(3)]


@pytest.fixture
def fake_node(monkeypatch, h200):
    FakePopen.calls = []
    FakePopen.h200 = h200
    monkeypatch.setattr(subprocess, "Popen", FakePopen)
    monkeypatch.setattr(orchestrate, "inventory_here", lambda: (FAKE_GPUS, None))
    monkeypatch.setattr(layout, "hostname", lambda: "node-a")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return FakePopen


def _shape(doc: dict) -> dict:
    f = doc["fleet"]
    return {"gpus": list(f["gpus"]), "sections": {u: sorted(g["document"]) for u, g in f["gpus"].items()},
            "keys": sorted(k for k in f if k != "launch"), "links": sorted(f["links"]),
            "allreduce": sorted(f["allreduce"]), "outliers": sorted((o["uuid"], o["figure"]) for o in f["outliers"])}


def test_devices_all_end_to_end_and_every_child_has_nvls_off(fake_node, tmp_path):
    cfg = orchestrate.FleetConfig(out_dir=str(tmp_path / "fleet"), devices="0,1", quick=True)
    doc = orchestrate.run_devices(cfg)
    steps = [c[0][3] for c in fake_node.calls]
    assert sorted(steps) == ["node-allreduce", "node-links", "node-torch-peer", "worker", "worker"]
    for cmd, env in fake_node.calls:
        assert env.get("NCCL_NVLS_ENABLE") == "0", cmd
        assert env.get("TORCH_SYMM_MEM_DISABLE_MULTICAST") == "1" and env.get("NVSHMEM_DISABLE_NVLS") == "1"
    workers = [env["CUDA_VISIBLE_DEVICES"] for cmd, env in fake_node.calls if cmd[3] == "worker"]
    assert sorted(workers) == ["GPU-fake-0", "GPU-fake-1"]  # one GPU per measuring process, by UUID
    node_env = next(env for cmd, env in fake_node.calls if cmd[3] == "node-links")
    assert node_env["CUDA_VISIBLE_DEVICES"] == "GPU-fake-0,GPU-fake-1"
    f = doc["fleet"]
    assert list(f["gpus"]) == ["GPU-fake-0", "GPU-fake-1"] and f["errors"] == []
    assert "node-a" in f["links"] and f["allreduce"]["node-a"]["available"]
    assert (tmp_path / "fleet" / "fleet.json").is_file() and (tmp_path / "fleet" / "fleet.md").is_file()
    assert {o["uuid"] for o in f["outliers"]} == {"GPU-fake-1"}  # 10% low of two: 5.3% below their median


def test_launcher_path_gives_the_same_document(fake_node, tmp_path):
    devices = orchestrate.run_devices(orchestrate.FleetConfig(out_dir=str(tmp_path / "dev"), devices="0,1",
                                                              quick=True))
    cfg = orchestrate.FleetConfig(out_dir=str(tmp_path / "tr"), quick=True, poll_s=0.01, wait_timeout_s=30)
    base = {"WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2", "TORCHELASTIC_RUN_ID": "t1", "MASTER_ADDR": "h",
            "MASTER_PORT": "1"}
    r1 = launcher.detect({**base, "RANK": "1", "LOCAL_RANK": "1"})
    r0 = launcher.detect({**base, "RANK": "0", "LOCAL_RANK": "0"})
    got: dict = {}
    t = threading.Thread(target=lambda: got.setdefault("r1", orchestrate.run_rank(cfg, r1)))
    t.start()
    doc = orchestrate.run_rank(cfg, r0)
    t.join(10)
    assert got["r1"] is None  # only rank 0 merges
    assert _shape(doc) == _shape(devices)
    assert doc["fleet"]["launch"]["mode"] == "launcher" and doc["fleet"]["launch"]["launcher"] == "torchrun"
    for cmd, env in fake_node.calls:
        assert safety.unsafe_keys(env) == [], cmd
    assert len(list((tmp_path / "tr" / "ranks").glob("rank*.json"))) == 2


def test_launcher_without_a_run_id_agrees_through_run_json(fake_node, tmp_path):
    """MPICH gives no job id: rank 0's run.json carries the token the others use."""
    cfg = orchestrate.FleetConfig(out_dir=str(tmp_path), quick=True, poll_s=0.01, wait_timeout_s=30,
                                  torch_peer=False)
    r0 = launcher.detect({"PMI_RANK": "0", "PMI_SIZE": "2", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "2"})
    r1 = launcher.detect({"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2"})
    assert r0.run_id is None
    t = threading.Thread(target=orchestrate.run_rank, args=(cfg, r1))
    t.start()
    doc = orchestrate.run_rank(cfg, r0)
    t.join(10)
    token = json.loads((tmp_path / "run.json").read_text())["token"]
    assert doc["fleet"]["launch"]["token"] == token and len(doc["fleet"]["gpus"]) == 2
    assert doc["fleet"]["torch_peer"] == {}


def test_torch_fallback_ranks_also_start_with_nvls_off(fake_node, tmp_path):
    from rooflab.measure import collectives

    cfg = collectives.AllreduceConfig(min_bytes=1024, max_bytes=4096, factor=4, reps=2)
    sec = allreduce.run_torch_group(cfg, 4, str(tmp_path / "ar.json"), str(tmp_path / "logs"), timeout_s=5)
    assert sec == {"available": False, "reason": "fake"}  # what the fake rank 0 wrote
    ranks = [(c, e) for c, e in fake_node.calls if c[3] == "torch-allreduce-rank"]
    assert sorted(int(c[c.index("--rank") + 1]) for c, _ in ranks) == [0, 1, 2, 3]
    assert all(safety.unsafe_keys(e) == [] for _, e in ranks)


def test_stale_rank_files_are_ignored(fake_node, tmp_path):
    cfg = orchestrate.FleetConfig(out_dir=str(tmp_path), quick=True, poll_s=0.01, wait_timeout_s=0.2)
    stale = layout.rank_json(tmp_path, 1)
    stale.parent.mkdir(parents=True)
    stale.write_text(json.dumps({"token": "old-run", "rank": 1, "host": "node-a", "gpu": {}}))
    info = launcher.detect({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "TORCHELASTIC_RUN_ID": "new"})
    with pytest.raises(layout.FleetError, match="waiting for all 2 ranks"):
        orchestrate.run_rank(cfg, info)


# the fleet code starts processes in exactly one place, and never touches multicast
FLEET_FILES = [*sorted((SRC / "fleet").glob("*.py")), *sorted((SRC / "model" / "fleet").glob("*.py")),
               SRC / "cli_fleet.py", SRC / "cuda" / "inventory.py", SRC / "cuda" / "safe_env.py",
               SRC / "measure" / "links.py", SRC / "measure" / "collectives.py", SRC / "report" / "fleet.py"]


@pytest.mark.parametrize("path", FLEET_FILES, ids=lambda p: p.name)
def test_processes_start_only_through_spawn(path):
    tree = ast.parse(path.read_text())
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            name = f"{node.value.id}.{node.attr}"
            if (node.value.id in ("subprocess", "multiprocessing", "mp") or name in
                    ("os.system", "os.popen", "os.fork", "os.posix_spawn", "os.posix_spawnp")
                    or (node.value.id == "os" and node.attr.startswith(("exec", "spawn")))):
                bad.append(name)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
            if any(m and m.split(".")[0] in ("subprocess", "multiprocessing", "pty") for m in mods):
                bad.append("import " + ",".join(filter(None, mods)))
        if isinstance(node, (ast.Name, ast.Attribute)):
            ident = node.id if isinstance(node, ast.Name) else node.attr
            assert "multicast" not in ident.lower() and "multimem" not in ident.lower(), ident
    if path.name == "spawn.py":
        assert bad and all(b.startswith(("subprocess.", "import subprocess")) for b in bad)
        assert "child_env(" in path.read_text() and "env=env" in path.read_text()
    else:
        assert bad == [], f"{path.name} starts processes itself: {bad}"


def test_no_kernel_uses_multimem_or_multicast():
    for cu in SRC.glob("**/*.cu"):
        text = cu.read_text()
        assert "multimem" not in text and "cuMulticast" not in text, cu


def test_check_script_exports_nvls_off():
    text = (SRC.parents[1] / "scripts" / "dev" / "check_fleet.sh").read_text()
    for k, v in safety.SAFE_ENV.items():
        assert f"{k}={v}" in text


# ---------------------------------------------------------------- the command line

LAUNCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID")


def test_cli_report_and_merge(fake_node, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rooflab import cli_fleet

    for k in LAUNCH_VARS:
        monkeypatch.delenv(k, raising=False)
    root = tmp_path / "f"
    res = CliRunner().invoke(cli_fleet.fleet, ["report", "--devices", "0,1", "--out", str(root), "--quick",
                                               "--link-size", "64M", "--ar-max", "256M"])
    assert res.exit_code == 0, res.output
    assert "GPUs: each figure as % of the fleet median" in res.output and "OUTLIER" in res.output
    links_call = next(c for c, _ in fake_node.calls if c[3] == "node-links")
    assert links_call[links_call.index("--size") + 1] == str(64 * 2**20)
    ar_call = next(c for c, _ in fake_node.calls if c[3] == "node-allreduce")
    assert ar_call[ar_call.index("--max") + 1] == str(256 * 2**20) and ar_call[ar_call.index("--factor") + 1] == "4"
    res = CliRunner().invoke(cli_fleet.fleet, ["merge", str(root), "--outlier-pct", "20", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads((root / "fleet.json").read_text())["fleet"]["outliers"] == []
    res = CliRunner().invoke(cli_fleet.fleet, ["merge", str(root), "--fail-on-outlier", "--outlier-pct", "1"])
    assert res.exit_code == 1


def test_cli_refuses_devices_under_a_launcher(fake_node, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rooflab import cli_fleet

    for k, v in {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}.items():
        monkeypatch.setenv(k, v)
    res = CliRunner().invoke(cli_fleet.fleet, ["report", "--devices", "all", "--shared-dir", str(tmp_path)])
    assert isinstance(res.exception, UsageError) and "--devices" in str(res.exception)
    res = CliRunner().invoke(cli_fleet.fleet, ["report", "--link-size", "100", "--out", str(tmp_path)])
    assert isinstance(res.exception, UsageError)
    assert fake_node.calls == []  # bad input is refused before anything starts


def test_register_adds_the_group():
    import click

    from rooflab import cli_fleet

    @click.group()
    def top():
        pass

    cli_fleet.register(top)
    assert "fleet" in top.commands and {"report", "merge", "links", "allreduce"} <= set(top.commands["fleet"].commands)
