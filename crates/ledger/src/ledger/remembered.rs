//! The head a node remembers (docs/REDEMPTION.md §The log never goes
//! backwards): the latest head of the ledger's log this store signed or
//! saw, kept outside the database (`<store>/ledger-heads/<ledger id>`, the
//! signed checkpoint as published), written durably before the head is
//! used. A ledger whose log does not extend it was restored from an older
//! copy, or is a standby that lost transactions: the node refuses to sell,
//! play or pay on it (`ledger_rolled_back`) until `issuer ledger recover`
//! brings the missing entries back from the published log.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use base64::Engine as _;

use super::log::LogSource;
use super::tiles::Cached;
use crate::error::Error;
use crate::fsutil;
use crate::merkle::Hash;
use crate::store::Store;

/// Most bytes of a remembered checkpoint (a note with a few cosignatures).
const NOTE_LIMIT: u64 = 64 * 1024;

/// A head as remembered: its size, root and signed note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RememberedHead {
    /// The log's size it commits to.
    pub size: u64,
    /// The root at that size.
    pub root: Hash,
    /// The checkpoint as signed (and cosigned, where witnesses answered).
    pub note: String,
}

impl RememberedHead {
    /// Reads the size and root of a checkpoint note (C2SP tlog-checkpoint:
    /// origin, size, base64 root); `None` when it is not one.
    #[must_use]
    pub fn parse(note: &str) -> Option<RememberedHead> {
        let mut lines = note.lines();
        let _origin = lines.next()?;
        let size = lines.next()?.parse().ok()?;
        let root = base64::engine::general_purpose::STANDARD
            .decode(lines.next()?)
            .ok()?;
        Some(RememberedHead {
            size,
            root: root.try_into().ok()?,
            note: note.to_string(),
        })
    }
}

/// What the log lacks or contradicts, against the remembered head.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Rollback {
    /// The remembered head's size.
    pub remembered_size: u64,
    /// Its root, hex.
    pub remembered_root: String,
    /// The log's size in the database.
    pub ledger_size: u64,
    /// The database's root at the remembered size, hex, when it has one
    /// that differs (another history); `None` when it is shorter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_root: Option<String>,
    /// Where the head is remembered.
    pub file: String,
    /// A witness's refusal that says the log forked or went back (its URL
    /// and answer), when it is the finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
}

impl Rollback {
    /// The finding in words: sizes, roots, which entries, what to do.
    #[must_use]
    pub fn describe(&self) -> String {
        let what = match (&self.witness, &self.ledger_root) {
            (Some(witness), _) => format!(
                "{witness}: the log's head of size {} does not extend the head of size {} it cosigned",
                self.ledger_size, self.remembered_size
            ),
            (None, None) => format!(
                "the log holds {} entries but a head of size {} (root {}) was signed or seen before (kept in {}): entries {} to {} are missing",
                self.ledger_size,
                self.remembered_size,
                self.remembered_root,
                self.file,
                self.ledger_size,
                self.remembered_size - 1
            ),
            (None, Some(root)) => format!(
                "the log's root at size {} is {root}, not {} as in the head signed or seen before (kept in {}): it holds another history",
                self.remembered_size, self.remembered_root, self.file
            ),
        };
        format!(
            "{what}; the database was restored from an older copy or a standby lost transactions. Nothing is sold, played or paid until `issuer ledger recover --from <published log>` brings the entries back (docs/DEPLOY.md §Restore)"
        )
    }
}

/// The remembered head of one ledger in one store, shared by every writer
/// of the process ([`HeadMemory::of`]).
pub struct HeadMemory {
    path: PathBuf,
    /// The last head read or written by this process.
    known: Mutex<Option<(u64, Hash)>>,
    /// The last finding of [`HeadMemory::check`] (`None`: the log extends
    /// the head), for `/readyz` and the metrics.
    finding: Mutex<Option<Rollback>>,
    /// A witness's refusal that says the log forked or went back: held
    /// until a witness cosigns the log's head again.
    witnessed: Mutex<Option<Rollback>>,
}

/// The file of `identity`'s remembered head in `store`.
#[must_use]
pub fn path_of(store: &Store, identity: &str) -> PathBuf {
    store.root().join("ledger-heads").join(identity)
}

impl HeadMemory {
    /// The process's memory of `identity`'s head in `store` (one per file,
    /// so every writer and `/readyz` share it).
    pub fn of(store: &Store, identity: &str) -> Arc<HeadMemory> {
        static ALL: OnceLock<Mutex<HashMap<PathBuf, Arc<HeadMemory>>>> = OnceLock::new();
        let path = path_of(store, identity);
        let mut all = ALL
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        all.entry(path.clone())
            .or_insert_with(|| {
                Arc::new(HeadMemory {
                    path,
                    known: Mutex::new(None),
                    finding: Mutex::new(None),
                    witnessed: Mutex::new(None),
                })
            })
            .clone()
    }

    /// Where it is kept.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The head as kept on disk; `None` before the first.
    pub fn load(&self) -> Result<Option<RememberedHead>, Error> {
        let Some(bytes) = fsutil::read_small_if_exists(&self.path, NOTE_LIMIT)? else {
            return Ok(None);
        };
        let note = String::from_utf8_lossy(&bytes);
        let head = RememberedHead::parse(&note).ok_or_else(|| Error::BadFile {
            path: self.path.clone(),
            reason: "not a checkpoint (origin, size, base64 root); it is the head this node remembers of its ledger: put back a checkpoint the log published (`/v1/log/checkpoint`), never delete it to silence a rollback".into(),
        })?;
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.is_none_or(|(size, _)| size < head.size) {
            *known = Some((head.size, head.root));
        }
        Ok(Some(head))
    }

    /// The remembered size and root, from memory (read from disk once).
    fn known(&self) -> Result<Option<(u64, Hash)>, Error> {
        let known = *self.known.lock().unwrap_or_else(PoisonError::into_inner);
        match known {
            Some(k) => Ok(Some(k)),
            None => Ok(self.load()?.map(|h| (h.size, h.root))),
        }
    }

    /// Remembers the head `note` (signed or seen) if it is ahead of the
    /// one kept: written whole and flushed to disk before it returns, under
    /// a lock so two processes never move it backwards. A note of the kept
    /// size with another root is refused: two histories under one key.
    pub fn remember(&self, note: &str) -> Result<(), Error> {
        let head = RememberedHead::parse(note).ok_or_else(|| Error::Internal {
            what: format!("remembering a head that is not a checkpoint: {note:?}"),
        })?;
        // Not ahead of what this process remembers: nothing to write.
        let known = *self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known
            .is_some_and(|(size, root)| size > head.size || (size, root) == (head.size, head.root))
        {
            return Ok(());
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fsutil::create_private_dir(dir, 0o700)?;
        let lock = std::fs::File::open(dir).map_err(|e| Error::io(dir, e))?;
        lock.lock().map_err(|e| Error::io(dir, e))?;
        let kept = self.load()?;
        match kept {
            Some(k) if k.size > head.size => return Ok(()),
            Some(k) if k.size == head.size && k.root != head.root => {
                return Err(self.rolled_back(Rollback {
                    remembered_size: k.size,
                    remembered_root: hex::encode(k.root),
                    ledger_size: head.size,
                    ledger_root: Some(hex::encode(head.root)),
                    file: self.path.display().to_string(),
                    witness: None,
                }))
            }
            // The same head again: kept as is unless this note holds more
            // cosignatures.
            Some(k) if k.size == head.size && k.note.len() >= note.len() => return Ok(()),
            _ => {}
        }
        fsutil::write_atomic(&self.path, note.as_bytes(), 0o600, true)?;
        *self.known.lock().unwrap_or_else(PoisonError::into_inner) = Some((head.size, head.root));
        Ok(())
    }

    /// Checks that a log of `size` entries extends the remembered head:
    /// it is at least as long, and `root_at` (the log's root at a smaller
    /// or equal size; `None` to skip, when this process already checked
    /// the prefix) gives the remembered root. `Err(ledger_rolled_back)`
    /// otherwise; the finding is kept for `/readyz`.
    pub fn check(
        &self,
        size: u64,
        root_at: Option<&mut dyn FnMut(u64) -> Result<Hash, Error>>,
    ) -> Result<(), Error> {
        let known = self.known()?;
        self.judge(known, size, root_at)
    }

    /// [`HeadMemory::check`] of the head `known` before the log's `size`
    /// was read: a head remembered after the read (a commit racing the
    /// check) is never taken for a rollback.
    fn judge(
        &self,
        known: Option<(u64, Hash)>,
        size: u64,
        root_at: Option<&mut dyn FnMut(u64) -> Result<Hash, Error>>,
    ) -> Result<(), Error> {
        if let Some(refused) = self.witness_finding() {
            return Err(self.rolled_back(refused));
        }
        let Some((kept, root)) = known else {
            return self.clear();
        };
        let differs = if size < kept {
            Some(None)
        } else if let Some(root_at) = root_at {
            let at = root_at(kept)?;
            (at != root).then(|| Some(hex::encode(at)))
        } else {
            None
        };
        match differs {
            None => self.clear(),
            Some(ledger_root) => Err(self.rolled_back(Rollback {
                remembered_size: kept,
                remembered_root: hex::encode(root),
                ledger_size: size,
                ledger_root,
                file: self.path.display().to_string(),
                witness: None,
            })),
        }
    }

    /// [`HeadMemory::check`] against a log as a source: its latest head,
    /// and its root at the remembered size ([`super::log::root_at`]).
    pub fn check_source(&self, source: &dyn LogSource) -> Result<(), Error> {
        // What is remembered first, the log after: heads only grow, so a
        // log read after extends what was remembered before, unless it
        // went back.
        let known = self.known()?;
        let size = source.latest_head()?.map_or(0, |h| h.size);
        let mut root_at = |n: u64| -> Result<Hash, Error> {
            // `judge` asks only for a size the log holds.
            Ok(super::log::root_at(source, n)?.unwrap_or_default())
        };
        self.judge(known, size, Some(&mut root_at))
    }

    /// The last finding; `None`: the log extends the remembered head and
    /// no witness said otherwise.
    #[must_use]
    pub fn finding(&self) -> Option<Rollback> {
        self.witness_finding().or_else(|| {
            self.finding
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
        })
    }

    fn witness_finding(&self) -> Option<Rollback> {
        self.witnessed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A witness (`witness`: its URL and answer) refused the log's head of
    /// `ledger_size` because it cosigned a head of `witnessed_size` the log
    /// does not extend (a split view, a size the log lacks, a consistency
    /// proof from its size that fails): the money path stops, as for a
    /// rolled-back log, until a witness cosigns the log's head again.
    pub fn witness_refused(&self, witness: String, witnessed_size: u64, ledger_size: u64) {
        let finding = Rollback {
            remembered_size: witnessed_size,
            remembered_root: String::new(),
            ledger_size,
            ledger_root: None,
            file: self.path.display().to_string(),
            witness: Some(witness),
        };
        *self
            .witnessed
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(finding);
    }

    /// A witness cosigned the log's head of `size`: a witness's earlier
    /// refusal over a head no larger no longer holds.
    pub fn witness_cosigned(&self, size: u64) {
        let mut witnessed = self
            .witnessed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if witnessed
            .as_ref()
            .is_some_and(|w| w.remembered_size <= size)
        {
            *witnessed = None;
        }
    }

    fn clear(&self) -> Result<(), Error> {
        *self.finding.lock().unwrap_or_else(PoisonError::into_inner) = None;
        Ok(())
    }

    fn rolled_back(&self, finding: Rollback) -> Error {
        let reason = finding.describe();
        *self.finding.lock().unwrap_or_else(PoisonError::into_inner) = Some(finding);
        Error::LedgerRolledBack {
            path: self.path.clone(),
            reason,
        }
    }
}

/// The root of the first `size` leaves from tiles that cover them.
pub(crate) fn root_from_tiles(
    tiles: &mut dyn super::tiles::TileSource,
    size: u64,
) -> Result<Hash, Error> {
    Cached::new(tiles).root(size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::log::LedgerKey;

    #[test]
    fn a_head_is_never_forgotten_and_a_shorter_or_other_log_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let key = LedgerKey::from_signing(ed25519_dalek::SigningKey::from_bytes(&[7; 32]));
        let memory = HeadMemory::of(&store, "test-ledger");
        memory.check(0, None).unwrap();
        memory.remember(&key.sign_checkpoint(5, &[1; 32])).unwrap();
        // A smaller head leaves the kept one as it is.
        memory.remember(&key.sign_checkpoint(3, &[9; 32])).unwrap();
        let kept = memory.load().unwrap().unwrap();
        assert_eq!((kept.size, kept.root), (5, [1; 32]));
        // Another root at the kept size: two histories.
        let e = memory
            .remember(&key.sign_checkpoint(5, &[2; 32]))
            .unwrap_err();
        assert_eq!(e.code(), "ledger_rolled_back", "{e}");
        // A shorter log: refused, the finding names the missing entries.
        let e = memory.check(3, None).unwrap_err();
        assert!(e.to_string().contains("entries 3 to 4 are missing"), "{e}");
        assert_eq!(memory.finding().unwrap().ledger_size, 3);
        // A log as long with another root at the kept size: refused too.
        let e = memory.check(6, Some(&mut |_| Ok([2; 32]))).unwrap_err();
        assert!(e.to_string().contains("another history"), "{e}");
        // The log extends the head: the finding clears.
        memory.check(6, Some(&mut |_| Ok([1; 32]))).unwrap();
        assert!(memory.finding().is_none());
        // A file that is not a checkpoint is named, never taken as none.
        std::fs::write(memory.path(), "not a head").unwrap();
        let e = memory.load().unwrap_err();
        assert!(e.to_string().contains("not a checkpoint"), "{e}");
    }
}
