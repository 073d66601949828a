#!/usr/bin/env python3
"""Renders a simulated frame (garment PLY, optional body PLY) to a PNG.

Orthographic front and side views, flat-shaded with a painter's algorithm
(faces sorted back to front), garment in blue over a grey body.

    pip install matplotlib numpy
    python3 scripts/render_frame.py OUT.png GARMENT.ply [BODY.ply] [--title TEXT]
"""
import argparse
import struct
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402

PLY_TYPES = {
    "char": "b", "int8": "b", "uchar": "B", "uint8": "B", "short": "h", "int16": "h",
    "ushort": "H", "uint16": "H", "int": "i", "int32": "i", "uint": "I", "uint32": "I",
    "float": "f", "float32": "f", "double": "d", "float64": "d",
}


def read_ply(path):
    """Vertices (N×3) and triangles (M×3) of an ASCII or binary PLY."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"end_header") + len(b"end_header")
    end = data.index(b"\n", end) + 1
    header = data[:end].decode("ascii").splitlines()
    fmt = header[1].split()[1]
    elements = []
    for line in header:
        words = line.split()
        if words and words[0] == "element":
            elements.append((words[1], int(words[2]), []))
        elif words and words[0] == "property":
            elements[-1][2].append(words[1:])
    body = data[end:]
    verts, faces = None, []
    if fmt == "ascii":
        tokens = iter(body.split())
        for name, count, props in elements:
            rows = []
            for _ in range(count):
                row = []
                for p in props:
                    if p[0] == "list":
                        n = int(next(tokens))
                        row.append([float(next(tokens)) for _ in range(n)])
                    else:
                        row.append(float(next(tokens)))
                rows.append(row)
            if name == "vertex":
                verts = np.array([[r[i] for i in xyz_index(props)] for r in rows])
            elif name == "face":
                faces = [r[0] for r in rows]
    else:
        endian = "<" if fmt == "binary_little_endian" else ">"
        offset = 0
        for name, count, props in elements:
            rows = []
            for _ in range(count):
                row = []
                for p in props:
                    if p[0] == "list":
                        (n,) = struct.unpack_from(endian + PLY_TYPES[p[1]], body, offset)
                        offset += struct.calcsize(PLY_TYPES[p[1]])
                        code = endian + str(n) + PLY_TYPES[p[2]]
                        row.append(list(struct.unpack_from(code, body, offset)))
                        offset += struct.calcsize(code)
                    else:
                        code = endian + PLY_TYPES[p[0]]
                        (v,) = struct.unpack_from(code, body, offset)
                        offset += struct.calcsize(code)
                        row.append(v)
                rows.append(row)
            if name == "vertex":
                verts = np.array([[r[i] for i in xyz_index(props)] for r in rows])
            elif name == "face":
                faces = [r[0] for r in rows]
    tris = [[int(f[0]), int(f[k]), int(f[k + 1])] for f in faces for k in range(1, len(f) - 1)]
    return verts, np.array(tris, dtype=int)


def xyz_index(props):
    names = [p[-1] for p in props]
    return [names.index(c) for c in "xyz"]


def draw(ax, meshes, view):
    """view: 'front' looks along −Z, 'side' along −X."""
    light = np.array([0.3, 0.5, 1.0]) if view == "front" else np.array([1.0, 0.5, 0.3])
    light /= np.linalg.norm(light)
    polys, colors, depths = [], [], []
    for verts, tris, base in meshes:
        p = verts[tris]
        n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
        n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
        shade = 0.35 + 0.65 * np.abs(n @ light)
        if view == "front":
            xy, depth = p[:, :, [0, 1]], p[:, :, 2].mean(1)
        else:
            xy, depth = p[:, :, [2, 1]] * [-1, 1], p[:, :, 0].mean(1)
        polys.append(xy)
        colors.append(shade[:, None] * np.array(base)[None, :])
        depths.append(depth)
    xy = np.concatenate(polys)
    col = np.clip(np.concatenate(colors), 0, 1)
    order = np.argsort(np.concatenate(depths))
    ax.add_collection(PolyCollection(xy[order], facecolors=col[order], edgecolors="none"))
    lo, hi = xy.reshape(-1, 2).min(0), xy.reshape(-1, 2).max(0)
    ax.set_xlim(lo[0] - 0.05, hi[0] + 0.05)
    ax.set_ylim(lo[1] - 0.05, hi[1] + 0.05)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(view)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("garment")
    parser.add_argument("body", nargs="?")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    meshes = [(*read_ply(args.garment), (0.25, 0.45, 0.85))]
    if args.body:
        meshes.insert(0, (*read_ply(args.body), (0.8, 0.78, 0.75)))
    fig, axes = plt.subplots(1, 2, figsize=(9, 6), dpi=110)
    for ax, view in zip(axes, ["front", "side"]):
        draw(ax, meshes, view)
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
