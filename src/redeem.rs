//! Redeeming a unit by ID (docs/REDEMPTION.md): the ID is checked before any
//! file is touched; then only the header, index and the unit's own chunk
//! are read and authenticated; the outcome comes with an RFC 9162 inclusion
//! proof; the ledger records it exactly once.

use std::path::PathBuf;

use ed25519_dalek::VerifyingKey;
use serde::Serialize;

use crate::block::authentic::AuthenticBlock;
use crate::derive;
use crate::emission::Emission;
use crate::error::Error;
use crate::game::{cents_to_euros, StopRefusal};
use crate::ledger::{Entry, Ledger};
use crate::merkle::{self, Hash};
use crate::record::PREFIX_SIZE;
use crate::records_key::KeyAccess;
use crate::store::Store;
use crate::unit_id::UnitId;
use crate::verify::check_unit;

/// What a redemption (or a check) found, as `redeem --json` prints it.
#[derive(Clone, Debug, Serialize)]
pub struct Redemption {
    /// The unit ID, normalised.
    pub id: String,
    /// Game slug.
    pub game: String,
    /// Emission.
    pub emission: u32,
    /// Block.
    pub block: u32,
    /// Unit index.
    pub index: u32,
    /// Lot name, or null for a losing unit.
    pub lot: Option<&'static str>,
    /// Prize in euros ("0" for a loser).
    pub prize: String,
    /// Where the player pressed "Arrêter" (Trésors Ensablés): the rolls
    /// played before; null when the unit was played to the end.
    pub stopped_after_rolls: Option<u32>,
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
    /// The map as text (human output only).
    #[serde(skip)]
    pub picture: String,
}

/// Where the keys of a redemption come from.
pub struct RedeemKeys<'a> {
    /// The issuer's trusted public key.
    pub public_key: &'a VerifyingKey,
    /// Secrets and/or a records key file.
    pub access: KeyAccess<'a>,
}

/// Checks unit `id` (range and check code before any file is read), finds
/// and authenticates its unit, plays it with the player's `stop` (the rolls
/// played before "Arrêter"; `None`: to the end) and (unless `check_only`)
/// records it in the ledger with that stop.
pub fn redeem(
    store: &Store,
    keys: &RedeemKeys,
    id: &UnitId,
    stop: Option<u32>,
    check_only: bool,
) -> Result<Redemption, Error> {
    let normalised = id.to_string();
    let out_of_range = |units: u32| Error::IndexOutOfRange {
        id: normalised.clone(),
        index: id.index,
        last: units - 1,
    };
    if id.index >= id.game.max_units() {
        return Err(out_of_range(id.game.max_units()));
    }
    if let Some(secrets) = keys.access.secrets {
        let seed = secrets.block_seed(id.game, id.emission, id.block);
        if !same_code(&derive::check_code(&seed, id.index), &id.check_code) {
            return Err(Error::CheckCodeMismatch { id: normalised });
        }
    }
    if Emission::new(store, id.game, id.emission).is_revealed() {
        return Err(Error::EmissionRevealed {
            emission: id.emission,
        });
    }
    let emission_dir = store.emission_dir(id.game, id.emission);
    if !emission_dir.is_dir() {
        return Err(Error::UnknownEmission {
            id: normalised,
            game: id.game.slug(),
            emission: id.emission,
            path: emission_dir,
        });
    }
    let path: PathBuf = store.block_path(id.game, id.emission, id.block);
    if !path.exists() {
        return Err(Error::UnknownBlock {
            id: normalised,
            emission: id.emission,
            block: id.block,
            path,
        });
    }
    let block = AuthenticBlock::open(&path, keys.public_key, keys.access, "redeem")?;
    let h = &block.file.header;
    let reject = |reason: String| Error::BlockRejected {
        path: path.clone(),
        reason,
    };
    if (h.game, h.emission, h.block) != (id.game, id.emission, id.block) {
        return Err(reject(format!(
            "the file holds {}, not the ID's block",
            block.file.describe()
        )));
    }
    if id.index >= h.unit_count {
        return Err(out_of_range(h.unit_count));
    }
    let chunk = id.index / h.chunk_units;
    let in_chunk = (id.index % h.chunk_units) as usize;
    let opened = block.chunk_records(chunk)?;
    let size = usize::from(h.record_size);
    let records = &opened.records;
    let record = &records[in_chunk * size..(in_chunk + 1) * size];
    let prefix = check_unit(h, &block.regulation, id.index, record)
        .map_err(|(_, m)| reject(format!("unit {}: {m}", id.index)))?;
    if !same_code(&prefix.check_code, &id.check_code) {
        return Err(Error::CheckCodeMismatch { id: normalised });
    }
    let payload = &record[PREFIX_SIZE..];
    let played = id.game.outcome(payload, stop).map_err(|e| match e {
        StopRefusal::Refused(reason) => Error::BadStop {
            id: normalised.clone(),
            reason,
        },
        StopRefusal::Invalid(m) => reject(format!("unit {}: {m}", id.index)),
    })?;
    let prize_cents = id
        .game
        .prize_cents(&played, &block.regulation)
        .ok_or_else(|| {
            reject(format!(
                "unit {}: lot {} has no amount",
                id.index, played.lot
            ))
        })?;
    let roots: Vec<Hash> = block.file.index.iter().map(|e| e.subtree_root).collect();
    let proof = merkle::chunked_inclusion_proof(&opened.leaves, in_chunk, &roots, chunk as usize)
        .ok_or_else(|| reject("no inclusion proof can be built for this unit".into()))?;
    if !merkle::verify_inclusion(
        &opened.leaves[in_chunk],
        u64::from(id.index),
        u64::from(h.unit_count),
        &proof,
        &h.merkle_root,
    ) {
        return Err(reject(
            "the unit's inclusion proof does not reach the sealed root".into(),
        ));
    }
    let ledger_path = store.ledger_path();
    let (redeemed_at, already_redeemed_at) = if check_only {
        // A check writes nothing, not even an empty ledger.
        let earlier = match Ledger::open_existing(&ledger_path)? {
            Some(ledger) => ledger.lookup(id.game, id.emission, id.block, id.index)?,
            None => None,
        };
        (None, earlier.map(|r| r.redeemed_at))
    } else {
        let at = Ledger::open(&ledger_path)?.redeem(&Entry {
            game: id.game,
            emission: id.emission,
            block: id.block,
            index: id.index,
            unit_id: normalised.clone(),
            price_cents: h.price_cents,
            lot: played.lot,
            prize_cents,
            record_sha256: hex::encode(derive::sha256(record)),
            record: record.to_vec(),
            rules_version: h.rules_version,
            stopped_after_rolls: stop,
        })?;
        (Some(at), None)
    };
    let picture = id.game.picture(payload, stop).unwrap_or_default();
    Ok(Redemption {
        id: normalised,
        game: id.game.slug().into(),
        emission: id.emission,
        block: id.block,
        index: id.index,
        lot: id.game.lot_name(played.lot),
        prize: cents_to_euros(prize_cents).to_string(),
        stopped_after_rolls: stop,
        record: hex::encode(record),
        leaf_index: u64::from(id.index),
        tree_size: u64::from(h.unit_count),
        inclusion_proof: proof.iter().map(hex::encode).collect(),
        merkle_root: hex::encode(h.merkle_root),
        redeemed_at,
        already_redeemed_at,
        picture,
    })
}

/// Compares check codes without an early exit.
fn same_code(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
