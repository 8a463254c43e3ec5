//! Operations under a client's idempotency key (docs/API.md
//! §Idempotency): the key and a digest of the request go into the ledger
//! with the operation, in its transaction; a retry with the same key and
//! request is answered as the first time, and the same key with another
//! request is refused.

use crate::error::Error;
use crate::ledger::ops::{check_key, request_digest, scoped_key, Keyed, Op};

/// A key with the request it was given for.
#[derive(Clone, Debug)]
pub struct KeyedRequest {
    key: String,
    request: [u8; 32],
    what: String,
}

impl KeyedRequest {
    /// `key`, given in `lane` (`None`: the operator's own commands), for
    /// the request made of `parts` (its kind first); refuses a malformed
    /// key. Each lane's keys are its own.
    pub fn new(lane: Option<&str>, key: &str, parts: &[&str]) -> Result<KeyedRequest, Error> {
        check_key(key)?;
        Ok(KeyedRequest {
            key: scoped_key(lane, key),
            request: request_digest(parts),
            what: parts.join(" "),
        })
    }

    /// Unit `n` of a batch under this key (`KEY#n`).
    #[must_use]
    pub fn unit_of_batch(&self, n: usize) -> KeyedRequest {
        KeyedRequest {
            key: format!("{}#{n}", self.key),
            request: self.request,
            what: self.what.clone(),
        }
    }

    /// The key as the ledger stores it (scoped by its lane).
    #[must_use]
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The request's digest, hex, as the ledger keeps it.
    #[must_use]
    pub fn request_hex(&self) -> String {
        hex::encode(self.request)
    }
}

/// `op` under `key`, when there is one.
pub(super) fn op(key: Option<KeyedRequest>, op: Op) -> Op {
    match key {
        Some(k) => Op::Keyed(Keyed {
            key: k.key,
            request: k.request,
            what: k.what,
            op: Box::new(op),
        }),
        None => op,
    }
}

/// The parts of a batch request: its lines, each an ID as given and its
/// stop, digested into one part.
#[must_use]
pub fn batch_parts<'a>(units: impl Iterator<Item = (&'a str, Option<u32>)>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (id, stop) in units {
        h.update(id.as_bytes());
        h.update(b"\t");
        h.update(stop.map(|s| s.to_string()).unwrap_or_default().as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}
