"""The SIMT rungs' real kernel source run on the CPU (tests/host_run/kernels_on_host.cpp: a std::thread
per CUDA thread, __syncthreads a std::barrier), every instance the records launch (each rung's kernel
and each variant, with the record's grid and block), at odd shapes: under AddressSanitizer no read or
write leaves A, B or C (allocated at their exact sizes, and misaligned by one float to take the scalar
paths), every element of C is written and equals A @ B; under ThreadSanitizer no shared-memory access
is unordered by a barrier. The planted bugs of tiled.cu and regtile.cu are caught the same way.

The cp.async paths are compiled out on the host (__CUDA_ARCH__ is undefined): the cp.async instances
run their synchronous fallback, with the same ring schedule."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rooflab import rungs

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "rooflab"
HOST = Path(__file__).parent / "host_run" / "kernels_on_host.cpp"

# M, N, K, floats of misalignment in front of A and C
ASAN_SHAPES = [(1, 1, 1, 0), (45, 33, 70, 0), (1, 260, 7, 0), (200, 136, 44, 1), (129, 132, 12, 0),
               (260, 264, 36, 0)]
TSAN_SHAPES = [(45, 33, 70, 0)]  # several k-slices past the deepest ring (4 stages), partial tiles


def _simt_rungs():
    """The SIMT rungs with a .cu kernel: the tensor-core ones need their PTX instructions."""
    return [r for r in rungs.LADDER if r.source and r.source.endswith(".cu") and tuple(r.requires_cc) < (8, 0)]


def _instances(source: str) -> list:
    """Every (rung or variant) record of one kernel file, one per kernel name."""
    seen = {}
    for r in _simt_rungs():
        if r.source == source:
            for x in (r, *(r.with_variant(v) for v in r.variants)):
                seen.setdefault(x.kernel, x)
    return list(seen.values())


SOURCES = sorted({r.source for r in _simt_rungs()})


def _probe(flag: str, tmp: Path) -> str | None:
    """Why this host cannot build or run a program with the sanitizer, or None."""
    if not shutil.which("g++"):
        return "no g++ here"
    src = tmp / "probe.cpp"
    src.write_text("#include <barrier>\nint main() { std::barrier<> b(1); b.arrive_and_wait(); }\n")
    exe = tmp / f"probe_{flag}"
    r = subprocess.run(["g++", "-std=c++20", f"-fsanitize={flag}", "-pthread", str(src), "-o", str(exe)],
                       capture_output=True, text=True, check=False)
    if r.returncode != 0:
        return f"g++ cannot build C++20 with -fsanitize={flag}: {r.stderr[-300:]}"
    # the sanitizer's runtime may refuse this kernel's memory layout (TSan and high mmap randomisation)
    r = subprocess.run([str(exe)], capture_output=True, text=True, check=False, timeout=60)
    return None if r.returncode == 0 else f"a -fsanitize={flag} program does not run here: {r.stderr[-300:]}"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """build(source, sanitizer, *defines) -> the runner for that file's instances (cached)."""
    tmp = tmp_path_factory.mktemp("host_run")
    built: dict = {}
    probed: dict = {}

    def _build(source: str, sanitizer: str, *defines: str) -> Path:
        key = (source, sanitizer, defines)
        if key not in built:
            if sanitizer not in probed:
                probed[sanitizer] = _probe(sanitizer, tmp)
            if probed[sanitizer]:
                pytest.skip(probed[sanitizer])
            exe = tmp / f"{Path(source).stem}_{sanitizer}_{len(built)}"
            klist = ", ".join(f"E(({x.kernel}))" for x in _instances(source))
            r = subprocess.run(["g++", "-std=c++20", "-O1", f"-fsanitize={sanitizer}", "-pthread",
                                f"-I{PKG / 'rungs'}", f"-I{PKG / 'include'}", f'-DKFILE="{PKG / source}"',
                                f"-DKLIST={klist}", *(f"-D{d}" for d in defines), str(HOST), "-o", str(exe)],
                               capture_output=True, text=True, check=False, timeout=600)
            assert r.returncode == 0, r.stderr[-3000:]
            built[key] = exe
        return built[key]

    return _build


def _runs(source: str, shapes, only: str | None = None) -> list[str]:
    """The runner's arguments: index M N K misalign gx gy bx by, grid and block from the records."""
    args = []
    for i, x in enumerate(_instances(source)):
        if only and x.kernel != only:
            continue
        bx, by, bz = x.block
        assert bz == 1
        for m, n, k, mis in shapes:
            gx, gy, gz = x.grid(m, n, k)
            assert gz == 1
            args += map(str, (i, m, n, k, mis, gx, gy, bx, by))
    return args


def _run(exe: Path, args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), *args], capture_output=True, text=True, check=False, timeout=600)


@pytest.mark.parametrize("source", SOURCES)
def test_in_bounds_and_correct_under_address_sanitizer(build, source):
    r = _run(build(source, "address"), _runs(source, ASAN_SHAPES))
    lines = r.stdout.splitlines()
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert len(lines) == len(_instances(source)) * len(ASAN_SHAPES) and all(ln.startswith("ok") for ln in lines)


@pytest.mark.parametrize("source", [s for s in SOURCES if "__shared__" in (PKG / s).read_text()])
def test_free_of_shared_memory_races_under_thread_sanitizer(build, source):
    r = _run(build(source, "thread"), _runs(source, TSAN_SHAPES))
    assert r.returncode == 0 and "WARNING: ThreadSanitizer" not in r.stderr, r.stderr[-3000:]


def test_a_store_one_row_past_c_is_caught(build):
    r = _run(build("rungs/tiled.cu", "address", "PLANT_ROW_PAST"), _runs("rungs/tiled.cu", [(45, 33, 70, 0)]))
    assert r.returncode != 0 and "heap-buffer-overflow" in r.stderr


def test_a_missing_barrier_is_caught(build):
    r = _run(build("rungs/regtile.cu", "thread", "PLANT_MISSING_BARRIER"),
             _runs("rungs/regtile.cu", [(45, 33, 70, 0)]))
    assert "WARNING: ThreadSanitizer: data race" in r.stderr
