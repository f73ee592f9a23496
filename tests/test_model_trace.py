"""The trace model without a GPU: a constructed torch.profiler trace and Nsight Compute rows
(tests/trace_fixtures.py) grouped, windowed, matched, placed and ranked."""

from __future__ import annotations

import re

import pytest
from trace_fixtures import EWISE_CUPTI, EWISE_NCU, EWISE_US, GEMM, GEMM_US, K, M, N, chrome_trace, h200_doc, ncu_rows

from rooflab.model import trace as model
from rooflab.model.hierarchy import levels
from rooflab.tracing import roofs_of


def test_launches_carry_shape_duration_and_the_gemm_operators_flops():
    la = model.launches_from_chrome_trace(chrome_trace())
    assert len(la) == 8
    gemm = [x for x in la if x.name == GEMM]
    assert gemm[0].grid == (32, 16, 1) and gemm[0].block == (384, 1, 1)
    assert gemm[0].duration_s == pytest.approx(GEMM_US * 1e-6)
    assert gemm[0].op == "aten::mm" and gemm[0].op_flops == 2.0 * M * N * K
    assert all(x.op_flops is None for x in la if x.name != GEMM)  # an add is not a matrix product


def test_addmm_and_bmm_flops_from_shapes():
    assert model.op_flops("aten::addmm", [[64], [32, 16], [16, 64]]) == 2 * 32 * 64 * 16
    assert model.op_flops("aten::bmm", [[8, 32, 16], [8, 16, 64]]) == 2 * 8 * 32 * 64 * 16
    assert model.op_flops("aten::add", [[4, 4], [4, 4]]) is None


def test_window_keeps_the_last_step_only():
    doc = chrome_trace()
    la = model.launches_from_chrome_trace(doc)
    inside = model.in_window(doc, la, "step")
    assert len(inside) == 4 and min(x.start_s for x in inside) > 4.9e-3
    assert model.in_window(doc, la, "no such range") == []


def test_groups_and_the_fewest_that_cover_the_time():
    groups = model.group(model.launches_from_chrome_trace(chrome_trace()))
    assert [g.launches for g in groups] == [2, 4, 2]  # GEMM 500 us, add 240 us, sum 10 us
    assert groups[0].name == GEMM and groups[0].total_s == pytest.approx(2 * GEMM_US * 1e-6)
    assert [g.name for g in model.choose(groups, 0.6)] == [GEMM]
    assert len(model.choose(groups, 0.9)) == 2
    assert len(model.choose(groups, 1.0)) == 3 and len(model.choose(groups, 1.0, cap=1)) == 1


def test_cupti_and_ncu_spellings_of_one_kernel_match():
    assert model.base_name(EWISE_CUPTI) == model.base_name(EWISE_NCU) == "vectorized_elementwise_kernel"
    assert model.base_name("void fma_chain<8>(float *, int, float, float)") == "fma_chain"
    assert model.base_name(GEMM) == GEMM
    groups = model.group(model.launches_from_chrome_trace(chrome_trace()))
    samples = model.ncu_samples(ncu_rows(), groups, per_group=5)
    assert len(samples[groups[0].key]) == 1 and len(samples[groups[1].key]) == 2
    assert groups[2].key not in samples
    pat = model.ncu_name_filter(groups[:2])[len("regex:"):]
    assert re.search(pat, EWISE_NCU) and re.search(pat, GEMM)
    assert not re.search(pat, "void at::native::reduce_kernel<512, 1>(ReduceOp)")


def test_placement_gemm_on_the_tensor_roof_and_add_on_hbm():
    doc = h200_doc()
    lv, roofs = levels(doc), roofs_of(doc)
    groups = model.group(model.launches_from_chrome_trace(chrome_trace()))
    samples = model.ncu_samples(ncu_rows(), groups)
    gemm = model.place(groups[0], samples[groups[0].key], lv, roofs)
    assert gemm.precision == "bf16" and gemm.flops == 2.0 * M * N * K
    assert "operator shapes" in gemm.flops_source and gemm.binding == "compute"
    t_floor = 2.0 * M * N * K / 989e12
    assert gemm.floor_s == pytest.approx(t_floor)
    assert gemm.headroom_s == pytest.approx(2 * GEMM_US * 1e-6 * (1 - t_floor / (GEMM_US * 1e-6)))
    add = model.place(groups[1], samples[groups[1].key], lv, roofs)
    assert add.binding == "DRAM" and add.precision == "fp32"
    hbm = next(x.bandwidth for x in lv if x.key == "DRAM")
    assert add.floor_s == pytest.approx(3 * 4 * M * N / hbm)
    assert add.headroom_s == pytest.approx(4 * EWISE_US * 1e-6 - 4 * add.floor_s)
    assert not model.place(groups[2], [], lv, roofs).profiled


def test_tensor_work_without_shapes_is_unattributed_not_guessed():
    g = model.Group("sm90_xmma_gemm_bf16_kernel", (1, 1, 1), (128, 1, 1), 1, 1e-3)
    w = model.work_of(g, {"sm__inst_executed_pipe_tensor.sum": 5.0}, "bf16")
    assert w.flops == 0 and w.source.startswith("unattributed")


def test_section_ranks_by_headroom_and_states_its_limits():
    doc = h200_doc()
    lv, roofs = levels(doc), roofs_of(doc)
    groups = model.group(model.launches_from_chrome_trace(chrome_trace()))
    samples = model.ncu_samples(ncu_rows(), groups)
    placed = [model.place(g, samples.get(g.key, []), lv, roofs) for g in model.choose(groups, 0.9)]
    sec = model.section(groups, placed, command=["python", "x.py"], levels=lv, roofs=roofs,
                        ceilings_source="test", traced_step_s=1.1e-3, untraced_step_s=1.0e-3)
    heads = [p["headroom_s"] for p in sec["groups"] if p["profiled"]]
    assert heads == sorted(heads, reverse=True) and len(heads) == 2
    assert not sec["groups"][-1]["profiled"]
    lim = sec["limits"]
    assert lim["unprofiled_groups"] == 1
    assert lim["unprofiled_share"] == pytest.approx(10 / 750)
    assert lim["tracing_overhead"] == pytest.approx(0.1)
    assert sec["gpu_time_s"] == pytest.approx(750e-6) and sec["launches"] == 8


def test_dims_reads_every_spelling():
    assert model.dims("(128, 2, 1)") == (128, 2, 1)
    assert model.dims([64]) == (64, 1, 1)
    assert model.dims(None) == (1, 1, 1)
