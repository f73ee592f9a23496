#!/usr/bin/env bash
# Many GPUs on a 2-GPU machine, in one call (~3-4 minutes): the fleet report three ways
# (one process with --devices all, torchrun, mpirun), the fleet GPU tests, and a
# comparison of the three merged documents; a short table last. gpu-check has no many-GPU mode:
# this is the check for a machine of two or more GPUs.
# Usage, from the repo root:  scripts/dev/check_fleet.sh      (results in $OUT, default /tmp/rooflab-fleet)
set -u
# NVLink multicast stays off on shared machines (rooflab forces these too, in itself and its children)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/rooflab-fleet}
L=$OUT/logs; mkdir -p "$L"
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
FLEET="rooflab fleet"
step() { local name=$1 limit=$2; shift 2; local t0; t0=$(date +%s%N)
         timeout --kill-after=10 "$limit" "$@" >"$L/$name.log" 2>&1; local rc=$?
         local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
         printf '%-12s rc=%-3s %4d.%01d s   (%s)\n' "$name" "$rc" $((ms / 1000)) $(((ms % 1000) / 100)) \
           "$L/$name.log" | tee -a "$L/steps.txt"; }
{ echo "python -m $FLEET; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"; nvidia-smi topo -m
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,clocks.sm,clocks.max.sm,power.draw,temperature.gpu \
             --format=csv
} 2>&1 | tee "$L/topo.txt"
rm -rf "$OUT/fleet" "$OUT/fleet-torchrun" "$OUT/fleet-mpi"

T="--timeout 150 --step-timeout 90"
step devices 200 $PY -m $FLEET report --devices all --out "$OUT/fleet" --quick $T
step gpu-tests 120 $PY -m pytest -q -m gpu tests/test_gpu_fleet.py -p no:cacheprovider
if command -v torchrun >/dev/null; then TR="torchrun"
elif $PY -c "import torch.distributed.run" 2>/dev/null; then TR="$PY -m torch.distributed.run"; else TR=""; fi
if [ -n "$TR" ]; then
  step torchrun 200 $TR --standalone --nproc-per-node 2 -m $FLEET report --shared-dir "$OUT/fleet-torchrun" \
       --quick --no-torch-peer --no-render $T --wait-timeout 180
else echo "torchrun     skipped: no torch here" | tee -a "$L/steps.txt"; fi
if command -v mpirun >/dev/null; then
  if mpirun --version 2>&1 | grep -qi "open mpi\|open-mpi\|openrte"; then  # Open MPI
    MPI="mpirun --allow-run-as-root --bind-to none -n 2 -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST
         -x NVSHMEM_DISABLE_NVLS -x PYTHONPATH -x PYTHONUNBUFFERED"
  else MPI="mpirun -n 2"; fi  # MPICH / Intel MPI (Hydra): the environment goes along by default
  step mpirun 200 $MPI $PY -m $FLEET report --shared-dir "$OUT/fleet-mpi" --quick --no-torch-peer --no-render $T \
       --wait-timeout 180
else echo "mpirun       skipped: no mpirun here" | tee -a "$L/steps.txt"; fi

tail -3 "$L/gpu-tests.log" | tee -a "$L/steps.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" logs $(cd "$OUT" && ls -d fleet fleet-torchrun fleet-mpi 2>/dev/null)
$PY - "$OUT" <<'PY'
import json, sys
from pathlib import Path

out = Path(sys.argv[1])
runs = {}
for name in ("fleet", "fleet-torchrun", "fleet-mpi"):
    p = out / name / "fleet.json"
    if p.is_file():
        runs[name] = json.loads(p.read_text())["fleet"]
    else:
        print(f"{name}: no fleet.json")


def shape(f):
    return {"gpus": sorted(f["gpus"]), "sections": {u: sorted(g["document"]) for u, g in f["gpus"].items()},
            "links": sorted(f["links"]), "allreduce": sorted(f["allreduce"]),
            "keys": sorted(k for k in f if k != "launch")}


if runs:
    ref_name, ref = next(iter(runs.items()))
    for name, f in runs.items():
        same = shape(f) == shape(ref)
        print(f"{name}: {len(f['gpus'])} GPUs, structure {'SAME as' if same else 'DIFFERS from'} {ref_name}"
              + ("" if same else f"\n   {shape(f)}\n   {shape(ref)}"))


def num(v, p):
    return "-" if v is None else f"{v:.{p}f}"


def pair(sec, key, i, j):
    for r in (sec or {}).get(key) or []:
        if (r.get("src", r.get("a")), r.get("dst", r.get("b"))) == (i, j):
            return f"{r['gbs']:.0f}" if r.get("verified") and r.get("gbs") else "FAIL"
    return "-"


def host(r):
    return f"{r['gbs']:.0f}" if r and r.get("verified") and r.get("gbs") else "-"


def busbw(sec, nbytes):
    if sec and not sec.get("available", True):
        return "n/a"
    for r in (sec or {}).get("rows") or []:
        if r["bytes"] == nbytes:
            return f"{r['busbw_gbs']:.0f}" if r.get("verified") else "FAIL"
    return "-"


print(f"\n{'run':15} {'GPU':5} {'copy GB/s':>9} {'FMA TF':>7} {'SGEMM TF':>8}  flag")
for name, f in runs.items():
    outl = {o["uuid"] for o in f["outliers"]}
    for u, g in f["gpus"].items():
        s = g["summary"]
        print(f"{name:15} GPU{g['index']!s:2} {num(s['copy_gbs'], 0):>9} {num(s['fma_tflops'], 1):>7} "
              f"{num(s['sgemm_tflops'], 1):>8}  {'OUTLIER' if u in outl else 'ok'}")
print(f"\n{'run':15} {'CE 0>1':>7} {'CE 1>0':>7} {'CE 0<>1':>8} {'SM 0>1':>7} {'SM 0<>1':>8} {'H2D':>5} {'D2H':>5} "
      f"{'AR16M':>6} {'AR1G':>6}   GB/s; torch reference: 393 393 764 - - 55 55 220 330")
for name, f in runs.items():
    for h, sec in f["links"].items():
        hc = (sec.get("host") or [{}])[0]
        ar = f["allreduce"].get(h)
        print(f"{name:15} {pair(sec, 'ce_uni', 0, 1):>7} {pair(sec, 'ce_uni', 1, 0):>7} "
              f"{pair(sec, 'ce_bidir', 0, 1):>8} {pair(sec, 'sm_uni', 0, 1):>7} {pair(sec, 'sm_bidir', 0, 1):>8} "
              f"{host(hc.get('h2d')):>5} {host(hc.get('d2h')):>5} {busbw(ar, 16 * 2**20):>6} {busbw(ar, 2**30):>6}")
        kinds = {p["link"].get("label") for p in sec.get("pairs") or []}
        theo = {round(p["link"]["theoretical_gbs"] or 0) for p in sec.get("pairs") or []}
        print(f"{'':15} link {', '.join(map(str, kinds))}, theoretical {theo} GB/s per direction; "
              f"NCCL_NVLS_ENABLE={(ar or {}).get('env', {}).get('NCCL_NVLS_ENABLE')}")
        tp = (f.get("torch_peer") or {}).get(h) or {}
        if tp.get("available"):
            print(f"{'':15} torch copy_: " + ", ".join(
                f"{r['src']}>{r['dst']} {r['gbs']:.0f}" for r in tp.get("uni") or [] if r.get("gbs")) + "; " +
                ", ".join(f"{r['a']}<>{r['b']} {r['gbs']:.0f}" for r in tp.get("bidir") or [] if r.get("gbs")))
        elif tp:
            print(f"{'':15} torch copy_: {tp.get('reason') or tp.get('error')}")
    for e in f.get("errors") or []:
        print(f"  {name} error: {e[:300]}")
PY
echo
cat "$L/steps.txt"
