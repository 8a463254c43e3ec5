//! The stopping strategies of the sheet: when a player stops.

use crate::money::Cents;

/// A stopping strategy of the PAR sheet. Every one stops, if at all,
/// right after a chest is opened: the gains change only then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Never press « Arrêter »: play to death or the gold chest.
    NeverStop,
    /// Stop right after the first chest.
    FirstChest,
    /// Stop as soon as the gains found reach this many cents.
    Reach(u32),
}

/// The strategies of the sheet, in its order.
pub const STRATEGIES: [Strategy; 6] = [
    Strategy::NeverStop,
    Strategy::FirstChest,
    Strategy::Reach(50),
    Strategy::Reach(100),
    Strategy::Reach(200),
    Strategy::Reach(500),
];

impl Strategy {
    /// The gains (cents) at which the player stops; `None`: never.
    pub fn threshold_cents(self) -> Option<u32> {
        match self {
            Strategy::NeverStop => None,
            Strategy::FirstChest => Some(1),
            Strategy::Reach(cents) => Some(cents),
        }
    }

    /// Its name in reports: `never-stop`, `first-chest`, `reach-0.5`, ….
    pub fn name(self) -> String {
        match self {
            Strategy::NeverStop => "never-stop".into(),
            Strategy::FirstChest => "first-chest".into(),
            Strategy::Reach(cents) => format!("reach-{}", Cents::from(cents)),
        }
    }

    /// Whether a player with `found_cents` gains, just after opening a
    /// chest, stops there.
    pub fn stops_at(self, found_cents: u32) -> bool {
        self.threshold_cents().is_some_and(|t| found_cents >= t)
    }
}
