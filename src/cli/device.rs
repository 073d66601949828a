//! The `--device` option shared by train, rollout and eval.

use burn::tensor::Device;
use senc::model::device::{DeviceChoice, resolve};

/// Resolves `choice`, telling the user on stderr when it falls back to the CPU.
pub fn pick(choice: DeviceChoice) -> Device {
    let (device, fallback) = resolve(choice);
    if let Some(why) = fallback {
        eprintln!("warning: {why}");
    }
    device
}
