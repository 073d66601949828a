//! Fuzzes the RON readers: the BVH joint map (`JointMap`, read with a BVH
//! and then used to retarget a small built-in clip onto the default body)
//! and the run configuration (`RunConfig::read`, with its validation). Any
//! input must give a value or an error, never a panic or a hang.
#![no_main]

mod support;

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use senc::config::{RunConfig, parse_ron};
use senc::motion::{JointMap, Motion};

/// Two frames of a three-joint clip with CMU joint names.
const CLIP: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT LeftUpLeg
  {
    OFFSET 1 0 0
    CHANNELS 3 Zrotation Yrotation Xrotation
    JOINT LeftLeg
    {
      OFFSET 0 -7 0
      CHANNELS 3 Zrotation Yrotation Xrotation
      End Site
      {
        OFFSET 0 -7 0
      }
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.0333333
0 17 0 0 0 0 0 0 0 0 0 0
1 17 0 0 10 0 20 0 0 30 0 0
2 17 0 0 20 0 40 0 0 60 0 0
";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(map) = parse_ron::<JointMap>(text, Path::new("fuzz.ron")) {
        let _ = Motion::from_bvh_str(CLIP, Path::new("clip.bvh"), support::default_body(), &map);
    }
    let path = &support::temp_path("ron", "ron");
    std::fs::write(path, data).expect("write the temp file");
    let _ = RunConfig::read(path);
});
