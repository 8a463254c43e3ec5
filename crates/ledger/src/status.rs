//! What a store holds (`issuer status`): every emission of every game, its
//! blocks and prices, whether it is open, closed or revealed, and what the
//! ledger has redeemed of it. Reads only: nothing is created or repaired.

use std::collections::BTreeSet;

use ed25519_dalek::VerifyingKey;
use serde::Serialize;

use crate::emission::{Emission, Manifest};
use crate::error::Error;
use crate::fsutil;
use crate::game::Game;
use crate::ledger::Ledger;
use crate::money::Cents;
use crate::store::Store;

/// An emission's state in its life (docs/EMISSIONS.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EmissionState {
    /// Blocks may still be added.
    Open,
    /// No more blocks; units may be sold and redeemed.
    Closed,
    /// Seeds revealed: redemption is over.
    Revealed,
}

/// Whether an emission's manifest signature was checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SignatureCheck {
    /// It verifies with the store's public key.
    Ok,
    /// It does not verify, or is missing: run `issuer verify --emission N`.
    Failed,
    /// The store has no public key to check it with.
    Unchecked,
}

/// One emission, as `issuer status` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct EmissionStatus {
    /// Game slug.
    pub game: &'static str,
    /// Emission number.
    pub emission: u32,
    /// Open, closed or revealed.
    pub state: EmissionState,
    /// The manifest's signature.
    pub manifest_signature: SignatureCheck,
    /// Blocks listed in the manifest.
    pub blocks: usize,
    /// Units in those blocks.
    pub units: u64,
    /// The unit prices of its blocks, euros.
    pub prices: Vec<String>,
    /// Units the ledger has redeemed.
    pub redeemed_units: u64,
    /// Amount the ledger has paid, euros.
    pub redeemed_amount: String,
}

/// Every emission of the store.
#[derive(Clone, Debug, Serialize)]
pub struct StoreStatus {
    /// The store folder.
    pub store: String,
    /// Whether the store holds the issuer's secrets (an issuer's store) or
    /// not (an auditor's or a redemption service's).
    pub has_secrets: bool,
    /// The emissions, by game then number.
    pub emissions: Vec<EmissionStatus>,
}

/// The status of every emission in `store`.
pub fn store_status(store: &Store) -> Result<StoreStatus, Error> {
    let trusted = match store.public_key_path().exists() {
        true => Some(store.public_key()?),
        false => None,
    };
    // The ledger is read only when it exists: a status never creates one.
    let ledger = match store.ledger_path().is_file() {
        true => Some(Ledger::open(&store.ledger_path())?.summary()?),
        false => None,
    };
    let mut emissions = Vec::new();
    for game in Game::all() {
        for number in store.emissions(game) {
            let emission = Emission::new(store, game, number);
            let (manifest, manifest_signature) = read_manifest(&emission, trusted.as_ref())?;
            let state = match (
                emission.is_revealed(),
                manifest.as_ref().is_some_and(|m| m.closed),
            ) {
                (true, _) => EmissionState::Revealed,
                (false, true) => EmissionState::Closed,
                (false, false) => EmissionState::Open,
            };
            let listed = manifest.as_ref().map_or(&[][..], |m| &m.blocks[..]);
            let prices: BTreeSet<u32> = listed
                .iter()
                .filter_map(|b| Cents::parse_price(&b.price))
                .collect();
            let (mut redeemed_units, mut redeemed_amount) = (0, Cents::ZERO);
            for line in ledger.iter().flat_map(|l| &l.blocks) {
                if line.game == game.slug() && line.emission == number {
                    redeemed_units += line.units;
                    redeemed_amount.0 += line.paid.0;
                }
            }
            emissions.push(EmissionStatus {
                game: game.slug(),
                emission: number,
                state,
                manifest_signature,
                blocks: listed.len(),
                units: listed.iter().map(|b| u64::from(b.units)).sum(),
                prices: prices
                    .into_iter()
                    .map(|c| Cents::from(c).to_string())
                    .collect(),
                redeemed_units,
                redeemed_amount: redeemed_amount.to_string(),
            });
        }
    }
    Ok(StoreStatus {
        store: store.root().display().to_string(),
        has_secrets: store.master_path().exists(),
        emissions,
    })
}

/// The manifest (`None` when it has none yet) and whether `trusted` signed
/// it, read as one unit with its signature.
fn read_manifest(
    emission: &Emission,
    trusted: Option<&VerifyingKey>,
) -> Result<(Option<Manifest>, SignatureCheck), Error> {
    let (path, bytes, check) = match trusted {
        None => {
            let path = emission.manifest_path();
            let bytes = fsutil::read_small_if_exists(&path, fsutil::MANIFEST_LIMIT)?;
            (path, bytes, SignatureCheck::Unchecked)
        }
        Some(key) => match emission.read_signed_manifest(key)? {
            Some(read) if read.signed => (read.path, Some(read.bytes), SignatureCheck::Ok),
            Some(read) => (read.path, Some(read.bytes), SignatureCheck::Failed),
            None => (emission.manifest_path(), None, SignatureCheck::Failed),
        },
    };
    let manifest = bytes
        .map(|bytes| Manifest::parse(&path, &bytes))
        .transpose()?;
    Ok((manifest, check))
}
