//! Fuzzes the `.npz` readers: `Amass::read` (AMASS motions, then retargeting
//! onto the default body as `Motion::from_amass_npz` does) and
//! `Body::from_smpl_npz` (SMPL models, then posing the loaded body). Any
//! input must give a value or an error, never a panic, a hang or a huge
//! allocation.
//!
//! The readers take a path, so each input is written to a per-process file
//! in the temp directory. An input starting with `PK` is written as is (a
//! zip archive); any other input is a list of members, each
//! `[name byte][length: u16 LE][npy bytes]`, stored in a fresh archive under
//! the array name `NAMES[name byte % NAMES.len()]` — so mutations of the npy
//! headers and data get past the zip layer's CRC checks.
#![no_main]

mod support;

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use senc::body::Body;
use senc::motion::{Amass, Motion};

const NAMES: [&str; 14] = [
    "poses",
    "trans",
    "betas",
    "mocap_framerate",
    "mocap_frame_rate",
    "gender",
    "v_template",
    "f",
    "kintree_table",
    "weights",
    "J_regressor",
    "shapedirs",
    "posedirs",
    "other",
];

/// The archive an input stands for (see the module docs).
fn archive(data: &[u8]) -> Vec<u8> {
    if data.starts_with(b"PK") {
        return data.to_vec();
    }
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::FileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut rest = data;
    while rest.len() >= 3 {
        let name = NAMES[rest[0] as usize % NAMES.len()];
        let len = (u16::from_le_bytes([rest[1], rest[2]]) as usize).min(rest.len() - 3);
        let (member, tail) = rest[3..].split_at(len);
        rest = tail;
        if zip.start_file(format!("{name}.npy"), options).is_err() {
            continue;
        }
        zip.write_all(member).expect("in-memory write");
    }
    zip.finish().expect("in-memory zip").into_inner()
}

fuzz_target!(|data: &[u8]| {
    let path = &support::temp_path("npz", "npz");
    std::fs::write(path, archive(data)).expect("write the temp file");
    if let Ok(amass) = Amass::read(path) {
        assert_eq!(amass.poses.len(), amass.trans.len());
        let _ = Motion::from_amass_npz(path, support::default_body());
    }
    if let Ok(smpl) = Body::from_smpl_npz(path) {
        let rest = smpl.rest_pose();
        let _ = smpl.posed_vertices(&rest);
        if let Ok(amass) = Amass::read(path) {
            let (source, map) = amass.to_source(&smpl);
            let _ = Motion::from_source(&source, &map, &smpl, path);
        }
    }
});
