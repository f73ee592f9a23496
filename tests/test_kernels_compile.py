"""Every CUDA kernel shipped in the package compiles offline with nvcc for sm_75 (T4),
sm_80 (A100) and sm_90 (H100/H200), with no register spills, no stack frame and no wgmma
serialised or fenced by ptxas on its own, and ships in the wheel. No GPU needed: nvcc -cubin
only runs the compiler and ptxas.

At run time rooflab compiles these files with NVRTC for the device it finds; this
catches a kernel that no longer compiles, or that spills, before anyone reaches a GPU.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "rooflab"
CU_FILES = sorted(PKG.glob("**/*.cu"))
ARCHS = ("sm_75", "sm_80", "sm_90")
NVCC = shutil.which("nvcc")
# the planted bugs the GPU tests use (tests/test_gpu_planted.py) must compile too
PLANTS = [(PKG / "rungs" / "tiled.cu", "sm_90", ("-DPLANT_MISSING_BARRIER",)),
          (PKG / "rungs" / "tiled.cu", "sm_90", ("-DPLANT_ROW_PAST",)),
          (PKG / "rungs" / "regtile.cu", "sm_90", ("-DPLANT_MISSING_BARRIER",))]
PLANTED = PLANTS[0]

needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (the CUDA toolkit) is not on PATH: "
                                                     "the offline kernel compile checks need it")

# Hopper-only instructions (wgmma, setmaxnreg) need the architecture-specific target as well
JOBS = ([(f, arch, ()) for f in CU_FILES for arch in ARCHS]
        + [(f, "sm_90a", ()) for f in CU_FILES if "wgmma" in f.read_text()] + PLANTS)

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\d+a?)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
# ptxas's wgmma performance notes (C7510-C7520: every wgmma serialised, or a wait or an arrive it
# injected), info lines only: the kernel runs, correct and several times slower
_WGMMA_NOTE = re.compile(r"\(C75[12]\d\)|wgmma\S* instructions are serialized|is injected", re.I)


def _rel(path: Path) -> str:
    return path.relative_to(PKG).as_posix() if path.is_relative_to(PKG) else path.name


def _job_id(job) -> str:
    f, arch, opts = job
    return f"{_rel(f)}-{arch}" + "".join(opts)


def _compile(job, outdir: Path) -> tuple[str, subprocess.CompletedProcess, Path]:
    """Compile a snapshot of the source, so the checks below see the very text that was compiled."""
    f, arch, opts = job
    stem = _job_id(job).replace("/", "_").replace("-D", "_")
    source = f.read_text()
    snap = outdir / stem / f.name
    snap.parent.mkdir()
    snap.write_text(source)
    target = "-gencode=arch=compute_90a,code=sm_90a" if arch == "sm_90a" else f"-arch={arch}"
    cubin = outdir / f"{stem}.cubin"
    cmd = [NVCC, target, "-std=c++17", "-cubin", "-Xptxas", "-v", f"-I{f.parent}", f"-I{PKG / 'include'}", *opts,
           "-o", str(cubin), str(snap)]
    return source, subprocess.run(cmd, capture_output=True, text=True, timeout=120), cubin


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict:
    """All compilations at once, in parallel (each nvcc is mostly single-threaded)."""
    outdir = tmp_path_factory.mktemp("cubin")
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {_job_id(job): pool.submit(_compile, job, outdir) for job in JOBS}
    return {k: f.result() for k, f in futures.items()}


def parse_ptxas(text: str) -> dict[str, dict]:
    """ptxas -v output -> {entry function: {arch, stack, spill_stores, spill_loads}}."""
    entries: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if m := _ENTRY.search(line):
            entries[m.group(1)] = {"arch": m.group(2), "stack": None, "spill_stores": None, "spill_loads": None}
        elif m := _PROPS.search(line):
            current = m.group(1)
        elif (m := _FRAME.search(line)) and current in entries:
            entries[current].update(stack=int(m.group(1)), spill_stores=int(m.group(2)),
                                    spill_loads=int(m.group(3)))
            current = None
    return entries


def wgmma_notes(text: str) -> list[str]:
    """The lines of ptxas -v output that say it serialised a kernel's wgmmas or fenced them itself."""
    return [line.strip() for line in text.splitlines() if _WGMMA_NOTE.search(line)]


def expected_kernels(source: str) -> tuple[set[str], int]:
    """extern "C" kernel names (unmangled in the cubin) and the number of entry points."""
    # an attribute macro (all capitals, e.g. the cluster dimensions) may stand before __launch_bounds__
    plain = set(re.findall(r'extern\s+"C"\s+__global__\s+void\s+(?:[A-Z][A-Z0-9_]*\s+)?'
                           r'(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)', source))
    instances = re.findall(r"template\s+__global__\s+void\s+\w+\s*<", source)
    return plain, len(plain) + len(instances)


def _check(compiled: tuple[str, subprocess.CompletedProcess, Path], job) -> None:
    f, arch, opts = job
    source, result, _ = compiled
    out = result.stdout + result.stderr
    assert result.returncode == 0, f"nvcc {arch} {' '.join(opts)} failed on {_rel(f)}:\n{out}"
    entries = parse_ptxas(out)
    plain, count = expected_kernels(source)
    assert entries, f"ptxas reported no entry functions for {_rel(f)} ({arch}):\n{out}"
    missing = plain - set(entries)
    assert not missing, f"{_rel(f)} ({arch}): kernels not compiled: {sorted(missing)}"
    assert len(entries) == count, f"{_rel(f)} ({arch}): {len(entries)} entry functions, expected {count}: " \
                                  f"{sorted(entries)}"
    assert all(e["arch"] == arch for e in entries.values())
    no_props = [k for k, e in entries.items() if e["stack"] is None]
    assert not no_props, f"{_rel(f)} ({arch}): no ptxas resource line for {no_props}:\n{out}"
    spills = [f"{k}: {e['spill_stores']} bytes spill stores, {e['spill_loads']} bytes spill loads"
              for k, e in entries.items() if e["spill_stores"] or e["spill_loads"]]
    assert not spills, f"{_rel(f)} ({arch}) spills registers:\n" + "\n".join(spills)
    stacks = [f"{k}: {e['stack']} bytes stack frame" for k, e in entries.items() if e["stack"]]
    assert not stacks, f"{_rel(f)} ({arch}) uses a stack frame:\n" + "\n".join(stacks)
    notes = wgmma_notes(out)
    assert not notes, f"{_rel(f)} ({arch}): ptxas serialised or fenced wgmmas:\n" + "\n".join(notes)


def test_kernel_sources_found():
    names = {_rel(f) for f in CU_FILES}
    assert {"rungs/naive.cu", "rungs/coalesced.cu", "rungs/tiled.cu", "ceilings/copy.cu",
            "ceilings/fma.cu"} <= names


@needs_nvcc
@pytest.mark.parametrize("job", [j for j in JOBS if j not in PLANTS], ids=_job_id)
def test_compiles_without_spills(compiled, job):
    _check(compiled[_job_id(job)], job)


@needs_nvcc
@pytest.mark.parametrize("job", PLANTS, ids=_job_id)
def test_planted_bugs_compile(compiled, job):
    """The GPU tests plant bugs with -D macros; those builds must compile, and the macro must be used."""
    _check(compiled[_job_id(job)], job)
    assert job[2][0].removeprefix("-D") in job[0].read_text()


SERIALIZED = ROOT / "tests" / "data" / "kernels" / "wgmma_serialized.cu"


@needs_nvcc
def test_a_kernel_whose_wgmmas_ptxas_serialised_fails_the_check(tmp_path):
    """ptxas compiles the planted kernel with no error, spill or stack frame, and says only in an info
    line that it serialised every wgmma; the check fails on that line, naming the kernel, and its twin
    that drains before the back-edge passes it."""
    job = (SERIALIZED, "sm_90a", ())
    done = _compile(job, tmp_path)
    out = done[1].stdout + done[1].stderr
    assert done[1].returncode == 0 and set(parse_ptxas(out)) == {"serialized", "ok"}, out
    notes = wgmma_notes(out)
    assert notes and all("'serialized'" in n for n in notes), out
    with pytest.raises(AssertionError, match="serialised or fenced wgmmas"):
        _check(done, job)
    assert wgmma_notes("ptxas info    : (C7517) warpgroup.wait is injected in around line 7 by compiler")
    assert not wgmma_notes("ptxas info    : Used 168 registers, used 3 barriers, 1024 bytes smem")


CUOBJDUMP = shutil.which("cuobjdump")
_SASS_FUNCTION = re.compile(r"^\s*Function : (\S+)", re.M)


def _sass_by_function(cubin: Path) -> dict[str, str]:
    text = subprocess.run([CUOBJDUMP, "-sass", str(cubin)], capture_output=True, text=True, timeout=120,
                          check=True).stdout
    parts = _SASS_FUNCTION.split(text)[1:]
    return dict(zip(parts[::2], parts[1::2]))


@needs_nvcc
@pytest.mark.skipif(CUOBJDUMP is None, reason="cuobjdump (the CUDA toolkit) is not on PATH")
@pytest.mark.parametrize("name", ["rungs/wgmma_bf16.cu", "rungs/wgmma_bf16_tma.cu", "rungs/wgmma_tf32.cu",
                                  "rungs/wgmma_tf32_tma.cu", "rungs/mma_tf32.cu"])
def test_tensor_rungs_issue_tensor_core_instructions(compiled, name):
    """The sm_90a build of every wgmma GEMM kernel holds warpgroup MMAs (HGMMA in SASS), and the
    mma.sync rungs hold HMMA: a kernel whose MMAs were compiled out (a wrong feature macro, an empty
    body) would still pass the spill check."""
    f = PKG / name
    arch = "sm_90a" if "wgmma" in name else "sm_90"
    sass = _sass_by_function(compiled[_job_id((f, arch, ()))][2])
    gemms = {k: v for k, v in sass.items() if k.startswith("mm_")}
    assert gemms, f"no mm_* kernels in {name}: {sorted(sass)}"
    op = "HGMMA" if "wgmma" in name else "HMMA"
    empty = [k for k, v in gemms.items() if op not in v]
    assert not empty, f"{name}: no {op} in {empty}"


# the overlapped promotion's kernels (include/overlap.cuh) and their group length U
OVERLAPPED = [("rungs/wgmma_fp8.cu", k, 1) for k in ("mm_wgmma_fp8_overlap", "mm_wgmma_fp8_persistent_overlap",
                                                       "mm_wgmma_fp8_persistent_cluster_overlap")] + [
    ("rungs/wgmma_tf32_tma.cu", "mm_wgmma_3xtf32_tma_overlap", 1), ("rungs/wgmma_tf32_tma.cu", "mm_wgmma_3xtf32_tma_overlap2", 2)]


@needs_nvcc
@pytest.mark.skipif(CUOBJDUMP is None, reason="cuobjdump (the CUDA toolkit) is not on PATH")
@pytest.mark.parametrize("name,kernel,u", OVERLAPPED, ids=lambda x: str(x))
def test_the_overlapped_adds_run_under_the_next_mmas(compiled, name, kernel, u):
    """In SASS each k-tile of a pass waits with WARPGROUP.DEPBAR.LE gsb0, 0x1 right after its MMAs (its
    predecessor retired, its own MMAs still running), and the previous partial's 64 FADDs follow before
    the next stage's barrier wait: under this k-tile's MMAs, held back by nothing. Adds sunk past that
    wait (as NVVM does without overlap.cuh's fence), or a drain every k-tile, fail this."""
    sass = _sass_by_function(compiled[_job_id((PKG / name, "sm_90a", ()))][2])[kernel]
    ops = [line.split(";")[0].split("*/")[-1].strip() for line in sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4}", line)]
    waits = [i for i, op in enumerate(ops) if op == "WARPGROUP.DEPBAR.LE gsb0, 0x1"]
    assert len(waits) >= 7 and all("GMMA" in ops[w - 1] and "gsb0" in ops[w - 1] for w in waits), kernel
    # up to the next stage's barrier wait or the next k-tile's MMAs, whichever comes first
    ends = [i for i, op in enumerate(ops) if op == "WARPGROUP.ARRIVE" or op.startswith("SYNCS.PHASECHK")]
    overlapped = 0
    for w in waits:
        end = next((e for e in ends if e > w), len(ops))
        overlapped += sum(op.startswith("FADD") for op in ops[w:end]) >= 64
    assert overlapped >= 6 // u, (kernel, overlapped)


@needs_nvcc
def test_pipelined_dynamic_smem_matches_the_record(tmp_path):
    """The launcher passes pipelined.py's dynamic_smem(c) bytes; the kernel lays out PipeV1<...>::SMEM_BYTES
    (V = 1) or PipeV0<...>::SMEM_BYTES (V = 2, 3, 4) and traps when given less: the formulas must agree for
    every configuration."""
    from rooflab.rungs import pipelined

    lines = ["#define PIPE_NO_INSTANCES", '#include "pipelined.cu"']
    dynamic = [c for c in pipelined.CONFIGS if pipelined.dynamic_smem(c)]
    assert dynamic, "no configuration uses dynamic shared memory"
    assert {c[8] for c in dynamic} >= {1, 2}, "both dynamic layouts are configured"
    for c in dynamic:
        args = ", ".join(map(str, c[:8]))
        layout = f"PipeV1<{args}>" if c[8] == 1 else f"PipeV0<{c[0]}, {c[1]}, {c[2]}, {c[7]}>"
        lines.append(f'static_assert({layout}::SMEM_BYTES == {pipelined.dynamic_smem(c)}, "{args}");')
    for v, c in zip(pipelined.VARIANTS, pipelined.CONFIGS):
        assert v.shared_mem == pipelined.dynamic_smem(c) and v.kernel == pipelined.kernel_name(c)
    src = tmp_path / "smem.cu"
    src.write_text("\n".join(lines) + "\n")
    r = subprocess.run([NVCC, "-arch=sm_90", "-std=c++17", "-cubin", f"-I{PKG / 'rungs'}", "-o",
                        str(tmp_path / "smem.cubin"), str(src)], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_serialisation_note_is_recognised():
    """ptxas's note as it prints it (nvcc 13.0, a partial accumulator read between a wgmma and its wait)."""
    note = ("ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
            "non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline "
            "stage in the function 'mm_wgmma_3xtf32_swap_f2'")
    assert wgmma_notes(f"ptxas info    : Used 168 registers\n{note}\n") == [note]
    assert wgmma_notes("ptxas info    : Function properties for mm_wgmma_3xtf32_swap_f2\n") == []


def test_parse_ptxas_flags_spills():
    text = ("ptxas info    : Compiling entry function '_Z1kILi8EEvPf' for 'sm_90'\n"
            "ptxas info    : Function properties for _Z1kILi8EEvPf\n"
            "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
            "ptxas info    : Compiling entry function 'plain' for 'sm_90'\n"
            "ptxas info    : Function properties for plain\n"
            "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n")
    e = parse_ptxas(text)
    assert e["_Z1kILi8EEvPf"] == {"arch": "sm_90", "stack": 16, "spill_stores": 8, "spill_loads": 4}
    assert e["plain"]["spill_stores"] == 0 and e["plain"]["stack"] == 0


def test_every_cu_file_ships_in_the_wheel(tmp_path):
    """Build the wheel for real and look inside: every .cu kernel, the header they include and the results schema must be
    there, or an installed rooflab cannot compile its kernels or check a results file.
    Takes a few seconds (no build isolation: setuptools and wheel come with the test extra). Built
    from a copy of the sources, so no build/ folder left in the checkout can add or hide a file."""
    proj = tmp_path / "proj"
    shutil.copytree(ROOT / "src", proj / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, proj / name)
    dist = tmp_path / "dist"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "--no-cache-dir", "-q", "-w", str(dist), str(proj)],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert proc.returncode == 0, f"pip wheel failed:\n{proc.stdout}\n{proc.stderr}"
    wheels = list(dist.glob("rooflab-*.whl"))
    assert len(wheels) == 1, list(dist.iterdir())
    with zipfile.ZipFile(wheels[0]) as zf:
        names = set(zf.namelist())
    headers = {f"rooflab/{_rel(f)}" for f in PKG.glob("include/*.cuh")}
    assert headers, "the kernels' shared header is missing from the sources"
    expected = ({f"rooflab/{_rel(f)}" for f in CU_FILES} | headers
                | {"rooflab/schema/results.schema.json", "rooflab/py.typed"})
    missing = sorted(expected - names)
    assert not missing, f"not in {wheels[0].name}: {missing}"
    assert "rooflab/cli/__init__.py" in names and "rooflab/cli/app.py" in names


def test_nvrtc_gets_the_shared_header_folder_for_package_kernels(monkeypatch, tmp_path):
    """The tensor-core kernels #include "ptx.cuh": rooflab's NVRTC compile must put include/ on the
    path for the package's kernels (and leave a user's kernel's options alone)."""
    from rooflab.cuda import compile as comp

    seen = []

    class FakeModule:
        def __init__(self, code, options, name_expressions):
            seen.append((code, options))

        def compile(self):
            pass

    monkeypatch.setattr(comp, "cupy", lambda: type("cp", (), {"RawModule": FakeModule}))
    comp._module.cache_clear()
    comp._module("rungs/mma_tf32.cu", (), ("-arch=sm_90a",))
    user = tmp_path / "k.cu"
    user.write_text("extern \"C\" __global__ void k() {}\n")
    comp._module(str(user), (), ())
    comp._module.cache_clear()
    (code, opts), (_, user_opts) = seen
    assert '#include "ptx.cuh"' in code
    inc = [o[2:] for o in opts if o.startswith("-I")]
    assert len(inc) == 1 and (Path(inc[0]) / "ptx.cuh").is_file() and opts[-1] == "-arch=sm_90a"
    assert not any(o.startswith("-I") for o in user_opts)
