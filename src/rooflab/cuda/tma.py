"""TMA tensor maps for the wgmma rungs that load through the tensor memory accelerator
(rungs/wgmma_bf16_tma.cu: BF16, layout "tma"; rungs/wgmma_fp8.cu: e4m3, layout "tma_fp8").

Those kernels take (tmA, tmB, C, M, N, K): tmA and tmB point at 128-byte CUtensorMap objects in
device memory, encoded here with cuTensorMapEncodeTiled (ctypes over libcuda where it loads, else
cuda-python's driver bindings: the same C call). As the harness's staging hook (scheme "tma",
rooflab.cuda.staging) each launch swaps the operands for their maps:
    A (M x K, BF16 bits)  dims {K, M}, row pitch K * 2 bytes, box {64, 64}
    B (K x N, BF16 bits)  dims {N, K}, row pitch N * 2 bytes, box {64, 64}
    C (M x N, FP32)       dims {N, M}, row pitch N * 4 bytes, box {32, 64}: scheme "tma_store",
                          for the kernels that write C through TMA; the map follows B's
128-byte swizzle (a box's inner 64 elements are one 128-byte row), zero fill out of bounds.
The FP8 layout maps e4m3 bytes (as UINT8: TMA moves bytes) with both operands K-major, B handed over
already transposed (B^T, N x K: FP8 wgmma has no transposed operand):
    A   (M x K, e4m3 bits)  dims {K, M}, row pitch K bytes, box {128, 64}
    B^T (N x K, e4m3 bits)  dims {K, N}, row pitch K bytes, box {128, 64}
The TF32 layouts (STAGED_F32) map the TF32 pre-pass's FP32 outputs, both K-major, Kp a multiple of 32:
    A'  (parts x M x Kp)    dims {Kp, parts x M}, box {32, 64}
    B'  (parts x N x Kp)    dims {Kp, parts x N}, box {32, 64}
The FP32 layout "tma_f32" maps both operands as they lie, for the kernels that compute C^T = B^T A^T
(B^T's fragments loaded into registers from B's boxes):
    A   (M x K, FP32)       dims {K, M}, box {32, 64}
    B   (K x N, FP32)       dims {N, K}, box {32, 32}: 32 n (128 B) x 32 k-rows, one k-tile
Its chunked forms ("tma_f32_ab128", "tma_f32_ab256") load a stage's operand in one issue each: A in one
box of the tile's rows, and B as a rank-3 map of 32-column chunks,
    B   (K x N, FP32)       dims {32, K, ceil(N / 32)}, strides {pitch, 128 B}, box {32, 32, 4}
which lands as the four 32 x 32 boxes did, one after another ("tma_ab1": BF16's B in 64-column chunks,
box {64, 64, 4}, its four panels). Its last chunk reads a row's bytes up to the next multiple of 128,
so B's pitch must be one (else B is copied with its pitch so padded, the pad zeroed); the columns past
N only feed rows of C^T (columns of C) that are never stored.

TMA reads rows whose pitch is a multiple of 16 bytes from a 16-byte-aligned base. An operand that
misses this (K or N not a multiple of 8, a misaligned view) is copied into a buffer with the pitch
padded to 16 bytes, inside the launch (so the copy is timed with the GEMM); the map still names
the true dimensions, so the pad is never read. Maps of operands used as they are, which are
the same bytes whatever array later sits at those addresses, are cached per (device, pointers,
shape); maps of padded copies are encoded per launch and live in the same buffer as the copies,
so the views handed to the kernel keep all of it alive through the launch.
"""

from __future__ import annotations

import ctypes
import functools
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rooflab.cuda.gpu import cuda_call, cupy
from rooflab.errors import KernelError

# cuda.h enums (CUtensorMapDataType, ...Interleave, ...Swizzle, ...L2promotion, ...FloatOOBfill)
DATA_TYPE_UINT8 = 0
DATA_TYPE_BFLOAT16 = 9
DATA_TYPE_FLOAT32 = 7
INTERLEAVE_NONE = 0
SWIZZLE_128B = 3
L2_PROMOTION_256B = 3
OOB_FILL_ZERO = 0  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: out-of-bounds elements read as zeros

ELEMENT_BYTES = 2
BOX = 64  # elements a side: 64 BF16 = 128 bytes, one row of the 128-byte swizzle
MAP_BYTES = 128
PITCH_ALIGN = 16  # bytes: row pitch and base address
SWIZZLE_SPAN = 128  # bytes: a box's inner extent under the 128-byte swizzle
MAX_BOX = 256  # elements: the most a box spans in any dimension
CACHE_ENTRIES = 32


@dataclass(frozen=True)
class Element:
    """What a map's elements are: the driver's data type, their size, and the array type that views them."""

    name: str
    data_type: int
    bytes: int
    view: str  # the unsigned integer type of the same size, for copies

    @property
    def inner_box(self) -> int:
        """Elements along a box's contiguous side: one 128-byte swizzle row."""
        return SWIZZLE_SPAN // self.bytes


BF16 = Element("BF16", DATA_TYPE_BFLOAT16, ELEMENT_BYTES, "uint16")
E4M3 = Element("e4m3", DATA_TYPE_UINT8, 1, "uint8")
F32 = Element("FP32", DATA_TYPE_FLOAT32, 4, "uint32")  # C, for the kernels that store it through TMA


@dataclass(frozen=True)
class Layout:
    """How a kernel takes its operands: their element, whether B arrives transposed (B^T, N x K), and
    how many parts of each are stacked in one map (3xTF32's high part and residual: part p of row r
    at row p x rows + r), and how many rows a box of B and a box of A span."""

    element: Element
    b_transposed: bool
    parts: int = 1
    b_box_rows: int = 64
    a_box_rows: int = 64
    b_chunks: int = 0  # > 0: B as it lies in a rank-3 map, this many 128-byte column chunks a box (the module's text)

    @property
    def b_pitch_align(self) -> int:
        """Bytes B's row pitch must be a multiple of: whole 128-byte chunks where B is chunked."""
        return SWIZZLE_SPAN if self.b_chunks else PITCH_ALIGN


LAYOUTS = {"tma": Layout(BF16, b_transposed=False), "tma_fp8": Layout(E4M3, b_transposed=True),
           # B^T in boxes of other heights: 32 rows, or one box of a whole 192- or 224-row FP8 tile
           **{f"tma_fp8_b{rows}": Layout(E4M3, b_transposed=True, b_box_rows=rows) for rows in (32, 192, 224)},
           # ... and A in one box of a 128-row tile (B^T in 72 or 112 rows: each CTA of a cluster multicasts one box)
           **{f"tma_fp8_a128_b{rows}": Layout(E4M3, b_transposed=True, b_box_rows=rows, a_box_rows=128)
              for rows in (72, 112, 144, 224)},
           # ... and A in one box of a 192-row tile (3 consumer warpgroups), B^T in one of 128 rows
           "tma_fp8_a192_b128": Layout(E4M3, b_transposed=True, b_box_rows=128, a_box_rows=192),
           "tma_a128": Layout(BF16, b_transposed=False, a_box_rows=128),
           # ... and B as it lies in one box of its four 64-column panels (the chunked map below)
           "tma_ab1": Layout(BF16, b_transposed=False, a_box_rows=128, b_chunks=4),
           "tma_f32": Layout(F32, b_transposed=False, b_box_rows=32),
           # ... each operand of a stage in one box: A's 128 or 256 rows, B's chunks of 32 columns (128 rows of C^T)
           **{f"tma_f32_ab{rows}": Layout(F32, b_transposed=False, b_box_rows=32, a_box_rows=rows, b_chunks=4)
              for rows in (128, 256)},
           "tma_f32_a256": Layout(F32, b_transposed=False, b_box_rows=32, a_box_rows=256)}
# the TF32 pre-pass's outputs (rooflab.cuda.staging): both operands K-major FP32, one part or two
STAGED_F32 = {1: Layout(F32, b_transposed=True), 2: Layout(F32, b_transposed=True, parts=2)}
# B^T as transposed, in one box of a 256-row tile, A in one of 128 rows
STAGED_F32_ONE_BOX = Layout(F32, b_transposed=True, a_box_rows=128, b_box_rows=256)
DEFAULT = LAYOUTS["tma"]


@dataclass(frozen=True)
class MapSpec:
    """One row-major operand as TMA sees it: `rows` x `cols` elements, rows `pitch` bytes apart."""

    rows: int
    cols: int
    pitch: int
    element: Element = BF16
    box_rows: int = BOX
    chunks: int = 0  # > 0: rank 3, the columns in chunks of one swizzle row, this many a box

    @property
    def dims(self) -> tuple[int, ...]:
        if self.chunks:
            inner = self.element.inner_box
            return (inner, self.rows, -(-self.cols // inner))
        return (self.cols, self.rows)  # innermost first

    @property
    def strides(self) -> tuple[int, ...]:
        # bytes, of every dimension but the innermost (a chunk is the next 128 bytes of the same row)
        return (self.pitch, SWIZZLE_SPAN) if self.chunks else (self.pitch,)

    @property
    def box(self) -> tuple[int, ...]:
        return (self.element.inner_box, self.box_rows, *((self.chunks,) if self.chunks else ()))

    def problems(self, address: int) -> list[str]:
        """What cuTensorMapEncodeTiled would refuse (its documented rules), as sentences."""
        out = []
        if address % PITCH_ALIGN:
            out.append(f"base address {address:#x} is not {PITCH_ALIGN}-byte aligned")
        if self.pitch % PITCH_ALIGN or self.pitch >= 2**40:
            out.append(f"row pitch {self.pitch} bytes is not a multiple of {PITCH_ALIGN} below 2^40")
        if self.pitch < self.cols * self.element.bytes:
            out.append(f"row pitch {self.pitch} bytes is shorter than a row ({self.cols} elements)")
        if self.chunks and self.pitch % SWIZZLE_SPAN:
            out.append(f"row pitch {self.pitch} bytes is not whole {SWIZZLE_SPAN}-byte chunks")
        if not all(1 <= d <= 2**32 for d in self.dims):
            out.append(f"dimensions {self.dims} outside 1..2^32")
        if self.box[0] * self.element.bytes > SWIZZLE_SPAN:
            out.append("the 128-byte swizzle needs an inner box of at most 128 bytes")
        if not all(1 <= b <= MAX_BOX for b in self.box):
            out.append(f"box {self.box} outside 1..{MAX_BOX} elements a side")
        return out


def padded_pitch(cols: int, element: Element = BF16, align: int = PITCH_ALIGN) -> int:
    """The smallest row pitch TMA accepts for a row of `cols` elements (a multiple of `align` bytes)."""
    return -(-cols * element.bytes // align) * align


def b_shape(n: int, k: int, layout: Layout = DEFAULT) -> tuple[int, int]:
    """(rows, cols) of B as the layout hands it over: K x N, or B^T's N x K (x parts, stacked)."""
    return (layout.parts * n, k) if layout.b_transposed else (layout.parts * k, n)


def operand_specs(m: int, n: int, k: int, a_pitch: int | None = None,
                  b_pitch: int | None = None, layout: Layout = DEFAULT) -> tuple[MapSpec, MapSpec]:
    """The maps of A (M x K) and B (K x N, or N x K transposed): row pitch as stored (default: packed rows)."""
    el = layout.element
    b_rows, b_cols = b_shape(n, k, layout)
    return (MapSpec(rows=layout.parts * m, cols=k, pitch=a_pitch or k * el.bytes, element=el,
                    box_rows=layout.a_box_rows),
            MapSpec(rows=b_rows, cols=b_cols, pitch=b_pitch or b_cols * el.bytes, element=el,
                    box_rows=layout.b_box_rows, chunks=layout.b_chunks))


def c_spec(m: int, n: int) -> MapSpec:
    """The map of C (M x N FP32, packed rows) that the TMA-store epilogue writes through."""
    return MapSpec(rows=m, cols=n, pitch=n * F32.bytes, element=F32)


def c_mappable(c, n: int) -> bool:
    """C can be written by TMA: 16-byte rows (N a multiple of 4) from a 16-byte-aligned base. The
    kernel tests the same two things and stores directly where they fail."""
    return (n * F32.bytes) % PITCH_ALIGN == 0 and c.data.ptr % PITCH_ALIGN == 0


def usable_as_is(x, cols: int, element: Element = BF16, align: int = PITCH_ALIGN) -> bool:
    """A C-contiguous operand whose rows TMA can read where they are (rows a multiple of `align` bytes)."""
    return bool(x.flags.c_contiguous) and x.data.ptr % PITCH_ALIGN == 0 and (cols * element.bytes) % align == 0


def encode_args(spec: MapSpec) -> dict:
    """Everything cuTensorMapEncodeTiled is called with, but the address (what the tests check)."""
    return {"data_type": spec.element.data_type, "rank": len(spec.dims), "dims": spec.dims, "strides": spec.strides,
            "box": spec.box, "element_strides": (1,) * len(spec.dims), "interleave": INTERLEAVE_NONE, "swizzle": SWIZZLE_128B,
            "l2_promotion": L2_PROMOTION_256B, "oob_fill": OOB_FILL_ZERO}


def _encode_bindings(spec: MapSpec, address: int) -> bytes:
    from cuda.bindings import driver  # noqa: PLC0415

    a = encode_args(spec)
    u64, u32 = driver.cuuint64_t, driver.cuuint32_t
    err, tmap = driver.cuTensorMapEncodeTiled(
        driver.CUtensorMapDataType(a["data_type"]), a["rank"], address,
        [u64(d) for d in a["dims"]], [u64(s) for s in a["strides"]], [u32(b) for b in a["box"]],
        [u32(e) for e in a["element_strides"]], driver.CUtensorMapInterleave(a["interleave"]),
        driver.CUtensorMapSwizzle(a["swizzle"]), driver.CUtensorMapL2promotion(a["l2_promotion"]),
        driver.CUtensorMapFloatOOBfill(a["oob_fill"]))
    if int(err) != 0:
        raise _encode_error(int(err), spec)
    return ctypes.string_at(tmap.getPtr(), MAP_BYTES)


_libcuda = None


def _encode_ctypes(spec: MapSpec, address: int) -> bytes:
    global _libcuda
    if _libcuda is None:
        lib = ctypes.CDLL("libcuda.so.1")
        fn = lib.cuTensorMapEncodeTiled
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                       ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                       ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                       ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        _libcuda = lib
    a = encode_args(spec)
    buf = (ctypes.c_ubyte * (MAP_BYTES + 64))()  # the map must be 64-byte aligned
    at = (ctypes.addressof(buf) + 63) & ~63
    r = a["rank"]
    err = _libcuda.cuTensorMapEncodeTiled(
        ctypes.c_void_p(at), a["data_type"], r, ctypes.c_void_p(address),
        (ctypes.c_uint64 * r)(*a["dims"]), (ctypes.c_uint64 * (r - 1))(*a["strides"]),
        (ctypes.c_uint32 * r)(*a["box"]), (ctypes.c_uint32 * r)(*a["element_strides"]),
        a["interleave"], a["swizzle"], a["l2_promotion"], a["oob_fill"])
    if err != 0:
        raise _encode_error(err, spec)
    return ctypes.string_at(at, MAP_BYTES)


def _encode_error(code: int, spec: MapSpec) -> KernelError:
    return KernelError("tensor map", "cuTensorMapEncodeTiled",
                       f"CUresult {code} for {spec.rows} x {spec.cols} {spec.element.name}, pitch {spec.pitch} bytes")


ENCODERS: dict[str, Callable[[MapSpec, int], bytes]] = {"cuda.bindings": _encode_bindings, "ctypes": _encode_ctypes}


@functools.cache
def encoder_name() -> str:
    """The encoder `encode` uses by default: ctypes over the driver library where it loads (one
    symbol, looked up once), else cuda-python's bindings. The bindings look the call up through
    cuGetProcAddress, which on the H200's driver first returns CUDA_ERROR_INVALID_VALUE: an API error
    compute-sanitizer reports against the kernel under test (34 of them in one memcheck run)."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        pass
    else:
        return "ctypes"
    try:
        from cuda.bindings import driver  # noqa: F401, PLC0415
    except Exception:  # noqa: BLE001 (not installed, or a CUDA library that fails to load)
        return "ctypes"
    return "cuda.bindings"


def encode(spec: MapSpec, address: int, via: str | None = None) -> bytes:
    """The 128 bytes of the map of `spec` at device `address`."""
    bad = spec.problems(address)
    if bad:  # the kernel must never be given a map the driver would refuse or TMA misread
        raise KernelError("tensor map", "cuTensorMapEncodeTiled", "; ".join(bad))
    if via is not None:
        return ENCODERS[via](spec, address)
    name = encoder_name()
    try:
        return ENCODERS[name](spec, address)
    except (TypeError, AttributeError):
        if name == "ctypes":
            raise
        # a cuda-python whose Python signature differs from the one written here: the C call is the same
        return _encode_ctypes(spec, address)


def padded_layout(m: int, n: int, k: int, a_ok: bool, b_ok: bool, layout: Layout = DEFAULT) -> dict:
    """One buffer for a launch whose operands need padding: the two maps at 0, then each padded copy
    (A: M rows, B: K rows, or B^T: N rows, pitch rounded up to 16 bytes, or B's to 128 where it is
    chunked), 256-byte aligned; an operand used as it is takes no room."""
    el = layout.element
    b_rows, b_cols = b_shape(n, k, layout)
    pa = k * el.bytes if a_ok else padded_pitch(k, el)
    pb = b_cols * el.bytes if b_ok else padded_pitch(b_cols, el, layout.b_pitch_align)
    at_a = 1024
    at_b = at_a + (0 if a_ok else -(-m * pa // 256) * 256)
    return {"a_pitch": pa, "b_pitch": pb, "a_at": at_a, "b_at": at_b, "bytes": at_b + (0 if b_ok else b_rows * pb)}


_cache: OrderedDict = OrderedDict()


def _upload(cp, dst, maps: bytes) -> None:
    """Copy the maps into device memory on the current stream, ordered before the launch that reads
    them (a pageable source is staged before the call returns, so `host` may go)."""
    host = np.frombuffer(maps, dtype=np.uint8).copy()
    dst.data.copy_from_host_async(host.ctypes.data_as(ctypes.c_void_p), host.nbytes,
                                  stream=cp.cuda.get_current_stream())


def _c_map(c, m: int, n: int) -> bytes:
    """C's map where the kernel will use it; zeros (never read) where it stores directly."""
    if c is None:
        return b""
    return encode(c_spec(m, n), c.data.ptr) if c_mappable(c, n) else bytes(MAP_BYTES)


def operand_maps(a, b, m: int, n: int, k: int, label: str, layout: Layout = DEFAULT, c=None):
    """(map of A, map of B) as device arrays of 128 bytes, for a launch on the current stream; with
    `c`, C's map follows B's in the same buffer (the TMA-store kernels find it there)."""
    cp = cupy()
    el = layout.element
    b_rows, b_cols = b_shape(n, k, layout)
    a_ok, b_ok = usable_as_is(a, k, el), usable_as_is(b, b_cols, el, layout.b_pitch_align)
    maps = 2 if c is None else 3
    if a_ok and b_ok:
        key = (cp.cuda.Device().id, a.data.ptr, b.data.ptr, m, n, k, layout, None if c is None else c.data.ptr)
        buf = _cache.get(key)
        if buf is None:
            sa, sb = operand_specs(m, n, k, layout=layout)
            buf = cp.empty(maps * MAP_BYTES, dtype=cp.uint8)
            with cuda_call(label, "tensor map upload"):
                _upload(cp, buf, encode(sa, a.data.ptr) + encode(sb, b.data.ptr) + _c_map(c, m, n))
                cp.cuda.get_current_stream().synchronize()  # complete before any stream reads it
            _cache[key] = buf
            while len(_cache) > CACHE_ENTRIES:
                _cache.popitem(last=False)
        else:
            _cache.move_to_end(key)
        return buf[:MAP_BYTES], buf[MAP_BYTES:]
    lay = padded_layout(m, n, k, a_ok, b_ok, layout)  # the maps' room at 0 holds three
    pa, pb, at_a, at_b = lay["a_pitch"], lay["b_pitch"], lay["a_at"], lay["b_at"]
    view = getattr(cp, el.view)
    with cuda_call(label, "padded operand copy for TMA"):
        buf = cp.empty(lay["bytes"], dtype=cp.uint8)
        addr_a, addr_b = a.data.ptr, b.data.ptr
        if not a_ok:
            buf[at_a:at_a + m * pa].view(view).reshape(m, pa // el.bytes)[:, :k] = a.view(view)  # bits, not values
            addr_a = buf.data.ptr + at_a
        if not b_ok:
            rows = buf[at_b:at_b + b_rows * pb].view(view).reshape(b_rows, pb // el.bytes)
            if layout.b_chunks:  # the last chunk reads the pad: zeros, not stale bytes
                rows[:, b_cols:] = 0
            rows[:, :b_cols] = b.view(view)
            addr_b = buf.data.ptr + at_b
        sa, sb = operand_specs(m, n, k, pa, pb, layout)
        _upload(cp, buf[:maps * MAP_BYTES], encode(sa, addr_a) + encode(sb, addr_b) + _c_map(c, m, n))
    return buf[:MAP_BYTES], buf[MAP_BYTES:2 * MAP_BYTES]


def stager(m: int, n: int, k: int, label: str, layout: Layout = DEFAULT, with_c: bool = False):
    """stage(a, b[, c]) -> (map of A, map of B) for one shape (with_c: C's map after B's), and the K
    the kernel is called with."""
    extra = {} if layout == DEFAULT else {"layout": layout}

    def stage(a, b, c=None):
        return operand_maps(a, b, m, n, k, label, **extra, **({"c": c} if with_c else {}))

    return stage, k
