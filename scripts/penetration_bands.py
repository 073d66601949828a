#!/usr/bin/env python3
"""Where on the garment the body penetration sits: garment vertices inside
the body, counted per height band of the garment's first frame (band 0 =
lowest fifth, e.g. a skirt's hem; band 4 = highest, its waist), over every
STRIDE-th frame of a `senc rollout --with-body` directory.

    senc rollout --checkpoint checkpoints/skirt --motion 01_03 --frames 789:1128 \\
        --out /tmp/ro_skirt --with-body
    python3 scripts/penetration_bands.py /tmp/ro_skirt [--stride 3]

SENC names the binary (default target/release/senc); each frame is one
`senc check FRAME --body BODY --json`.
"""
import argparse
import collections
import json
import os
import struct
import subprocess

BANDS = 5


def vertex_positions(path):
    """x, y, z of every vertex of a PLY that `senc` wrote (binary little
    endian, three doubles first per vertex, no other vertex properties)."""
    data = open(path, "rb").read()
    head, _, body = data.partition(b"end_header\n")
    lines = head.decode().splitlines()
    if "format binary_little_endian 1.0" not in lines:
        raise SystemExit(f"{path}: expected a binary little-endian PLY written by senc")
    count = int(next(l for l in lines if l.startswith("element vertex")).split()[-1])
    return [struct.unpack_from("<3d", body, 24 * i) for i in range(count)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("frames", help="rollout directory with frame_NNNNN.ply and body_NNNNN.ply")
    parser.add_argument("--stride", type=int, default=3, help="every STRIDE-th frame (default 3)")
    args = parser.parse_args()
    senc = os.environ.get("SENC", "target/release/senc")
    first = vertex_positions(os.path.join(args.frames, "frame_00000.ply"))
    heights = [p[1] for p in first]
    lo, hi = min(heights), max(heights)
    band = [min(BANDS - 1, int(BANDS * (h - lo) / (hi - lo))) for h in heights]
    per_band = collections.Counter()
    frames = 0
    while True:
        k = frames * args.stride
        garment = os.path.join(args.frames, f"frame_{k:05d}.ply")
        if not os.path.exists(garment):
            break
        body = os.path.join(args.frames, f"body_{k:05d}.ply")
        out = subprocess.run([senc, "check", garment, "--body", body, "--json"],
                             capture_output=True, text=True, check=True)
        for v in json.loads(out.stdout)["body"]["vertices"]:
            per_band[band[v["vertex"]]] += 1
        frames += 1
    sizes = collections.Counter(band)
    print(f"{args.frames}: {frames} frames, {sum(per_band.values()) / max(frames, 1):.2f} "
          f"vertices inside per frame of {len(first)}")
    print("| band (0 = lowest) | vertices in band | inside, summed over frames | per frame |")
    print("|---|---|---|---|")
    for b in range(BANDS):
        print(f"| {b} | {sizes[b]} | {per_band[b]} | {per_band[b] / max(frames, 1):.2f} |")


if __name__ == "__main__":
    main()
