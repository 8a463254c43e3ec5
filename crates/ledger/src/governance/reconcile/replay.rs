//! A unit played step by step, decoded from its sealed record
//! ([`Replay`]): what it pays at a stop or its end, and the most it may
//! still pay.

use crate::game::{Game, GameUnit, LotTable};

/// A unit played step by step, decoded from its sealed record.
pub(super) struct Replay {
    pub(super) digest: [u8; 32],
    pub(super) unit: Result<Box<dyn GameUnit>, String>,
}

impl Replay {
    /// What the unit pays stopped after `stop` steps (`None`: at its end).
    pub(super) fn prize(
        &self,
        game: Game,
        table: &LotTable,
        stop: Option<i64>,
    ) -> Result<(u8, u32), String> {
        let unit = self.unit.as_ref().map_err(Clone::clone)?;
        let stop = stop
            .map(|s| u32::try_from(s).map_err(|_| format!("a stop of {s} steps")))
            .transpose()?;
        let played = unit.outcome(stop).map_err(|r| match r {
            crate::game::StopRefusal::Refused(m) | crate::game::StopRefusal::Invalid(m) => m,
        })?;
        let prize = game
            .prize_cents(&played, table)
            .ok_or_else(|| format!("its lot {} is not in the block's table", played.lot))?;
        Ok((played.lot, prize))
    }

    /// The steps to its end.
    pub(super) fn end_step(&self) -> Option<u32> {
        let unit = self.unit.as_ref().ok()?;
        Some(unit.tape()?.end_step())
    }

    /// The most it may still pay after `rolls` steps revealed: the prize at
    /// its end, or at any stop still allowed.
    pub(super) fn most(&self, game: Game, table: &LotTable, rolls: i64, fallback: u32) -> u32 {
        let end = self.prize(game, table, None).map_or(fallback, |(_, p)| p);
        let last = self.end_step().map_or(0, i64::from);
        (rolls.max(0)..last)
            .filter_map(|s| self.prize(game, table, Some(s)).ok())
            .map(|(_, p)| p)
            .fold(end, u32::max)
    }
}
