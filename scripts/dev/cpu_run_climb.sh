#!/usr/bin/env bash
# Run the climb kernels' real source on the CPU (see cpu_run_climb.cpp), under
# AddressSanitizer (out-of-bounds) and ThreadSanitizer (shared-memory races).
# Usage: scripts/dev/cpu_run_climb.sh [asan|tsan|both]   (default both; a few minutes)
set -eu
cd "$(dirname "$0")/../.."
R=src/rooflab/rungs
OUT=${TMPDIR:-/tmp}/cpu_run_climb; mkdir -p "$OUT"
MODE=${1:-both}
declare -A LIST=(
  [vec]='E(mm_vec, 256, 128, 128)'
  [warptile]='E(mm_warptile, 256, 128, 128)'
  [pipelined]='E((mm_pipe<128,128,8,32,64,8,8,2>), 256, 128, 128), E((mm_pipe<128,128,8,32,64,8,8,3>), 256, 128, 128), E((mm_pipe<128,128,8,32,64,8,8,4>), 256, 128, 128), E((mm_pipe<128,128,8,64,64,8,16,2>), 128, 128, 128), E((mm_pipe<128,128,8,64,64,8,16,3>), 128, 128, 128), E((mm_pipe<128,128,8,64,64,8,16,4>), 128, 128, 128), E((mm_pipe<128,256,8,64,64,8,16,2>), 256, 128, 256), E((mm_pipe<128,256,8,64,64,8,16,3>), 256, 128, 256), E((mm_pipe<128,256,16,64,64,8,16,3,1,8>), 256, 128, 256), E((mm_pipe<128,256,16,64,64,8,16,4,1,8>), 256, 128, 256), E((mm_pipe<128,256,8,64,64,8,16,3,1,8>), 256, 128, 256), E((mm_pipe<128,256,8,64,64,8,16,4,1,8>), 256, 128, 256), E((mm_pipe<128,128,16,64,64,8,16,3,1,8>), 128, 128, 128), E((mm_pipe<128,128,16,64,64,8,16,4,1,8>), 128, 128, 128), E((mm_pipe<256,128,16,64,64,16,8,3,1,8>), 256, 256, 128), E((mm_pipe<128,256,16,64,64,8,16,3,1,1>), 256, 128, 256), E((mm_pipe<128,256,16,64,64,8,16,4,2,8>), 256, 128, 256), E((mm_pipe<128,256,16,64,64,8,16,4,2,2>), 256, 128, 256), E((mm_pipe<128,128,16,64,64,8,16,3,2,8>), 128, 128, 128), E((mm_pipe<128,256,16,64,64,8,16,3,4,8>), 256, 128, 256)'
)
# M N K misalign
ASAN_SHAPES="1 1 1 0  45 33 70 0  3 300 2 0  1 260 7 0  130 260 17 0  200 136 44 0  200 136 44 1  129 132 12 0  256 256 64 0  260 264 36 0  301 259 97 0  300 520 50 0  260 520 40 1  1157 300 20 0"
TSAN_SHAPES="45 33 70 0  200 136 44 0  129 260 24 0  260 264 72 0"
for f in vec warptile pipelined; do
  for san in address thread; do
    [ "$MODE" = both ] || { [ "$MODE" = asan ] && [ $san = thread ] && continue; [ "$MODE" = tsan ] && [ $san = address ] && continue; }
    exe=$OUT/${f}_$san
    g++ -std=c++20 -O1 -g -fsanitize=$san -pthread -I$R -DKFILE="\"$f.cu\"" -DKLIST="${LIST[$f]}" \
        scripts/dev/cpu_run_climb.cpp -o "$exe"
    if [ $san = address ]; then "$exe" $ASAN_SHAPES; else "$exe" $TSAN_SHAPES; fi
  done
done
