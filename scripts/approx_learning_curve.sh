#!/usr/bin/env bash
# Learning curve of the drape approximator: the same variant trained on the
# N drapes of a set drawn at random (the training seed), each evaluated on the held-out drapes.
#   scripts/approx_learning_curve.sh CONFIG DATA OUTDIR VARIANT N1 N2 ...
# e.g. scripts/approx_learning_curve.sh configs/approx_tshirt.ron data_approx/tshirt out/curve pca 250 500 1000 1972
# Prints one line per N: mean, p95 and max error (mm) against the held-out drapes.
set -euo pipefail
config=$1 data=$2 out=$3 variant=$4
shift 4
senc=${SENC:-target/release/senc}
mkdir -p "$out"
printf '%8s %10s %10s %10s\n' drapes "mean mm" "p95 mm" "max mm"
for n in "$@"; do
    model="$out/${variant}_$n"
    "$senc" approx train --config "$config" --data "$data" --out "$model" --variant "$variant" --limit "$n" > "$model.log"
    "$senc" approx eval --config "$config" --data "$data" --model "$model" --json > "$model.json"
    python3 - "$model.json" "$n" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
e = rows[-1]["against_drapes"]
print(f"{sys.argv[2]:>8} {e['mean_mm']:10.2f} {e['p95_mm']:10.2f} {e['max_mm']:10.2f}")
PY
done
