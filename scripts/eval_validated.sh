#!/usr/bin/env bash
# Held-out evaluation of every model a run kept with `validation.keep_all`
# (runs/RUN/validated/UPDATE, or snaps/UPDATE for the session-12 runs):
# one `senc eval --json` report per model in runs/RUN/heldout/UPDATE.json,
# skipping those already there (safe to rerun after an interruption).
#
#   scripts/eval_validated.sh runs/finetune_skirt_body [MOTION] [FRAMES]
#
# MOTION and FRAMES default to the held-out 01_03 789:1128. SENC names the
# binary (default target/release/senc); EVAL_ARGS adds `senc eval` options
# and HELDOUT names the output subfolder (default heldout), e.g.
#   HELDOUT=heldout_skip EVAL_ARGS="--cap-only-paths skip" scripts/eval_validated.sh RUN
# Then:
#   python3 scripts/snapshot_distribution.py RUN... --baseline HOOD_RUN
set -euo pipefail
run=${1:?usage: eval_validated.sh RUN [MOTION] [FRAMES]}
motion=${2:-01_03}
frames=${3:-789:1128}
senc=${SENC:-target/release/senc}
models=$run/validated
[ -d "$models" ] || models=$run/snaps
held=${HELDOUT:-heldout}
read -r -a extra <<< "${EVAL_ARGS:-}"
mkdir -p "$run/$held"
for dir in $(ls "$models" | sort -n); do
  out=$run/$held/$dir.json
  [ -s "$out" ] && continue
  if ! "$senc" eval --checkpoint "$models/$dir" --motion "$motion" --frames "$frames" --json "${extra[@]}" \
    > "$out.tmp" 2> "$out.err"; then
    echo "eval of $models/$dir failed; see $out.err" >&2
    exit 1
  fi
  mv "$out.tmp" "$out"
  rm -f "$out.err"
done
echo "$run: $(ls "$run/$held" | grep -c '\.json$') models evaluated on $motion $frames"
