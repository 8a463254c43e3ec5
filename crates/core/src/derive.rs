//! Keyed derivations from the issuer's master secret, and from the shares
//! of an emission whose seeds no one party controls (docs/FORMAT.md §Keys).
//!
//! Every secret the tool uses is HMAC-SHA256 of the master secret (or of a
//! value derived from it, or of a share-derived emission's seed key) over a
//! label naming what it is for, so revealing one (a block seed, an
//! emission's records key) reveals nothing about any other.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::game::GameId;

type HmacSha256 = Hmac<Sha256>;

/// The label prefix shared by every derivation; the version lets a future
/// scheme coexist.
const LABEL_PREFIX: &str = "ticket-issuer/v1/";

/// Length of a unit's check code in bytes (40 bits).
pub const CHECK_CODE_LEN: usize = 5;

/// HMAC-SHA256(key, message).
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// SHA-256 of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// The 32-byte seed of one block: `HMAC(key, "ticket-issuer/v1/block-seed/<game>/<emission>/<block>")`,
/// `key` the master secret, or the emission seed key of an emission made
/// from shares ([`emission_seed_key`]).
pub fn block_seed(key: &[u8; 32], game: impl Into<GameId>, emission: u32, block: u32) -> [u8; 32] {
    let label = format!(
        "{LABEL_PREFIX}block-seed/{}/{emission}/{block}",
        game.into().slug
    );
    hmac_sha256(key, label.as_bytes())
}

/// The published commitment to a block seed: SHA-256(seed).
pub fn seed_commitment(seed: &[u8; 32]) -> [u8; 32] {
    sha256(seed)
}

/// A unit's check code: the first 5 bytes of
/// HMAC(block seed, "ticket-issuer/v1/check-code/" || index as u32 LE).
pub fn check_code(block_seed: &[u8; 32], index: u32) -> [u8; CHECK_CODE_LEN] {
    CheckCodes::new(block_seed).code(index)
}

/// The check codes of one block: the HMAC keyed with its seed, its key
/// schedule and label absorbed once, cloned for each unit (so a unit costs
/// the message's compression and the outer hash, no allocation).
#[derive(Clone)]
pub struct CheckCodes {
    keyed: HmacSha256,
}

/// The label of check codes.
const CHECK_CODE_LABEL: &[u8] = b"ticket-issuer/v1/check-code/";

impl CheckCodes {
    /// The check codes of the block with this seed.
    pub fn new(block_seed: &[u8; 32]) -> CheckCodes {
        let mut keyed =
            HmacSha256::new_from_slice(block_seed).expect("HMAC takes keys of any length");
        keyed.update(CHECK_CODE_LABEL);
        CheckCodes { keyed }
    }

    /// Unit `index`'s check code.
    #[inline]
    pub fn code(&self, index: u32) -> [u8; CHECK_CODE_LEN] {
        let mut mac = self.keyed.clone();
        mac.update(&index.to_le_bytes());
        let full = mac.finalize().into_bytes();
        let mut code = [0u8; CHECK_CODE_LEN];
        code.copy_from_slice(&full[..CHECK_CODE_LEN]);
        code
    }
}

/// The records key of a whole emission: `HMAC(master, "ticket-issuer/v1/records-key/<game>/<emission>")`.
/// Each block's key derives from it, so handing it over opens every block of
/// that emission and nothing else.
pub fn emission_records_key(master: &[u8; 32], game: impl Into<GameId>, emission: u32) -> [u8; 32] {
    let label = format!("{LABEL_PREFIX}records-key/{}/{emission}", game.into().slug);
    hmac_sha256(master, label.as_bytes())
}

/// One block's records key: `HMAC(emission records key, "ticket-issuer/v1/block-records-key/<block>")`.
pub fn block_records_key(emission_key: &[u8; 32], block: u32) -> [u8; 32] {
    let label = format!("{LABEL_PREFIX}block-records-key/{block}");
    hmac_sha256(emission_key, label.as_bytes())
}

/// The public identifier of a records key, stored in the block header so a
/// wrong key is named as such instead of failing as "corrupt":
/// SHA-256("ticket-issuer/v1/records-key-id" || key).
pub fn records_key_id(key: &[u8; 32]) -> [u8; 32] {
    let mut data = format!("{LABEL_PREFIX}records-key-id").into_bytes();
    data.extend_from_slice(key);
    sha256(&data)
}

/// The commitment an emission's manifest records to the master secret it
/// was begun with: `HMAC(master, "ticket-issuer/v1/master-commitment/<game>/<emission>")`.
/// It reveals nothing of the secret, and lets a later `generate`, `close`
/// or `reveal` refuse a store whose master secret was replaced.
pub fn master_commitment(master: &[u8; 32], game: impl Into<GameId>, emission: u32) -> [u8; 32] {
    let label = format!(
        "{LABEL_PREFIX}master-commitment/{}/{emission}",
        game.into().slug
    );
    hmac_sha256(master, label.as_bytes())
}

/// A party's commitment to its share of emission `emission`'s seed key:
/// SHA-256("ticket-issuer/v1/share-commitment/<game>/<emission>" || 0x00 ||
/// party || 0x00 || share). It names the emission, so a commitment (and the
/// share behind it) serves that emission only.
pub fn share_commitment(
    game: impl Into<GameId>,
    emission: u32,
    party: &str,
    share: &[u8; 32],
) -> [u8; 32] {
    let mut data = format!(
        "{LABEL_PREFIX}share-commitment/{}/{emission}",
        game.into().slug
    )
    .into_bytes();
    data.push(0);
    data.extend_from_slice(party.as_bytes());
    data.push(0);
    data.extend_from_slice(share);
    sha256(&data)
}

/// A beacon round's part in [`seed_contributions`]: its name, round and value.
#[derive(Clone, Copy, Debug)]
pub struct BeaconRound<'a> {
    /// The beacon's name, as the manifest gives it.
    pub name: &'a str,
    /// The round named in advance.
    pub round: u64,
    /// The round's value, as published by the beacon.
    pub value: &'a [u8],
}

/// The digest of everything an emission's seed key is made from:
/// SHA-256("ticket-issuer/v1/seed-contributions" || 0x00 || n as u32 LE ||
/// for each share, by party name in ascending byte order: party || 0x00 ||
/// share || then 0x00 without a beacon, or 0x01 || beacon name || 0x00 ||
/// round as u64 LE || value length as u32 LE || value). Party and beacon
/// names hold no 0x00, so the encoding reads back one way only.
pub fn seed_contributions(shares: &[(&str, &[u8; 32])], beacon: Option<BeaconRound>) -> [u8; 32] {
    let mut sorted = shares.to_vec();
    sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut data = format!("{LABEL_PREFIX}seed-contributions").into_bytes();
    data.push(0);
    data.extend_from_slice(&(sorted.len() as u32).to_le_bytes());
    for (party, share) in sorted {
        data.extend_from_slice(party.as_bytes());
        data.push(0);
        data.extend_from_slice(share);
    }
    match beacon {
        None => data.push(0),
        Some(b) => {
            data.push(1);
            data.extend_from_slice(b.name.as_bytes());
            data.push(0);
            data.extend_from_slice(&b.round.to_le_bytes());
            data.extend_from_slice(&(b.value.len() as u32).to_le_bytes());
            data.extend_from_slice(b.value);
        }
    }
    sha256(&data)
}

/// The seed key of an emission made from shares: `HMAC(contributions,
/// "ticket-issuer/v1/emission-seed-key/<game>/<emission>")`, the key its
/// block seeds derive from ([`block_seed`]) in place of the master secret.
pub fn emission_seed_key(
    contributions: &[u8; 32],
    game: impl Into<GameId>,
    emission: u32,
) -> [u8; 32] {
    let label = format!(
        "{LABEL_PREFIX}emission-seed-key/{}/{emission}",
        game.into().slug
    );
    hmac_sha256(contributions, label.as_bytes())
}
