//! The returns over the units sold whose play is over ([`Over`]): realised,
//! expected, and the 99 % band.

use std::collections::BTreeMap;

use crate::game::{Game, PrizeModel};

/// The two-sided 99 % point of the normal law.
const Z_99: f64 = 2.576;

/// The units sold whose play is over, for the returns.
#[derive(Default)]
pub(super) struct Over {
    units: u64,
    /// Their stakes, per price (cents → cents staked).
    stakes: BTreeMap<u32, u64>,
    /// What was paid for them.
    paid_cents: i128,
    /// Their prizes as recorded.
    prize_cents: u128,
    /// Σ and Σ² of prize / price, each unit.
    sum: f64,
    sum_sq: f64,
    /// One of them stopped.
    stopped: bool,
}

impl Over {
    pub(super) fn add(&mut self, price: u32, paid: i128, prize: u32, stopped: bool) {
        self.units += 1;
        *self.stakes.entry(price).or_default() += u64::from(price);
        self.paid_cents += paid;
        self.prize_cents += u128::from(prize);
        let r = f64::from(prize) / f64::from(price.max(1));
        self.sum += r;
        self.sum_sq += r * r;
        self.stopped |= stopped;
    }

    pub(super) fn merge(&mut self, other: Over) {
        self.units += other.units;
        for (price, stakes) in other.stakes {
            *self.stakes.entry(price).or_default() += stakes;
        }
        self.paid_cents += other.paid_cents;
        self.prize_cents += other.prize_cents;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.stopped |= other.stopped;
    }

    /// Realised and expected returns, and the 99 % band (see
    /// [`reconcile`](super::reconcile)).
    pub(super) fn returns(&self, game: Game) -> (Option<f64>, Option<f64>, Option<[f64; 2]>) {
        let stakes: u64 = self.stakes.values().sum();
        if self.units == 0 || stakes == 0 {
            return (None, None, None);
        }
        let realised = self.paid_cents as f64 / stakes as f64;
        let as_recorded = self.prize_cents as f64 / stakes as f64;
        let expected = match (game.prize_model(), self.stopped) {
            (PrizeModel::Drawn, false) => self
                .stakes
                .iter()
                .map(|(&price, &s)| {
                    let binding = game.return_figures(price).into_iter().find(|f| f.binding);
                    binding.map(|f| f.rate.to_f64() * s as f64)
                })
                .sum::<Option<f64>>()
                .map_or(as_recorded, |weighted| weighted / stakes as f64),
            _ => as_recorded,
        };
        let n = self.units as f64;
        let band = (self.units >= 2).then(|| {
            let mean = self.sum / n;
            let var = ((self.sum_sq - n * mean * mean) / (n - 1.0)).max(0.0);
            let half = Z_99 * (var / n).sqrt();
            // A return is never below 0.
            [(expected - half).max(0.0), expected + half]
        });
        (Some(realised), Some(expected), band)
    }
}
