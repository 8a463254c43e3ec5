//! A unit's generation from its own stream (docs/GAMES.md §Trésors
//! Ensablés generation): the ten series, the ten chests, then the dice.

use super::{
    series_start, ChestKind, Square, Unit, CHESTS, GOLD_SQUARE, MAX_ROLLS, RULES, RULE_DENOMINATOR,
    SERIES,
};
use crate::rng::Stream;

/// The line a draw from `0..sum of weights` falls in: the first `i` with
/// `draw < weights[0] + … + weights[i]`.
fn pick(weights: &[u32], draw: u32) -> usize {
    let mut left = draw;
    for (i, &w) in weights.iter().enumerate() {
        if left < w {
            return i;
        }
        left -= w;
    }
    // Weights sum to the denominator the draw was taken below.
    weights.len() - 1
}

/// The rule placement and outcomes of one series, as drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SeriesDraw {
    /// The offset (0 … 4) in the series of the square of rules 1, 2, 3.
    slots: [usize; 3],
    /// The outcome index (0 … 2) of rules 1, 2, 3 in [`RULES`].
    outcomes: [usize; 3],
}

impl SeriesDraw {
    fn draw(stream: &mut Stream) -> SeriesDraw {
        let mut free = [0usize, 1, 2, 3, 4];
        let mut slots = [0usize; 3];
        for (r, slot) in slots.iter_mut().enumerate() {
            // The r-th draw picks among the 5 − r offsets still free, in
            // ascending order.
            let i = stream.below(5 - r as u32) as usize;
            *slot = free[i];
            free.copy_within(i + 1.., i);
        }
        let mut outcomes = [0usize; 3];
        for (rule, outcome) in RULES.iter().zip(outcomes.iter_mut()) {
            let weights = rule.outcomes.map(|(_, w, _)| w);
            *outcome = pick(&weights, stream.below(RULE_DENOMINATOR));
        }
        SeriesDraw { slots, outcomes }
    }

    fn squares(self) -> [Square; 5] {
        let mut squares = [Square::Blank; 5];
        for r in 0..3 {
            squares[self.slots[r]] = RULES[r].outcomes[self.outcomes[r]].0;
        }
        squares
    }
}

impl Unit {
    /// Draws a unit from its stream, in the order docs/GAMES.md
    /// §Trésors Ensablés generation fixes: the ten series, the ten chests,
    /// then the dice up to the roll that reaches 60.
    pub fn generate(stream: &mut Stream) -> Unit {
        let mut board = Self::fixed_board();
        for s in 0..SERIES {
            let first = series_start(s);
            board[first..first + 5].copy_from_slice(&SeriesDraw::draw(stream).squares());
        }
        let mut chests = [0u8; CHESTS];
        for (k, chest) in chests.iter_mut().enumerate() {
            let table = ChestKind::of_chest(k).table();
            *chest = pick(table.weights, stream.below(table.denominator)) as u8;
        }
        let mut dice = [0u8; MAX_ROLLS];
        let mut rolls = 0;
        let mut position = 0u8;
        while position < GOLD_SQUARE {
            let die = stream.below(6) as u8 + 1;
            dice[rolls] = die;
            rolls += 1;
            position = (position + die).min(GOLD_SQUARE);
        }
        Unit {
            board,
            chests,
            dice,
            rolls: rolls as u8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::tresors::{StopRefused, BRONZE, GOLD, MIN_ROLLS, SILVER};

    // ---- distributions (f64 for statistics only, never for money) ----

    fn probabilities(weights: &[u32], denominator: u32) -> Vec<f64> {
        weights
            .iter()
            .map(|&w| f64::from(w) / f64::from(denominator))
            .collect()
    }

    fn assert_fits(what: &str, observed: &[u64], probabilities: &[f64]) {
        let p = crate::stats::chi_square(observed, probabilities).p;
        assert!(p >= 1e-6, "{what}: p = {p:e}, counts {observed:?}");
    }

    #[test]
    fn generated_units_follow_the_regulation_distributions() {
        const UNITS: u64 = 100_000;
        let seed = [0x5a; 32];
        let mut faces = [0u64; 6];
        let kinds = [
            Square::Blank,
            Square::LifePlus1,
            Square::LifePlus2,
            Square::Trap1,
            Square::Trap2,
            Square::Trap3,
        ];
        let mut by_offset = [[0u64; 6]; 5];
        let mut values = [vec![0u64; 3], vec![0u64; 3], vec![0u64; 6]];
        for i in 0..UNITS {
            let u = Unit::generate(&mut Stream::new(&seed, i + 1));
            // Every tape has at least ten rolls, all drawn alike.
            for &d in &u.dice()[..MIN_ROLLS] {
                faces[usize::from(d) - 1] += 1;
            }
            for s in 0..SERIES {
                for (offset, counts) in by_offset.iter_mut().enumerate() {
                    let q = u.board()[series_start(s) + offset];
                    counts[kinds.iter().position(|&k| k == q).unwrap()] += 1;
                }
            }
            for k in 0..CHESTS {
                values[(k % 2 + k / 9).min(2)][usize::from(u.chest_index(k))] += 1;
            }
        }
        assert_fits("die faces", &faces, &[1.0 / 6.0; 6]);
        // A square is rule 1's, 2's or 3's with 1/5 each, blank with 2/5.
        let fifth = |w: u32| 0.2 * f64::from(w) / 10.0;
        let expected = [
            fifth(3) + fifth(4) + 0.4,
            fifth(4) + fifth(3),
            fifth(3),
            fifth(3) + fifth(3),
            fifth(4),
            fifth(3),
        ];
        assert!((expected.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        for (offset, counts) in by_offset.iter().enumerate() {
            assert_fits(&format!("squares at offset {offset}"), counts, &expected);
        }
        for (name, table, counts) in [
            ("bronze", BRONZE, &values[0]),
            ("silver", SILVER, &values[1]),
            ("gold", GOLD, &values[2]),
        ] {
            assert_fits(
                name,
                counts,
                &probabilities(table.weights, table.denominator),
            );
        }
        assert_eq!(values[0].iter().sum::<u64>(), 5 * UNITS);
        assert_eq!(values[2].iter().sum::<u64>(), UNITS);
    }

    #[test]
    fn rules_are_placed_and_drawn_as_the_regulation_says() {
        const SERIES_DRAWS: u64 = 300_000;
        let mut stream = Stream::new(&[0xa5; 32], 7);
        // Every ordered triple of distinct offsets for rules 1, 2, 3.
        let mut placements = [0u64; 125];
        let mut outcomes = [[0u64; 3]; 3];
        for _ in 0..SERIES_DRAWS {
            let draw = SeriesDraw::draw(&mut stream);
            let [a, b, c] = draw.slots;
            assert!(a != b && b != c && a != c, "{draw:?}");
            placements[a * 25 + b * 5 + c] += 1;
            for r in 0..3 {
                outcomes[r][draw.outcomes[r]] += 1;
            }
        }
        let triples: Vec<u64> = placements.into_iter().filter(|&n| n > 0).collect();
        assert_eq!(triples.len(), 60);
        assert_fits("rule placements", &triples, &[1.0 / 60.0; 60]);
        for (r, counts) in outcomes.iter().enumerate() {
            let weights = RULES[r].outcomes.map(|(_, w, _)| w);
            assert_fits(
                &format!("rule {}", r + 1),
                counts,
                &probabilities(&weights, RULE_DENOMINATOR),
            );
        }
    }

    /// GAMES.md §Generation, followed literally (as an outside checker
    /// would), with the thresholds written out.
    fn regenerate_from_the_doc(stream: &mut Stream) -> ([Square; 61], Vec<u8>, Vec<u8>) {
        use Square::*;
        let rows = [
            [Blank, LifePlus1, LifePlus2],
            [Trap1, Trap2, Trap3],
            [Trap1, Blank, LifePlus1],
        ];
        let mut board = [Blank; 61];
        board[0] = Start;
        for s in 0..10 {
            let mut free: Vec<usize> = (0..5).collect();
            let offsets: Vec<usize> = (0..3)
                .map(|r| free.remove(stream.below(5 - r) as usize))
                .collect();
            for (r, offset) in offsets.into_iter().enumerate() {
                let x = stream.below(10);
                board[6 * s + 1 + offset] = rows[r][if x < 3 {
                    0
                } else if x < 7 {
                    1
                } else {
                    2
                }];
            }
            board[6 * s + 6] = if s == 9 {
                Gold
            } else if s % 2 == 0 {
                Bronze
            } else {
                Silver
            };
        }
        let chests = (0..10)
            .map(|k| {
                let (n, thresholds): (u32, &[u32]) = if k == 9 {
                    (100_000, &[69_999, 84_999, 94_999, 99_899, 99_999])
                } else {
                    (100, &[60, 83])
                };
                let x = stream.below(n);
                thresholds.iter().filter(|&&t| x >= t).count() as u8
            })
            .collect();
        let (mut dice, mut at) = (Vec::new(), 0);
        while at < 60 {
            let die = stream.below(6) as u8 + 1;
            dice.push(die);
            at = (at + die).min(60);
        }
        (board, chests, dice)
    }

    #[test]
    fn the_documented_draw_order_regenerates_units() {
        for i in 0..2_000 {
            let u = Unit::generate(&mut Stream::new(&[0x11; 32], i));
            let (board, chests, dice) = regenerate_from_the_doc(&mut Stream::new(&[0x11; 32], i));
            assert_eq!(u.board(), &board, "stream {i}");
            assert_eq!(
                (0..CHESTS).map(|k| u.chest_index(k)).collect::<Vec<_>>(),
                chests
            );
            assert_eq!(u.dice(), dice);
        }
    }

    #[test]
    fn golden_unit() {
        let seed: [u8; 32] = std::array::from_fn(|i| i as u8);
        let u = Unit::generate(&mut Stream::new(&seed, 1));
        let mut payload = Vec::new();
        u.encode(&mut payload);
        assert_eq!(hex::encode(&payload), GOLDEN_HEX);
        // The play FORMAT.md and GAMES.md describe.
        assert_eq!(u.prize_to_end_cents(), 320);
        assert_eq!(u.play(None).unwrap().chests_opened, 6);
        assert_eq!(
            u.play(Some(8)),
            Err(StopRefused::BeforeFirstChest { rolls: 8 })
        );
        assert_eq!(u.play(Some(9)).unwrap().prize_cents, 50);
        assert_eq!(u.dice().len(), 19);
    }

    const GOLDEN_HEX: &str = "311417113618514117121518115217211618115117261138115117342119200000010013414232134434161564400000000000000000000000000000000000000000";
}
