//! Receipts for players (docs/REDEMPTION.md §Receipts): a sale's or a
//! redemption's log entry proved against the published checkpoint, made
//! only when asked, so a sale or a redemption pays nothing otherwise.

use serde::Serialize;

use super::redemption::Redemption;
use super::state::Redeemer;
use crate::error::Error;
use crate::ledger::log::StoredEntry;
use crate::ledger::ops::UnitRef;
use crate::ledger::receipt::{self, Receipt};
use crate::unit_id::UnitId;

use super::sale::Sale;

/// One entry of a unit and its receipt, as far as the log has it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct EntryReceipt {
    /// Its position in the log; `null` while queued for the sequencer
    /// (PostgreSQL, docs/REDEMPTION.md §Sequencing).
    pub index: Option<u64>,
    /// Its receipt; `null` until the published checkpoint covers it.
    pub receipt: Option<Receipt>,
}

/// The receipts of a unit's entries against the current published
/// checkpoint (`GET /v1/receipts/{id}`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct UnitReceipts {
    /// The unit ID, normalised.
    pub id: String,
    /// The sale's entry.
    pub sale: EntryReceipt,
    /// The redemption's entry; `null` when not redeemed.
    pub redemption: Option<EntryReceipt>,
}

impl Redeemer {
    /// The receipt of log entry `seq` against the published checkpoint;
    /// `None` when the checkpoint does not cover it yet (or there is no
    /// ledger).
    pub fn receipt(&self, seq: u64) -> Result<Option<Receipt>, Error> {
        Ok(self
            .ledger
            .with_log(|source| receipt::receipt(source, seq, self.publication))?
            .flatten())
    }

    /// `r` with its receipt (`null` when not under the published
    /// checkpoint yet, or queued for the sequencer).
    pub fn with_receipt(&self, mut r: Redemption) -> Result<Redemption, Error> {
        let seq = r.ledger_entry.as_ref().and_then(|e| e.seq);
        r.receipt = Some(self.maybe_receipt(seq)?.map(Box::new));
        Ok(r)
    }

    /// `sale` with its receipt (see [`Redeemer::with_receipt`]).
    pub fn sale_with_receipt(&self, mut sale: Sale) -> Result<Sale, Error> {
        sale.receipt = Some(self.maybe_receipt(sale.ledger_entry)?);
        Ok(sale)
    }

    fn maybe_receipt(&self, seq: Option<u64>) -> Result<Option<Receipt>, Error> {
        Ok(match seq {
            Some(seq) => self.receipt(seq)?,
            None => None,
        })
    }

    /// The receipts of `id`'s sale and redemption against the published
    /// checkpoint. The ID is authenticated first, as a check does (a wrong
    /// check code is refused the same way, before the ledger is read); a
    /// unit never sold is refused `not_sold`.
    pub fn receipts(&self, id: &UnitId) -> Result<UnitReceipts, Error> {
        self.units.locate(id)?;
        let normalised = id.to_string();
        let unit = UnitRef::of(id);
        let place = unit.place();
        let found = self.ledger.with_log(|source| {
            let of = |e: StoredEntry| -> Result<EntryReceipt, Error> {
                Ok(EntryReceipt {
                    index: e.seq,
                    receipt: match e.seq {
                        Some(seq) => receipt::receipt(source, seq, self.publication)?,
                        None => None,
                    },
                })
            };
            let Some(sale) = source.sale_entry(place)? else {
                return Ok(None);
            };
            Ok(Some(UnitReceipts {
                id: normalised.clone(),
                sale: of(sale)?,
                redemption: source.redemption_entry(place)?.map(of).transpose()?,
            }))
        })?;
        found.flatten().ok_or(Error::NotSold { id: normalised })
    }
}
