//! Idempotency keys (docs/API.md §Idempotency): how a client's key is
//! checked and stored in its platform's lane, and the digest of the request
//! it was first used for.

use crate::error::Error;

/// The key a client gave, from the key a ledger stores (`LANE/KEY` or
/// `KEY`).
#[must_use]
pub fn client_key(stored: &str) -> &str {
    stored.split_once('/').map_or(stored, |(_, key)| key)
}

/// The key a ledger stores for `key` given in `lane` (`None`: the
/// operator's own commands): each platform's keys are its own
/// (docs/API.md §Idempotency).
#[must_use]
pub fn scoped_key(lane: Option<&str>, key: &str) -> String {
    match lane {
        Some(lane) => format!("{lane}/{key}"),
        None => key.to_string(),
    }
}

/// Refuses a lane (a token's name) other than 1 to 64 letters, digits,
/// `_`, `-` and `.`: it is part of stored keys (`LANE/KEY`).
pub fn check_lane(name: &str) -> Result<(), String> {
    if (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
    {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a platform name: 1 to 64 letters, digits, `_`, `-` and `.` (a token's name in the token file)"
        ))
    }
}

/// Most characters of an idempotency key.
pub const MAX_KEY_LEN: usize = 128;

/// Refuses a key that is empty, too long or not of `A-Z a-z 0-9 - _ . :`
/// (a batch's units are kept under `KEY#n`, so `#` is not a key's).
pub fn check_key(key: &str) -> Result<(), Error> {
    let bad = |reason: &str| {
        Err(Error::BadIdempotencyKey {
            key: key.chars().take(MAX_KEY_LEN + 8).collect(),
            reason: reason.into(),
        })
    };
    if key.is_empty() {
        return bad("it is empty");
    }
    if key.len() > MAX_KEY_LEN {
        return bad("it is longer than 128 characters");
    }
    if !key
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
    {
        return bad("it holds a character other than A-Z a-z 0-9 - _ . :");
    }
    Ok(())
}

/// The SHA-256 that identifies a request under a key: of
/// `idempotency/v1` and each part, one a line.
#[must_use]
pub fn request_digest(parts: &[&str]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"idempotency/v1\n");
    for part in parts {
        h.update(part.as_bytes());
        h.update(b"\n");
    }
    h.finalize().into()
}
