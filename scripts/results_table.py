#!/usr/bin/env python3
"""Markdown table from `senc eval --json` output (stdin), one row per
checkpoint (overall, frame-weighted), with C and stretch ratios against a
baseline checkpoint.

    senc eval --checkpoint checkpoints/tshirt checkpoints/hood_tshirt \
        --motion 01_03 --frames 789:1128 --json \
      | python3 scripts/results_table.py --baseline checkpoints/hood_tshirt
"""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="checkpoint the ratios are taken against")
    args = parser.parse_args()
    report = json.load(sys.stdin)
    rows = {c["checkpoint"]: c["overall"] for c in report["checkpoints"]}
    base = rows.get(args.baseline) if args.baseline else None
    print(
        "| checkpoint | frames | C mean (×10⁻³) | %(0.01) | body penetration % "
        "| stretch (J) | bend (J) | s/frame | C / baseline | stretch / baseline |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, o in rows.items():
        ratio = lambda key: (
            f"{o[key] / base[key]:.3g}" if base and base[key] else "–"
        )
        print(
            f"| {name} | {o['frames']} | {o['C_mean']:.4g} | {o['pct_over_0_01']:.1f} "
            f"| {o['penetration_pct']:.2f} | {o['stretch']:.4g} | {o['bend']:.4g} "
            f"| {o['sec_per_frame']:.3f} | {ratio('C_mean')} | {ratio('stretch')} |"
        )


if __name__ == "__main__":
    main()
