//! Recovery from the published log (`issuer ledger recover`,
//! docs/REDEMPTION.md §Recovery): a ledger restored from an older copy
//! lacks the entries signed after it; the log's tiles and entry bundles,
//! published as they were signed (`/v1/log/`, `ledger tiles --out`), still
//! hold them. Each is checked (the checkpoint's signature, the entries'
//! root, the head this store remembers, the entries the ledger kept) and
//! put back at its place, in order, with its row made again: a redemption
//! from the unit's sealed block, an end of claims signed again (Ed25519 is
//! deterministic), a sale in the lane given (the log does not name it), an
//! operator's reason known by its hash.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use super::state::Redeemer;
use crate::error::Error;
use crate::game::Game;
use crate::ledger::claims::EndOfClaims;
use crate::ledger::log::{self, LogSource};
use crate::ledger::operator::{Action, OperatorAction, HASHED_REASON};
use crate::ledger::ops::{Done, Op, PlayRow, Restored, RestoredRow, UnitRef};
use crate::ledger::published::Resource;
use crate::ledger::remembered::HeadMemory;
use crate::merkle::{self, Hash};
use crate::unit_id::UnitId;

/// Where the published log is read: a folder `ledger tiles --out` wrote,
/// or a node's or mirror's `/v1/log/` (the command line fetches it).
pub trait PublishedFiles {
    /// The bytes at `path` (`checkpoint`, `tile/entries/…`); `None` when
    /// there is none.
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, Error>;
    /// Where, for messages.
    fn describe(&self) -> String;
}

/// A folder of static files, as `ledger tiles --out` writes them.
pub struct Folder(pub PathBuf);

impl PublishedFiles for Folder {
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let file = self.0.join(path);
        match std::fs::read(&file) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(&file, e)),
        }
    }

    fn describe(&self) -> String {
        self.0.display().to_string()
    }
}

/// What a recovery did.
#[derive(Clone, Debug, Serialize)]
pub struct RecoverReport {
    /// Where the log was read.
    pub from: String,
    /// The size of the published checkpoint.
    pub published_size: u64,
    /// The ledger's log size before.
    pub ledger_size_before: u64,
    /// Entries put back, by kind (`sales`, `plays`, `redemptions`,
    /// `ends_of_claims`, `operator_actions`).
    pub restored: BTreeMap<String, u64>,
    /// The ledger's log size now.
    pub ledger_size: u64,
    /// The head this store remembers, when it has one.
    pub remembered_size: Option<u64>,
    /// The ledger extends the remembered head again: it serves.
    pub complete: bool,
    /// Sales put back without a lane (the log does not name it; `--lane`
    /// gives one): only the operator reaches them until reassigned.
    pub sales_without_lane: Vec<String>,
    /// PostgreSQL: rows the restored database held queued (acknowledged,
    /// not yet sequenced when it was copied) placed where the published
    /// log holds them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queued_placed: Option<u64>,
    /// PostgreSQL: queued rows the published log does not hold
    /// (acknowledged after its last checkpoint): sequenced after the
    /// entries put back. What was acknowledged after the copy and never
    /// published is not in either: reconcile it with the platforms'
    /// idempotency records (docs/DEPLOY.md §Backups and restore).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queued_after: Option<u64>,
}

/// Refuses a recovery, saying why; nothing was written.
fn refused(from: &dyn PublishedFiles, why: impl std::fmt::Display) -> Error {
    Error::LedgerDamaged {
        path: PathBuf::from(from.describe()),
        reason: format!("{why}; nothing was recovered"),
    }
}

/// The entries of a published log of `size` entries, from its bundles.
fn published_lines(files: &dyn PublishedFiles, size: u64) -> Result<Vec<String>, Error> {
    let mut lines = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    for resource in Resource::all_of(size) {
        let Resource::Entries { width, .. } = resource else {
            continue;
        };
        let path = resource.path();
        let bundle = files
            .read(&path)?
            .ok_or_else(|| refused(files, format!("{path} is missing")))?;
        let mut rest = &bundle[..];
        for _ in 0..width {
            let bad = || {
                refused(
                    files,
                    format!("{path} is not an entry bundle of {width} entries"),
                )
            };
            let (len, tail) = rest.split_at_checked(2).ok_or_else(bad)?;
            let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
            let (line, tail) = tail.split_at_checked(len).ok_or_else(bad)?;
            lines.push(String::from_utf8(line.to_vec()).map_err(|_| bad())?);
            rest = tail;
        }
        if !rest.is_empty() {
            return Err(refused(
                files,
                format!("{path} holds more than {width} entries"),
            ));
        }
    }
    Ok(lines)
}

impl Redeemer {
    /// Puts back the entries of the published log `files` that this
    /// ledger lacks (module documentation). Sales put back are the
    /// `lane`'s where given.
    pub fn recover(
        &self,
        files: &dyn PublishedFiles,
        lane: Option<&str>,
    ) -> Result<RecoverReport, Error> {
        let store = self.store();
        let public = crate::seal::read_public(&store.ledger_public_key_path())?;
        let note = files
            .read("checkpoint")?
            .ok_or_else(|| refused(files, "there is no checkpoint"))?;
        let note = String::from_utf8_lossy(&note).into_owned();
        let checkpoint = log::open_checkpoint(&note, &public).map_err(|why| {
            refused(
                files,
                format!("its checkpoint is not this ledger's ({why})"),
            )
        })?;
        let lines = published_lines(files, checkpoint.size)?;
        let leaves: Vec<Hash> = lines
            .iter()
            .map(|l| merkle::leaf_hash(l.as_bytes()))
            .collect();
        if merkle::root_from_hashes(&leaves) != checkpoint.root {
            return Err(refused(
                files,
                "its entries do not hash to its checkpoint's root",
            ));
        }
        let identity = self.ledger().identity(true)?.unwrap_or_default();
        let memory = HeadMemory::of(store, &identity);
        let remembered = memory.load()?;
        if let Some(r) = &remembered {
            let size = usize::try_from(r.size).unwrap_or(usize::MAX);
            if size > leaves.len() {
                return Err(refused(files, format!(
                    "it holds {} entries, fewer than the {} of the head this node remembers ({}): find a more recent copy (a mirror, a witness's, another node's)",
                    leaves.len(), r.size, memory.path().display()
                )));
            }
            if merkle::root_from_hashes(&leaves[..size]) != r.root {
                return Err(refused(files, format!(
                    "its first {} entries are not those of the head this node remembers ({}): it is another history",
                    r.size, memory.path().display()
                )));
            }
        }
        // What the ledger kept must be the published log's beginning.
        let kept = self
            .ledger()
            .with_log(|source: &dyn LogSource| {
                let size = source.latest_head()?.map_or(0, |h| h.size);
                source.entries(0, size)
            })?
            .unwrap_or_default();
        if kept.len() > lines.len() {
            return Err(refused(files, format!(
                "the ledger holds {} entries, more than the {} published: publish its log again first",
                kept.len(), lines.len()
            )));
        }
        if let Some(seq) = (0..kept.len()).find(|&i| kept[i] != lines[i]) {
            return Err(refused(
                files,
                format!(
                "the ledger's entry {seq} differs from the published one: it holds another history"
            ),
            ));
        }
        let mut restored = BTreeMap::new();
        let mut sales_without_lane = Vec::new();
        let mut ops = Vec::new();
        for (seq, line) in (kept.len() as u64..).zip(&lines[kept.len()..]) {
            let row = self.row_of(line, lane).map_err(|why| {
                refused(files, format!("entry {seq} ({}): {why}", line.trim_end()))
            })?;
            if row.line(seq) != *line {
                return Err(refused(
                    files,
                    format!(
                        "entry {seq}: the row made again does not give its line back ({})",
                        line.trim_end()
                    ),
                ));
            }
            if let RestoredRow::Sale {
                unit, lane: None, ..
            } = &row
            {
                sales_without_lane.push(format!(
                    "{} emission {} block {} unit {}",
                    unit.game.slug(),
                    unit.emission,
                    unit.block,
                    unit.index
                ));
            }
            let kind = match &row {
                RestoredRow::Sale { .. } => "sales",
                RestoredRow::Play { .. } => "plays",
                RestoredRow::Redemption { .. } => "redemptions",
                RestoredRow::EndOfClaims(_) => "ends_of_claims",
                RestoredRow::Operator(_) => "operator_actions",
            };
            *restored.entry(kind.to_string()).or_insert(0) += 1;
            ops.push(Restored {
                seq,
                line: line.clone(),
                row,
            });
        }
        // PostgreSQL puts them back itself, under its sequencer's lock;
        // the store's SQLite ledger through its writer.
        let put_back = self.ledger().put_back(store, &ops)?;
        let ops: Vec<Op> = if put_back.is_some() {
            Vec::new()
        } else {
            ops.into_iter().map(|r| Op::Restore(Box::new(r))).collect()
        };
        if let Some(done) = &put_back {
            memory.remember(&done.note)?;
        }
        for chunk in ops.chunks(256) {
            for outcome in self.submit(chunk.to_vec()) {
                match outcome? {
                    Done::Acted { .. } => {}
                    _ => {
                        return Err(Error::Internal {
                            what: "the ledger answered a recovered entry with another operation"
                                .into(),
                        })
                    }
                }
            }
        }
        let ledger_size = lines.len() as u64;
        Ok(RecoverReport {
            from: files.describe(),
            published_size: checkpoint.size,
            ledger_size_before: kept.len() as u64,
            restored,
            ledger_size,
            remembered_size: remembered.as_ref().map(|r| r.size),
            complete: remembered.is_none_or(|r| ledger_size >= r.size),
            sales_without_lane,
            queued_placed: put_back.as_ref().map(|p| p.queued_placed),
            queued_after: put_back.as_ref().map(|p| p.queued_after),
        })
    }

    /// The row of a published entry `line`, made again.
    fn row_of(&self, line: &str, lane: Option<&str>) -> Result<RestoredRow, String> {
        let fields: Vec<&str> = line
            .strip_suffix('\n')
            .ok_or("it does not end with a newline")?
            .split('|')
            .collect();
        let number = |i: usize| -> Result<u32, String> {
            fields
                .get(i)
                .and_then(|f| f.parse().ok())
                .ok_or_else(|| format!("field {i} is not a number"))
        };
        let text = |i: usize| -> Result<String, String> {
            fields
                .get(i)
                .map(|f| (*f).to_string())
                .ok_or_else(|| format!("it has no field {i}"))
        };
        let unit = || -> Result<UnitRef, String> {
            Ok(UnitRef {
                game: Game::from_slug(&text(2)?).ok_or("an unknown game")?,
                emission: number(3)?,
                block: number(4)?,
                index: number(5)?,
            })
        };
        match fields[0] {
            "sale/v1" => Ok(RestoredRow::Sale {
                unit: unit()?,
                sold_at: text(6)?,
                lane: lane.map(str::to_string),
            }),
            "play/v1" => Ok(RestoredRow::Play {
                unit: unit()?,
                play: PlayRow {
                    steps: number(6)?,
                    ended: Some(text(7)?),
                },
                ended_at: text(8)?,
            }),
            "ledger/v1" => {
                let id: UnitId = text(6)?
                    .parse()
                    .map_err(|e| format!("its unit ID does not read: {e}"))?;
                let stop = match text(11)?.as_str() {
                    "" => None,
                    s => Some(s.parse().map_err(|_| "its stop is not a number")?),
                };
                let located = self.units.locate(&id).map_err(|e| e.to_string())?;
                let entry = located.play(stop).map_err(|e| e.to_string())?.entry;
                Ok(RestoredRow::Redemption {
                    entry,
                    redeemed_at: text(10)?,
                })
            }
            "claims/v1" => {
                let secrets = self.store().secrets().map_err(|e| {
                    format!("an end of claims is signed again with the issuer's key, which this store does not hold ({e})")
                })?;
                Ok(RestoredRow::EndOfClaims(EndOfClaims::sign_at(
                    &secrets.signing,
                    &text(2)?,
                    number(3)?,
                    &text(4)?,
                )))
            }
            "operator/v1" => {
                let optional = |i: usize| -> Result<Option<u32>, String> {
                    match text(i)?.as_str() {
                        "" => Ok(None),
                        _ => number(i).map(Some),
                    }
                };
                Ok(RestoredRow::Operator(OperatorAction {
                    action: Action::parse(&text(2)?).ok_or("an unknown action")?,
                    game: text(3)?,
                    emission: number(4)?,
                    block: optional(5)?,
                    index: optional(6)?,
                    unit_id: None,
                    reason: format!("{HASHED_REASON}{}", text(9)?),
                    by: text(7)?,
                    at: text(8)?,
                }))
            }
            other => Err(format!("an entry of unknown kind {other:?}")),
        }
    }
}

impl Redeemer {
    /// The head this store remembers of its ledger (`None` while there is
    /// no ledger yet); its identity is read once.
    fn head_memory(&self) -> Result<Option<Arc<HeadMemory>>, Error> {
        if let Some(memory) = self.head_memory.get() {
            return Ok(Some(Arc::clone(memory)));
        }
        let Some(identity) = self.ledger().identity(false)? else {
            return Ok(None);
        };
        let memory = self
            .head_memory
            .get_or_init(|| HeadMemory::of(self.store(), &identity));
        Ok(Some(Arc::clone(memory)))
    }

    /// The head this store remembers of its ledger, for the ledger as it
    /// is: `Ok(())` when the log extends it (or nothing is remembered yet),
    /// else `ledger_rolled_back` naming what is missing (`/readyz`, `serve`
    /// at start).
    pub fn check_rollback(&self) -> Result<(), Error> {
        let Some(memory) = self.head_memory()? else {
            return Ok(());
        };
        self.ledger()
            .with_log(|source: &dyn LogSource| memory.check_source(source))?;
        Ok(())
    }

    /// A witness refused the log's head of `ledger_size` in a way that
    /// says the log forked or went back ([`HeadMemory::witness_refused`]):
    /// nothing is sold, played or paid until a witness cosigns again.
    pub fn witness_refused(&self, witness: String, witnessed_size: u64, ledger_size: u64) {
        if let Ok(Some(memory)) = self.head_memory() {
            memory.witness_refused(witness, witnessed_size, ledger_size);
        }
    }

    /// A witness cosigned the log's head of `size`
    /// ([`HeadMemory::witness_cosigned`]).
    pub fn witness_cosigned(&self, size: u64) {
        if let Ok(Some(memory)) = self.head_memory() {
            memory.witness_cosigned(size);
        }
    }

    /// [`Redeemer::rollback_finding`] without reading anything: `None`
    /// until the ledger's identity was read (by a check, a write or a
    /// witness's answer). For answering at once on an async thread.
    #[must_use]
    pub fn known_rollback(&self) -> Option<crate::ledger::remembered::Rollback> {
        self.head_memory.get()?.finding()
    }

    /// The last rollback found by this process (a write refused, or
    /// [`Redeemer::check_rollback`]); `None` when the log extends the
    /// remembered head. Reads nothing once the ledger's identity is known.
    #[must_use]
    pub fn rollback_finding(&self) -> Option<crate::ledger::remembered::Rollback> {
        self.head_memory().ok().flatten()?.finding()
    }
}
