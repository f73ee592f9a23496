#!/usr/bin/env bash
# Nsight Compute's warp-stall sampling by SASS line for one variant at N: the CSV into
# $OUT/logs/src-KERNEL-N.csv, the top lines (scripts/dev/stall_top.py) on stdout.
# Usage (on the GPU machine, from the repository root): scripts/dev/ncu_source.sh RUNG KERNEL [N]
set -u
rung=$1 kernel=$2 n=${3:-4096}
export PYTHONPATH=$PWD/src
csv=${OUT:-/tmp}/logs/src-$kernel-$n.csv
ncu --clock-control none --profile-from-start off --section SourceCounters --section SpeedOfLight \
    --page source --csv --print-source sass python3 -m rooflab.measure.profile_target "$rung" --variant "$kernel" \
    --n "$n" > "$csv" 2>&1
rc=$?
python3 scripts/dev/stall_top.py 14 < "$csv"
exit $rc
