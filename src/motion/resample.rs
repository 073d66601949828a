//! Resampling pose sequences in time.

use crate::body::Pose;

/// Largest relative difference between a file's frame rate and the
/// simulation rate that is still taken as the simulation rate:
/// `Frame Time: 0.0333333` (30.00003 fps) or `0.0333` (30.03 fps) is 30 fps.
/// A real rate that close differs by under a frame in eight seconds.
pub const RATE_TOLERANCE: f64 = 2e-3;

/// `to_fps` when `fps` is within [`RATE_TOLERANCE`] of it, else `fps`: a
/// frame time rounded when it was written must not make every frame a blend
/// of two poses and lose the last one. Higher rates are resampled as they
/// are written (a 120 fps file's `0.0083333` picks source frames at most 1 %
/// of a frame apart from every fourth).
pub fn snap_rate(fps: f64, to_fps: f64) -> f64 {
    if (fps - to_fps).abs() <= RATE_TOLERANCE * to_fps {
        to_fps
    } else {
        fps
    }
}

/// Number of frames at `to_fps` covering a clip of `n` frames at `from_fps`:
/// the times k / to_fps that do not pass the last source frame, (n − 1) / from_fps.
pub fn resampled_len(n: usize, from_fps: f64, to_fps: f64) -> usize {
    if n == 0 {
        return 0;
    }
    // The small slack keeps exact multiples (120 → 30 fps) from rounding down.
    ((n - 1) as f64 * to_fps / from_fps + 1e-9).floor() as usize + 1
}

/// Resamples `frames` from `from_fps` to `to_fps`: output frame k is the
/// source at time k / to_fps, slerping rotations and lerping the root
/// translation between the two nearest source frames.
pub fn resample(frames: &[Pose], from_fps: f64, to_fps: f64) -> Vec<Pose> {
    let n = resampled_len(frames.len(), from_fps, to_fps);
    (0..n)
        .map(|k| {
            let t = k as f64 * from_fps / to_fps;
            let i = (t.floor() as usize).min(frames.len() - 1);
            let frac = t - i as f64;
            if i + 1 >= frames.len() || frac < 1e-12 {
                frames[i].clone()
            } else {
                frames[i].interpolate(&frames[i + 1], frac)
            }
        })
        .collect()
}
