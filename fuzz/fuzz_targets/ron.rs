//! Fuzzes the RON readers: the BVH joint map (`JointMap`, read with a BVH
//! and then used to retarget a small built-in clip onto the default body)
//! and the run configuration (`RunConfig::read`, with its validation). Any
//! input must give a value or an error, never a panic or a hang.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use senc::body::Body;
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

fn body() -> &'static Body {
    static BODY: OnceLock<Body> = OnceLock::new();
    BODY.get_or_init(|| Body::makehuman().expect("default body"))
}

fn path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("senc-fuzz-ron-{}.ron", std::process::id()))
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(map) = parse_ron::<JointMap>(text, Path::new("fuzz.ron")) {
        let _ = Motion::from_bvh_str(CLIP, Path::new("clip.bvh"), body(), &map);
    }
    let path = path();
    std::fs::write(path, data).expect("write the temp file");
    let _ = RunConfig::read(path);
});
