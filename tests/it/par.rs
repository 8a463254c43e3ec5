//! PAR sheets (docs/PAR.md): the exact Trésors Ensablés figures recomputed
//! by a second, independent method; the Monte Carlo through the engine and
//! a sealed block's units against them; L'île au trésor's sheet against the
//! regulation; `issuer par` end to end.

use std::collections::{BTreeMap, HashMap};

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Zero};

use crate::common::{issuer, Fixture};
use ticket_issuer::game::tresors::par::exact::{exact_sheet, ExactSheet, Strategy, STRATEGIES};
use ticket_issuer::game::tresors::par::optimal::{board_value, drawn_board, optimal_sheet, Policy};
use ticket_issuer::game::tresors::par::sample::{
    block_figures as tresors_block_figures, engine_sample,
};
use ticket_issuer::game::tresors::{ChestKind, Square, GOLD, MAX_LIFE, RULES, RULE_DENOMINATOR};
use ticket_issuer::game::Game;
use ticket_issuer::par::sample::{block_figures, Expected};
use ticket_issuer::par::{default_seed, Exact};

fn q(n: u64, d: u64) -> BigRational {
    BigRational::new(BigInt::from(n), BigInt::from(d))
}

/// Every ordered draw of one series as the regulation describes it (rule
/// 1's square among 5, rule 2's among the 4 left, rule 3's among the 3
/// left, each rule's outcome by its weight), not merged: 60 × 27 draws,
/// each with its weight out of [`DRAWS_TOTAL`].
fn ordered_draws() -> Vec<([u8; 5], u64)> {
    let mut draws = Vec::new();
    for a in 0..5 {
        for b in 0..5 {
            for c in 0..5 {
                if a == b || b == c || a == c {
                    continue;
                }
                for r1 in RULES[0].outcomes {
                    for r2 in RULES[1].outcomes {
                        for r3 in RULES[2].outcomes {
                            let mut squares = [Square::Blank as u8; 5];
                            squares[a] = r1.0 as u8;
                            squares[b] = r2.0 as u8;
                            squares[c] = r3.0 as u8;
                            draws.push((squares, u64::from(r1.1 * r2.1 * r3.1)));
                        }
                    }
                }
            }
        }
    }
    draws
}

/// 60 placements × 10³ outcomes.
const DRAWS_TOTAL: u64 = 60 * (RULE_DENOMINATOR as u64).pow(3);

/// What a path has seen of the series it is in: the squares landed on, as
/// codes in ascending order. The placements are uniform, so a series'
/// squares are exchangeable: the chance of seeing given squares on given
/// offsets, in some order, is the chance of seeing them in that order on
/// offsets 0, 1, …, and it is the same for every order.
type Seen = Vec<u8>;

/// The second method: square by square along the board. The state is the
/// square, life, the squares of the current series seen so far, the gains
/// (tracked exactly for a stopping strategy) and the chests opened. A
/// newly landed series square is revealed as any square that some draw
/// agreeing with what was seen puts there; the probability of what a path
/// saw of a series, counted over the ordered draws, is applied when the
/// path leaves the series (or dies in it), so the arithmetic keeps to the
/// primes 2, 3 and 5. No kernel, no merged series, no dice enumeration per
/// segment: plain rationals, one roll at a time.
struct BySquares {
    draws: Vec<([u8; 5], u64)>,
    weights: HashMap<Seen, u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    life: u8,
    series: usize,
    seen: Seen,
    found: u32,
    opened: u8,
}

/// Probability, probability × rolls and probability × gains (cents), each
/// times [`scale`]: every path's factors divide it (at most 60 rolls, 10
/// series, 9 inner chests), so the masses stay integers and every
/// division is exact (checked).
#[derive(Clone, Default)]
struct Mass {
    p: BigUint,
    rolls: BigUint,
    gains: BigUint,
}

/// 6⁶⁰ × 60000¹⁰ × 100⁹.
fn scale() -> BigUint {
    BigUint::from(6u32).pow(60) * BigUint::from(DRAWS_TOTAL).pow(10) * BigUint::from(100u32).pow(9)
}

/// `x × n / d`, which must be exact.
fn times(x: &BigUint, n: u64, d: u64) -> BigUint {
    let (quotient, rest) = (x * n).div_rem(&BigUint::from(d));
    assert!(rest.is_zero(), "inexact division by {d}");
    quotient
}

impl Mass {
    /// Through a branch of probability `n / d` that adds `cents` to the
    /// gains.
    fn through(&self, n: u64, d: u64, cents: u64) -> Mass {
        let p = times(&self.p, n, d);
        Mass {
            gains: times(&self.gains, n, d) + &p * cents,
            rolls: times(&self.rolls, n, d),
            p,
        }
    }
}

#[derive(Default)]
struct Ends {
    p: [BigUint; 3],
    rolls: BigUint,
    /// Prizes, without the gold chest's value.
    prizes: BigUint,
    /// Probability of reaching the gold chest (its mean is added last).
    gold: BigUint,
    opened: BTreeMap<u8, BigUint>,
}

/// No series seen yet.
const NO_SERIES: usize = usize::MAX;

impl BySquares {
    fn new() -> BySquares {
        BySquares {
            draws: ordered_draws(),
            weights: HashMap::new(),
        }
    }

    /// The probability of seeing `seen` on a series' first offsets, in
    /// that order.
    fn chance(&mut self, seen: &Seen) -> u64 {
        let draws = &self.draws;
        *self.weights.entry(seen.clone()).or_insert_with(|| {
            draws
                .iter()
                .filter(|(d, _)| d[..seen.len()] == seen[..])
                .map(|(_, w)| w)
                .sum()
        })
    }

    /// `m` leaving the series of `key`: times the chance of what it saw.
    fn leave(&mut self, key: &Key, m: Mass) -> Mass {
        if key.series == NO_SERIES {
            return m;
        }
        let c = self.chance(&key.seen);
        m.through(c, DRAWS_TOTAL, 0)
    }

    /// Plays `strategy`; `count_chests` keeps the chests opened in the
    /// state for their distribution.
    fn run(&mut self, strategy: Strategy, count_chests: bool) -> Ends {
        let tracks_gains = strategy.threshold_cents().is_some();
        let chest = u8::from(count_chests);
        let mut ends = Ends::default();
        let mut by_square: Vec<HashMap<Key, Mass>> = vec![HashMap::new(); 61];
        by_square[0].insert(
            Key {
                life: MAX_LIFE,
                series: NO_SERIES,
                seen: Vec::new(),
                found: 0,
                opened: 0,
            },
            Mass {
                p: scale(),
                ..Mass::default()
            },
        );
        let end = |ends: &mut Ends, which: usize, m: &Mass, opened: u8| {
            ends.p[which] += &m.p;
            ends.rolls += &m.rolls;
            if which > 0 {
                ends.prizes += &m.gains;
            }
            *ends.opened.entry(opened).or_default() += &m.p;
        };
        for at in 0..60usize {
            let states = std::mem::take(&mut by_square[at]);
            for (key, mass) in states {
                for die in 1..=6usize {
                    let to = (at + die).min(60);
                    let m = Mass {
                        p: times(&mass.p, 1, 6),
                        rolls: times(&(&mass.rolls + &mass.p), 1, 6),
                        gains: times(&mass.gains, 1, 6),
                    };
                    let series = (to - 1) / 6;
                    if to % 6 != 0 && series == key.series {
                        self.land(
                            &mut by_square[to],
                            &mut ends,
                            &key,
                            key.seen.clone(),
                            m,
                            &end,
                        );
                        continue;
                    }
                    let m = self.leave(&key, m);
                    let out = Key {
                        series: NO_SERIES,
                        seen: Vec::new(),
                        ..key.clone()
                    };
                    if to == 60 {
                        ends.gold += &m.p;
                        end(&mut ends, 2, &m, key.opened + chest);
                    } else if to % 6 != 0 {
                        let into = Key { series, ..out };
                        self.land(&mut by_square[to], &mut ends, &into, Vec::new(), m, &end);
                    } else if !tracks_gains {
                        // Never stopping, only the chest's mean matters.
                        let t = ChestKind::of_chest(to / 6 - 1).table();
                        let sum: u64 = t
                            .cents
                            .iter()
                            .zip(t.weights)
                            .map(|(&c, &w)| u64::from(c * w))
                            .sum();
                        let next = Key {
                            opened: key.opened + chest,
                            ..out
                        };
                        let gains = &m.gains + times(&m.p, sum, u64::from(t.denominator));
                        add(&mut by_square[to], next, Mass { gains, ..m });
                    } else {
                        let table = ChestKind::of_chest(to / 6 - 1).table();
                        for (&cents, &w) in table.cents.iter().zip(table.weights) {
                            let opened = m.through(
                                u64::from(w),
                                u64::from(table.denominator),
                                u64::from(cents),
                            );
                            let found = key.found + cents;
                            if strategy.stops_at(found) {
                                end(&mut ends, 1, &opened, key.opened + chest);
                            } else {
                                let next = Key {
                                    found: if tracks_gains { found } else { 0 },
                                    opened: key.opened + chest,
                                    ..out.clone()
                                };
                                add(&mut by_square[to], next, opened);
                            }
                        }
                    }
                }
            }
        }
        ends
    }

    /// Lands on a square of `key.series` not seen yet, having seen `seen`
    /// of the series: every square some agreeing draw puts there.
    fn land(
        &mut self,
        states: &mut HashMap<Key, Mass>,
        ends: &mut Ends,
        key: &Key,
        seen: Seen,
        m: Mass,
        end: &impl Fn(&mut Ends, usize, &Mass, u8),
    ) {
        // Every kind a series square can hold: blank, life and traps.
        for &square in Square::ALL.iter().filter(|q| {
            !matches!(
                q,
                Square::Start | Square::Bronze | Square::Silver | Square::Gold
            )
        }) {
            let mut next_seen = seen.clone();
            next_seen.push(square as u8);
            next_seen.sort_unstable();
            let next = Key {
                seen: next_seen,
                ..key.clone()
            };
            if self.chance(&next.seen) == 0 {
                continue;
            }
            let life =
                (i16::from(key.life) + i16::from(square.life_change())).min(i16::from(MAX_LIFE));
            if life <= 0 {
                let dead = self.leave(&next, m.clone());
                end(ends, 0, &dead, key.opened);
            } else {
                add(
                    states,
                    Key {
                        life: life as u8,
                        ..next
                    },
                    m.clone(),
                );
            }
        }
    }
}

fn add(states: &mut HashMap<Key, Mass>, key: Key, m: Mass) {
    match states.get_mut(&key) {
        Some(have) => {
            have.p += m.p;
            have.rolls += m.rolls;
            have.gains += m.gains;
        }
        None => {
            states.insert(key, m);
        }
    }
}

fn sheet() -> &'static ExactSheet {
    static SHEET: std::sync::OnceLock<ExactSheet> = std::sync::OnceLock::new();
    SHEET.get_or_init(exact_sheet)
}

#[test]
fn two_independent_methods_give_the_same_exact_figures() {
    both_methods_agree(&STRATEGIES[..5]);
}

/// The highest threshold tracks the most gains: its own test, so the two
/// run side by side.
#[test]
fn two_independent_methods_agree_on_the_highest_threshold() {
    both_methods_agree(&STRATEGIES[5..]);
}

fn both_methods_agree(strategies: &[Strategy]) {
    let sheet = sheet();
    let mut by_squares = BySquares::new();
    let d = BigInt::from(scale());
    let r = |x: &BigUint| Exact(BigRational::new(BigInt::from(x.clone()), d.clone()));
    let gold_mean: BigRational = GOLD
        .cents
        .iter()
        .zip(GOLD.weights)
        .map(|(&c, &w)| q(u64::from(c) * u64::from(w), u64::from(GOLD.denominator)))
        .sum();
    for strategy in strategies {
        let ends = by_squares.run(*strategy, true);
        let i = STRATEGIES.iter().position(|s| s == strategy).unwrap();
        let exact = &sheet.strategies[i];
        let name = &exact.strategy;
        assert_eq!(r(&ends.p[0]), exact.death, "{name}: death");
        assert_eq!(r(&ends.p[1]), exact.stopped, "{name}: stopped");
        assert_eq!(r(&ends.p[2]), exact.gold_alive, "{name}: gold");
        assert_eq!(r(&ends.rolls), exact.expected_rolls, "{name}: rolls");
        let prizes = r(&ends.prizes).0 + r(&ends.gold).0 * &gold_mean;
        assert_eq!(Exact(prizes / BigInt::from(100)), exact.rtp, "{name}: RTP");
        for (n, p) in exact.chests_opened.iter().enumerate() {
            let by = ends.opened.get(&(n as u8)).cloned().unwrap_or_default();
            assert_eq!(r(&by), *p, "{name}: {n} chests opened");
        }
    }
}

#[test]
fn the_exact_figures_hold_together() {
    let sheet = sheet();
    let never = &sheet.strategies[0];
    // Never stopping, the unit wins exactly when it reaches 60 alive.
    assert_eq!(never.hit_frequency, never.gold_alive);
    // A threshold above every inner chest sum (5 × 0.5 + 4 × 2 = 10.5 €)
    // would be never-stop; 5 € is close to it.
    let reach5 = &sheet.strategies[5];
    assert!(reach5.rtp.0 > never.rtp.0);
    assert!((reach5.rtp.to_f64() - never.rtp.to_f64()).abs() < 0.001);
    // Stopping at the first chest opens exactly one chest when it wins.
    let first = &sheet.strategies[1];
    assert_eq!(first.chests_opened[1], first.hit_frequency);
    // The figures the sheet prints (docs/PAR.md).
    assert_eq!(never.rtp.decimal(12), "0.651581929803");
    assert_eq!(never.gold_alive.decimal(12), "0.180721418678");
    assert_eq!(never.expected_rolls.decimal(12), "9.129285057526");
    assert_eq!(first.rtp.decimal(12), "0.280644597289");
    // Gold alternatives: the never-stop RTP moves by P(gold alive) × the
    // change of the gold chest's mean.
    for alt in &sheet.gold_alternatives {
        let expected =
            &never.gold_alive.0 * (&alt.gold_mean.0 - &sheet.gold_alternatives[0].gold_mean.0);
        assert_eq!(alt.difference.0, expected, "{}", alt.name);
    }
    assert_eq!(
        sheet.gold_alternatives[3].difference.decimal(14),
        "-0.00001626492768"
    );
    // The 10 000 € gold prize (1 in 100,000) is worth 0.1 € to every unit
    // that reaches the gold chest alive.
    for s in &sheet.strategies {
        let jackpot = &s.rtp.0 - &s.rtp_without_jackpot.0;
        assert_eq!(jackpot, &s.gold_alive.0 * q(1, 10), "{}", s.strategy);
    }
}

#[test]
fn the_engine_agrees_with_the_exact_figures_and_a_wrong_figure_shows() {
    let sheet = sheet();
    let sampled = engine_sample(200_000, &default_seed("units"), sheet);
    assert_eq!(sampled.units, 200_000);
    for s in &sampled.strategies {
        for (what, e) in [
            ("rtp", s.rtp),
            ("rtp without jackpot", s.rtp_without_jackpot),
            ("hit", s.hit_frequency),
            ("gold", s.gold_alive),
            ("rolls", s.expected_rolls),
        ] {
            assert!(e.z.abs() < 4.5, "{} {what}: {e:?}", s.strategy);
            assert!(e.standard_error > 0.0);
        }
    }
    // The same units against a figure off by 1 % of a point: the check
    // has the power to see it.
    let mut wrong = sheet.clone();
    wrong.strategies[1].hit_frequency = Exact(&wrong.strategies[1].hit_frequency.0 + q(1, 100));
    let off = engine_sample(200_000, &default_seed("units"), &wrong);
    assert!(
        off.strategies[1].hit_frequency.z < -8.0,
        "{:?}",
        off.strategies[1]
    );
}

#[test]
fn a_sealed_block_agrees_with_the_exact_figures() {
    let fixture = Fixture::new();
    // A fixed seed: RTP with the jackpot is heavy-tailed, and on 40,000
    // units of fresh keys its z went past 5 once in many runs (2026-12-02);
    // the check is of the estimator against the exact sheet, so one fixed
    // block whose figures pass is the reproducible vector.
    let path = fixture.test_block_seeded(Game::TRESORS_ENSABLES, 1, 100, 40_000, &[21; 32]);
    let block = fixture.authentic(&path).unwrap();
    let figures = tresors_block_figures(&block, sheet()).unwrap();
    let (played, strategies) = (figures.played, figures.strategies);
    assert_eq!(played.units, 40_000);
    assert!(played.rtp.z.abs() < 4.5, "{:?}", played.rtp);
    assert!(
        played.hit_frequency.z.abs() < 4.5,
        "{:?}",
        played.hit_frequency
    );
    assert_eq!(strategies.len(), STRATEGIES.len());
    // The records' prizes are the never-stop replay's.
    assert_eq!(strategies[0].rtp.mean, played.rtp.mean);
    for s in &strategies {
        assert!(s.rtp.z.abs() < 4.5, "{}: {:?}", s.strategy, s.rtp);
        assert!(
            s.rtp_without_jackpot.z.abs() < 4.5,
            "{}: {:?}",
            s.strategy,
            s.rtp_without_jackpot
        );
        assert!(
            s.hit_frequency.z.abs() < 4.5,
            "{}: {:?}",
            s.strategy,
            s.hit_frequency
        );
    }
}

#[test]
fn a_full_ile_au_tresor_block_pays_exactly_its_sheet() {
    let shared = crate::common::shared_block(100);
    let block = shared.authentic(&shared.path).unwrap();
    let sheet = ticket_issuer::par::table::sheet(Game::ILE_AU_TRESOR, 100).unwrap();
    let figures = block_figures(&block, Expected::Table(&sheet)).unwrap();
    assert_eq!(figures.rtp.mean, 0.7);
    assert_eq!(figures.rtp.z, 0.0);
    assert_eq!(figures.hit_frequency.z, 0.0);
}

#[test]
fn optimal_play_beats_every_strategy_and_exact_agrees_with_f64() {
    let seed = default_seed("boards");
    for i in 0..40 {
        let board = drawn_board(&seed, i);
        let best = board_value::<f64>(&board, Policy::Optimal);
        let never = board_value::<f64>(&board, Policy::NeverStop);
        assert!(best >= never, "board {i}: {best} < {never}");
    }
    // Over boards, the best play is worth more than every strategy of the
    // sheet (each is one play a player who sees the board could choose),
    // and the never-stop play averaged by the same induction agrees with
    // the exact figure.
    let sheet = sheet();
    let optimal = optimal_sheet(2_000, &seed, 2, &sheet.strategies[0].rtp);
    let best_strategy = sheet
        .strategies
        .iter()
        .map(|s| s.rtp.to_f64())
        .fold(0.0, f64::max);
    assert!(
        optimal.rtp - 4.0 * optimal.standard_error > best_strategy,
        "{} ± {} against {best_strategy}",
        optimal.rtp,
        optimal.standard_error
    );
    assert!(optimal.never_stop.z.abs() < 4.5, "{:?}", optimal.never_stop);
    assert_eq!(optimal.exact_boards.len(), 2);
    for b in &optimal.exact_boards {
        assert!(b.difference < 1e-9, "board {}: {}", b.board, b.difference);
        let again: BigRational =
            board_value::<BigRational>(&drawn_board(&seed, b.board), Policy::Optimal)
                / BigInt::from(100);
        assert_eq!(b.exact, Exact(again));
    }
}

#[test]
fn the_optimal_induction_on_one_board_matches_plain_play() {
    // A board of blanks only: nothing dies, so never stopping always
    // reaches 60 with every chest it lands on. Its value by the induction
    // equals a direct sum over the chests' landing probabilities.
    let mut board = [Square::Blank; 61];
    board[0] = Square::Start;
    for k in 0..10 {
        board[6 * (k + 1)] = ChestKind::of_chest(k).square();
    }
    // Probability of landing on square n from 0 (60 absorbs).
    let mut land = vec![BigRational::zero(); 61];
    land[0] = BigRational::one();
    for at in 0..60 {
        let p = land[at].clone() * q(1, 6);
        for die in 1..=6 {
            land[(at + die).min(60)] += &p;
        }
    }
    let mean = |k: usize| -> BigRational {
        let t = ChestKind::of_chest(k).table();
        t.cents
            .iter()
            .zip(t.weights)
            .map(|(&c, &w)| q(u64::from(c) * u64::from(w), u64::from(t.denominator)))
            .sum()
    };
    let direct: BigRational = (0..10).map(|k| &land[6 * (k + 1)] * mean(k)).sum();
    assert_eq!(land[60], BigRational::one());
    let by_induction: BigRational = board_value(&board, Policy::NeverStop);
    assert_eq!(by_induction, direct);
}

#[test]
fn par_command_prints_both_sheets() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for price in ["0.5", "1", "2"] {
        let run = issuer(
            &store,
            &["par", "--game", "ile-au-tresor", "--price", price, "--json"],
        )
        .expect_code(0);
        let json = run.json();
        assert_eq!(json["kind"], "par");
        let sheet = &json["prices"][0];
        assert_eq!(sheet["rtp"]["fraction"], "7/10", "{price}");
        assert_eq!(sheet["hit_frequency"]["fraction"], "9967/37500");
        assert_eq!(sheet["lots"].as_array().unwrap().len(), 9);
    }
    let all = issuer(&store, &["par", "--game", "ile-au-tresor"]).expect_code(0);
    assert_eq!(
        all.stdout
            .matches("return to player  0.700000000000  (7/10)")
            .count(),
        3
    );

    let te = issuer(
        &store,
        &[
            "par",
            "--game",
            "tresors-ensables",
            "--boards",
            "200",
            "--samples",
            "20000",
            "--exact-boards",
            "1",
            "--json",
        ],
    )
    .expect_code(0)
    .json();
    let never = &te["exact"]["strategies"][0];
    assert_eq!(never["strategy"], "never-stop");
    assert!(never["rtp"]["decimal"]
        .as_str()
        .unwrap()
        .starts_with("0.6515819298"));
    assert_eq!(te["optimal"]["boards"], 200);
    assert!(
        te["optimal"]["exact_boards"][0]["difference"]
            .as_f64()
            .unwrap()
            < 1e-9
    );
    assert_eq!(te["monte_carlo"]["units"], 20000);
    assert_eq!(
        te["exact"]["gold_alternatives"].as_array().unwrap().len(),
        4
    );

    let bad = issuer(
        &store,
        &["par", "--game", "tresors-ensables", "--price", "2"],
    )
    .expect_code(2);
    assert!(bad.stderr.contains("tresors-ensables"), "{}", bad.stderr);
    issuer(
        &store,
        &["par", "--game", "tresors-ensables", "--seed", "abcd"],
    )
    .expect_code(2);
}

/// A game's PAR options pass through `--option NAME=N` (the short forms
/// give the same sheet); each option a game does not take, each value
/// out of range and each malformed one is refused with the game's list,
/// never ignored.
#[test]
fn par_options_pass_through_the_game_and_a_wrong_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let short = ["--boards", "2", "--exact-boards", "0"];
    let long = ["--option", "boards=2", "--option", "exact-boards=0"];
    let sheet = |options: &[&str]| {
        let mut args = vec![
            "par",
            "--game",
            "tresors-ensables",
            "--samples",
            "2",
            "--json",
        ];
        args.extend_from_slice(options);
        issuer(&store, &args).expect_code(0).json()
    };
    let by_short = sheet(&short);
    assert_eq!(by_short["optimal"]["boards"], 2);
    assert_eq!(by_short, sheet(&long));
    for (game, option, names) in [
        ("ile-au-tresor", "boards=5", "it has none"),
        ("tresors-ensables", "dice=5", "its options: boards"),
        ("tresors-ensables", "boards=1", "from 2 to 10000000"),
        ("tresors-ensables", "exact-boards=101", "from 0 to 100"),
        ("tresors-ensables", "boards", "is not NAME=N"),
        ("tresors-ensables", "boards=many", "give a whole number"),
    ] {
        let out = issuer(&store, &["par", "--game", game, "--option", option]).expect_code(2);
        assert!(
            out.stderr.contains(names),
            "{game} {option}: {}",
            out.stderr
        );
    }
    let out = issuer(
        &store,
        &["par", "--game", "ile-au-tresor", "--boards", "5", "--json"],
    )
    .expect_code(2);
    assert!(out.stdout.contains("\"par_option\""), "{}", out.stdout);
}

#[test]
fn par_refuses_a_block_of_another_game_naming_it() {
    let fixture = Fixture::new();
    // A fixed seed: the verdict on a genuine block fails by chance once in
    // about a hundred draws, and this block's must pass.
    let block = fixture.test_block_seeded(Game::TRESORS_ENSABLES, 1, 100, 500, &[5; 32]);
    let store = fixture.dir.path().join("store");
    let path = block.display().to_string();
    for args in [
        vec!["par", "--game", "ile-au-tresor", "--block", &path, "--json"],
        vec![
            "par",
            "--game",
            "ile-au-tresor",
            "--price",
            "2",
            "--block",
            &path,
            "--json",
        ],
    ] {
        let run = issuer(&store, &args).expect_code(2);
        let json = run.json();
        assert_eq!(json["error"], "par_block_mismatch", "{}", run.stdout);
        assert_eq!(json["path"], path.as_str());
        assert!(run.stderr.contains("tresors-ensables"), "{}", run.stderr);
    }
    // The block's own game takes its price when --price is left out.
    let ok = issuer(
        &store,
        &[
            "par",
            "--game",
            "tresors-ensables",
            "--block",
            &path,
            "--boards",
            "2",
            "--samples",
            "2",
            "--exact-boards",
            "0",
            "--json",
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(ok["block"]["units"], 500);
}
