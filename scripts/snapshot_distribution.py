#!/usr/bin/env python3
"""Held-out figures over every validated model of training runs (SENC runs
and optionally their HOOD baseline): distribution per run, ratio of
medians, how well the validation window predicts the held-out one, and the
models two selection rules pick from validation rows alone.

Each run directory needs `validation.csv` (written by `senc train` with
validation) and `heldout/UPDATE.json`, one `senc eval --json` report per
validated model (`validated/UPDATE` with `validation.keep_all`; the
session-12 runs kept them as `snaps/UPDATE`):

    mkdir -p runs/RUN/heldout
    for u in $(ls runs/RUN/validated); do
      senc eval --checkpoint runs/RUN/validated/$u --motion 01_03 --frames 789:1128 \
        --json > runs/RUN/heldout/$u.json
    done
    python3 scripts/snapshot_distribution.py runs/finetune_skirt_select \
        --baseline runs/finetune_hood_skirt_select

With `--validation SUBFOLDER` the validation figures are read from eval
reports in RUN/SUBFOLDER/UPDATE.json instead (another validation window,
e.g. `senc eval ... --frames 449:789 --speed 1.5 --json`); with `--heldout
SUBFOLDER` the held-out reports come from RUN/SUBFOLDER (e.g. heldout_skip,
written by `HELDOUT=heldout_skip EVAL_ARGS="--cap-only-paths skip"
scripts/eval_validated.sh RUN`).

Rules (validation rows only, alike for both runs):
  R1  lowest validation C (what `keep_best` ships);
  R2  lowest validation C among rows whose validation penetration is at
      most the run's median validation penetration.
"""
import argparse
import csv
import json
import os
import statistics

METRICS = ["C_mean", "pct_over_0_01", "penetration_pct", "stretch"]
LABELS = {
    "C_mean": "C mean (×10⁻³)",
    "pct_over_0_01": "%(0.01)",
    "penetration_pct": "body penetration %",
    "stretch": "stretch (J)",
}


def reports(folder):
    """{update: overall} of the `senc eval --json` reports UPDATE.json in `folder`."""
    out = {}
    for name in os.listdir(folder):
        if name.endswith(".json"):
            report = json.load(open(os.path.join(folder, name)))
            out[int(name[:-5])] = report["checkpoints"][0]["overall"]
    return out


def load(run, validation=None, heldout="heldout"):
    """{update: {"val": row, "held": overall}} for updates with both. The
    validation figures come from `validation.csv`, or with `validation`
    from the reports in that subfolder of the run (another window)."""
    if validation:
        val = reports(os.path.join(run, validation))
    else:
        val = {int(r["update"]): {k: float(r[k]) for k in METRICS}
               for r in csv.DictReader(open(os.path.join(run, "validation.csv")))}
    held = reports(os.path.join(run, heldout))
    return {u: {"val": val[u], "held": held[u]} for u in sorted(val) if u in held}


def quartiles(xs):
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], statistics.median(xs), q[2]


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / (va * vb) ** 0.5 if va and vb else float("nan")


def pick_r1(rows):
    return min(rows, key=lambda u: rows[u]["val"]["C_mean"])


def pick_r2(rows):
    median = statistics.median(r["val"]["penetration_pct"] for r in rows.values())
    ok = [u for u in rows if rows[u]["val"]["penetration_pct"] <= median]
    return min(ok, key=lambda u: rows[u]["val"]["C_mean"])


def fmt(x):
    return f"{x:.4g}"


def report_against(name, rows, base_name, base):
    """Ratios, same-budget pairs and the rules' picks of one run against the baseline."""
    med = lambda rs, m: statistics.median(r["held"][m] for r in rs.values())
    print(f"{name} / {base_name}, ratio of medians: " + ", ".join(
        f"{m} {med(rows, m) / med(base, m):.3g}" for m in METRICS))
    # The k-th validation of each run: the same budget to within one sample.
    pairs = [(rows[a]["held"], base[b]["held"]) for a, b in zip(sorted(rows), sorted(base))]
    share = lambda ok: f"{100 * sum(ok(s, h) for s, h in pairs) / len(pairs):.1f} %"
    print(f"  pairs of the k-th validated models ({len(pairs)}), share meeting each skirt target: "
          f"C <= 1/3 baseline's {share(lambda s, h: s['C_mean'] <= h['C_mean'] / 3)}, "
          f"%(0.01) <= 5 {share(lambda s, h: s['pct_over_0_01'] <= 5.0)}, "
          f"penetration <= 1.2x {share(lambda s, h: s['penetration_pct'] <= 1.2 * h['penetration_pct'])}, "
          f"stretch <= 1.2x {share(lambda s, h: s['stretch'] <= 1.2 * h['stretch'])}")
    ratios = sorted(s["penetration_pct"] / h["penetration_pct"] for s, h in pairs)
    print("  penetration ratio per pair q1 / median / q3: "
          + " / ".join(f"{x:.3g}" for x in quartiles(ratios)))
    print()
    print(f"| rule | {name} update | {base_name} update | {name} held-out C / %(0.01) / pen / stretch "
          f"| {base_name} held-out C / %(0.01) / pen / stretch | C ratio | pen ratio | stretch ratio | all four targets |")
    print("|---|---|---|---|---|---|---|---|---|")
    for rule, pick in [("R1", pick_r1), ("R2", pick_r2)]:
        us, uh = pick(rows), pick(base)
        s, h = rows[us]["held"], base[uh]["held"]
        c, p, st = (s[m] / h[m] for m in ("C_mean", "penetration_pct", "stretch"))
        met = c <= 1 / 3 and s["pct_over_0_01"] <= 5.0 and p <= 1.2 and st <= 1.2
        print(f"| {rule} | {us} | {uh} | "
              + " / ".join(fmt(s[m]) for m in METRICS) + " | "
              + " / ".join(fmt(h[m]) for m in METRICS)
              + f" | {c:.3g} | {p:.3g} | {st:.3g} | {'yes' if met else 'no'} |")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run directories (SENC models)")
    parser.add_argument("--baseline", help="HOOD baseline run directory the ratios are taken against")
    parser.add_argument("--validation", help="take the validation figures from the eval reports "
                        "in this subfolder of each run instead of validation.csv")
    parser.add_argument("--heldout", default="heldout",
                        help="subfolder of each run with the held-out reports (default heldout)")
    args = parser.parse_args()
    names = list(args.runs) + ([args.baseline] if args.baseline else [])
    runs = {name: load(name, args.validation, args.heldout) for name in names}

    print("| run | models | " + " | ".join(
        f"{LABELS[m]} q1 / median / q3" for m in METRICS) + " | %(0.01) <= 5 % |")
    print("|---|---|" + "---|" * (len(METRICS) + 1))
    for name, rows in runs.items():
        cells = []
        for m in METRICS:
            q1, med, q3 = quartiles([r["held"][m] for r in rows.values()])
            cells.append(f"{fmt(q1)} / {fmt(med)} / {fmt(q3)}")
        good = sum(r["held"]["pct_over_0_01"] <= 5.0 for r in rows.values())
        print(f"| {name} | {len(rows)} | " + " | ".join(cells) + f" | {good} |")
    print()
    print("Spearman rank correlation, validation vs held-out, per model:")
    for name, rows in runs.items():
        print(f"  {name}: " + ", ".join(
            f"{m} {spearman([r['val'][m] for r in rows.values()], [r['held'][m] for r in rows.values()]):.2f}"
            for m in METRICS))
    print()
    if args.baseline:
        for name in args.runs:
            report_against(name, runs[name], args.baseline, runs[args.baseline])
    for name, rows in runs.items():
        for rule, pick in [("R1", pick_r1), ("R2", pick_r2)]:
            u = pick(rows)
            held = [r["held"]["penetration_pct"] for r in rows.values()]
            below = sum(x < rows[u]["held"]["penetration_pct"] for x in held)
            print(f"{rule} {name} update {u}: held-out " + ", ".join(
                f"{m} {fmt(rows[u]['held'][m])}" for m in METRICS)
                + f"; penetration below it in {below} of {len(held)} models")


if __name__ == "__main__":
    main()
