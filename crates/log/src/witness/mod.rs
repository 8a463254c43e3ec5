//! A C2SP transparency-log witness (c2sp.org/tlog-witness), free of HTTP:
//! it is configured with logs (origin and the log's verifier key), checks
//! each `add-checkpoint` request (the log's signature, the old size it
//! last cosigned, the consistency proof), persists the new checkpoint
//! and only then answers with a `cosignature/v1` line
//! (docs/REDEMPTION.md §Witnesses). The service crate serves it over HTTP.
//!
//! - [`note`]: signed notes and verifier keys (`vkey`s);
//! - [`cosignature`]: cosigning and verifying a cosignature;
//! - [`state`]: one file per log, replaced atomically;
//! - [`Witness::add_checkpoint`]: one request, decided.

mod checkpoint;
pub mod cosignature;
pub mod note;
pub mod state;

use std::collections::BTreeMap;
use std::sync::Mutex;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;

use cosignature::Cosigner;
use note::{Vkey, TYPE_ED25519};
use state::{Latest, StateDir};
use ticket_issuer_core::error::Error;
use ticket_issuer_core::merkle::{self, Hash};

use checkpoint::decimal;
pub use checkpoint::{checkpoint_body, CheckpointBody};

/// Most consistency proof lines a request may carry (tlog-witness).
pub const MAX_PROOF_LINES: usize = 63;

/// Largest `add-checkpoint` body read: 63 proof lines and a checkpoint
/// with many signatures (post-quantum ones are near 5 kB each).
pub const MAX_BODY: usize = 128 * 1024;

/// The `Content-Type` of a 409 answer that carries the known size.
pub const SIZE_CONTENT_TYPE: &str = "text/x.tlog.size";

/// A log the witness follows.
#[derive(Clone, Debug)]
pub struct LogConfig {
    /// Its origin line.
    pub origin: String,
    /// Its key (type 0x01), as `issuer ledger head` prints it.
    pub key: Vkey,
}
/// An `add-checkpoint` request body, parsed: `old <size>\n`, the proof
/// lines, a blank line, the signed checkpoint.
#[derive(Clone, Debug)]
pub struct AddRequest<'a> {
    /// The size the client believes the witness last cosigned.
    pub old: u64,
    /// The consistency proof from `old` to the checkpoint's size.
    pub proof: Vec<Hash>,
    /// The checkpoint's signed note.
    pub note: &'a str,
}

impl<'a> AddRequest<'a> {
    /// Parses a request body; `Err` says what is malformed.
    pub fn parse(body: &'a [u8]) -> Result<AddRequest<'a>, String> {
        let body = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8")?;
        let (head, note) = body
            .split_once("\n\n")
            .ok_or("no blank line between the old size and proof lines and the checkpoint")?;
        let mut lines = head.split('\n');
        let old = lines
            .next()
            .and_then(|l| l.strip_prefix("old "))
            .and_then(decimal)
            .ok_or("the first line is not \"old <size>\" (decimal, no leading zeroes)")?;
        let mut proof = Vec::new();
        for (n, line) in lines.enumerate() {
            if proof.len() == MAX_PROOF_LINES {
                return Err(format!("more than {MAX_PROOF_LINES} proof lines"));
            }
            let hash = BASE64
                .decode(line)
                .ok()
                .and_then(|h| Hash::try_from(h.as_slice()).ok())
                .ok_or_else(|| format!("proof line {} is not a base64 SHA-256 hash", n + 1))?;
            proof.push(hash);
        }
        Ok(AddRequest { old, proof, note })
    }

    /// The body of a request (what [`AddRequest::parse`] reads).
    #[must_use]
    pub fn body(old: u64, proof: &[Hash], note: &str) -> String {
        let mut body = format!("old {old}\n");
        for hash in proof {
            body.push_str(&BASE64.encode(hash));
            body.push('\n');
        }
        body.push('\n');
        body.push_str(note);
        body
    }
}

/// Why a witness refuses to cosign: a normal answer with its HTTP status
/// (tlog-witness §add-checkpoint), not a failure of the witness.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// 400: the body, or its checkpoint, is malformed.
    Malformed(String),
    /// 404: no log of this origin is configured.
    UnknownOrigin(String),
    /// 403: no signature by the log's key verifies.
    NotSigned(String),
    /// 400: `old` is larger than the checkpoint's size.
    OldAfterSize {
        /// As sent.
        old: u64,
        /// The checkpoint's size.
        size: u64,
    },
    /// 409 with `text/x.tlog.size`: `old` is not the size last cosigned.
    StaleOld {
        /// The size last cosigned (0: none).
        known: u64,
    },
    /// 409: the size last cosigned, with another root: a split view.
    SplitView {
        /// The size.
        size: u64,
    },
    /// 422: the consistency proof does not verify.
    BadProof {
        /// From.
        old: u64,
        /// To.
        size: u64,
    },
}

impl Refusal {
    /// The HTTP status the spec gives it.
    #[must_use]
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Malformed(_) | Refusal::OldAfterSize { .. } => 400,
            Refusal::NotSigned(_) => 403,
            Refusal::UnknownOrigin(_) => 404,
            Refusal::StaleOld { .. } | Refusal::SplitView { .. } => 409,
            Refusal::BadProof { .. } => 422,
        }
    }

    /// The body of the answer: the known size for [`Refusal::StaleOld`]
    /// (its `Content-Type` is [`SIZE_CONTENT_TYPE`]), a sentence otherwise.
    #[must_use]
    pub fn body(&self) -> String {
        match self {
            Refusal::StaleOld { known } => format!("{known}\n"),
            Refusal::Malformed(why) => format!("malformed request: {why}\n"),
            Refusal::UnknownOrigin(origin) => {
                format!("this witness does not follow the log {origin:?}\n")
            }
            Refusal::NotSigned(origin) => {
                format!("no signature by the key of {origin:?} verifies over this checkpoint\n")
            }
            Refusal::OldAfterSize { old, size } => {
                format!("old size {old} is larger than the checkpoint's size {size}\n")
            }
            Refusal::SplitView { size } => format!(
                "split view: this witness cosigned another root at size {size}; it keeps the request\n"
            ),
            Refusal::BadProof { old, size } => {
                format!("the consistency proof from {old} to {size} does not verify\n")
            }
        }
    }
}

/// What the witness answers to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// 200: the cosignature line(s), each ending in a newline; the new
    /// checkpoint was persisted first.
    Cosigned(String),
    /// Refused, with the status the spec gives.
    Refused(Refusal),
}

struct Log {
    key: Vkey,
    // The latest cosigned head, as persisted: the lock is held from the
    // check of `old` to the end of the write, so two requests for one log
    // never interleave (tlog-witness: check and persist are atomic).
    latest: Mutex<Option<Latest>>,
}

/// A witness: its key, its logs and their state.
pub struct Witness {
    cosigner: Cosigner,
    logs: BTreeMap<String, Log>,
    state: StateDir,
}

impl Witness {
    /// A witness following `logs`, its state in `state` (each log's latest
    /// checkpoint read now: a damaged file stops it here).
    pub fn new(
        cosigner: Cosigner,
        logs: Vec<LogConfig>,
        state: StateDir,
    ) -> Result<Witness, Error> {
        let mut map = BTreeMap::new();
        for log in logs {
            if log.key.kind() != TYPE_ED25519 {
                return Err(Error::ServiceConfig {
                    reason: format!(
                        "--log {}: the key {} is not an Ed25519 note key (type 0x01)",
                        log.origin, log.key
                    ),
                });
            }
            let latest = state.load(&log.origin)?;
            let entry = Log {
                key: log.key,
                latest: Mutex::new(latest),
            };
            if map.insert(log.origin.clone(), entry).is_some() {
                return Err(Error::ServiceConfig {
                    reason: format!("--log {} is given twice", log.origin),
                });
            }
        }
        Ok(Witness {
            cosigner,
            logs: map,
            state,
        })
    }

    /// The witness's key.
    #[must_use]
    pub fn cosigner(&self) -> &Cosigner {
        &self.cosigner
    }

    /// The size last cosigned for `origin` (`None`: not followed).
    #[must_use]
    pub fn latest(&self, origin: &str) -> Option<Option<Latest>> {
        self.logs
            .get(origin)
            .map(|log| *log.latest.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Decides one `add-checkpoint` request `body` at time `now` (Unix
    /// seconds), in the spec's order: malformed (400), unknown origin
    /// (404), not signed by the log (403), `old` above the size (400),
    /// `old` not the size last cosigned (409 with the size), a proof that
    /// does not verify (422), the same size with another root (409). On
    /// success the checkpoint is written durably before the cosignature
    /// is made. `Err` is a failure to persist: nothing was cosigned.
    pub fn add_checkpoint(&self, body: &[u8], now: u64) -> Result<Answer, Error> {
        let request = match AddRequest::parse(body) {
            Ok(r) => r,
            Err(why) => return Ok(Answer::Refused(Refusal::Malformed(why))),
        };
        let signed = match note::parse(request.note) {
            Ok(n) => n,
            Err(e) => return Ok(Answer::Refused(Refusal::Malformed(e.to_string()))),
        };
        let checkpoint = match checkpoint_body(signed.text) {
            Ok(c) => c,
            Err(why) => return Ok(Answer::Refused(Refusal::Malformed(why))),
        };
        let Some(log) = self.logs.get(&checkpoint.origin) else {
            return Ok(Answer::Refused(Refusal::UnknownOrigin(checkpoint.origin)));
        };
        if !note::signed_by(&signed, &log.key) {
            return Ok(Answer::Refused(Refusal::NotSigned(checkpoint.origin)));
        }
        let (old, size) = (request.old, checkpoint.size);
        if old > size {
            return Ok(Answer::Refused(Refusal::OldAfterSize { old, size }));
        }
        let mut latest = log.latest.lock().unwrap_or_else(|p| p.into_inner());
        let known = latest.map_or(0, |l| l.size);
        if old != known {
            return Ok(Answer::Refused(Refusal::StaleOld { known }));
        }
        let old_root = latest.map_or_else(merkle::empty_root, |l| l.root);
        if old == size {
            if checkpoint.root != old_root {
                return Ok(Answer::Refused(Refusal::SplitView { size }));
            }
            if !request.proof.is_empty() {
                return Ok(Answer::Refused(Refusal::BadProof { old, size }));
            }
        } else if old == 0 {
            // Every tree extends the empty one; the spec wants no proof.
            if !request.proof.is_empty() {
                return Ok(Answer::Refused(Refusal::BadProof { old, size }));
            }
        } else if !merkle::verify_consistency(
            old,
            size,
            &request.proof,
            &old_root,
            &checkpoint.root,
        ) {
            return Ok(Answer::Refused(Refusal::BadProof { old, size }));
        }
        if latest.is_none() || old != size {
            self.state.store(&checkpoint.origin, request.note)?;
            *latest = Some(Latest {
                size,
                root: checkpoint.root,
            });
        }
        Ok(Answer::Cosigned(self.cosigner.cosign(signed.text, now)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{verifier_key, LedgerKey};
    use ed25519_dalek::SigningKey;

    struct Setup {
        _dir: tempfile::TempDir,
        witness: Witness,
        log: LedgerKey,
        leaves: Vec<Hash>,
    }

    fn setup() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let log = LedgerKey::from_signing(SigningKey::from_bytes(&[1; 32]));
        let key = Vkey::parse(&verifier_key(&log.public())).unwrap();
        let cosigner = Cosigner::new(SigningKey::from_bytes(&[2; 32]), None).unwrap();
        let witness = Witness::new(
            cosigner,
            vec![LogConfig {
                origin: key.name().to_string(),
                key,
            }],
            StateDir::open(dir.path()).unwrap(),
        )
        .unwrap();
        let leaves = (0u8..20).map(|i| merkle::leaf_hash(&[i])).collect();
        Setup {
            _dir: dir,
            witness,
            log,
            leaves,
        }
    }

    impl Setup {
        fn note(&self, size: usize) -> String {
            let root = merkle::root_from_hashes(&self.leaves[..size]);
            self.log.sign_checkpoint(size as u64, &root)
        }

        fn add(&self, old: usize, size: usize) -> Answer {
            let proof = merkle::consistency_proof(&self.leaves[..size], old).unwrap();
            let body = AddRequest::body(old as u64, &proof, &self.note(size));
            self.witness
                .add_checkpoint(body.as_bytes(), 1_700_000_000)
                .unwrap()
        }
    }

    #[test]
    fn extends_then_refuses_what_the_spec_refuses() {
        let s = setup();
        let Answer::Cosigned(line) = s.add(0, 5) else {
            panic!("first checkpoint refused")
        };
        let note = s.note(5) + &line;
        assert_eq!(
            cosignature::verify_cosignature(&note, s.witness.cosigner().vkey()),
            Ok(1_700_000_000)
        );
        // The log's reader still opens the note with a cosignature line in it.
        let opened = crate::log::open_checkpoint(&note, &s.log.public()).unwrap();
        assert_eq!(opened.size, 5);
        assert!(matches!(s.add(5, 9), Answer::Cosigned(_)));
        assert_eq!(
            s.add(5, 12),
            Answer::Refused(Refusal::StaleOld { known: 9 })
        );
        assert_eq!(
            s.add(0, 12),
            Answer::Refused(Refusal::StaleOld { known: 9 })
        );
        // Same size again, same root: cosigned again, nothing changes.
        assert!(matches!(s.add(9, 9), Answer::Cosigned(_)));
        // A smaller checkpoint: `old` above its size.
        assert_eq!(
            s.add_raw(9, &[], &s.note(7)),
            Answer::Refused(Refusal::OldAfterSize { old: 9, size: 7 })
        );
    }

    impl Setup {
        fn add_raw(&self, old: u64, proof: &[Hash], note: &str) -> Answer {
            let body = AddRequest::body(old, proof, note);
            self.witness.add_checkpoint(body.as_bytes(), 1).unwrap()
        }
    }

    #[test]
    fn split_view_and_bad_proof() {
        let s = setup();
        assert!(matches!(s.add(0, 4), Answer::Cosigned(_)));
        let other = s.log.sign_checkpoint(4, &[9; 32]);
        assert_eq!(
            s.add_raw(4, &[], &other),
            Answer::Refused(Refusal::SplitView { size: 4 })
        );
        let mut proof = merkle::consistency_proof(&s.leaves[..6], 4).unwrap();
        proof[0][0] ^= 1;
        assert_eq!(
            s.add_raw(4, &proof, &s.note(6)),
            Answer::Refused(Refusal::BadProof { old: 4, size: 6 })
        );
        // A proof removed.
        assert_eq!(
            s.add_raw(4, &[], &s.note(6)),
            Answer::Refused(Refusal::BadProof { old: 4, size: 6 })
        );
    }

    #[test]
    fn unknown_unsigned_malformed() {
        let s = setup();
        let stranger = LedgerKey::from_signing(SigningKey::from_bytes(&[3; 32]));
        let theirs = stranger.sign_checkpoint(1, &[0; 32]);
        assert!(matches!(
            s.add_raw(0, &[], &theirs),
            Answer::Refused(Refusal::UnknownOrigin(_))
        ));
        // Our origin, signed by another key under our name.
        let forged = s.note(3).replacen("\n3\n", "\n4\n", 1);
        assert!(matches!(
            s.add_raw(0, &[], &forged),
            Answer::Refused(Refusal::NotSigned(_))
        ));
        for body in [
            "old 01\n\nx",
            "old 0\nnot-base64\n\nx",
            "old 0",
            "old 0\n\nno note",
        ] {
            assert!(
                matches!(
                    s.witness.add_checkpoint(body.as_bytes(), 1).unwrap(),
                    Answer::Refused(Refusal::Malformed(_))
                ),
                "{body:?}"
            );
        }
    }

    #[test]
    fn state_survives_a_restart() {
        let s = setup();
        assert!(matches!(s.add(0, 8), Answer::Cosigned(_)));
        let dir = s._dir.path().to_path_buf();
        // A second witness on the same folder is refused while this one runs.
        assert!(StateDir::open(&dir).is_err());
        let key = Vkey::parse(&verifier_key(&s.log.public())).unwrap();
        let origin = key.name().to_string();
        let Setup { witness, _dir, .. } = s;
        drop(witness);
        let again = Witness::new(
            Cosigner::new(SigningKey::from_bytes(&[2; 32]), None).unwrap(),
            vec![LogConfig {
                origin: origin.clone(),
                key,
            }],
            StateDir::open(&dir).unwrap(),
        )
        .unwrap();
        assert_eq!(again.latest(&origin).unwrap().unwrap().size, 8);
    }
}
