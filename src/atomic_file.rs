//! Writes that never leave a half-written file behind: write to a temporary
//! file in the same directory, flush and sync, then rename over the target.
//! A crash or Ctrl-C leaves either the old file or the new one.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Writes `path` atomically; `fill` writes the content into a buffered writer.
pub fn write_atomic<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let tmp = temp_path(path);
    let result = (|| {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = File::create(&tmp)?;
        let mut writer = BufWriter::new(file);
        fill(&mut writer)?;
        writer.flush()?;
        writer.get_ref().sync_all()?;
        drop(writer);
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Writes `bytes` to `path` atomically.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic(path, |w| w.write_all(bytes))
}

/// `dir/.name.tmp-<pid>`: same directory, so the rename cannot cross devices.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Moves the directory `from` to `to`, replacing any directory there (the
/// old one is renamed aside first and removed after).
pub fn replace_dir(from: &Path, to: &Path) -> Result<()> {
    let old = sibling_path(to, "old");
    let _ = std::fs::remove_dir_all(&old);
    if to.exists() {
        std::fs::rename(to, &old).map_err(|e| Error::io(to, e))?;
    }
    std::fs::rename(from, to).map_err(|e| Error::io(to, e))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// `<parent>/.<name>.<what>-<pid>`: a private neighbour of `dir`.
pub fn sibling_path(dir: &Path, what: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.with_file_name(format!(".{name}.{what}-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_keeps_old_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        write_bytes_atomic(&path, b"old").unwrap();
        let err = write_atomic(&path, |w| {
            w.write_all(b"new, but")?;
            Err(std::io::Error::other("interrupted"))
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temp file left behind"
        );
    }
}
