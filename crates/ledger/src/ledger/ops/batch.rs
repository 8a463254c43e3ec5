//! A batch's view of the ledger as its operations are applied: the
//! transaction (with the log's right edge, where entries are appended as
//! they commit), the standing of each emission and the sale cursors read
//! so far.

use std::collections::HashMap;

use super::request::UnitRef;
use super::tx::{LedgerTx, Logged};
use crate::error::Error;
use crate::game::Game;
use crate::ledger::operator::Gate;
use crate::merkle::{self, Hash};

/// The batch's view of the ledger: the transaction (and its log), the
/// time of the commit, and the ends of claims read so far.
pub(super) struct Batch<'t> {
    pub(super) tx: &'t mut dyn LedgerTx,
    pub(super) at: &'t str,
    /// The standing of each emission read so far.
    pub(super) gates: HashMap<(&'static str, u32), Gate>,
    /// Sale cursors read or moved in this batch, written once at its end.
    pub(super) cursors: HashMap<(&'static str, u32, u32), (u32, bool)>,
    /// The lane of the operation being applied (its sales are the lane's).
    pub(super) lane: Option<String>,
    /// The request each batch key (`KEY` of `KEY#n`) was first applied
    /// with in this transaction.
    pub(super) batches: HashMap<String, [u8; 32]>,
}

impl Batch<'_> {
    /// A block's sale cursor: every unit before it is sold.
    pub(super) fn cursor(
        &mut self,
        game: &'static str,
        emission: u32,
        block: u32,
    ) -> Result<u32, Error> {
        let key = (game, emission, block);
        if let Some((at, _)) = self.cursors.get(&key) {
            return Ok(*at);
        }
        let at = self.tx.sale_cursor(game, emission, block)?;
        self.cursors.insert(key, (at, false));
        Ok(at)
    }

    /// Moves a block's sale cursor (written at the end of the batch).
    pub(super) fn move_cursor(&mut self, game: &'static str, emission: u32, block: u32, next: u32) {
        self.cursors.insert((game, emission, block), (next, true));
    }

    /// Writes the cursors the batch moved.
    pub(super) fn write_cursors(&mut self) -> Result<(), Error> {
        for (&(game, emission, block), &(next, moved)) in &self.cursors {
            if moved {
                self.tx.set_sale_cursor(game, emission, block, next)?;
            }
        }
        Ok(())
    }

    /// The standing of an emission (read once a batch).
    pub(super) fn gate(&mut self, game: Game, emission: u32) -> Result<&mut Gate, Error> {
        let key = (game.slug(), emission);
        if !self.gates.contains_key(&key) {
            let gate = self.tx.gate(key.0, emission)?;
            self.gates.insert(key, gate);
        }
        Ok(self.gates.entry(key).or_default())
    }

    /// Refuses a unit of an emission whose claims ended.
    pub(super) fn open(&mut self, game: Game, emission: u32) -> Result<(), Error> {
        match &self.gate(game, emission)?.claims_ended {
            Some(at) => Err(Error::ClaimsEnded {
                game: game.slug(),
                emission,
                at: at.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Refuses a unit of an emission whose claims ended, or of a suspended
    /// emission or block. `Ok(Err(_))`: refused; `Err(_)`: the ledger
    /// could not be read.
    pub(super) fn in_play(&mut self, unit: UnitRef) -> Result<Result<(), Error>, Error> {
        if let Err(refused) = self.open(unit.game, unit.emission) {
            return match refused {
                Error::ClaimsEnded { .. } => Ok(Err(refused)),
                failed => Err(failed),
            };
        }
        let gate = self.gate(unit.game, unit.emission)?;
        Ok(match gate.suspended(unit.block) {
            Some((block, why)) => Err(Error::Suspended {
                game: unit.game.slug(),
                emission: unit.emission,
                block,
                at: why.at.clone(),
            }),
            None => Ok(()),
        })
    }

    /// The next log position and the leaf of `line` there; `None` when
    /// entries are queued.
    pub(super) fn append(&mut self, line: impl FnOnce(u64) -> String) -> Option<(u64, Hash)> {
        let seq = self.tx.log_edge()?.size();
        Some((seq, merkle::leaf_hash(line(seq).as_bytes())))
    }

    /// Adds an entry [`Self::append`] placed, once its row is written.
    pub(super) fn push(&mut self, logged: Option<(u64, Hash)>) {
        if let (Some(frontier), Some((_, leaf))) = (self.tx.log_edge(), logged) {
            frontier.push(leaf);
        }
    }
}

/// An entry's place as the write methods take it.
pub(super) fn borrowed(logged: &Option<(u64, Hash)>) -> Logged<'_> {
    logged.as_ref().map(|(seq, leaf)| (*seq, leaf))
}
