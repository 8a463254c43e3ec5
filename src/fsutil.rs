//! Atomic file writes: a file appears under its final name only once it is
//! complete and synced; a crash leaves at most a hidden `.partial` file that
//! the next run removes.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// Suffix of in-progress files.
pub const PARTIAL_SUFFIX: &str = ".partial";

/// A temporary file beside `target`, hidden and named after it.
pub fn partial_beside(target: &Path, mode: u32) -> Result<tempfile::NamedTempFile, Error> {
    let dir = parent_of(target);
    fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut perms = tempfile::Builder::new();
    perms
        .prefix(&prefix)
        .suffix(PARTIAL_SUFFIX)
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(mode));
    perms.tempfile_in(&dir).map_err(|e| Error::io(&dir, e))
}

/// Syncs and moves a finished temporary file to `target`. With `replace`
/// false an existing `target` is an error and is left untouched.
pub fn commit(tmp: tempfile::NamedTempFile, target: &Path, replace: bool) -> Result<(), Error> {
    tmp.as_file().sync_all().map_err(|e| Error::io(target, e))?;
    let result = if replace {
        tmp.persist(target).map(|_| ())
    } else {
        tmp.persist_noclobber(target).map(|_| ())
    };
    result.map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            Error::AlreadyExists {
                path: target.to_path_buf(),
            }
        } else {
            Error::io(target, e.error)
        }
    })?;
    sync_dir(&parent_of(target))
}

/// Writes `bytes` to `target` atomically with permission `mode`.
pub fn write_atomic(target: &Path, bytes: &[u8], mode: u32, replace: bool) -> Result<(), Error> {
    let mut tmp = partial_beside(target, mode)?;
    tmp.write_all(bytes).map_err(|e| Error::io(target, e))?;
    commit(tmp, target, replace)
}

/// Removes `.partial` files left in `dir` by an interrupted run; returns
/// how many were removed.
pub fn clean_partials(dir: &Path) -> Result<usize, Error> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(PARTIAL_SUFFIX) {
            fs::remove_file(entry.path()).map_err(|e| Error::io(&entry.path(), e))?;
            removed += 1;
        }
    }
    Ok(removed)
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// fsync of a directory, so a rename in it is durable.
fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}
