#!/usr/bin/env python3
"""Writes the tiny AMASS-format fixtures in tests/fixtures/ with numpy.

The values follow closed formulas that tests/motion.rs recomputes, so the
test checks what the Rust reader sees against what numpy wrote:

    poses[i, k] = 0.01 * sin(0.3 * i + 0.7 * k)   (N x 156, SMPL-H axis-angle)
    poses[i, 0:3] = (pi/2, 0, 0)                  (root: upright in a Z-up world)
    trans[i]    = (0.02 * i, -0.01 * i, 0.1 * i)  (Z-up: the body rises)
    betas[b]    = 0.1 * b                         (16 values)
    mocap_framerate = 60.0, gender = "female" (numpy unicode string array)

amass_savez.npz uses numpy.savez (stored), amass_savez_compressed.npz uses
numpy.savez_compressed (deflate) with float32 poses, as some AMASS files do.
Run from the repository root: python3 scripts/make_npz_fixtures.py
"""
import numpy as np

N = 12


def arrays(dtype):
    i = np.arange(N)[:, None]
    k = np.arange(156)[None, :]
    poses = 0.01 * np.sin(0.3 * i + 0.7 * k)
    poses[:, 0:3] = (np.pi / 2, 0.0, 0.0)
    trans = np.stack([0.02 * np.arange(N), -0.01 * np.arange(N), 0.1 * np.arange(N)], axis=1)
    return dict(
        poses=poses.astype(dtype),
        trans=trans,
        betas=0.1 * np.arange(16),
        mocap_framerate=np.array(60.0),
        gender=np.array("female"),
    )


np.savez("tests/fixtures/amass_savez.npz", **arrays(np.float64))
np.savez_compressed("tests/fixtures/amass_savez_compressed.npz", **arrays(np.float32))
