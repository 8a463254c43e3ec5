//! What a redemption answers ([`Redemption`]) and the keys a redemption is
//! made with ([`RedeemKeys`], borrowed; [`OwnedKeys`], a redeemer's own).

use std::path::PathBuf;

use ed25519_dalek::VerifyingKey;
use serde::Serialize;

use crate::ledger::receipt::Receipt;
use crate::ledger::Committed;
use crate::records_key::{KeyAccess, RecordsKeyFile};
use crate::store::Secrets;

/// What a redemption (or a check) found, as `redeem --json` prints it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Redemption {
    /// The unit ID, normalised.
    pub id: String,
    /// Game slug.
    pub game: String,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block's number within its emission.
    pub block: u32,
    /// Unit index.
    pub index: u32,
    /// Lot name, or null for a losing unit.
    pub lot: Option<&'static str>,
    /// Prize in euros ("0" for a loser).
    pub prize: String,
    /// Where the player stopped (Trésors Ensablés' "Arrêter"): the steps
    /// played before; null when the unit was played to the end. On the
    /// wire `stopped_after_rolls`, today's name.
    #[serde(rename = "stopped_after_rolls")]
    pub stopped_after_steps: Option<u32>,
    /// The unit's record, hex (the Merkle leaf's data).
    pub record: String,
    /// Leaf index in the block's tree (= unit index).
    pub leaf_index: u64,
    /// Leaves in the block's tree.
    pub tree_size: u64,
    /// RFC 9162 §2.1.3 inclusion proof, bottom-up, hex.
    pub inclusion_proof: Vec<String>,
    /// The block's sealed Merkle root, hex.
    pub merkle_root: String,
    /// When the ledger recorded it (RFC 3339 UTC); null for `--check`.
    pub redeemed_at: Option<String>,
    /// For `--check`: an earlier redemption's time, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_redeemed_at: Option<String>,
    /// Where the redemption landed in the ledger's log; for a check, the
    /// earlier redemption's entry (absent when there is none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_entry: Option<Committed>,
    /// When asked for: the entry's receipt against the published
    /// checkpoint (docs/REDEMPTION.md §Receipts), `null` while the entry
    /// is not under it (`GET /v1/receipts/{id}` later); absent when not
    /// asked.
    /// (Boxed: a redemption is passed by value often, a receipt rarely.)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Option<Box<Receipt>>>,
}

/// Where the keys of a redemption come from.
pub struct RedeemKeys<'a> {
    /// The issuer's trusted public key.
    pub public_key: &'a VerifyingKey,
    /// Secrets and/or a records key file.
    pub access: KeyAccess<'a>,
}

/// The keys a long-lived [`Redeemer`](super::Redeemer) owns.
pub struct OwnedKeys {
    /// The issuer's trusted public key.
    pub public_key: VerifyingKey,
    /// The issuer's secrets, when the store has them.
    pub secrets: Option<Secrets>,
    /// Records key files and where each was read (`--records-key`, any
    /// number).
    pub records_keys: Vec<(RecordsKeyFile, PathBuf)>,
}

impl OwnedKeys {
    /// A copy of borrowed keys.
    #[must_use]
    pub fn of(keys: &RedeemKeys) -> OwnedKeys {
        OwnedKeys {
            public_key: *keys.public_key,
            secrets: keys.access.secrets.cloned(),
            records_keys: keys.access.files.to_vec(),
        }
    }

    /// As key access.
    #[must_use]
    pub fn access(&self) -> KeyAccess<'_> {
        KeyAccess {
            secrets: self.secrets.as_ref(),
            files: &self.records_keys,
        }
    }
}
