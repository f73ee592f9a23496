#!/usr/bin/env bash
# Issue 9, third attempt: one device call. Sweep the candidate instances beside cuBLAS
# (check_climb.py with CHECK_CLIMB_CONFIGS), profile the baseline, the predicted winner and cuBLAS with
# ncu (warp states), and run compute-sanitizer memcheck/racecheck on the new versions at odd shapes.
# Usage (GPU machine, repo root): scripts/dev/check_simt3.sh [sweep|confirm]; logs under $OUT.
set -u
OUT=${OUT:-/tmp/simt3-out}; mkdir -p "$OUT"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
MODE=${1:-sweep}
C=scripts/dev/check_climb.py
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv | tee "$OUT/smi.txt"
if [ "$MODE" = sweep ]; then
  export CHECK_CLIMB_CONFIGS='[[128,256,8,64,64,8,16,3],[128,256,16,64,64,8,16,3,2,8],[128,256,16,64,64,8,16,4,2,8],
[128,256,16,64,64,8,16,3,2,1],[128,256,8,64,64,8,16,3,0,8],[128,256,8,64,64,8,16,4,2,8],[256,128,16,64,64,16,8,3,2,8],
[128,256,16,64,64,8,16,3,3,8],[128,256,32,64,64,8,16,3,3,8],[128,256,8,64,64,8,16,3,3,8],[128,128,16,64,64,8,16,3,2,8],
[128,128,16,32,64,8,8,3,2,8],[128,128,16,32,64,8,8,4,2,8]]'
  timeout ${SWEEP_S:-150} python3 $C --kernels pipe --flush-n 4096 --rounds 2 2>&1 | tee "$OUT/sweep.txt"
  PROF="pipe 128x256x8 w64x64 t8x16 cp.async3|pipe 128x256x16 w64x64 t8x16 cp.async3 v2 g8|cublas"
  SAN="pipe 128x256x16 w64x64 t8x16 cp.async3 v2 g8,v3,pipe 128x128x16 w32x64 t8x8 cp.async3 v2"
else
  export CHECK_CLIMB_CONFIGS=${CONFIRM_CONFIGS:?}
  timeout ${SWEEP_S:-150} python3 $C --kernels pipe --flush-n 4096 --rounds 5 2>&1 | tee "$OUT/confirm.txt"
  # rooflab's own harness, the default pipelined instance (CONFIGS[0]) beside cublasSgemm
  for n in 2048 4096 8192; do
    timeout 60 python3 -m rooflab gemm --n $n --kernels pipelined,cublas --reps 20 2>&1 | tail -n 12 | tee -a "$OUT/rooflab.txt"
  done
  timeout 60 python3 -m rooflab gemm --n 4096 --kernels pipelined,cublas --reps 20 --flush-l2 2>&1 | tail -n 12 | tee -a "$OUT/rooflab.txt"
  PROF=${PROF:-}; SAN=${SAN:-pipe}
fi
IFS='|' read -ra PS <<< "$PROF"
for p in "${PS[@]}"; do
  echo "== ncu $p" | tee -a "$OUT/ncu.txt"
  timeout 40 ncu --clock-control none --profile-from-start off --section WarpStateStats --section SchedulerStats \
    --section InstructionStats --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio" \
    python3 $C --profile "$p" 2>&1 | grep -vE "^==PROF==|^\s*$" | tee -a "$OUT/ncu.txt" | tail -n 70
done
export ROOFLAB_NO_POOL=1
for tool in memcheck racecheck; do
  echo "== $tool ($SAN)" | tee -a "$OUT/sanitizer.txt"
  timeout 45 compute-sanitizer --tool $tool --error-exitcode 9 python3 $C --odd-only --kernels "$SAN" 2>&1 \
    | tee -a "$OUT/sanitizer.txt" | tail -n 14
  echo "rc=${PIPESTATUS[0]}" | tee -a "$OUT/sanitizer.txt"
done
