#!/usr/bin/env bash
# Alternates `profile_collide` binaries (or any commands printing
# "… N.NN ms each …" on their last line) for a given number of rounds, one
# rayon thread, and prints each one's min and median: on a VM whose speed
# drifts, only runs interleaved like this are comparable.
#
#   scripts/alternate_runs.sh ROUNDS SHAPE LABEL=COMMAND [LABEL=COMMAND ...]
#   scripts/alternate_runs.sh 10 skirt old=/tmp/profile_collide_old new=target/release/examples/profile_collide
#
# Each COMMAND is run as `COMMAND 100 SHAPE` (100 analyses per run).
set -euo pipefail
rounds=$1
shape=$2
shift 2
for _ in $(seq "$rounds"); do
  for spec in "$@"; do
    label=${spec%%=*}
    cmd=${spec#*=}
    ms=$(env RAYON_NUM_THREADS=1 $cmd 100 "$shape" | tail -1 | sed -E 's/.* ([0-9.]+) ms each.*/\1/')
    echo "$label $ms"
  done
done | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    label, ms = line.split()
    runs.setdefault(label, []).append(float(ms))
for label, ms in runs.items():
    print(f"{label}: min {min(ms):.2f} ms, median {statistics.median(ms):.2f} ms, {len(ms)} runs")
'
