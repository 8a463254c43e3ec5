//! What the checks find: a check's failures ([`Problems`]) and what a
//! block's units come to ([`Found`]), merged over chunks and blocks.

use super::returns::Over;
use super::voids::Voids;

/// Examples a failing check names, at most.
pub(super) const EXAMPLES: usize = 5;

/// A check's failures: how many, and the first few.
#[derive(Default)]
pub(super) struct Problems {
    pub(super) count: u64,
    examples: Vec<String>,
}

impl Problems {
    pub(super) fn add(&mut self, what: impl FnOnce() -> String) {
        self.count += 1;
        if self.examples.len() < EXAMPLES {
            self.examples.push(what());
        }
    }

    fn merge(&mut self, other: Problems) {
        self.count += other.count;
        let room = EXAMPLES.saturating_sub(self.examples.len());
        self.examples.extend(other.examples.into_iter().take(room));
    }

    /// `fine` when there is none, else the count and the examples.
    pub(super) fn detail(&self, fine: String) -> String {
        match self.count {
            0 => fine,
            n => {
                let more = match n - self.examples.len() as u64 {
                    0 => String::new(),
                    m => format!("; and {m} more"),
                };
                format!("{n} found: {}{more}", self.examples.join("; "))
            }
        }
    }
}

/// What the units of the blocks come to (merged over chunks and blocks).
#[derive(Default)]
pub(super) struct Found {
    pub(super) paid_unsold: Problems,
    pub(super) played_unsold: Problems,
    pub(super) plays: Problems,
    pub(super) as_played: Problems,
    pub(super) payments: Problems,
    pub(super) voided: Problems,
    pub(super) voids: Voids,
    pub(super) unclaimed: u64,
    pub(super) liability_cents: u64,
    pub(super) over: Over,
}

impl Found {
    pub(super) fn merge(&mut self, other: Found) {
        self.paid_unsold.merge(other.paid_unsold);
        self.played_unsold.merge(other.played_unsold);
        self.plays.merge(other.plays);
        self.as_played.merge(other.as_played);
        self.payments.merge(other.payments);
        self.voided.merge(other.voided);
        self.voids.merge(&other.voids);
        self.unclaimed += other.unclaimed;
        self.liability_cents += other.liability_cents;
        self.over.merge(other.over);
    }
}
