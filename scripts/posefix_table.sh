#!/usr/bin/env bash
# The pose-repair table of docs/RESULTS.md ("Pose repair"): every method on
# the benchmark (data/posefix/benchmark_01_03.ron), one markdown row each.
# Needs the fields trained by
#   senc posefix train --config configs/posefix.ron --out runs/posefix
#   senc posefix train --config configs/posefix_<ablation>.ron --out runs/posefix_<ablation>
# for <ablation> in gradient_norm, no_gradient_term, classifier.
set -euo pipefail
senc=${SENC:-target/release/senc}
runs=${RUNS:-runs}
echo "| method | field | C_l | SCC | PDR | MVD (m) | median ms | p95 ms | g<0 at input | ‖∇g‖ p5/p50/p95 |"
echo "|---|---|---|---|---|---|---|---|---|---|"
row() {
  local name=$1 field=$2
  shift 2
  "$senc" posefix eval --field "$runs/$field" "$@" --json | python3 -c '
import json, sys
r = json.load(sys.stdin); p = r["repair"]; g = r["gradient_norm"]
print(f"| {sys.argv[1]} | {sys.argv[2]} | {r[\"level\"]} | {p[\"scc\"]:.3f} | {p[\"pdr\"]:.3f} | {p[\"mvd\"]:.4f} | {p[\"median_ms\"]:.1f} | {p[\"p95_ms\"]:.1f} | {r[\"field_recall\"]:.3f} | {g[0]:.2f}/{g[1]:.2f}/{g[2]:.2f} |")
' "$name" "$field"
}
row "projection, one shot" posefix
for level in 0.02 0.05 0.1; do
  row "projection, one shot" posefix --level "$level"
done
row "SLSQP, one shot" posefix --solver slsqp
row "SLSQP, one shot" posefix --solver slsqp --level 0.05
row "projection + exact check, ≤ 10 retries" posefix --retries 10
row "projection, unweighted distance" posefix --unweighted
for ablation in gradient_norm no_gradient_term classifier; do
  if [ -d "$runs/posefix_$ablation" ]; then
    row "projection, one shot" "posefix_$ablation"
  fi
done
