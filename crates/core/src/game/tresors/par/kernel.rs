//! Trésors Ensablés' exact figures, the mechanics: the segments' kernels
//! and their chaining under a stopping strategy (docs/PAR.md §Exact
//! method).
//!
//! The structure that makes it fast: the board's ten series are
//! independent of each other, of the chests and of the dice, and a die
//! moves at most six squares, so every path lands at least once in each
//! *segment* s (squares 6s + 1 … 6s + 6: series s, then chest s). A
//! segment's *kernel* gives, for each way of entering it (standing on
//! square 6s, or just landed on square 6s + e of the series, e = 1 … 5) and
//! each life, the probability of each way of leaving it: dead, landed on
//! its chest with some life, or passed it into the next segment at some
//! square with some life; it averages over the series' 60 × 27 draws and
//! over the dice. Chaining ten kernels with the chests' values in between
//! gives every figure exactly.

use std::collections::BTreeMap;

use num_bigint::{BigInt, BigUint};
use num_rational::BigRational;

use super::strategy::Strategy;
use crate::game::tresors::{ChestKind, Square, CHESTS, MAX_LIFE, RULES, RULE_DENOMINATOR};

/// The distinct series of 3.2.2, each with its weight out of
/// [`SERIES_DENOMINATOR`]: rule 1's square among 5 offsets, rule 2's among
/// the 4 left, rule 3's among the 3 left (60 placements, equally likely),
/// then each rule's outcome by its weight out of 10.
pub fn series_distribution() -> Vec<([Square; 5], u64)> {
    let mut weights: BTreeMap<[u8; 5], u64> = BTreeMap::new();
    for a in 0..5 {
        for b in (0..5).filter(|&b| b != a) {
            for c in (0..5).filter(|&c| c != a && c != b) {
                for (qa, wa, _) in RULES[0].outcomes {
                    for (qb, wb, _) in RULES[1].outcomes {
                        for (qc, wc, _) in RULES[2].outcomes {
                            let mut series = [Square::Blank; 5];
                            series[a] = qa;
                            series[b] = qb;
                            series[c] = qc;
                            *weights.entry(series.map(|q| q as u8)).or_default() +=
                                u64::from(wa * wb * wc);
                        }
                    }
                }
            }
        }
    }
    weights
        .into_iter()
        .map(|(codes, w)| (codes.map(|c| Square::ALL[usize::from(c)]), w))
        .collect()
}

/// The denominator of [`series_distribution`]'s weights: 60 placements ×
/// 10³ outcomes.
pub const SERIES_DENOMINATOR: u64 = 60 * (RULE_DENOMINATOR as u64).pow(3);

/// The most rolls a path spends in one segment (six 1s from its first
/// square's predecessor).
const SEGMENT_ROLLS: u32 = 6;

/// The kernels' common denominator: a series' weight times 6⁶ dice.
const KERNEL_DENOMINATOR: u64 = SERIES_DENOMINATOR * 6u64.pow(SEGMENT_ROLLS);

/// How a path leaves a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Exit {
    /// Life fell to 0 on a square of the series.
    Death,
    /// Landed on the segment's chest (square 6s + 6) with this life.
    Chest { life: u8 },
    /// Passed the chest into the next segment, landing on its square
    /// `entry` (1 … 5), not yet applied, with this life.
    Pass { entry: u8, life: u8 },
}

/// Probability numerator (over [`KERNEL_DENOMINATOR`]) and the same times
/// the rolls spent in the segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ExitWeight {
    weight: u64,
    rolls: u64,
}

/// A way into a segment: standing on its square 0 (the start or the
/// previous chest), or just landed on series square `entry` (1 … 5).
/// Index `entry * MAX_LIFE + life − 1`.
const ENTRIES: usize = 6 * MAX_LIFE as usize;

fn entry_index(entry: u8, life: u8) -> usize {
    usize::from(entry) * usize::from(MAX_LIFE) + usize::from(life) - 1
}

/// The kernel of a segment: for each entry, its exits.
struct Kernel {
    exits: Vec<Vec<(Exit, ExitWeight)>>,
}

impl Kernel {
    /// The kernel of an inner segment (`last` false: a die can pass the
    /// chest) or of the last one (a die that reaches or passes 60 lands on
    /// it).
    fn new(last: bool) -> Kernel {
        let mut maps: Vec<BTreeMap<Exit, ExitWeight>> = vec![BTreeMap::new(); ENTRIES];
        for (series, weight) in series_distribution() {
            for entry in 0..=5u8 {
                for life in 1..=MAX_LIFE {
                    let map = &mut maps[entry_index(entry, life)];
                    let mut walk = Walk {
                        series: &series,
                        last,
                        exits: map,
                    };
                    let start = weight * 6u64.pow(SEGMENT_ROLLS);
                    match entry {
                        0 => walk.from(0, life, 0, start),
                        e => walk.land(e, life, 0, start),
                    }
                }
            }
        }
        let exits = maps.into_iter().map(|m| m.into_iter().collect()).collect();
        Kernel { exits }
    }
}

/// Enumerates a segment's dice paths for one series.
struct Walk<'a> {
    series: &'a [Square; 5],
    last: bool,
    exits: &'a mut BTreeMap<Exit, ExitWeight>,
}

impl Walk<'_> {
    fn exit(&mut self, exit: Exit, rolls: u32, weight: u64) {
        let e = self.exits.entry(exit).or_default();
        e.weight += weight;
        e.rolls += weight * u64::from(rolls);
    }

    /// Just landed on series square `at` (1 … 5): apply it, go on.
    fn land(&mut self, at: u8, life: u8, rolls: u32, weight: u64) {
        let change = self.series[usize::from(at) - 1].life_change();
        let life = (i16::from(life) + i16::from(change)).min(i16::from(MAX_LIFE));
        if life <= 0 {
            self.exit(Exit::Death, rolls, weight);
        } else {
            self.from(at, life as u8, rolls, weight);
        }
    }

    /// Standing on square `at` (0 … 5) of the segment, alive: roll.
    fn from(&mut self, at: u8, life: u8, rolls: u32, weight: u64) {
        let weight = weight / 6;
        for die in 1..=6u8 {
            let mut to = at + die;
            if self.last {
                to = to.min(6);
            }
            match to {
                6 => self.exit(Exit::Chest { life }, rolls + 1, weight),
                7.. => self.exit(
                    Exit::Pass {
                        entry: to - 6,
                        life,
                    },
                    rolls + 1,
                    weight,
                ),
                _ => self.land(to, life, rolls + 1, weight),
            }
        }
    }
}

/// The inner and the last segments' kernels.
pub(super) struct Kernels {
    inner: Kernel,
    last: Kernel,
}

/// The state of a play between segments: how it enters the next one, its
/// life, the gains it tracks exactly (threshold strategies; 0 otherwise)
/// and the chests opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct State {
    entry: u8,
    life: u8,
    found: u32,
    opened: u8,
}

/// Numerators over the chain's current denominator: probability, the same
/// times rolls so far, and times gains so far (cents).
#[derive(Clone, Debug, Default)]
struct Mass {
    p: BigUint,
    rolls: BigUint,
    gains: BigUint,
}

impl Mass {
    /// This mass through a step of probability `w` (numerator) spending
    /// `w_rolls` (numerator of probability × rolls) and adding `cents` to
    /// the gains.
    fn through(&self, w: u64, w_rolls: u64, cents: u32) -> Mass {
        Mass {
            p: &self.p * w,
            rolls: &self.rolls * w + &self.p * w_rolls,
            gains: &self.gains * w + &self.p * (w * u64::from(cents)),
        }
    }

    fn add(&mut self, other: &Mass) {
        self.p += &other.p;
        self.rolls += &other.rolls;
        self.gains += &other.gains;
    }
}

/// How the plays of a strategy ended, as exact rationals.
pub(super) struct Ending {
    pub(super) p: BigRational,
    pub(super) rolls: BigRational,
    pub(super) gains: BigRational,
    pub(super) opened: Vec<BigRational>,
}

impl Ending {
    fn new() -> Ending {
        Ending {
            p: zero(),
            rolls: zero(),
            gains: zero(),
            opened: vec![zero(); CHESTS + 1],
        }
    }

    /// Adds the masses `by_opened` (over `denominator`).
    fn add(&mut self, by_opened: &BTreeMap<u8, Mass>, denominator: &BigUint) {
        let d = BigInt::from(denominator.clone());
        let r = |n: &BigUint| BigRational::new(BigInt::from(n.clone()), d.clone());
        for (&opened, m) in by_opened {
            let p = r(&m.p);
            self.opened[usize::from(opened)] += &p;
            self.p += p;
            self.rolls += r(&m.rolls);
            self.gains += r(&m.gains);
        }
    }
}

pub(super) fn zero() -> BigRational {
    BigRational::from_integer(0.into())
}

/// A strategy's plays chained through the ten segments.
pub(super) struct Chain {
    pub(super) death: Ending,
    pub(super) stopped: Ending,
    /// Reaching square 60 alive, before the gold chest's value is added.
    pub(super) gold: Ending,
    /// Reaching square 60 alive, by the gains found before the gold chest
    /// (cents; exact only under a strategy whose gains are tracked: one
    /// with a threshold).
    pub(super) gold_found: Vec<(u32, BigRational)>,
}

impl Kernels {
    pub(super) fn new() -> Kernels {
        Kernels {
            inner: Kernel::new(false),
            last: Kernel::new(true),
        }
    }

    /// Chains the segments under `strategy`.
    pub(super) fn chain(&self, strategy: Strategy) -> Chain {
        let mut states: BTreeMap<State, Mass> = BTreeMap::new();
        let start = State {
            entry: 0,
            life: MAX_LIFE,
            found: 0,
            opened: 0,
        };
        states.insert(
            start,
            Mass {
                p: 1u32.into(),
                ..Mass::default()
            },
        );
        let mut denominator = BigUint::from(1u32);
        let mut chain = Chain {
            death: Ending::new(),
            stopped: Ending::new(),
            gold: Ending::new(),
            gold_found: Vec::new(),
        };
        let mut gold_found: BTreeMap<u32, Mass> = BTreeMap::new();
        for segment in 0..CHESTS {
            let last = segment == CHESTS - 1;
            let kernel = if last { &self.last } else { &self.inner };
            // The gold chest's value is left to the end (its mean enters
            // linearly), so the last segment has no chest factor.
            let table = ChestKind::of_chest(segment).table();
            let chest_denominator = if last {
                1
            } else {
                u64::from(table.denominator)
            };
            let mut next: BTreeMap<State, Mass> = BTreeMap::new();
            let mut death: BTreeMap<u8, Mass> = BTreeMap::new();
            let mut stopped: BTreeMap<u8, Mass> = BTreeMap::new();
            let mut gold: BTreeMap<u8, Mass> = BTreeMap::new();
            for (state, mass) in &states {
                for (exit, w) in &kernel.exits[entry_index(state.entry, state.life)] {
                    let (weight, rolls) =
                        (w.weight * chest_denominator, w.rolls * chest_denominator);
                    match *exit {
                        Exit::Death => death
                            .entry(state.opened)
                            .or_default()
                            .add(&mass.through(weight, rolls, 0)),
                        Exit::Pass { entry, life } => next
                            .entry(State {
                                entry,
                                life,
                                ..*state
                            })
                            .or_default()
                            .add(&mass.through(weight, rolls, 0)),
                        Exit::Chest { .. } if last => {
                            let through = mass.through(w.weight, w.rolls, 0);
                            gold_found.entry(state.found).or_default().add(&through);
                            gold.entry(state.opened + 1).or_default().add(&through)
                        }
                        Exit::Chest { life } => {
                            for (&cents, &cw) in table.cents.iter().zip(table.weights) {
                                let cw = u64::from(cw);
                                let through = mass.through(w.weight * cw, w.rolls * cw, cents);
                                let found = state.found + cents;
                                let opened = state.opened + 1;
                                if strategy.stops_at(found) {
                                    stopped.entry(opened).or_default().add(&through);
                                } else {
                                    let tracked = match strategy.threshold_cents() {
                                        Some(_) => found,
                                        None => 0,
                                    };
                                    next.entry(State {
                                        entry: 0,
                                        life,
                                        found: tracked,
                                        opened,
                                    })
                                    .or_default()
                                    .add(&through);
                                }
                            }
                        }
                    }
                }
            }
            denominator *= KERNEL_DENOMINATOR * chest_denominator;
            chain.death.add(&death, &denominator);
            chain.stopped.add(&stopped, &denominator);
            chain.gold.add(&gold, &denominator);
            states = next;
        }
        let d = BigInt::from(denominator);
        chain.gold_found = gold_found
            .into_iter()
            .map(|(found, m)| (found, BigRational::new(BigInt::from(m.p), d.clone())))
            .collect();
        debug_assert!(states.is_empty(), "every play ends by segment 10");
        chain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_weights_sum_and_every_series_has_a_trap() {
        let series = series_distribution();
        // 60 placements × 27 outcomes merge into 755 distinct series.
        assert_eq!(series.len(), 755);
        assert_eq!(
            series.iter().map(|(_, w)| w).sum::<u64>(),
            SERIES_DENOMINATOR
        );
        for (s, _) in &series {
            assert!(s.iter().any(|q| q.life_change() < 0), "{s:?}");
        }
    }

    #[test]
    fn kernels_conserve_probability() {
        for kernel in [Kernel::new(false), Kernel::new(true)] {
            for exits in &kernel.exits {
                let total: u64 = exits.iter().map(|(_, w)| w.weight).sum();
                assert_eq!(total, KERNEL_DENOMINATOR);
            }
        }
    }
}
