//! A player's receipt (docs/REDEMPTION.md §Receipts): one log entry (a
//! sale, a redemption) with its RFC 9162 inclusion proof to the published
//! checkpoint and that checkpoint's signed note, cosignatures included,
//! so the entry can be checked offline with SHA-256 and Ed25519 alone.
//!
//! The checkpoint and its size are [`PublishedLog`](crate::published::PublishedLog)'s, never made here:
//! it picks what is published (possibly an older, witnessed head), and a
//! receipt is only ever against what anyone can mirror.

use std::path::Path;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};

use crate::log::{self, LogSource};
use crate::published::Publication;
use crate::tiles::Cached;
use crate::witness::checkpoint_body;
use crate::witness::cosignature::{verify_cosignature, CosignatureError};
use crate::witness::note::{self, NoteError, Vkey, TYPE_ED25519};
use ticket_issuer_core::error::Error;
use ticket_issuer_core::merkle::{self, Hash};

/// Everything needed to check offline that an entry is in the published
/// log.
// INVARIANT: `tree_size` is the size `checkpoint` signs, as published.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// The entry's bytes ([`log::LogEntry::line`], newline included): what
    /// is hashed as the leaf, SHA-256(0x00 ‖ entry).
    pub entry: String,
    /// Its position in the log (the `seq` its line names).
    pub index: u64,
    /// The size of the checkpoint.
    pub tree_size: u64,
    /// RFC 9162 §2.1.3 inclusion proof of `index` in the tree of
    /// `tree_size` leaves, bottom-up, base64.
    pub inclusion_proof: Vec<String>,
    /// The published checkpoint: a C2SP tlog-checkpoint signed note, with
    /// the witnesses' cosignature lines when it has them.
    pub checkpoint: String,
}

/// The receipt of entry `seq` against the published checkpoint of
/// `source`; `None` when the entry is not under it (not in the log yet,
/// or beyond the published size).
pub fn receipt(
    source: &dyn LogSource,
    seq: u64,
    publication: Publication,
) -> Result<Option<Receipt>, Error> {
    let Some(mut published) = publication.of(source)? else {
        return Ok(None);
    };
    let size = published.size();
    if seq >= size {
        return Ok(None);
    }
    let entry = source
        .entries(seq, seq + 1)?
        .pop()
        .ok_or_else(|| log::missing_entry(seq, Path::new(&source.log_name())))?;
    let proof = Cached::new(&mut published).inclusion_proof(seq, size)?;
    Ok(Some(Receipt {
        entry,
        index: seq,
        tree_size: size,
        inclusion_proof: proof.iter().map(|h| BASE64.encode(h)).collect(),
        checkpoint: published.checkpoint(),
    }))
}

/// What a receipt that verified proves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    /// The log's origin line.
    pub origin: String,
    /// The checkpoint's size.
    pub size: u64,
    /// The checkpoint's root.
    pub root: Hash,
    /// The witnesses whose cosignature verified: name and time (seconds
    /// since the Unix epoch).
    pub cosigned_by: Vec<(String, u64)>,
}

/// Why a receipt does not verify: one variant per check, in the order
/// [`Receipt::verify`] makes them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiptError {
    /// The checkpoint is not a signed note.
    #[error("the checkpoint is not a signed note: {0}")]
    Note(#[from] NoteError),
    /// No signature by the log's key verifies over the checkpoint's text.
    #[error("the checkpoint carries no valid signature by the log key {name} (key ID {id}): its text was altered, or the key given is not this log's")]
    LogSignature {
        /// The log key's name.
        name: String,
        /// Its key ID, hex.
        id: String,
    },
    /// The checkpoint's text is not origin, size and root.
    #[error("the checkpoint's text is not origin, size and base64 root: {0}")]
    Body(String),
    /// The checkpoint is of another log.
    #[error("the checkpoint's origin {found:?} is not the log's ({expected})")]
    Origin {
        /// As signed.
        found: String,
        /// The log key's name.
        expected: String,
    },
    /// The receipt's size is not the checkpoint's.
    #[error("the receipt says tree size {receipt}, its checkpoint signs {checkpoint}")]
    TreeSize {
        /// As the receipt says.
        receipt: u64,
        /// As the checkpoint signs.
        checkpoint: u64,
    },
    /// The entry does not name the position the receipt gives it.
    #[error("the entry does not name its position {index} (its second field reads {found:?})")]
    EntryIndex {
        /// The receipt's index.
        index: u64,
        /// The entry's `seq` field.
        found: String,
    },
    /// A proof element is not a base64 SHA-256 hash.
    #[error("inclusion proof hash {0} is not a base64 SHA-256 hash")]
    ProofHash(usize),
    /// The proof does not lead from the entry's leaf hash to the root.
    #[error("the inclusion proof of entry {index} does not lead to the checkpoint's root: the entry, its index or a proof hash was altered")]
    Inclusion {
        /// The receipt's index.
        index: u64,
    },
    /// A witness's cosignature line is there but does not verify.
    #[error("{0}")]
    Cosignature(#[from] CosignatureError),
    /// Fewer witnesses cosigned than the quorum asked.
    #[error("{have} witness cosignature(s) verify, {need} are needed (none by {missing})")]
    Quorum {
        /// Cosignatures that verified.
        have: usize,
        /// The quorum asked.
        need: usize,
        /// The witnesses without a line, comma-separated.
        missing: String,
    },
}

impl Receipt {
    /// Checks the receipt with the log's key and, when `witnesses` are
    /// given, their cosignatures (at least `quorum` must verify): the
    /// log's signature over the checkpoint's text as received, its origin
    /// and size, the entry's position, then the entry's leaf hash through
    /// the inclusion proof to the signed root (RFC 9162 §2.1.3.2).
    pub fn verify(
        &self,
        log_key: &VerifyingKey,
        witnesses: &[Vkey],
        quorum: usize,
    ) -> Result<Verified, ReceiptError> {
        let name = log::origin(log_key);
        let signer =
            Vkey::new(&name, TYPE_ED25519, *log_key).map_err(|_| ReceiptError::LogSignature {
                name: name.clone(),
                id: hex::encode(log::key_id(&name, log_key)),
            })?;
        let parsed = note::parse(&self.checkpoint)?;
        if !note::signed_by(&parsed, &signer) {
            return Err(ReceiptError::LogSignature {
                name,
                id: hex::encode(signer.id()),
            });
        }
        let body = checkpoint_body(parsed.text).map_err(ReceiptError::Body)?;
        if body.origin != name {
            return Err(ReceiptError::Origin {
                found: body.origin,
                expected: name,
            });
        }
        if body.size != self.tree_size {
            return Err(ReceiptError::TreeSize {
                receipt: self.tree_size,
                checkpoint: body.size,
            });
        }
        let stated = self.entry.split('|').nth(1).unwrap_or_default();
        if stated != self.index.to_string() {
            return Err(ReceiptError::EntryIndex {
                index: self.index,
                found: stated.to_string(),
            });
        }
        let proof = self
            .inclusion_proof
            .iter()
            .enumerate()
            .map(|(n, h)| {
                BASE64
                    .decode(h)
                    .ok()
                    .and_then(|h| Hash::try_from(h.as_slice()).ok())
                    .ok_or(ReceiptError::ProofHash(n))
            })
            .collect::<Result<Vec<Hash>, _>>()?;
        let leaf = merkle::leaf_hash(self.entry.as_bytes());
        if !merkle::verify_inclusion(&leaf, self.index, self.tree_size, &proof, &body.root) {
            return Err(ReceiptError::Inclusion { index: self.index });
        }
        let mut cosigned_by = Vec::new();
        let mut missing = Vec::new();
        for w in witnesses {
            match verify_cosignature(&self.checkpoint, w) {
                Ok(time) => cosigned_by.push((w.name().to_string(), time)),
                Err(CosignatureError::Missing { name, .. }) => missing.push(name),
                Err(e) => return Err(e.into()),
            }
        }
        if cosigned_by.len() < quorum {
            return Err(ReceiptError::Quorum {
                have: cosigned_by.len(),
                need: quorum,
                missing: missing.join(", "),
            });
        }
        Ok(Verified {
            origin: body.origin,
            size: body.size,
            root: body.root,
            cosigned_by,
        })
    }
}

#[cfg(test)]
mod tests {
    use ed25519_dalek::SigningKey;

    use super::*;
    use crate::log::LedgerKey;
    use crate::witness::cosignature::Cosigner;

    /// A receipt of entry `index` of a log of `size` sale lines, made here
    /// from the Merkle functions alone (no storage), signed by `key`.
    fn made(key: &LedgerKey, size: u64, index: u64) -> Receipt {
        let lines: Vec<String> = (0..size)
            .map(|i| format!("sale/v1|{i}|ile-au-tresor|1|1|{i}|2026-01-05T10:00:00Z\n"))
            .collect();
        let leaves: Vec<Hash> = lines
            .iter()
            .map(|l| merkle::leaf_hash(l.as_bytes()))
            .collect();
        let proof = merkle::inclusion_proof(&leaves, index as usize).unwrap();
        Receipt {
            entry: lines[index as usize].clone(),
            index,
            tree_size: size,
            inclusion_proof: proof.iter().map(|h| BASE64.encode(h)).collect(),
            checkpoint: key.sign_checkpoint(size, &merkle::root_from_hashes(&leaves)),
        }
    }

    #[test]
    fn every_tampering_of_a_receipt_is_refused_by_its_own_check() {
        let key = LedgerKey::from_signing(SigningKey::from_bytes(&[1; 32]));
        let public = key.public();
        let good = made(&key, 300, 257);
        let proved = good.verify(&public, &[], 0).unwrap();
        assert_eq!(proved.size, 300);
        let mut flipped = good.clone();
        let mut h = BASE64.decode(&flipped.inclusion_proof[1]).unwrap();
        h[31] ^= 0x80;
        flipped.inclusion_proof[1] = BASE64.encode(h);
        let mut removed = good.clone();
        removed.inclusion_proof.pop();
        let mut trailing = good.clone();
        trailing.inclusion_proof.push(BASE64.encode([0u8; 32]));
        let mut short_hash = good.clone();
        short_hash.inclusion_proof[0] = BASE64.encode([0u8; 31]);
        let (text, signature) = good
            .checkpoint
            .split_at(good.checkpoint.rfind("\n\n").unwrap());
        let mut unsigned = good.clone();
        unsigned.checkpoint = format!("{text}\n");
        let mut resigned = good.clone();
        resigned.checkpoint = LedgerKey::from_signing(SigningKey::from_bytes(&[2; 32]))
            .sign_checkpoint(300, &[0; 32]);
        let mut altered = good.clone();
        altered.checkpoint = good.checkpoint.replacen("\n300\n", "\n301\n", 1);
        let mut moved = good.clone();
        moved.entry = good.entry.replacen("|257|", "|256|", 1);
        let mut grown = good.clone();
        grown.entry.push('x');
        for (what, receipt, check) in [
            ("a proof hash flipped", flipped, "inclusion"),
            ("a proof hash removed", removed, "inclusion"),
            ("a proof hash added", trailing, "inclusion"),
            ("a proof hash of 31 bytes", short_hash, "hash"),
            ("no signature line", unsigned, "note"),
            ("signed by another key", resigned, "signature"),
            ("the size line altered", altered, "signature"),
            ("the entry's position altered", moved, "position"),
            ("trailing garbage in the entry", grown, "inclusion"),
        ] {
            let refused = receipt.verify(&public, &[], 0).expect_err(what);
            let found = match refused {
                ReceiptError::Inclusion { .. } => "inclusion",
                ReceiptError::ProofHash(_) => "hash",
                ReceiptError::Note(_) => "note",
                ReceiptError::LogSignature { .. } => "signature",
                ReceiptError::EntryIndex { .. } => "position",
                other => panic!("{what}: {other:?}"),
            };
            assert_eq!(found, check, "{what}");
        }
        assert!(signature.starts_with("\n\n\u{2014} ticket-issuer/ledger/"));
        // The receipt's size must be the checkpoint's, even where the
        // proof's shape would fit another size.
        let mut resized = good.clone();
        resized.tree_size = 299;
        assert!(matches!(
            resized.verify(&public, &[], 0),
            Err(ReceiptError::TreeSize {
                receipt: 299,
                checkpoint: 300
            })
        ));
    }

    #[test]
    fn witnesses_count_towards_the_quorum_and_a_bad_line_is_refused() {
        let key = LedgerKey::from_signing(SigningKey::from_bytes(&[1; 32]));
        let good = made(&key, 5, 4);
        let text = &good.checkpoint[..=good.checkpoint.rfind("\n\n").unwrap()];
        let (a, b) = (
            Cosigner::new(SigningKey::from_bytes(&[3; 32]), Some("a.example/w")).unwrap(),
            Cosigner::new(SigningKey::from_bytes(&[4; 32]), Some("b.example/w")).unwrap(),
        );
        let both = [a.vkey().clone(), b.vkey().clone()];
        let mut cosigned = good.clone();
        cosigned.checkpoint.push_str(&a.cosign(text, 100));
        let proved = cosigned.verify(&key.public(), &both, 1).unwrap();
        assert_eq!(proved.cosigned_by, [("a.example/w".to_string(), 100)]);
        assert!(matches!(
            cosigned.verify(&key.public(), &both, 2),
            Err(ReceiptError::Quorum { have: 1, need: 2, ref missing }) if missing == "b.example/w"
        ));
        // A's line moved to another time: refused, not merely not counted.
        let mut other_time = good.clone();
        let line = a.cosign(text, 100);
        let (name, blob) = line.trim_end().rsplit_once(' ').unwrap();
        let mut blob = BASE64.decode(blob).unwrap();
        blob[11] ^= 1;
        other_time
            .checkpoint
            .push_str(&format!("{name} {}\n", BASE64.encode(blob)));
        assert!(matches!(
            other_time.verify(&key.public(), &both, 0),
            Err(ReceiptError::Cosignature(CosignatureError::Invalid { .. }))
        ));
    }
}
