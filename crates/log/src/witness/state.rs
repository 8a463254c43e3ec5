//! A witness's state (docs/REDEMPTION.md §Witnesses): for each log, the
//! latest checkpoint it cosigned, one small file a log in the `--state`
//! folder, `<hex SHA-256(origin)>.checkpoint`, holding that checkpoint's
//! signed note as received. A file is replaced atomically (a temporary
//! file beside it, synced, renamed, the folder synced), so a crash leaves
//! the old checkpoint or the new one, never a mix. A `lock` file held
//! with an exclusive lock keeps a second witness process off the folder.

use std::fs::File;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use sha2::{Digest, Sha256};

use ticket_issuer_core::error::Error;
use ticket_issuer_core::fsutil;
use ticket_issuer_core::merkle::Hash;

/// Cap on a state file (a checkpoint with its signatures).
pub const STATE_FILE_LIMIT: u64 = 256 * 1024;

/// The latest checkpoint cosigned for a log: its size and root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Latest {
    /// Its tree size.
    pub size: u64,
    /// Its root hash.
    pub root: Hash,
}

/// The state folder, locked for this process.
pub struct StateDir {
    dir: PathBuf,
    _lock: File,
}

impl StateDir {
    /// Opens (creating it, mode 0700) the folder `dir` and takes its lock;
    /// removes what an interrupted write left.
    pub fn open(dir: &Path) -> Result<StateDir, Error> {
        fsutil::create_private_dir(dir, 0o700)?;
        let lock_path = dir.join("lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io(&lock_path, e))?;
        lock.try_lock().map_err(|_| Error::ServiceConfig {
            reason: format!(
                "{} is in use by another witness: two witnesses on one state would each cosign what the other never saw",
                dir.display()
            ),
        })?;
        fsutil::clean_partials(dir)?;
        Ok(StateDir {
            dir: dir.to_path_buf(),
            _lock: lock,
        })
    }

    /// The file of the log `origin`.
    #[must_use]
    pub fn path(&self, origin: &str) -> PathBuf {
        state_path(&self.dir, origin)
    }

    /// The latest checkpoint cosigned for `origin`, if any. A file that
    /// does not read as a checkpoint of this origin is an error: the
    /// witness must not start from a state it cannot trust.
    pub fn load(&self, origin: &str) -> Result<Option<Latest>, Error> {
        let path = self.path(origin);
        let Some(bytes) = fsutil::read_small_if_exists(&path, STATE_FILE_LIMIT)? else {
            return Ok(None);
        };
        let damaged = |reason: &str| {
            Error::BadFile {
            path: path.clone(),
            reason: format!("{reason}; the witness state is damaged: restore it from a backup, or retire this witness key"),
        }
        };
        let text = String::from_utf8(bytes).map_err(|_| damaged("not UTF-8"))?;
        let body = super::checkpoint::checkpoint_body(&text).map_err(|e| damaged(&e))?;
        if body.origin != origin {
            return Err(damaged(&format!(
                "it holds a checkpoint of {:?}, not of {origin:?}",
                body.origin
            )));
        }
        Ok(Some(Latest {
            size: body.size,
            root: body.root,
        }))
    }

    /// Replaces the file of `origin` by `note`, durably, before returning.
    pub fn store(&self, origin: &str, note: &str) -> Result<(), Error> {
        fsutil::write_atomic(&self.path(origin), note.as_bytes(), 0o600, true)
    }
}

/// The file of `origin` in the state folder `dir`.
#[must_use]
pub fn state_path(dir: &Path, origin: &str) -> PathBuf {
    dir.join(format!(
        "{}.checkpoint",
        hex::encode(Sha256::digest(origin.as_bytes()))
    ))
}

/// A root as a checkpoint writes it.
#[must_use]
pub fn root_line(root: &Hash) -> String {
    BASE64.encode(root)
}
