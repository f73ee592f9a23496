#!/usr/bin/env bash
# The Triton rungs through rooflab's own CLI on a GPU (one device call, ~3 min), logs under $OUT:
# Triton's cache filled in parallel, `rooflab tune` at 8192 (winners cached in $ROOFLAB_CACHE), the
# acceptance command (on the records' default configurations), every Triton rung beside its cuBLAS peer at 8192 and 4096, the timing/replica
# verification, and the Triton tests (interpreter + harness).  Usage: scripts/dev/run_triton_cli.sh
set -u
OUT=${OUT:-/tmp/rooflab-out}
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 ROOFLAB_CACHE=${ROOFLAB_CACHE:-$OUT/cache}
R="python3 -m rooflab"
T=triton_fp32,triton_tf32,triton_tf32x3,triton_bf16
step() { local name=$1 limit=$2; shift 2; local t0=$SECONDS; timeout "$limit" "$@" >"$OUT/$name.txt" 2>&1;
         echo "== $name rc=$? $((SECONDS - t0)) s" | tee -a "$OUT/steps.txt"; }
step precompile 40 python3 scripts/dev/check_triton.py --precompile-only
step cli_bf16   25 $R gemm --kernels triton_bf16,cublas_bf16 --n 8192
step tune       70 $R tune --n 8192 --kernels $T --reps 10 --format json
step gemm8192   30 $R gemm --n 8192 --kernels cublas,triton_fp32,triton_tf32x3,cublas_tf32,triton_tf32,cublas_bf16,triton_bf16 --format json --out "$OUT/gemm8192.json"
step verify     20 python3 scripts/dev/check_triton.py --verify
step gemm4096   20 $R gemm --n 4096 --kernels cublas,triton_fp32,triton_tf32x3,cublas_tf32,triton_tf32,cublas_bf16,triton_bf16
step pytest     30 python3 -m pytest -q -p no:cacheprovider -o addopts="" tests/test_triton.py
tail -n 4 "$OUT"/precompile.txt; tail -n 30 "$OUT"/cli_bf16.txt; cat "$OUT"/gemm4096.txt | tail -n 40; cat "$OUT"/verify.txt; tail -n 3 "$OUT"/pytest.txt
