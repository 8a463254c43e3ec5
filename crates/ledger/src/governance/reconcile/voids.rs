//! The voided sales of a game revealed whole ([`Voids`]) and the
//! `voids-not-selective` check: do they hold their share of winners.

/// The voided sales of a game revealed whole: how many, how many of them
/// won, and the winners their blocks' rates expect.
#[derive(Default)]
pub(super) struct Voids {
    units: u64,
    winners: u64,
    expected: f64,
}

/// Below this, `voids-not-selective` fails: voided sales hold so few
/// winners that chance explains it once in a thousand emissions.
const SELECTIVE_VOIDS: f64 = 1e-3;

impl Voids {
    pub(super) fn add(&mut self, won: bool, rate: f64) {
        self.units += 1;
        self.winners += u64::from(won);
        self.expected += rate;
    }

    pub(super) fn merge(&mut self, other: &Voids) {
        self.units += other.units;
        self.winners += other.winners;
        self.expected += other.expected;
    }

    /// The check: P(at most this many winners | the blocks' rate), and
    /// whether it holds.
    pub(super) fn check(&self) -> (bool, String) {
        if self.units == 0 {
            return (true, "no sale voided".into());
        }
        let rate = self.expected / self.units as f64;
        let p = crate::stats::binomial_at_most(self.winners, self.units, rate);
        (
            p >= SELECTIVE_VOIDS,
            format!(
                "{} of {} won (expected {:.1} at the blocks' rate {:.4}); P(at most {}) = {p:.2e}{}",
                self.winners,
                crate::words::plural(self.units, "voided sale"),
                self.expected,
                rate,
                self.winners,
                if p >= SELECTIVE_VOIDS {
                    ""
                } else {
                    ": far fewer winners than chance gives; voids look chosen among losers (a platform that saw the outcomes before asking to void)"
                }
            ),
        )
    }
}
