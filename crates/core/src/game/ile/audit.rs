//! L'île au trésor's audit tally (docs/AUDIT.md §L'île au trésor):
//! presentation neutrality. What a unit shows beside its lot (the five
//! chests the throws leave closed, the throws' directions and step counts)
//! must not depend on whether it wins: winners against losers, a chi-square
//! test of independence each. The throws land on four chests on every unit
//! by the rules (4.4); the tally counts them and checks it.

use std::any::Any;

use serde_json::json;

use super::{Content, Direction, Unit, CHESTS, MAX_STEPS, THROWS};
use crate::evidence::block::{independence, GameFindings, GameTally, TallyScope};
use crate::evidence::{Check, Plot, PlotKind, Series, StatTest};

/// Counts of winners (row 0) and losers (row 1).
#[derive(Clone, Debug, Default)]
pub(crate) struct Tally {
    /// Contents of the chests no throw lands on.
    closed: [[u64; 5]; 2],
    /// Throws' directions.
    directions: [[u64; 8]; 2],
    /// Throws' step counts (1 … MAX_STEPS).
    steps: [[u64; MAX_STEPS as usize]; 2],
    /// Units by the number of chests their throws land on (0 … 4).
    landed: [[u64; THROWS + 1]; 2],
}

impl GameTally for Tally {
    fn add(&mut self, _index: u32, payload: &[u8], prize_cents: u32) -> Result<(), String> {
        let unit = Unit::decode(payload)?;
        let row = usize::from(prize_cents == 0);
        let landings = unit.landings()?;
        let mut landed = 0;
        for chest in &unit.chests {
            if landings.contains(&chest.square) {
                landed += 1;
            } else {
                self.closed[row][chest.content as usize] += 1;
            }
        }
        self.landed[row][landed] += 1;
        for t in &unit.throws {
            self.directions[row][usize::from(t.direction.code())] += 1;
            self.steps[row][usize::from(t.steps) - 1] += 1;
        }
        Ok(())
    }

    fn merge(&mut self, other: Box<dyn GameTally>) {
        let Ok(o) = other.into_any().downcast::<Tally>() else {
            unreachable!("a chunk's tally is made by the same game");
        };
        for r in 0..2 {
            add(&mut self.closed[r], &o.closed[r]);
            add(&mut self.directions[r], &o.directions[r]);
            add(&mut self.steps[r], &o.steps[r]);
            add(&mut self.landed[r], &o.landed[r]);
        }
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn findings(&self, s: &TallyScope<'_>) -> GameFindings {
        let mut tests = Vec::new();
        for (what, table) in [
            ("closed chests' contents", rows(&self.closed)),
            ("throws' directions", rows(&self.directions)),
            ("throws' step counts", rows(&self.steps)),
        ] {
            let id = format!("{}/neutrality-{}", s.id, slug(what));
            let name = format!("{what}: winners against losers");
            let method = "chi-square test of independence";
            tests.push(match independence(&table) {
                Some(c) => {
                    StatTest::ran(id, s.scope, &name, method, c.stat, Some(c.dof as f64), c.p)
                }
                None => StatTest::not_run(
                    id,
                    s.scope,
                    &name,
                    method,
                    "too few winners or losers: a cell is expected fewer than 5 times".into(),
                ),
            });
        }
        let off_rule: u64 = (0..2)
            .map(|r| self.landed[r][..THROWS].iter().sum::<u64>())
            .sum();
        let checks = vec![Check::new(
            format!("{}/neutrality-landings", s.id),
            s.scope,
            "the throws land on four chests on every unit, winners and losers alike (4.4)",
            off_rule == 0,
            format!(
                "winners: {} units on 4 chests; losers: {} units on 4 chests; {off_rule} units on fewer",
                self.landed[0][THROWS], self.landed[1][THROWS]
            ),
        )];
        let share = |counts: &[u64; 5]| -> Vec<[f64; 2]> {
            let n = counts.iter().sum::<u64>().max(1) as f64;
            counts
                .iter()
                .enumerate()
                .map(|(i, &c)| [i as f64, c as f64 / n])
                .collect()
        };
        let plots = vec![Plot {
            id: format!("{}-closed-chests", s.id),
            section: "neutrality".into(),
            title: format!(
                "{}: contents of the closed chests, winners against losers",
                s.scope
            ),
            x_label: "content of a closed chest".into(),
            y_label: "share of closed chests".into(),
            x_categories: Content::ALL.map(|c| c.name().to_string()).to_vec(),
            kind: PlotKind::Bars,
            lines: Vec::new(),
            series: vec![
                Series::new("winners", share(&self.closed[0])),
                Series::new("losers", share(&self.closed[1])),
            ],
        }];
        let figures = json!({
            "closed_chests": {
                "contents": Content::ALL.map(|c| c.name()),
                "winners": self.closed[0],
                "losers": self.closed[1],
            },
            "directions": {
                "names": Direction::ALL.map(|d| d.name()),
                "winners": self.directions[0],
                "losers": self.directions[1],
            },
            "steps": { "winners": self.steps[0], "losers": self.steps[1] },
            "chests_per_unit": CHESTS,
        });
        GameFindings {
            tests,
            checks,
            plots,
            figures,
        }
    }
}

/// `a += b`, cell by cell.
fn add(a: &mut [u64], b: &[u64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Winners' and losers' counts as a table.
fn rows<const N: usize>(r: &[[u64; N]; 2]) -> Vec<Vec<u64>> {
    r.iter().map(|row| row.to_vec()).collect()
}

/// "closed-chests-contents" from "closed chests' contents".
fn slug(what: &str) -> String {
    what.chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ')
        .collect::<String>()
        .replace(' ', "-")
}
