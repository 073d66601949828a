#!/usr/bin/env bash
# The pose-repair table of docs/RESULTS.md ("Pose repair"): every method on
# the benchmark (data/posefix/benchmark_01_03.ron), one markdown row each;
# the direct repair first (no field needed).
# Needs the fields trained by
#   senc posefix train --config configs/posefix.ron --out runs/posefix
# and, for the ablations (30 epochs each, the method included):
#   senc posefix train --config configs/posefix.ron --epochs 30 --out runs/posefix_30
#   senc posefix train --config configs/posefix_contacts.ron --epochs 30 --out runs/posefix_contacts_30
#   senc posefix train --config configs/posefix_groups.ron --epochs 30 --out runs/posefix_groups_30
#   senc posefix train --config configs/experiments/posefix_groups4_contacts.ron --epochs 30 --out runs/posefix_groups4_contacts_30
#   senc posefix train --config configs/posefix_<ablation>.ron --epochs 30 --out runs/posefix_<ablation>_30
# for <ablation> in gradient_norm, no_gradient_term, classifier.
set -euo pipefail
senc=${SENC:-target/release/senc}
runs=${RUNS:-runs}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# Held-out sign accuracy of a field's last epoch (log.csv), the lowest and
# highest over its groups for a grouped field.
held_out() {
  local logs
  logs=$(ls "$1"/log.csv "$1"/*/log.csv 2>/dev/null)
  for log in $logs; do tail -n 1 "$log" | cut -d, -f6; done | sort -n |
    awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (lo == hi) printf "%.2f", lo; else printf "%.2f–%.2f", lo, hi }'
}
echo "| method | field | C_l | SCC | PDR | MVD (m) | median ms | p95 ms | g<0 at input | ‖∇g‖ p5/p50/p95 | held-out sign accuracy |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
row() {
  local name=$1 field=$2
  shift 2
  "$senc" posefix eval --field "$runs/$field" "$@" --json >"$tmp"
  python3 - "$name" "$field" "$tmp" "$(held_out "$runs/$field")" <<'PY'
import json, sys
name, field, path, held_out = sys.argv[1:5]
r = json.load(open(path))
p, g = r["repair"], r["gradient_norm"]
print(f"| {name} | {field} | {r['level']} | {p['scc']:.3f} | {p['pdr']:.3f} | {p['mvd']:.4f} "
      f"| {p['median_ms']:.1f} | {p['p95_ms']:.1f} | {r['field_recall']:.3f} "
      f"| {g[0]:.2f}/{g[1]:.2f}/{g[2]:.2f} | {held_out} |")
PY
}
direct() {
  local name=$1
  shift
  "$senc" posefix eval --direct "$@" --json >"$tmp"
  python3 - "$name" "$tmp" <<'PY'
import json, sys
name, path = sys.argv[1:3]
r = json.load(open(path))
p = r["repair"]
print(f"| {name} | none | – | {p['scc']:.3f} | {p['pdr']:.3f} | {p['mvd']:.4f} "
      f"| {p['median_ms']:.1f} | {p['p95_ms']:.1f} | – | – | – |")
PY
}
direct "direct descent on the penetration depth, ≤ 80 steps (+ 80 unweighted, then both aiming for 1 cm)"
direct "direct descent, ≤ 30 steps (the same retries)" --max-steps 30
direct "direct descent, unweighted distance only, ≤ 80 steps (+ 80 aiming for 1 cm)" --unweighted
if [ -d "$runs/posefix" ]; then
  row "projection, one shot" posefix
  for level in 0.02 0.05 0.1; do
    row "projection, one shot" posefix --level "$level"
  done
  row "SLSQP, one shot" posefix --solver slsqp
  row "SLSQP, one shot" posefix --solver slsqp --level 0.05
  row "projection + exact check, ≤ 10 retries" posefix --retries 10
  row "projection, unweighted distance" posefix --unweighted
fi
if [ -d "$runs/posefix_groups_30" ]; then
  row "projection, one shot" posefix_groups_30 --level 0.05
  row "SLSQP, one shot" posefix_groups_30 --solver slsqp --level 0.05
fi
if [ -d "$runs/posefix_30" ]; then
  for level in 0.05 0.1; do
    row "projection, one shot" posefix_30 --level "$level"
  done
  row "SLSQP, one shot" posefix_30 --solver slsqp
  row "SLSQP, one shot" posefix_30 --solver slsqp --level 0.05
fi
for field in posefix_30 posefix_groups_30 posefix_groups4_contacts_30 posefix_contacts_30 posefix_gradient_norm_30 posefix_no_gradient_term_30 posefix_classifier_30; do
  if [ -d "$runs/$field" ]; then
    row "projection, one shot" "$field"
    row "projection + exact check, ≤ 10 retries" "$field" --retries 10
  fi
done
# Fields regressed on signed clearances (g in metres, so C_l is a clearance):
#   senc posefix train --config configs/posefix_clearance.ron --epochs 40 --out runs/posefix_clearance_40
#   senc posefix train --config configs/experiments/posefix_clearance_contacts.ron --epochs 40 --out runs/posefix_clearance_contacts_40
for field in posefix_clearance_40 posefix_clearance_contacts_40; do
  if [ -d "$runs/$field" ]; then
    for level in 0 0.01 0.02 0.03; do
      row "projection, one shot" "$field" --level "$level"
    done
    row "SLSQP, one shot" "$field" --solver slsqp --level 0.02
    row "projection + exact check, ≤ 10 retries of +5 mm" "$field" --level 0.005 --retries 10 --retry-step 0.005
  fi
done
# The grouped field regressed on signed clearances (its own table):
#   senc posefix train --config configs/experiments/posefix_groups_clearance_contacts.ron --epochs 40 --out runs/posefix_groups_clearance_contacts_40
#   ... --epochs 100 --out runs/posefix_groups_clearance_contacts_100 (resumed from a copy of the 40-epoch run)
echo
echo "| method | field | C_l (m) | SCC | PDR | MVD (m) | median ms | p95 ms | g<0 at input | ‖∇g‖ p5/p50/p95 | held-out sign accuracy |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
field=posefix_groups_clearance_contacts_40
if [ -d "$runs/$field" ]; then
  for level in 0 0.01 0.02 0.025 0.03 0.035 0.04 0.05; do
    row "projection, one shot" "$field" --level "$level"
  done
  for level in 0 0.02 0.025; do
    row "SLSQP, one shot" "$field" --solver slsqp --level "$level"
  done
  row "projection + exact check, ≤ 10 retries of +5 mm" "$field" --level 0.005 --retries 10 --retry-step 0.005
  row "projection + exact check, ≤ 10 retries of +5 mm" "$field" --level 0.01 --retries 10 --retry-step 0.005
  row "SLSQP + exact check, ≤ 10 retries of +5 mm" "$field" --solver slsqp --level 0.005 --retries 10 --retry-step 0.005
fi
field=posefix_groups_clearance_contacts_100
if [ -d "$runs/$field" ]; then
  for level in 0.025 0.03; do
    row "projection, one shot" "$field" --level "$level"
  done
  row "projection + exact check, ≤ 10 retries of +5 mm" "$field" --level 0.005 --retries 10 --retry-step 0.005
fi
# Active learning along the repair's own way out (resumed from a copy of the
# 40-epoch run):
#   senc posefix train --config configs/experiments/posefix_groups_clearance_repair_paths.ron --epochs 60 --out runs/posefix_groups_clearance_repair_paths
field=posefix_groups_clearance_repair_paths
if [ -d "$runs/$field" ]; then
  for level in 0.02 0.025 0.03; do
    row "projection, one shot" "$field" --level "$level"
  done
  row "SLSQP, one shot" "$field" --solver slsqp --level 0.025
  row "projection + exact check, ≤ 10 retries of +5 mm" "$field" --level 0.005 --retries 10 --retry-step 0.005
fi
