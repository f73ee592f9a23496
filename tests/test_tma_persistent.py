"""The persistent TMA body (include/tma_persistent.cuh) as each precision's rungs use it, with no GPU:
every variant's record (block, shared memory, grid, staging) follows from the template arguments of the
kernel it launches; the staging schemes of the TF32 and 3xTF32 rungs run the pre-pass, then map its
outputs (both K-major, parts stacked) and C; the ring's slot release is replayed for the flushed
accumulation. The kernels' numbers are checked on the GPU (tests/test_gpu_tma.py)."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rooflab.cuda import staging, tma
from rooflab.rungs.record import persistent_grid, persistent_smem_bytes
from rooflab.rungs.wgmma_bf16_tma import TMA_RUNGS
from rooflab.rungs.wgmma_fp8 import WGMMA_FP8_PERSISTENT
from rooflab.rungs.wgmma_tf32_tma import WGMMA_3XTF32_SWAP, WGMMA_3XTF32_TMA, WGMMA_TF32_SWAP, WGMMA_TF32_TMA

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "rooflab"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (the CUDA toolkit) is not on PATH")
SMEM_LIMIT = 227 * 1024
PERSISTENT = (*[r for r in TMA_RUNGS if r.name in ("wgmma_bf16_persistent", "wgmma_bf16_cluster", "wgmma_bf16_tma_store")],
              WGMMA_TF32_TMA, WGMMA_TF32_SWAP, WGMMA_3XTF32_TMA, WGMMA_3XTF32_SWAP, WGMMA_FP8_PERSISTENT)
# the operand policy each file's kernels name -> (parts, tile columns); SPLIT_A's stages also hold A's residual
OPS = {"tma_gemm::Bf16OpSlot": (1, 256), "tma_gemm::Bf16OpRelay": (1, 256), "fp8_gemm::Fp8OpBoxRelay<144": (1, 144), "tma_gemm::Bf16Op": (1, 256), "tma_gemm::Bf16OpOwnB": (1, 256), "tf32_tma::Tf32Op": (1, 256), "tf32_tma::Tf32SwapOp": (1, 256),
       "tf32_tma::Tf32OneBoxOp": (1, 256), "tf32_tma::Tf32SwapBoxOp": (1, 256), "tf32_tma::X3SwapOneBoxOp": (1, 128),
       "tf32_tma::X3Op": (2, 128), "tf32_tma::X3SwapOp": (1, 128),
       "fp8_gemm::Fp8Op<128": (1, 128), "fp8_gemm::Fp8Op<192": (1, 192),
       "fp8_gemm::Fp8Op<256": (1, 256), "fp8_gemm::Fp8OpOwnB<192": (1, 192), "fp8_gemm::Fp8OpBox<192": (1, 192),
       "fp8_gemm::Fp8OpBox<224": (1, 224), "fp8_gemm::Fp8OpBox<144": (1, 144),
       "fp8_gemm::Fp8OpBox3<128": (1, 128)}
SPLIT_OPS = ("tf32_tma::X3SwapOp", "tf32_tma::X3SwapOneBoxOp")
# the policies whose B boxes are not 64 rows tall, and the staging that maps B so
STORING = (staging.TMA_STORE, staging.TMA_FP8_STORE, staging.TMA_F32_STORE, staging.TMA_TRANSPOSE, *staging.TMA_PREPASS,
           "tma_fp8_b192_store", "tma_fp8_b224_store", "tma_fp8_b32_store", "tma_fp8_a128_b224_store", "tma_fp8_a128_b144_store",
           "tma_a128_store", "tma_tf32t_a128_b256", "tma_f32_a256_store", "tma_f32_ab256_store", "tma_f32_ab128_store",
           "tma_ab1_store")


def _box_rows(op: str) -> tuple[int, int]:
    """(rows of a box of B, of A) the BF16 or FP8 policy loads: Fp8OpBox<BN, BR, FLUSH[, AR]>, Bf16OpA128, else 64."""
    if m := re.match(r"fp8_gemm::Fp8OpBox(?:3|Relay)?<\d+, (\d+), -?\d+(?:, (\d+))?>", op):
        return int(m[1]), int(m[2] or 64)
    return (64, 128) if op in ("tma_gemm::Bf16OpA128", "tma_gemm::Bf16OpOneBox") else (64, 64)


def _launch_bounded(source: Path, threads: int) -> str:
    """The kernels of a file declared for blocks of `threads` threads, one a line."""
    return "\n".join(re.findall(rf'__launch_bounds__\({threads}, 1\)\s*\n(\w+\(const void)', source.read_text()))


def _entries(source: Path) -> dict[str, tuple[str, str, tuple[int, ...]]]:
    """kernel -> (cluster macro or "", operand policy, (cluster, stages, producer regs, consumer regs, store))."""
    found = re.findall(r'extern "C" __global__ void ((?:\w+_CLUSTER_DIMS_\d+ )?)__launch_bounds__\((?:384|512), 1\)\s*\n'
                       r'(\w+)\((?:(?!extern "C").)*?tma_persistent::body<((?:\w+::)*\w+(?:<[-\w, ]+>)?), ([\w, ]+)>\(',
                       source.read_text(), flags=re.S)
    flag = {"true": 1, "false": 0}
    return {name: (macro.strip(), op, tuple(flag[x] if x in flag else int(x) for x in (a.strip() for a in args.split(","))))
            for macro, name, op, args in found}


def _op(op: str) -> tuple[int, int]:
    return next(v for k, v in OPS.items() if op.startswith(k))


@pytest.mark.parametrize("rung", PERSISTENT, ids=lambda r: r.name)
def test_every_variant_launches_its_kernel_as_the_kernel_is_built(rung):
    inst = _entries(rung.source_path())
    assert rung.variants and rung.kernel == rung.variants[0].kernel
    for v in rung.variants:
        macro, op, (cluster, stages, producer_regs, consumer_regs, store, *rest) = inst[v.kernel]
        # the tile order's groups (16 unless said), the C boxes each consumer stages (2 unless said)
        group, c_bufs = rest[0] if rest else 16, rest[1] if len(rest) > 1 else 2
        assert group in (8, 16, 32) and 2 <= c_bufs <= 8, v.kernel
        parts, bn = _op(op)
        consumers = 3 if op.startswith("fp8_gemm::Fp8OpBox3<") else 2  # the policy's CONSUMERS
        bm = 64 * consumers
        ring = (stages * parts * (bm + bn) + (stages * bn if op.startswith(SPLIT_OPS) else 0)) * 128 + 1024
        if op.startswith(("fp8_gemm::", "tma_gemm::")):  # whole boxes, mapped on the host in boxes as tall
            b_rows, a_rows = _box_rows(op)
            layout = tma.LAYOUTS[(v.staging or rung.staging).removesuffix("_store")]
            assert bn % b_rows == 0 and bm % a_rows == 0, v.kernel
            assert (layout.b_box_rows, layout.a_box_rows) == (b_rows, a_rows), v.kernel
            # B as it lies in one box of its 64-column panels where the policy takes it so (BN / 64 of them)
            assert layout.b_chunks == (bn // 64 if op == "tma_gemm::Bf16OpOneBox" else 0), v.kernel
            # every FP8 variant names its maps (their boxes differ); a BF16 one only where it differs from the rung's
            assert v.staging if op.startswith("fp8_gemm::") else (v.staging is None) == ((a_rows, b_rows) == (64, 64))
        assert c_bufs <= bn // 32, v.kernel  # at most every box of a consumer's 64 x bn
        assert v.shared_mem == ring + (2 * c_bufs * 8192 if store else 0) <= SMEM_LIMIT, v.label
        assert v.block == (128 * (1 + consumers), 1, 1) and 128 * (producer_regs + consumers * consumer_regs) <= 65536
        assert f"{v.kernel}(const void" in _launch_bounded(rung.source_path(), v.block[0]), v.kernel
        assert f"{consumers} consumers" in v.label if consumers != 2 else "3 consumers" not in v.label, v.label
        # C's map follows B's only then; a variant storing C from its registers leaves it unused
        assert bool(store) == ((v.staging or rung.staging) in STORING and "C stored from registers" not in v.label), v.label
        # launched in clusters of the macro's size; the body shares work over them unless each CTA is on its own
        launched = int(macro.rsplit("_", 1)[1]) if macro else 1
        assert macro in ("", f"{macro.split('_CLUSTER')[0]}_CLUSTER_DIMS_{launched}"), v.kernel
        assert cluster == (1 if "each CTA on its own" in v.label else launched), v.kernel
        assert (launched > 1) == ("clusters" in v.label), v.label
        assert ("Relay" in op) == ("releases relayed" in v.label), v.label
        assert f"stages {stages}" in v.label and f"{bm}x{bn}x" in v.label, v.label
        ref = persistent_grid(launched, bm, bn, swap_ab="Swap" in op)  # C^T's tiles: 128 columns x 256 rows
        for shape in ((1000, 777, 1234), (8192, 8192, 64), (1, 1, 1), (4096, 4096, 64)):
            assert v.grid(*shape, sms=132) == ref(*shape, sms=132), (v.label, shape)
        assert v.grid(1, 1, 1, sms=132) == (launched, 1, 1)


def test_the_precisions_carry_their_own_staging_and_tolerance():
    assert WGMMA_TF32_TMA.staging == staging.TMA_TRANSPOSE and WGMMA_3XTF32_TMA.staging == "tma_3xtf32"
    assert WGMMA_TF32_TMA.rounding == "tf32_trunc"  # the tensor core truncates the bits nobody rounded
    # e4m3 maps of A and B^T, C after them; the default 128 x 224 tile takes A and B^T in one box each
    assert WGMMA_FP8_PERSISTENT.staging == "tma_fp8_a128_b224_store"
    assert tma.LAYOUTS["tma_fp8_a128_b224"].element.name == "e4m3"
    from rooflab.rungs.tensor import WGMMA_3XTF32, WGMMA_TF32

    assert WGMMA_TF32_TMA.precision == WGMMA_TF32.precision
    assert WGMMA_TF32_TMA.normwise_tolerance(4096) == WGMMA_TF32.normwise_tolerance(4096)
    assert WGMMA_3XTF32_TMA.normwise_tolerance(4096) == WGMMA_3XTF32.normwise_tolerance(4096)
    # the swapped kernels map FP32 A and B as they lie; by default a stage's operands in one box each
    assert WGMMA_TF32_SWAP.staging == "tma_f32_ab256_store" and WGMMA_TF32_SWAP.rounding == "tf32_trunc"
    assert {v.staging for v in WGMMA_TF32_SWAP.variants} >= {staging.TMA_F32_STORE}
    assert tma.LAYOUTS["tma_f32_ab256"].element == tma.LAYOUTS["tma_f32"].element == tma.F32
    assert WGMMA_TF32_SWAP.normwise_tolerance(4096) == WGMMA_TF32.normwise_tolerance(4096)
    assert WGMMA_3XTF32_SWAP.staging == "tma_f32_ab128_store" and WGMMA_3XTF32_SWAP.rounding == "fp32"
    # every variant names its maps, as the default's are not the others'
    assert all(v.staging for r in (WGMMA_TF32_SWAP, WGMMA_3XTF32_SWAP) for v in r.variants)
    assert WGMMA_3XTF32_SWAP.normwise_tolerance(4096) == WGMMA_3XTF32_TMA.normwise_tolerance(4096)
    assert WGMMA_3XTF32_SWAP.componentwise_tolerance(1) == WGMMA_3XTF32_TMA.componentwise_tolerance(1)
    for r in (WGMMA_TF32_TMA, WGMMA_TF32_SWAP, WGMMA_3XTF32_TMA, WGMMA_3XTF32_SWAP, WGMMA_FP8_PERSISTENT):
        assert r.exact_cc and r.requires_cc == (9, 0) and "-arch=sm_90a" in r.options


def test_the_new_rungs_sit_after_their_cp_async_rungs():
    from rooflab import rungs

    names = rungs.names()
    assert names.index("wgmma_3xtf32_tma") == names.index("wgmma_3xtf32") + 1
    assert names.index("wgmma_3xtf32_swap") == names.index("wgmma_3xtf32_tma") + 1
    assert names.index("wgmma_tf32_tma") == names.index("wgmma_tf32") + 1 < names.index("cublas_tf32")
    assert names.index("wgmma_tf32_swap") == names.index("wgmma_tf32_tma") + 1 < names.index("cublas_tf32")
    assert names.index("wgmma_fp8_persistent") == names.index("wgmma_fp8") + 1


@pytest.mark.parametrize("parts", (1, 2))
def test_the_staged_maps_stack_the_parts_k_major(parts):
    """A' and B' are FP32, K-major (B' is B^T), Kp columns, parts x M / parts x N rows: a box is 32 k x 64
    rows, one 128-byte swizzle row each, and a part's rows start parts apart in the same map."""
    layout = tma.STAGED_F32[parts]
    sa, sb = tma.operand_specs(45, 33, 96, layout=layout)
    assert (sa.rows, sa.cols, sa.pitch) == (parts * 45, 96, 96 * 4)
    assert (sb.rows, sb.cols, sb.pitch) == (parts * 33, 96, 96 * 4)
    for spec in (sa, sb):
        args = tma.encode_args(spec)
        assert args["data_type"] == tma.DATA_TYPE_FLOAT32 and args["box"] == (32, 64) and spec.problems(0x1000) == []


def test_the_fp32_layout_maps_both_operands_as_they_lie():
    """The swapped TF32 kernel's maps: A (M x K) in 32 k x 64-row boxes, B (K x N) as it lies in boxes of 32 n x
    32 k-rows (one k-tile: its consumers load B^T's fragments from them), FP32, packed pitches."""
    layout = tma.LAYOUTS["tma_f32"]
    sa, sb = tma.operand_specs(45, 36, 96, layout=layout)
    assert (sa.rows, sa.cols, sa.pitch, sa.box) == (45, 96, 96 * 4, (32, 64))
    assert (sb.rows, sb.cols, sb.pitch, sb.box) == (96, 36, 36 * 4, (32, 32))
    for spec in (sa, sb):
        assert tma.encode_args(spec)["data_type"] == tma.DATA_TYPE_FLOAT32 and spec.problems(0x1000) == []
    bf16_b = tma.operand_specs(45, 36, 96)[1]
    assert bf16_b.box == (64, 64)  # the other layouts keep 64-row boxes


def test_the_fp32_scheme_hands_over_the_operands_maps_and_cs(monkeypatch):
    seen = []
    monkeypatch.setattr(tma, "operand_maps", lambda a, b, m, n, k, label, layout, c: seen.append(
        (a, b, m, n, k, layout, c)) or ("MA", "MB"))
    assert staging.takes_c(staging.TMA_F32_STORE)
    stage, k = staging.stager(WGMMA_TF32_SWAP.source, (), staging.TMA_F32_STORE, 45, 33, 70, "x")
    assert k == 70 and stage("A", "B", "C") == ("MA", "MB")
    assert seen == [("A", "B", 45, 33, 70, tma.LAYOUTS["tma_f32"], "C")]


@pytest.mark.parametrize("scheme,prepass", sorted(staging.TMA_PREPASS.items()))
def test_the_prepass_schemes_map_the_prepass_outputs_and_c(monkeypatch, scheme, prepass):
    """The pre-pass runs on the caller's arrays, then the maps are of its outputs (not of A and B), with
    Kp and the layout of its parts, and C's map is asked for."""
    calls = []

    class FakeKernel:
        def __init__(self, name):
            self.name = name

        def launch(self, grid, block, args):
            calls.append((self.name, grid, block, args[0], int(args[-1])))

    class FakeCupy:
        float32 = np.float32

        @staticmethod
        def empty(n, dtype):
            calls.append(("alloc", n))
            return f"buf{len(calls)}"

    monkeypatch.setattr(staging, "get_kernel", lambda src, name, **kw: FakeKernel(name))
    monkeypatch.setattr(staging, "cupy", lambda: FakeCupy)
    monkeypatch.setattr(tma, "operand_maps", lambda a, b, m, n, k, label, layout, c: calls.append(
        ("maps", a, b, m, n, k, layout, c)) or ("MA", "MB"))
    assert staging.takes_c(scheme)
    stage, kp = staging.stager(WGMMA_TF32_TMA.source, (), scheme, 45, 33, 70, "x")
    assert kp == 96 and stage("A", "B", "C") == ("MA", "MB")
    parts = staging.SCHEMES[prepass]
    assert calls[0] == ("alloc", parts * 45 * 96) and calls[1] == ("alloc", parts * 33 * 96)
    assert calls[2][0] == f"stage_a_{prepass}" and calls[2][3] == "A"
    assert calls[3][0] == f"stage_bt_{prepass}" and calls[3][3] == "B" and calls[3][1] == (2, 3, 1)
    assert calls[4] == ("maps", "buf1", "buf2", 45, 33, 96, tma.STAGED_F32[parts], "C")


def test_the_stage_kernels_are_defined_where_the_rungs_look_for_them():
    src = WGMMA_TF32_TMA.source_path().read_text()
    for p in staging.TMA_PREPASS.values():
        for kind in ("a", "bt"):
            assert re.search(rf'extern "C" __global__ void stage_{kind}_{p}\(', src)
    assert re.search(r'extern "C" __global__ void stage_bt_transpose\(const float\* X, float\* out, int K, int N\)', src)


@pytest.mark.parametrize("scheme", sorted(staging.TRANSPOSE_LAYOUTS))
def test_the_transposing_scheme_maps_a_in_place_and_b_transposed(monkeypatch, scheme):
    """Only B goes through a kernel (transposed into an N x K scratch); A's map is of the caller's array,
    K is as it is (TMA zero-fills the tail), and C's map is asked for."""
    calls = []

    class FakeKernel:
        def launch(self, grid, block, args):
            calls.append(("transpose", grid, block, args[0], [int(x) for x in args[2:]]))

    class FakeCupy:
        float32 = np.float32

        @staticmethod
        def empty(shape, dtype):
            calls.append(("alloc", shape))
            return "BT"

    monkeypatch.setattr(staging, "get_kernel", lambda src, name, **kw: calls.append(("get", name)) or FakeKernel())
    monkeypatch.setattr(staging, "cupy", lambda: FakeCupy)
    monkeypatch.setattr(tma, "operand_maps", lambda a, b, m, n, k, label, layout, c: calls.append(
        ("maps", a, b, m, n, k, layout, c)) or ("MA", "MB"))
    assert staging.takes_c(scheme)
    stage, k = staging.stager(WGMMA_TF32_TMA.source, (), scheme, 45, 33, 70, "x")
    assert k == 70 and stage("A", "B", "C") == ("MA", "MB")
    assert calls == [("get", "stage_bt_transpose"), ("alloc", (33, 70)),
                     ("transpose", (2, 3, 1), (32, 8, 1), "B", [70, 33]),
                     ("maps", "A", "BT", 45, 33, 70, staging.TRANSPOSE_LAYOUTS[scheme], "C")]


# the TF32 policies that load a stage's operand in one box -> (rows of the second operand's box, B chunked),
# as the host must map them (the swapped kernels' second operand is A)
ONE_BOX_OPS = {"tf32_tma::Tf32OneBoxOp": None, "tf32_tma::Tf32SwapBoxOp<false>": (256, False),
               "tf32_tma::Tf32SwapBoxOp<true>": (256, True), "tf32_tma::X3SwapOneBoxOp<2>": (128, True)}


def test_the_one_box_tf32_variants_are_mapped_in_their_kernels_boxes():
    src = WGMMA_TF32_TMA.source_path().read_text()
    assert "static constexpr int A_BOX_ROWS = 128, B_BOX_ROWS = 256;" in src
    assert re.search(r"struct Tf32SwapBoxOp : Tf32SwapOp \{\s*static constexpr int B_BOX_ROWS = 256;", src)
    assert re.search(r"struct X3SwapOneBoxOp : X3SwapOp<FLUSH_, false> \{\s*static constexpr int B_BOX_ROWS = 128;"
                     r"\s*static constexpr bool B_ONE_BOX = true;", src)
    seen = set()
    for rung in (WGMMA_TF32_TMA, WGMMA_TF32_SWAP, WGMMA_3XTF32_SWAP):
        inst = _entries(rung.source_path())
        for v in rung.variants:
            op = inst[v.kernel][1]
            if op not in ONE_BOX_OPS:
                continue
            seen.add(op)
            scheme = v.staging or rung.staging
            if ONE_BOX_OPS[op] is None:
                assert staging.TRANSPOSE_LAYOUTS[scheme] == tma.STAGED_F32_ONE_BOX, v.kernel
                continue
            rows, chunked = ONE_BOX_OPS[op]
            layout = tma.LAYOUTS[scheme.removesuffix("_store")]
            assert (layout.a_box_rows, bool(layout.b_chunks), layout.b_box_rows) == (rows, chunked, 32), v.kernel
            assert layout.b_chunks in (0, 128 // 32), v.kernel  # the kernel's BM / 32 chunks of 32 columns
    assert seen == set(ONE_BOX_OPS)


def _replay_releases(kt_count: int, flush: int) -> list[tuple[int, int]]:
    """(k-tile whose MMAs the last wait retired, slot released) in the order the flushed consumer loop of
    consume_tile does them: wait_group 0 after a group's last k-tile, else 1; release one k-tile late
    (every k-tile flushed: at once)."""
    if flush == 1:  # each k-tile's own wait_group 0 retires it: released at once
        return [(kt, kt) for kt in range(kt_count)]
    out, retired = [], -1
    for kt in range(kt_count):
        last = kt == kt_count - 1 or (kt + 1) % flush == 0
        retired = kt if last else kt - 1  # wait_group 0 retires kt itself, 1 everything before it
        if kt > 0:
            out.append((retired, kt - 1))
    out.append((kt_count - 1, kt_count - 1))  # after the loop: wait_group 0, then the last slot
    return out


@pytest.mark.parametrize("flush", (1, 2, 4))
@pytest.mark.parametrize("kt_count", (1, 2, 3, 7, 8))
def test_no_slot_is_released_before_its_mmas_are_retired(kt_count, flush):
    body = (PKG / "include" / "tma_persistent.cuh").read_text()
    assert "Op::FLUSH == 1" in body and "release<CLUSTER, RS>(empty(s));" in body  # the path replayed here
    released = _replay_releases(kt_count, flush)
    assert [slot for _r, slot in released] == list(range(kt_count))  # every k-tile's slot once, in order
    assert all(retired >= slot for retired, slot in released)


def _replay_c_staging(boxes: int, c_bufs: int, tiles: int, seed: int, wait: int | None = None) -> None:
    """store_acc_tma's buffers over `tiles` tiles: box bx goes into buffer bx % c_bufs (all at once where
    there is a buffer for every box), one bulk group committed a box; TMA reads the groups in order, at
    random times; cp.async.bulk.wait_group.read n returns once at most n groups are unread."""
    wait = c_bufs - 1 if wait is None else wait
    rng = random.Random(seed)
    unread: list[int] = []  # the buffer of every committed group TMA has not read yet, oldest first

    def progress():
        del unread[:rng.randrange(len(unread) + 1)]

    def wait_read(n):
        progress()
        del unread[:max(0, len(unread) - n)]

    def write(buf):
        progress()
        assert buf not in unread, f"box written into buffer {buf} while TMA may still read it"

    for _tile in range(tiles):
        wait_read(0)  # the last tile's boxes have left every buffer
        if c_bufs == boxes:
            for bx in range(boxes):
                write(bx)
            unread.extend(range(boxes))
            continue
        for bx in range(boxes):
            if bx >= c_bufs:
                wait_read(wait)
            write(bx % c_bufs)
            unread.append(bx % c_bufs)


@pytest.mark.parametrize("boxes", (4, 8))
def test_no_c_box_overwrites_a_buffer_tma_still_reads(boxes):
    body = (PKG / "include" / "tma_persistent.cuh").read_text()
    # the paths replayed here
    # (NBUF: the consumer's own CBUFS buffers and, with C_IN_SLOT, those in the held slot; 5 for BF16's, replayed too)
    assert "if constexpr (NBUF == BOXES)" in body and "bulk_wait_read<NBUF - 1>()" in body
    assert "buf_at(bx % NBUF)" in body and "if (bx >= NBUF)" in body
    for c_bufs in range(2, boxes + 1):
        for seed in range(40):
            _replay_c_staging(boxes, c_bufs, 3, seed)
    # the check can fail: one group more left unread lets a box overwrite a buffer still being read
    caught = 0
    for seed in range(40):
        try:
            _replay_c_staging(boxes, 2, 3, seed, wait=2)
        except AssertionError:
            caught += 1
    assert caught > 0


@needs_nvcc
def test_the_policies_and_the_smem_formula_are_the_kernels(tmp_path):
    """Compiled against the headers: each policy's tile, parts and k per stage, and TP_STORE_SMEM, are
    what the records and this test assume."""
    lines = [f'#include "{PKG / "rungs" / "wgmma_tf32_tma.cu"}"', "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)"]
    for op, bk, (parts, bn) in (("tf32_tma::Tf32Op", 32, OPS["tf32_tma::Tf32Op"]),
                                ("tf32_tma::X3Op<2>", 32, OPS["tf32_tma::X3Op"])):
        lines.append(f"static_assert({op}::BK == {bk} && {op}::PARTS == {parts} && {op}::BN == {bn} && "
                     f"{op}::NACC == {bn // 2} && {op}::B_KMAJOR, \"{op}\");")
    split, (parts, bn) = "tf32_tma::X3SwapOp<1, false>", OPS["tf32_tma::X3SwapOp"]  # a 128 x 128 swapped tile
    lines.append(f"static_assert({split}::BK == 32 && {split}::PARTS == {parts} && {split}::BN == {bn} && "
                 f"{split}::NACC == {bn // 2} && {split}::SWAP_AB && tma_persistent::splits_a<{split}>::value && "
                 f"!tma_persistent::splits_a<tf32_tma::X3Op<2>>::value && !{split}::REWRITE_A && "
                 f"tf32_tma::X3SwapOp<1, true>::REWRITE_A, \"{split}\");")
    lines.append("#endif")
    for parts, bn, stages in ((1, 256, 4), (2, 128, 3), (1, 128, 6)):
        ring = stages * parts * (2 + bn // 64) * 8192 + 1024
        lines.append(f"static_assert(TP_STORE_SMEM({parts}, {bn}, {stages}) == {ring + 4 * 8192}, \"smem\");")
    # SPLIT_A: 4 stages of 48 KB (B, A, A's residual), as the record counts them
    lines.append(f"static_assert(TP_SPLIT_STORE_SMEM(128, 4) == 230400 && TP_SPLIT_STORE_SMEM(128, 4) == "
                 f"{persistent_smem_bytes(4, bn=128, split_a=True)}, \"smem\");")
    for stages, c_bufs in ((3, 5), (2, 8)):  # a shallower ring, more C boxes: the same 225 KB
        lines.append(f"static_assert(TP_STORE_SMEM_BUFS(1, 256, {stages}, {c_bufs}) == 230400, \"smem\");")
    src = tmp_path / "policies.cu"
    src.write_text("\n".join(lines) + "\n")
    r = subprocess.run([NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-cubin", f"-I{PKG / 'include'}",
                        "-o", str(tmp_path / "p.cubin"), str(src)], capture_output=True, text=True, timeout=180,
                       check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def _step(prev_ms, this_ms, prev_norm=None, this_norm=None):
    from rooflab.report.climb.step import Share, Step

    def m(ms):
        return {"ms": ms, "gflops": 2 * 8192**3 / ms / 1e6, "pct_peak": Share(50.0), "speedup": 1.0}

    def rec(name, norm):
        return {"kernel": name, "checks": [] if norm is None else [{"name": "normwise", "value": norm}]}

    return Step(m(prev_ms), m(this_ms), rec("a", prev_norm), rec("b", this_norm), {})


@pytest.mark.parametrize("rung", (WGMMA_TF32_TMA, WGMMA_TF32_SWAP, WGMMA_3XTF32_TMA, WGMMA_3XTF32_SWAP,
                                  WGMMA_FP8_PERSISTENT), ids=lambda r: r.name)
def test_every_step_into_the_new_rungs_has_its_paragraph_from_the_run(rung):
    """Each (rung, earlier rung) of the record has prose of its own, and the prose carries the run's
    direction and figures: a faster and a slower run read differently."""
    from rooflab.report import climb

    for earlier in rung.compare:
        heading, para = climb.PARAGRAPHS[(rung.name, earlier)]
        assert heading and earlier != rung.name
        fast, slow = para(_step(1.25, 1.0, 2e-6, 1e-6)), para(_step(1.0, 1.25, 2e-6, 1e-6))
        # the step's ratio, ".2f" or ".3f", followed by its "×"
        assert re.search(r"1\.250?×", fast) and re.search(r"0\.800?×", slow), (rung.name, earlier)
        assert not re.search(r"1\.250?×", slow), (rung.name, earlier)
        assert "Run with profiling" in fast  # no profile in the step: it says how to get the counters
    _h, x3 = climb.PARAGRAPHS[("wgmma_3xtf32_tma", "cublas")]
    assert "1.25× SGEMM's speed" in x3(_step(1.25, 1.0, 2e-6, 1e-6)) and "1.0e-06 against SGEMM's 2.0e-06" in x3(
        _step(1.25, 1.0, 2e-6, 1e-6))
