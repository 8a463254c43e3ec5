//! Trésors Ensablés, exact: the return to player and the play's
//! distribution under the stopping strategies of the PAR sheet, in integer
//! arithmetic over one common denominator (docs/PAR.md §Exact method).
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
use serde::Serialize;

use super::{line, x, z, Exact, TEXT_PLACES};
use crate::game::tresors::{
    weighted_cents, ChestKind, ChestTable, GoldChoice, Square, CHESTS, GOLD, GOLD_ALTERNATIVES,
    MAX_LIFE, MAX_PRIZE_CENTS, RULES, RULE_DENOMINATOR,
};

/// The price of a unit in cents (article 2: 1 €).
pub const PRICE_CENTS: u32 = 100;

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
            Strategy::Reach(cents) => format!("reach-{}", crate::game::cents_to_euros(cents)),
        }
    }

    /// Whether a player with `found_cents` gains, just after opening a
    /// chest, stops there.
    pub fn stops_at(self, found_cents: u32) -> bool {
        self.threshold_cents().is_some_and(|t| found_cents >= t)
    }
}

/// The exact figures of one strategy.
#[derive(Clone, Debug, Serialize)]
pub struct StrategyFigures {
    /// The strategy's name.
    pub strategy: String,
    /// Return to player: expected prize / price.
    pub rtp: Exact,
    /// The return from every prize but the gold chest's top value
    /// (10 000 €, 1 in 100,000): a unit that finds it counts it as 0. The
    /// figure a sample can check with a useful z-score (docs/PAR.md).
    pub rtp_without_jackpot: Exact,
    /// Probability that the unit pays something.
    pub hit_frequency: Exact,
    /// Probability of dying (life 0).
    pub death: Exact,
    /// Probability of stopping with gains.
    pub stopped: Exact,
    /// Probability of reaching the gold chest alive (square 60).
    pub gold_alive: Exact,
    /// Expected number of rolls until the unit ends (death, stop or 60).
    pub expected_rolls: Exact,
    /// Probability that 0, 1, …, 10 chests were opened when it ended.
    pub chests_opened: Vec<Exact>,
}

/// The RTP of the never-stop play under one admissible gold table.
#[derive(Clone, Debug, Serialize)]
pub struct GoldAlternative {
    /// Which line gives up the extra 1/100,000 (`from 1 €`, …).
    pub name: &'static str,
    /// Whether the game uses it.
    pub used: bool,
    /// The gold chest's mean value in euros.
    pub gold_mean: Exact,
    /// The never-stop RTP with it.
    pub rtp_never_stop: Exact,
    /// That RTP minus the game's.
    pub difference: Exact,
}

/// Trésors Ensablés' exact figures.
#[derive(Clone, Debug, Serialize)]
pub struct ExactSheet {
    /// Price of a unit in euros.
    pub price: String,
    /// The largest prize in euros (3.3.4).
    pub max_prize: String,
    /// The largest prize as a multiple of the stake.
    pub max_multiple: Exact,
    /// One line per strategy, [`STRATEGIES`] order.
    pub strategies: Vec<StrategyFigures>,
    /// The never-stop RTP under each admissible gold table.
    pub gold_alternatives: Vec<GoldAlternative>,
}

/// Computes the sheet's exact figures.
pub fn exact_sheet() -> ExactSheet {
    let kernels = Kernels::new();
    let strategies: Vec<Chain> = STRATEGIES.iter().map(|&s| kernels.chain(s)).collect();
    let gold_alternatives = {
        let never = &strategies[0];
        let used = never.rtp(&chest_mean_cents(&GOLD));
        GOLD_ALTERNATIVES
            .iter()
            .map(|choice| {
                let mean = gold_choice_mean_cents(choice);
                let rtp = never.rtp(&mean);
                GoldAlternative {
                    name: choice.name,
                    used: choice.weights == *GOLD.weights,
                    gold_mean: Exact(mean / BigInt::from(100)),
                    difference: Exact(&rtp - &used),
                    rtp_never_stop: Exact(rtp),
                }
            })
            .collect()
    };
    ExactSheet {
        price: crate::game::cents_to_euros(PRICE_CENTS).to_string(),
        max_prize: crate::game::cents_to_euros(MAX_PRIZE_CENTS).to_string(),
        max_multiple: Exact::ratio(MAX_PRIZE_CENTS, PRICE_CENTS),
        strategies: STRATEGIES
            .iter()
            .zip(&strategies)
            .map(|(s, chain)| chain.figures(*s))
            .collect(),
        gold_alternatives,
    }
}

/// Trésors Ensablés' PAR sheet: the exact figures, optimal play on drawn
/// boards, a Monte Carlo through the engine and, if asked, a sealed block,
/// each checked against the exact figures.
pub fn par_sheet(request: &super::ParRequest<'_>) -> Result<super::ParSheet, crate::error::Error> {
    use super::optimal::optimal_sheet;
    use super::sample::{block_figures, engine_sample, write_sampled, Expected};
    let exact = exact_sheet();
    let never = exact.strategies[0].rtp.clone();
    let optimal = optimal_sheet(
        request.boards,
        &request.seed("boards"),
        request.exact_boards,
        &never,
    );
    let sampled = engine_sample(request.samples, &request.seed("units"), &exact);
    let block = request
        .block
        .map(|block| block_figures(block, Expected::Drawn(&exact)))
        .transpose()?;
    let mut text = String::new();
    exact.write_text(&mut text);
    let o = &optimal;
    line!(
        text,
        "\noptimal play (a player who sees the board, not the dice nor the chests): RTP {:.6} ± {:.6} over {} boards drawn from seed {}",
        o.rtp, o.standard_error, o.boards, o.seed
    );
    line!(
        text,
        "  never-stop RTP by the same induction on those boards: {}",
        z(&o.never_stop)
    );
    for b in &o.exact_boards {
        line!(
            text,
            "  board {} in exact arithmetic: {} (f64 differs by {:.1e})",
            b.board,
            x(&b.exact),
            b.difference
        );
    }
    line!(
        text,
        "\ncross-check: {} units drawn and played by the game engine (z = (estimate − exact) / standard error)",
        sampled.units
    );
    write_sampled(&sampled.strategies, &mut text);
    let mut sheet = super::ParSheet::default()
        .with("exact", &exact)
        .with("optimal", &optimal)
        .with("monte_carlo", &sampled);
    if let Some(block) = &block {
        block.write_text(&mut text);
        sheet = sheet.with("block", block);
    }
    sheet.text = text;
    Ok(sheet)
}

impl ExactSheet {
    /// The exact figures as text, appended to `out`.
    pub fn write_text(&self, out: &mut String) {
        let e = self;
        line!(
            out,
            "PAR sheet: tresors-ensables at {} € (exact: rational arithmetic over the boards, dice and chests)",
            e.price
        );
        let mut row = |cells: [&str; 7]| {
            line!(
                out,
                "  {:<12} {:>15} {:>15} {:>15} {:>15} {:>15} {:>15}",
                cells[0],
                cells[1],
                cells[2],
                cells[3],
                cells[4],
                cells[5],
                cells[6]
            )
        };
        row([
            "strategy",
            "RTP",
            "hit frequency",
            "gold alive",
            "death",
            "stopped",
            "rolls",
        ]);
        for s in &e.strategies {
            row([
                &s.strategy,
                &x(&s.rtp),
                &x(&s.hit_frequency),
                &x(&s.gold_alive),
                &x(&s.death),
                &x(&s.stopped),
                &x(&s.expected_rolls),
            ]);
        }
        line!(out, "  chests opened when the unit ends, never stopping:");
        for (n, p) in e.strategies[0].chests_opened.iter().enumerate() {
            line!(out, "    {n:>2}: {}", x(p));
        }
        line!(
            out,
            "  largest prize {} € = {}× the stake (3.3.4)",
            e.max_prize,
            e.max_multiple.decimal(2)
        );
        line!(
            out,
            "  gold chest tables admitted by the published odds (never-stop RTP):"
        );
        for g in &e.gold_alternatives {
            line!(
                out,
                "    {:<10} mean {} €  RTP {}  {}",
                g.name,
                g.gold_mean.decimal(5),
                x(&g.rtp_never_stop),
                if g.used {
                    "(used by the game)".to_string()
                } else {
                    format!("differs by {}", g.difference.decimal(TEXT_PLACES + 2))
                }
            );
        }
    }
}

/// The mean of a chest table in cents, exactly.
pub fn chest_mean_cents(table: &ChestTable) -> BigRational {
    weighted_mean(table.cents, table.weights, table.denominator)
}

/// Σ cents × weight / denominator.
fn weighted_mean(cents: &[u32], weights: &[u32], denominator: u32) -> BigRational {
    BigRational::new(weighted_cents(cents, weights).into(), denominator.into())
}

/// The gold chest's mean in cents with its top value counted as 0.
fn gold_mean_without_jackpot_cents() -> BigRational {
    let top = GOLD.cents.len() - 1;
    weighted_mean(&GOLD.cents[..top], &GOLD.weights[..top], GOLD.denominator)
}

/// The gold chest's top value (10 000 €) in cents.
pub fn jackpot_cents() -> u32 {
    GOLD.cents[GOLD.cents.len() - 1]
}

/// The gold chest's mean in cents under an admissible weight set.
fn gold_choice_mean_cents(choice: &GoldChoice) -> BigRational {
    weighted_mean(GOLD.cents, &choice.weights, GOLD.denominator)
}

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
struct Kernels {
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
struct Ending {
    p: BigRational,
    rolls: BigRational,
    gains: BigRational,
    opened: Vec<BigRational>,
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

fn zero() -> BigRational {
    BigRational::from_integer(0.into())
}

/// A strategy's plays chained through the ten segments.
struct Chain {
    death: Ending,
    stopped: Ending,
    /// Reaching square 60 alive, before the gold chest's value is added.
    gold: Ending,
}

impl Kernels {
    fn new() -> Kernels {
        Kernels {
            inner: Kernel::new(false),
            last: Kernel::new(true),
        }
    }

    /// Chains the segments under `strategy`.
    fn chain(&self, strategy: Strategy) -> Chain {
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
        };
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
                        Exit::Chest { .. } if last => gold
                            .entry(state.opened + 1)
                            .or_default()
                            .add(&mass.through(w.weight, w.rolls, 0)),
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
        debug_assert!(states.is_empty(), "every play ends by segment 10");
        chain
    }
}

impl Chain {
    /// The RTP with a gold chest of mean `gold_mean` cents.
    fn rtp(&self, gold_mean: &BigRational) -> BigRational {
        let prizes = &self.stopped.gains + &self.gold.gains + &self.gold.p * gold_mean;
        prizes / BigInt::from(PRICE_CENTS)
    }

    fn figures(&self, strategy: Strategy) -> StrategyFigures {
        let opened = (0..=CHESTS)
            .map(|n| Exact(&self.death.opened[n] + &self.stopped.opened[n] + &self.gold.opened[n]))
            .collect();
        StrategyFigures {
            strategy: strategy.name(),
            rtp: Exact(self.rtp(&chest_mean_cents(&GOLD))),
            rtp_without_jackpot: Exact(self.rtp(&gold_mean_without_jackpot_cents())),
            hit_frequency: Exact(&self.stopped.p + &self.gold.p),
            death: Exact(self.death.p.clone()),
            stopped: Exact(self.stopped.p.clone()),
            gold_alive: Exact(self.gold.p.clone()),
            expected_rolls: Exact(&self.death.rolls + &self.stopped.rolls + &self.gold.rolls),
            chests_opened: opened,
        }
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

    #[test]
    fn every_play_ends_once() {
        let sheet = exact_sheet();
        for s in &sheet.strategies {
            let total = &s.death.0 + &s.stopped.0 + &s.gold_alive.0;
            assert_eq!(total, BigRational::from_integer(1.into()), "{}", s.strategy);
            let opened = s.chests_opened.iter().fold(zero(), |sum, p| sum + &p.0);
            assert_eq!(opened, BigRational::from_integer(1.into()));
        }
        let never = &sheet.strategies[0];
        assert_eq!(never.stopped.0, zero());
        assert_eq!(never.hit_frequency, never.gold_alive);
        assert_eq!(sheet.gold_alternatives[0].difference.0, zero());
        assert!(sheet.gold_alternatives[0].used);
    }
}
