//! `--device cpu|cuda[:N]`: parsing, GPU detection and the CPU fallback.
//!
//! The CPU device is burn's `flex` backend (fastest we measured on this
//! model, docs/BENCHMARKS.md). CUDA needs the non-default `cuda` feature;
//! without it, or without a usable GPU, `cuda` falls back to the CPU with a
//! message saying why (touching a CUDA device without a driver would panic).
//!
//! Building `--features cuda` offline: burn-cuda 0.22.1 → cubecl-cuda →
//! cubecl-llvm, whose build dependency `tracel-llvm-bundler 23.1.0-4` would
//! download a prebuilt LLVM 23.1 into `~/.local/share/tracel/`;
//! `scripts/setup-cuda-build.sh` points it at Debian's LLVM 22 instead
//! (docs/BENCHMARKS.md, "Backends").

use std::fmt;
use std::str::FromStr;

use burn::tensor::Device;

use crate::{Error, Result};

/// Where the network runs, as the user asked for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// burn's flex CPU backend.
    Cpu,
    /// CUDA GPU with this index.
    Cuda(usize),
}

impl FromStr for DeviceChoice {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text.trim() {
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" => Ok(DeviceChoice::Cuda(0)),
            t => t
                .strip_prefix("cuda:")
                .and_then(|i| i.parse().ok())
                .map(DeviceChoice::Cuda)
                .ok_or_else(|| {
                    Error::invalid(format!("--device \"{t}\": expected cpu, cuda or cuda:N"))
                }),
        }
    }
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceChoice::Cpu => write!(f, "cpu"),
            DeviceChoice::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

/// The device to run on, plus a message when the choice could not be
/// honoured and the CPU is used instead.
pub fn resolve(choice: DeviceChoice) -> (Device, Option<String>) {
    match choice {
        DeviceChoice::Cpu => (Device::flex(), None),
        DeviceChoice::Cuda(index) => cuda_device(index),
    }
}

#[cfg(feature = "cuda")]
fn cuda_device(index: usize) -> (Device, Option<String>) {
    let count = Device::enumerate(burn::tensor::DeviceType::Cuda).len();
    if index < count {
        (Device::cuda(index), None)
    } else {
        let why = if count == 0 {
            "no CUDA GPU was found".to_string()
        } else {
            format!("only {count} CUDA GPU(s) found")
        };
        (
            Device::flex(),
            Some(format!(
                "cuda:{index} unavailable ({why}); running on the CPU"
            )),
        )
    }
}

#[cfg(not(feature = "cuda"))]
fn cuda_device(index: usize) -> (Device, Option<String>) {
    (
        Device::flex(),
        Some(format!(
            "cuda:{index} requested but this binary was built without the `cuda` feature \
             (cargo build --release --features cuda); running on the CPU"
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_strings() {
        assert_eq!("cpu".parse::<DeviceChoice>().unwrap(), DeviceChoice::Cpu);
        assert_eq!(
            "cuda".parse::<DeviceChoice>().unwrap(),
            DeviceChoice::Cuda(0)
        );
        assert_eq!(
            "cuda:3".parse::<DeviceChoice>().unwrap(),
            DeviceChoice::Cuda(3)
        );
        for bad in ["gpu", "cuda:", "cuda:x", "cuda:-1"] {
            assert!(bad.parse::<DeviceChoice>().is_err(), "{bad}");
        }
        #[cfg(not(feature = "cuda"))]
        assert!(
            resolve(DeviceChoice::Cuda(0))
                .1
                .unwrap()
                .contains("without the `cuda`")
        );
    }
}
