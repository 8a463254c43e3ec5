//! What a store holds (`issuer status`): every emission of every game, its
//! blocks and prices, whether it is open, closed or revealed, whether its
//! claims ended, and per emission and block what the ledger (the store's
//! or a shared one) has sold, played to the end and redeemed of it. Reads
//! only: nothing is created or repaired.

use std::collections::BTreeSet;

use ed25519_dalek::VerifyingKey;
use serde::Serialize;

use crate::emission::{Emission, Manifest};
use crate::error::Error;
use crate::fsutil;
use crate::game::Game;
use crate::ledger::emission_rows::EmissionRow;
use crate::ledger::operator::Gate;
use crate::ledger::target::LedgerTarget;
use crate::ledger::BlockActivity;
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
    /// Units the ledger has sold, voided sales not counted.
    pub sold: u64,
    /// Sales voided (refunded, never paid; the units never sold again).
    pub voided: u64,
    /// Units not sold yet, on sale or suspended (not withdrawn).
    pub unsold: u64,
    /// Units never to be sold: the unsold units of withdrawn blocks.
    pub withdrawn: u64,
    /// Plays the ledger has seen end (Trésors Ensablés).
    pub played: u64,
    /// Units the ledger has redeemed.
    pub redeemed_units: u64,
    /// Amount the ledger has paid, euros.
    pub redeemed_amount: String,
    /// When the operator suspended the whole emission, if it is.
    pub suspended_since: Option<String>,
    /// Why (the reason the suspension was recorded with).
    pub suspended_reason: Option<String>,
    /// Each sale voided: the unit's place, the reason and when.
    pub voids: Vec<VoidLine>,
    /// When the issuer's end of claims was published in the ledger, if it
    /// was: no unit of the emission is sold, played or paid since.
    pub claims_ended_at: Option<String>,
    /// Each block listed in the manifest.
    pub block_status: Vec<BlockStatus>,
}

/// One block of an emission, as `issuer status` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct BlockStatus {
    /// Block number.
    pub block: u32,
    /// Unit price, euros.
    pub price: String,
    /// Units in the block.
    pub units: u64,
    /// Units sold, voided sales not counted.
    pub sold: u64,
    /// Sales voided.
    pub voided: u64,
    /// Units not sold yet, on sale or suspended (0 once withdrawn).
    pub unsold: u64,
    /// Unsold units never to be sold: the block (or its emission) is
    /// withdrawn.
    pub withdrawn: u64,
    /// `on_sale`, `suspended` (by its emission or itself) or `withdrawn`.
    pub standing: Standing,
    /// Since when it is suspended or withdrawn.
    pub since: Option<String>,
    /// Why it is suspended or withdrawn (the reason recorded).
    pub reason: Option<String>,
    /// Plays ended.
    pub played: u64,
    /// Units redeemed.
    pub redeemed_units: u64,
    /// Amount paid, euros.
    pub redeemed_amount: String,
}

/// A sale voided (docs/REDEMPTION.md §Suspend, withdraw and void).
#[derive(Clone, Debug, Serialize)]
pub struct VoidLine {
    /// Block number.
    pub block: u32,
    /// The unit's index in its block.
    pub index: u32,
    /// Why, as recorded.
    pub reason: String,
    /// When.
    pub at: String,
}

/// Whether a block's units are on sale (docs/REDEMPTION.md §Suspend,
/// withdraw and void).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Sold, played and redeemed as usual.
    OnSale,
    /// Nothing sold, played or redeemed until resumed.
    Suspended,
    /// Never sold again; its sold units play and redeem.
    Withdrawn,
}

/// Every emission of the store.
#[derive(Clone, Debug, Serialize)]
pub struct StoreStatus {
    /// The store folder.
    pub store: String,
    /// The ledger read (a path, or a URL without its password).
    pub ledger: String,
    /// Whether the store holds the issuer's secrets (an issuer's store) or
    /// not (an auditor's or a redemption service's).
    pub has_secrets: bool,
    /// The emissions, by game then number.
    pub emissions: Vec<EmissionStatus>,
}

/// The status of every emission in `store`, with what `ledger` recorded
/// of it. A store folder that does not exist is an error (a mistyped
/// `--store`), not an empty store.
pub fn store_status(store: &Store, ledger: &LedgerTarget) -> Result<StoreStatus, Error> {
    if !store.root().is_dir() {
        return Err(Error::NoStore {
            store: store.root().to_path_buf(),
        });
    }
    let trusted = match store.public_key_path().exists() {
        true => Some(store.public_key()?),
        false => None,
    };
    // Read only: a status never creates a ledger.
    let activity = ledger.activity()?;
    let mut emissions = Vec::new();
    for game in Game::all() {
        for number in store.emissions(game) {
            let emission = Emission::new(store, game, number);
            let (manifest, manifest_signature) = read_manifest(&emission, trusted.as_ref())?;
            let closed = manifest.as_ref().is_some_and(|m| m.closed);
            let state = match (emission.is_revealed(), closed) {
                (true, _) => EmissionState::Revealed,
                (false, true) => EmissionState::Closed,
                (false, false) => EmissionState::Open,
            };
            let listed = manifest.as_ref().map_or(&[][..], |m| &m.blocks[..]);
            let prices: BTreeSet<u32> = listed
                .iter()
                .filter_map(|b| Cents::parse_price(&b.price))
                .collect();
            let gate = match closed {
                true => ledger.gate(game, number)?.unwrap_or_default(),
                false => Gate::default(),
            };
            let block_status: Vec<BlockStatus> = listed
                .iter()
                .map(|b| {
                    let a = activity
                        .iter()
                        .find(|a| {
                            a.game == game.slug() && a.emission == number && a.block == b.block
                        })
                        .cloned()
                        .unwrap_or_default();
                    let mut line = block_status(b.block, &b.price, u64::from(b.units), &a);
                    let standing = match (gate.withdrawn(b.block), gate.suspended(b.block)) {
                        (Some((_, why)), _) => {
                            (line.withdrawn, line.unsold) = (line.unsold, 0);
                            Some((Standing::Withdrawn, why))
                        }
                        (None, Some((_, why))) => Some((Standing::Suspended, why)),
                        (None, None) => None,
                    };
                    if let Some((standing, why)) = standing {
                        line.standing = standing;
                        (line.since, line.reason) =
                            (Some(why.at.clone()), Some(why.reason.clone()));
                    }
                    line
                })
                .collect();
            let sum = |f: fn(&BlockStatus) -> u64| block_status.iter().map(f).sum::<u64>();
            let paid: u64 = activity
                .iter()
                .filter(|a| a.game == game.slug() && a.emission == number)
                .map(|a| a.paid_cents)
                .sum();
            let claims_ended_at = match closed {
                true => ledger.end_of_claims(game, number)?.map(|s| s.ended_at),
                false => None,
            };
            emissions.push(EmissionStatus {
                game: game.slug(),
                emission: number,
                state,
                manifest_signature,
                blocks: listed.len(),
                units: sum(|b| b.units),
                prices: prices
                    .into_iter()
                    .map(|c| Cents::from(c).to_string())
                    .collect(),
                sold: sum(|b| b.sold),
                voided: sum(|b| b.voided),
                unsold: sum(|b| b.unsold),
                withdrawn: sum(|b| b.withdrawn),
                played: sum(|b| b.played),
                redeemed_units: sum(|b| b.redeemed_units),
                redeemed_amount: Cents::from(paid).to_string(),
                suspended_since: gate.emission.suspended.as_ref().map(|w| w.at.clone()),
                suspended_reason: gate.emission.suspended.as_ref().map(|w| w.reason.clone()),
                voids: match sum(|b| b.voided) {
                    0 => Vec::new(),
                    _ => voids(ledger, game, number)?,
                },
                claims_ended_at,
                block_status,
            });
        }
    }
    Ok(StoreStatus {
        store: store.root().display().to_string(),
        ledger: ledger.describe(),
        has_secrets: store.master_path().exists(),
        emissions,
    })
}

/// The sales of `game`'s `emission` voided, with their reasons (read
/// only for an emission that has some).
fn voids(ledger: &LedgerTarget, game: Game, emission: u32) -> Result<Vec<VoidLine>, Error> {
    let mut voids = Vec::new();
    ledger.emission_rows(game, emission, &mut |row| {
        if let EmissionRow::Void(v) = row {
            voids.push(VoidLine {
                block: v.at.block,
                index: v.at.index,
                reason: v.reason,
                at: v.when,
            });
        }
        Ok(())
    })?;
    Ok(voids)
}

/// A block's line from its manifest entry and ledger activity: a voided
/// sale is not counted sold, and its unit is never sold again.
fn block_status(block: u32, price: &str, units: u64, a: &BlockActivity) -> BlockStatus {
    BlockStatus {
        block,
        price: price.to_string(),
        units,
        sold: a.sold.saturating_sub(a.voided),
        voided: a.voided,
        unsold: units.saturating_sub(a.sold),
        withdrawn: 0,
        standing: Standing::OnSale,
        since: None,
        reason: None,
        played: a.played,
        redeemed_units: a.redeemed,
        redeemed_amount: Cents::from(a.paid_cents).to_string(),
    }
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
