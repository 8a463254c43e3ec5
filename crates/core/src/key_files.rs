//! Records keys read from files: a records key file, a reveal file's
//! records key, or a folder of them (`--records-key`).

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::fsutil;
use crate::records_key::RecordsKeyFile;
use crate::reveal::{Reveal, REVEAL_KIND};

/// The records key files at `path`: a records key file, a reveal file (its
/// emission's records key; docs/EMISSIONS.md §Reveal), or a folder of them
/// (every `*.json` in it, by name).
pub fn read_key_files(path: &Path) -> Result<Vec<(RecordsKeyFile, PathBuf)>, Error> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !meta.is_dir() {
        return Ok(vec![(read_key_or_reveal(path)?, path.to_path_buf())]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| Error::io(path, e))?
        .map(|entry| entry.map(|e| e.path()).map_err(|e| Error::io(path, e)))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::BadKey {
            path: path.to_path_buf(),
            reason: "the folder holds no records key file (*.json)".into(),
        });
    }
    files
        .into_iter()
        .map(|p| read_key_or_reveal(&p).map(|f| (f, p)))
        .collect()
}

/// A records key file, or a reveal file's records key.
fn read_key_or_reveal(path: &Path) -> Result<RecordsKeyFile, Error> {
    let bytes = fsutil::read_small(path, fsutil::REVEAL_LIMIT)?;
    #[derive(serde::Deserialize)]
    struct Kind {
        kind: Option<String>,
    }
    let kind = serde_json::from_slice::<Kind>(&bytes)
        .ok()
        .and_then(|k| k.kind);
    if kind.as_deref() == Some(REVEAL_KIND) {
        return Ok(Reveal::parse(path, &bytes)?.records_key_file());
    }
    if bytes.len() > fsutil::KEY_FILE_LIMIT as usize {
        return Err(Error::BadKey {
            path: path.to_path_buf(),
            reason: "too large for a records key file".into(),
        });
    }
    RecordsKeyFile::parse(path, &bytes)
}
