//! A checkpoint's body (C2SP tlog-checkpoint): origin, size and root.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ticket_issuer_core::merkle::Hash;

/// The first lines of a checkpoint (c2sp.org/tlog-checkpoint).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointBody {
    /// The origin line.
    pub origin: String,
    /// The tree size.
    pub size: u64,
    /// The root hash.
    pub root: Hash,
}

/// Reads origin, size and root from the start of `note` (a checkpoint's
/// text or its whole signed note); extension lines are left alone.
pub fn checkpoint_body(note: &str) -> Result<CheckpointBody, String> {
    let mut lines = note.split('\n');
    let origin = lines.next().unwrap_or_default();
    if origin.is_empty() {
        return Err("the checkpoint has no origin line".into());
    }
    let size = lines
        .next()
        .and_then(decimal)
        .ok_or("the checkpoint's size line is not a decimal number without leading zeroes")?;
    let root = lines
        .next()
        .and_then(|r| BASE64.decode(r).ok())
        .and_then(|r| Hash::try_from(r.as_slice()).ok())
        .ok_or("the checkpoint's root line is not a base64 SHA-256 hash")?;
    Ok(CheckpointBody {
        origin: origin.to_string(),
        size,
        root,
    })
}

/// An ASCII decimal without leading zeroes (`0` itself allowed).
pub(crate) fn decimal(text: &str) -> Option<u64> {
    let canonical = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}
