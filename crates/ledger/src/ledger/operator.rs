//! The operator's controls over an emission's life (docs/REDEMPTION.md
//! §Suspend, withdraw and void): a block or a whole emission suspended
//! (no sale, play step or redemption until resumed), resumed, withdrawn
//! (never sold again; its sold units still play and redeem), and a sale
//! voided before its play began. Each is a row of `operator_actions` and
//! an entry of the log; every operation reads the emission's standing
//! ([`Gate`]) in its own transaction, so an action holds at the next
//! operation on every node.

use std::collections::BTreeMap;

use serde::Serialize;

pub use ticket_issuer_log::action::{
    check_reason, Action, OperatorAction, HASHED_REASON, MAX_REASON,
};

/// The columns of `operator_actions` that make an action, in the order
/// [`OperatorAction::from_columns`] takes them.
pub const COLUMNS: &str = "action, game, emission, block, unit_index, reason, by_name, at";

/// Where a suspension or withdrawal stands at one level.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Standing {
    /// Suspended: when and why.
    pub suspended: Option<Why>,
    /// Withdrawn: when and why.
    pub withdrawn: Option<Why>,
}

/// When and why an action was taken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Why {
    /// When.
    pub at: String,
    /// Why.
    pub reason: String,
}

/// An emission's standing as every operation reads it: its end of claims
/// and the suspensions and withdrawals in force, of the emission and of
/// each block.
#[derive(Clone, Debug, Default)]
pub struct Gate {
    /// When the issuer's end of claims was published, if it was.
    pub claims_ended: Option<String>,
    /// The emission's own.
    pub emission: Standing,
    /// Each block's own.
    pub blocks: BTreeMap<u32, Standing>,
    /// The closing statement published: when, and its text (in `reason`).
    pub closing: Option<Why>,
}

impl Gate {
    /// Applies one action (in the order they were recorded).
    pub fn apply(&mut self, action: Action, block: Option<u32>, why: Why) {
        if action == Action::Closing {
            if self.closing.is_none() {
                self.closing = Some(why);
            }
            return;
        }
        let level = match block {
            None => &mut self.emission,
            Some(b) => self.blocks.entry(b).or_default(),
        };
        match action {
            Action::Suspend => level.suspended = Some(why),
            Action::Resume => level.suspended = None,
            Action::Withdraw => {
                if level.withdrawn.is_none() {
                    level.withdrawn = Some(why);
                }
            }
            Action::Void | Action::Closing | Action::EarlyEnd => {}
        }
    }

    /// The level an action on `block` (`None`: the emission) acts on.
    #[must_use]
    pub fn level(&self, block: Option<u32>) -> Standing {
        match block {
            None => self.emission.clone(),
            Some(b) => self.blocks.get(&b).cloned().unwrap_or_default(),
        }
    }

    /// The suspension that holds `block`: the emission's, else its own.
    #[must_use]
    pub fn suspended(&self, block: u32) -> Option<(Option<u32>, &Why)> {
        if let Some(why) = &self.emission.suspended {
            return Some((None, why));
        }
        self.blocks
            .get(&block)
            .and_then(|s| s.suspended.as_ref())
            .map(|why| (Some(block), why))
    }

    /// The withdrawal that holds `block`: the emission's, else its own.
    #[must_use]
    pub fn withdrawn(&self, block: u32) -> Option<(Option<u32>, &Why)> {
        if let Some(why) = &self.emission.withdrawn {
            return Some((None, why));
        }
        self.blocks
            .get(&block)
            .and_then(|s| s.withdrawn.as_ref())
            .map(|why| (Some(block), why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(at: &str) -> Why {
        Why {
            at: at.into(),
            reason: "r".into(),
        }
    }

    #[test]
    fn a_block_is_held_by_its_own_suspension_or_its_emissions_and_a_withdrawal_stays() {
        let mut g = Gate::default();
        g.apply(Action::Suspend, Some(2), why("t1"));
        assert!(g.suspended(2).is_some_and(|(b, _)| b == Some(2)));
        assert!(g.suspended(3).is_none());
        g.apply(Action::Suspend, None, why("t2"));
        assert!(g.suspended(3).is_some_and(|(b, _)| b.is_none()));
        // Resuming the emission leaves block 2's own suspension.
        g.apply(Action::Resume, None, why("t3"));
        assert!(g.suspended(3).is_none());
        assert!(g.suspended(2).is_some());
        g.apply(Action::Resume, Some(2), why("t4"));
        assert!(g.suspended(2).is_none());
        g.apply(Action::Withdraw, Some(4), why("t5"));
        g.apply(Action::Withdraw, Some(4), why("t6"));
        assert_eq!(
            g.withdrawn(4).unwrap().1.at,
            "t5",
            "the first withdrawal stands"
        );
        assert!(g.withdrawn(5).is_none());
    }
}
