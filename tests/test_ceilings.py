"""The ceiling records (rooflab.ceilings): one per kernel file, the constants each file is built
with held by the record alone (passed as -D; the .cu keeps the same values as #ifndef defaults so
that nvcc compiles it alone), and the models the harnesses count with."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rooflab import ceilings

PKG = Path(__file__).resolve().parents[1] / "src" / "rooflab"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (the CUDA toolkit) is not on PATH")
_GUARDED = re.compile(r"^#ifndef (\w+)\n#define \1 (\d+)\b.*\n#endif$", re.M)
_DEFINE = re.compile(r"^#define (\w+)", re.M)


def test_one_record_per_kernel_file():
    files = sorted(p.relative_to(PKG).as_posix() for p in (PKG / "ceilings").glob("*.cu"))
    sources = [k.source for k in ceilings.KERNELS]
    assert sorted(sources) == files and len(set(sources)) == len(sources)


@pytest.mark.parametrize("rec", ceilings.KERNELS, ids=lambda k: k.source)
def test_a_files_constants_are_its_records(rec):
    """Every macro a ceiling file defines is one of its record's constants, guarded so the -D option
    wins, with the record's value as the default; and every constant of the record is one the file reads."""
    text = (PKG / rec.source).read_text()
    guarded = {name: int(value) for name, value in _GUARDED.findall(text)}
    assert set(_DEFINE.findall(text)) == set(guarded), "a #define without #ifndef, or a second #define"
    assert guarded == dict(rec.defines)
    body = _GUARDED.sub("", text)
    assert all(re.search(rf"\b{name}\b", body) for name in guarded), "a constant the kernel does not use"


def test_every_bracketed_ceiling_is_measured_by_a_kernel_file():
    """The bracketed table's rows (rooflab.model.brackets) name the kernel file whose record measures
    each; the tensor-core roofs, one per precision timed, all come from tensor_peak.cu."""
    from rooflab.model import brackets, ceiling  # noqa: F401 (brackets registers rooflab's own)

    own = [c for c in ceiling.registered() if isinstance(c, ceiling.Ceiling)]
    assert {c.kernel.source for c in own} == {k.source for k in ceilings.KERNELS} - {"ceilings/tensor_peak.cu",
                                                                                     "ceilings/peer_copy.cu"}
    doc = {"device": {}, "flops": {"tensor": [{"kernel": k, "precision": p, "tflops": 1.0, "verified": True}
                                              for k, p in (("a", "bf16"), ("b", "tf32"))]}}
    members = ceiling.CEILINGS["tensor cores"].members(doc)
    assert [(c.name, c.kernel) for c in members] == [("BF16 tensor cores", ceilings.TENSOR),
                                                     ("TF32 tensor cores", ceilings.TENSOR)]


def _violations(text: str, where: str, names: set[str]) -> list[str]:
    """What in one Python file defines a ceiling's constant again: a constant of a record assigned a
    number, a ceiling kernel file named by a string of its own, a comment or string asking to keep two
    values in step ("must match l2.cu")."""
    out = []
    for node in ast.walk(ast.parse(text)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None)
        for t in targets:
            if isinstance(t, ast.Name) and t.id in names and isinstance(value, ast.Constant):
                out.append(f"{where}:{node.lineno}: {t.id} = {value.value!r}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"ceilings/\w+\.cu", node.value):
            out.append(f"{where}:{node.lineno}: the path {node.value!r}")
    out += [f"{where}: {line.strip()!r}" for line in text.splitlines() if re.search(r"must match\b.*\.cu\b", line)]
    return out


NAMES = {name for k in ceilings.KERNELS for name, _ in k.defines}


def test_the_scan_finds_a_second_definition():
    planted = 'L2_UNROLL = 4\nk = get_kernel("ceilings/l2.cu", "l2_read")\nN = 512  # must match smem.cu\n'
    assert len(_violations(planted, "planted.py", NAMES)) == 3
    assert _violations("SMEM_UNROLL = ceilings.SHARED.unroll\n", "alias.py", NAMES) == []


def test_no_ceiling_constant_is_defined_outside_its_record():
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if path.parent.name != "ceilings":
            found += _violations(path.read_text(encoding="utf-8"), path.relative_to(PKG).as_posix(), NAMES)
    assert not found, "\n".join(found)


def test_with_defines_changes_the_options_and_refuses_unknown_constants():
    l2 = ceilings.L2.with_defines(L2_UNROLL=8)
    assert l2.options == ("-DL2_UNROLL=8", "-DL2_BLOCK=256") and l2.unroll == 8
    assert l2.read_bytes(1024, 3) == 16.0 * 1024 * 8 * 3 and l2.copy_bytes(1024, 3) == 32.0 * 1024 * 8 * 3
    with pytest.raises(KeyError, match="NACC"):
        ceilings.L2.with_defines(NACC=4)


def test_the_shipped_models():
    """The figures the harnesses counted before the constants moved into the records."""
    assert ceilings.L2.read_bytes(264 * 256, 10) == 16.0 * 264 * 256 * 4 * 10
    assert ceilings.SHARED.bytes(1000, 7) == 16.0 * 1000 * 4 * 7 and ceilings.SHARED.buffer_f4 == 512
    assert ceilings.FMA64.flops(1000, 5, 8) == 1000.0 * 5 * 16 * 8 * 2 and ceilings.FMA64.block == 256
    assert ceilings.FMA16.flops(1000, 5, 8) == 1000.0 * 5 * 16 * 8 * 4 and ceilings.FMA16.kernel(8) == "hfma2_chain<8>"
    assert ceilings.FMA.flops(1000, 5, 4) == 1000.0 * 5 * 16 * 4 * 2 and ceilings.FMA.block is None
    n = 256 * 2**20
    assert ceilings.COPY_FLOAT4.profile_grid(n, 132) == n // 4 // 256
    assert ceilings.COPY_SCALAR.profile_grid(n, 132) == 132 * 4  # the seed's launch: 4 blocks of 256 per SM
    assert ceilings.READ.grid(n) == n // 64 // 256 and ceilings.WRITE.grid(n) == n // 4 // 128
    assert ceilings.PEER_COPY.grid(132, 2048, 512) == 132 * 4 and ceilings.PEER_COPY.elements(2**20) == 2**16
    assert ceilings.BY_KERNEL["read_float4_unroll<8, 1>"].per_thread == 32


def _cubin(tmp: Path, rec: ceilings.KernelFile, options: tuple[str, ...], tag: str) -> subprocess.CompletedProcess:
    out = tmp / f"{Path(rec.source).stem}-{tag}.cubin"
    cmd = [NVCC, "-arch=sm_90", "-std=c++17", "-cubin", f"-I{PKG / 'include'}", *options, "-o", str(out),
           str(PKG / rec.source)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)


@needs_nvcc
@pytest.mark.parametrize("rec", ceilings.KERNELS, ids=lambda k: k.source)
def test_the_records_options_build_what_the_file_builds_alone(rec, tmp_path):
    """What rooflab runs (the file with its record's -D options) is, byte for byte, what CI's
    compile of the file alone checked."""
    alone, built = _cubin(tmp_path, rec, (), "alone"), _cubin(tmp_path, rec, rec.options, "record")
    assert alone.returncode == 0 and built.returncode == 0, alone.stderr + built.stderr
    stem = Path(rec.source).stem
    assert (tmp_path / f"{stem}-alone.cubin").read_bytes() == (tmp_path / f"{stem}-record.cubin").read_bytes()


@needs_nvcc
def test_l2_refuses_a_walk_it_does_not_issue(tmp_path):
    """l2.cu writes its four loads out by hand: a record asking for another count does not compile."""
    r = _cubin(tmp_path, ceilings.L2, ceilings.L2.with_defines(L2_UNROLL=8).options, "eight")
    assert r.returncode != 0 and "four loads per iteration" in r.stdout + r.stderr


def test_the_records_import_no_cuda(tmp_path):
    """The ceiling records are data, beside the model: the layer rules keep CUDA and the harness out."""
    pytest.importorskip("importlinter")
    from test_layers import lint

    assert lint(PKG.parent).returncode == 0
    shutil.copytree(PKG, tmp_path / "rooflab")
    f = tmp_path / "rooflab" / "ceilings" / "record.py"
    f.write_text("from rooflab.cuda import compile  # planted\n" + f.read_text())
    proc = lint(tmp_path)
    assert proc.returncode != 0 and "never touch CUDA" in proc.stdout and "BROKEN" in proc.stdout
