//! Fuzzes the BVH reader (`senc::motion::Bvh::parse`, what `Bvh::read` runs
//! on a file's text) and what the CLI does next with a BVH: conversion to a
//! source motion, retargeting onto the default body and resampling to 30 fps
//! (`Motion::from_bvh_str` with the shipped CMU map). Any input must give a
//! motion or an error, never a panic, a hang or a huge allocation.
#![no_main]

mod support;

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use senc::motion::{Bvh, JointMap, Motion};

fuzz_target!(|data: &[u8]| {
    // `Bvh::read` reads the file with `read_to_string`: non-UTF-8 is an I/O error.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.bvh");
    let Ok(bvh) = Bvh::parse(text, path) else {
        return;
    };
    assert_eq!(bvh.values.len(), bvh.num_frames() * bvh.num_channels);
    for map in [JointMap::cmu_cgspeed(), JointMap::default()] {
        if let Ok(motion) = Motion::from_bvh_str(text, path, support::default_body(), &map) {
            assert!(!motion.is_empty());
        }
    }
});
