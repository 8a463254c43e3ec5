//! Files on hostile ground. Reading: only regular files are opened, without
//! ever blocking (a FIFO or device is named and refused), and small inputs
//! are read up to a documented cap (docs/SECURITY.md §Hostile files).
//! Writing: a file appears under its final name only once it is complete
//! and synced; a crash leaves at most a hidden `.partial` file that the next
//! run removes; an existing file is replaced only when asked.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::Error;

/// Cap on a key file (master secret, PEM keys, records key file).
pub const KEY_FILE_LIMIT: u64 = 16 * 1024;
/// Cap on a manifest (about 40,000 blocks).
pub const MANIFEST_LIMIT: u64 = 16 * 1024 * 1024;
/// Cap on a reveal file (about 150,000 seeds).
pub const REVEAL_LIMIT: u64 = 16 * 1024 * 1024;
/// Cap on a generation record (`pending.json`).
pub const PENDING_LIMIT: u64 = 4 * 1024;
/// Cap on a detached signature (exactly 64 bytes when well formed).
pub const SIGNATURE_LIMIT: u64 = 64;

/// Opens `path` for reading if it is a regular file. The open never blocks
/// (O_NONBLOCK: a FIFO with no writer would otherwise wait forever); what
/// is not a regular file is refused by name before anything is read.
pub fn open_regular(path: &Path) -> Result<File, Error> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let kind = file.metadata().map_err(|e| Error::io(path, e))?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    Err(Error::NotRegularFile {
        path: path.to_path_buf(),
        what: describe_kind(kind),
    })
}

/// What a file that is not a regular one is, for messages.
fn describe_kind(kind: fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The whole of the regular file `path`, refused if it holds more than
/// `limit` bytes (a corrupt or hostile input never exhausts memory).
pub fn read_small(path: &Path, limit: u64) -> Result<Vec<u8>, Error> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(Error::FileTooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    Ok(bytes)
}

/// `read_small`, as text.
pub fn read_small_text(path: &Path, limit: u64) -> Result<String, Error> {
    String::from_utf8(read_small(path, limit)?).map_err(|_| Error::BadFile {
        path: path.to_path_buf(),
        reason: "not UTF-8 text".into(),
    })
}

/// `read_small`, or `None` when `path` does not exist.
pub fn read_small_if_exists(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, Error> {
    match read_small(path, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Creates folder `dir` (and missing parents) and sets its mode to `mode`,
/// whatever the umask.
pub fn create_private_dir(dir: &Path, mode: u32) -> Result<(), Error> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(mode)).map_err(|e| Error::io(dir, e))
}

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
        .permissions(fs::Permissions::from_mode(mode));
    let tmp = perms.tempfile_in(&dir).map_err(|e| Error::io(&dir, e))?;
    // The mode asked for, not what the umask leaves of it.
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io(tmp.path(), e))?;
    Ok(tmp)
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
    remove_partials(dir, ".")
}

/// Removes the `.partial` files an interrupted write of `target` left
/// beside it (only those named after it: the folder may be anyone's).
pub fn clean_partials_of(target: &Path) -> Result<usize, Error> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    remove_partials(&parent_of(target), &format!(".{name}."))
}

/// Removes the files in `dir` named `<prefix>…PARTIAL_SUFFIX`.
fn remove_partials(dir: &Path, prefix: &str) -> Result<usize, Error> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(prefix) && name.ends_with(PARTIAL_SUFFIX) {
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
pub(crate) fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// True when `target` would be written inside folder `dir`: the canonical
/// form of its nearest existing parent lies under `dir`'s (symbolic links
/// and `..` resolved, so no spelling of the path slips past).
pub fn is_inside(target: &Path, dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    let absolute = match target.is_absolute() {
        true => target.to_path_buf(),
        false => match std::env::current_dir() {
            Ok(cwd) => cwd.join(target),
            Err(_) => return false,
        },
    };
    absolute
        .ancestors()
        .skip(1)
        .find_map(|a| a.canonicalize().ok())
        .is_some_and(|parent| parent.starts_with(&dir))
}

/// Where a command writes its output: standard output, or a file that
/// appears complete or not at all, replacing an existing one only with
/// `replace` (`--force`).
pub enum Output {
    /// Standard output (`-`).
    Stdout(std::io::Stdout),
    /// A character device or a FIFO the user named (`-o /dev/null`, a
    /// pipe), written into directly: it is not a file that could be
    /// replaced, and renaming over it would destroy it.
    Device(File),
    /// A file, written beside its target until `finish`.
    File {
        /// The file being written.
        tmp: tempfile::NamedTempFile,
        /// Its final name.
        target: PathBuf,
        /// Whether an existing target may be replaced.
        replace: bool,
    },
}

impl Output {
    /// Output to `target` with permission `mode`, refused at once (before
    /// any work) when `target` exists and `replace` is false.
    /// A character device or FIFO is written into directly, with or
    /// without `replace`; any other existing target that is not a regular
    /// file (a directory, a socket, a block device) is refused.
    pub fn file(target: &Path, mode: u32, replace: bool) -> Result<Output, Error> {
        if let Ok(meta) = fs::metadata(target) {
            let kind = meta.file_type();
            if kind.is_char_device() || kind.is_fifo() {
                let device = fs::OpenOptions::new()
                    .write(true)
                    .open(target)
                    .map_err(|e| Error::io(target, e))?;
                return Ok(Output::Device(device));
            }
            if !kind.is_file() {
                return Err(Error::NotRegularFile {
                    path: target.to_path_buf(),
                    what: describe_kind(kind),
                });
            }
        }
        if !replace && fs::symlink_metadata(target).is_ok() {
            return Err(Error::OutputExists {
                path: target.to_path_buf(),
            });
        }
        clean_partials_of(target)?;
        Ok(Output::File {
            tmp: partial_beside(target, mode)?,
            target: target.to_path_buf(),
            replace,
        })
    }

    /// Where the output goes, for messages.
    pub fn describe(&self) -> String {
        match self {
            Output::Stdout(_) => "standard output".into(),
            Output::File { target, .. } => target.display().to_string(),
            Output::Device(_) => "the device or pipe named".into(),
        }
    }

    /// Flushes a buffered output, then `finish`es it.
    pub fn finish_buffered(out: std::io::BufWriter<Output>) -> Result<(), Error> {
        let (out, pending) = out.into_parts();
        let mut out = out;
        let to = out.describe();
        if let Ok(bytes) = pending {
            out.write_all(&bytes)
                .map_err(|e| Error::io(Path::new(&to), e))?;
        }
        out.finish()
    }

    /// Completes the output: flushes standard output, or moves the file
    /// into place.
    pub fn finish(self) -> Result<(), Error> {
        match self {
            Output::Stdout(mut out) => out
                .flush()
                .map_err(|e| Error::io(Path::new("<standard output>"), e)),
            Output::Device(mut out) => out
                .flush()
                .map_err(|e| Error::io(Path::new("<device or pipe>"), e)),
            Output::File {
                tmp,
                target,
                replace,
            } => commit(tmp, &target, replace).map_err(|e| match e {
                Error::AlreadyExists { path } => Error::OutputExists { path },
                e => e,
            }),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Stdout(out) => out.write(buf),
            Output::Device(out) => out.write(buf),
            Output::File { tmp, .. } => tmp.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Stdout(out) => out.flush(),
            Output::Device(out) => out.flush(),
            Output::File { tmp, .. } => tmp.flush(),
        }
    }
}
