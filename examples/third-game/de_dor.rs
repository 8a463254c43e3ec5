//! « Dé d'or », a toy third game: a game is this one file and one
//! registration line (`main.rs`). It is never in the production binary;
//! the `third-game` example is `issuer` with it registered, and the tests
//! whose names hold `third_game` drive it through the command line, the
//! HTTP API, the audit, the closing statement, PostgreSQL and the player
//! page (its page module is `de-dor.js`, beside this file).
//!
//! The rules: a unit is four dice (1 to 6), revealed one per step. Each
//! die adds its face × 10 cents to the gains; a 1 loses the unit (it pays
//! nothing). After the first step the player may stop and take the gains;
//! the fourth die ends the play and pays the gains. Played to the end a
//! unit pays when no die is a 1: probability (5/6)^4 = 625/1296, and then
//! each die is 2 to 6, mean 4, so the sum pays 160 cents on average: at
//! 1 € a unit, RTP = 625/1296 × 160/100 = 125/162.

use std::any::Any;

use serde_json::json;
use ticket_issuer::analysis::GameAnalysis;
use ticket_issuer::evidence::block::GameFindings;
use ticket_issuer::evidence::report::{Check, StatTest};
use ticket_issuer::evidence::{GameTally, TallyScope};
use ticket_issuer::game::{
    Ending, Fields, Game, GameRules, GameUnit, InvalidUnit, Played, Prize, PrizeModel, State, Step,
    StopRefusal, Tape,
};
use ticket_issuer::par::engine::{self, DrawnFigures};
use ticket_issuer::par::{Exact, ParRequest, ParSheet};
use ticket_issuer::rng::Stream;
use ticket_issuer::stats;

/// Dice on a unit.
pub const DICE: usize = 4;
/// Gains per pip, cents.
pub const CENTS_PER_PIP: u32 = 10;
/// The lot of a unit played to its end with no 1.
pub const LOT_END: u8 = 1;
/// The lot of a unit stopped by its player.
pub const LOT_STOPPED: u8 = 2;

/// The game's rules.
pub struct DeDor;

/// A unit: its four dice, checked when decoded.
struct Dice([u8; DICE]);

/// A payload's dice, checked.
fn dice(payload: &[u8]) -> Result<[u8; DICE], String> {
    let dice: [u8; DICE] = payload
        .try_into()
        .map_err(|_| format!("payload is {} bytes, expected {DICE}", payload.len()))?;
    match dice.iter().find(|d| !(1..=6).contains(*d)) {
        Some(d) => Err(format!("a die shows {d}")),
        None => Ok(dice),
    }
}

/// Where the play stands after `n` dice: gains, and whether a 1 lost it.
fn after(dice: &[u8; DICE], n: usize) -> (u32, bool) {
    let shown = &dice[..n];
    let lost = shown.contains(&1);
    let found = shown.iter().map(|&d| u32::from(d) * CENTS_PER_PIP).sum();
    (found, lost)
}

/// The die the play ends at (1-based): the first 1, else the last.
fn ends_at(dice: &[u8; DICE]) -> usize {
    dice.iter().position(|&d| d == 1).map_or(DICE, |i| i + 1)
}

/// The play to the end, or stopped after `stop` dice.
fn play(dice: &[u8; DICE], stop: Option<u32>) -> Result<Played, String> {
    let ends_at = ends_at(dice);
    match stop {
        None => {
            let (found, lost) = after(dice, ends_at);
            Ok(Played {
                lot: if lost { 0 } else { LOT_END },
                prize: Prize::Amount(if lost { 0 } else { found }),
            })
        }
        Some(k) if k == 0 || k as usize >= ends_at => Err(format!(
            "no stop after {k} dice: a stop comes after the first die and before the play ends (die {ends_at})"
        )),
        Some(k) => Ok(Played {
            lot: LOT_STOPPED,
            prize: Prize::Amount(after(dice, k as usize).0),
        }),
    }
}

fn state(dice: &[u8; DICE], n: usize) -> State {
    let (found, _) = after(dice, n);
    State {
        fields: Fields::new()
            .with("dice_shown", n)
            .with("gains_cents", found),
        text: format!("{n} die/dice shown, {found} cents"),
        found_cents: found,
    }
}

impl GameUnit for Dice {
    fn outcome(&self, stop: Option<u32>) -> Result<Played, StopRefusal> {
        play(&self.0, stop).map_err(StopRefusal::Refused)
    }
    fn write_export_fields(&self, out: &mut Vec<u8>) {
        let fields = json!({ "dice": self.0 }).to_string();
        out.extend_from_slice(&fields.as_bytes()[1..fields.len() - 1]);
    }
    fn picture(&self, stop: Option<u32>) -> Result<String, StopRefusal> {
        let n = stop.map_or(DICE, |k| k as usize).min(DICE);
        Ok(format!("dice: {:?}\n", &self.0[..n]))
    }
    fn sale_view(&self) -> serde_json::Value {
        json!({ "dice": DICE })
    }
    fn tape(&self) -> Option<Tape> {
        let dice = self.0;
        let ends_at = ends_at(&dice);
        let steps = (1..=ends_at)
            .map(|n| Step {
                shown: Fields::new().with("die", dice[n - 1]),
                text: format!("die {n}: {}", dice[n - 1]),
                state: state(&dice, n),
                ends: (n == ends_at).then(|| {
                    let (found, lost) = after(&dice, n);
                    Ending {
                        name: if lost { "lost" } else { "end" },
                        prize_cents: if lost { 0 } else { found },
                    }
                }),
            })
            .collect();
        Some(Tape {
            start: state(&dice, 0),
            steps,
            first_stop: Some(1),
        })
    }
}

impl GameRules for DeDor {
    fn slug(&self) -> &'static str {
        "de-dor"
    }
    fn code(&self) -> u16 {
        99
    }
    fn id_prefix(&self) -> &'static str {
        "DD"
    }
    fn rules_version(&self) -> u16 {
        1
    }
    fn params(&self) -> [u8; 2] {
        [DICE as u8, 0]
    }
    fn payload_size(&self) -> usize {
        DICE
    }
    fn prices_cents(&self) -> &'static [u32] {
        &[100]
    }
    fn prize_model(&self) -> PrizeModel {
        PrizeModel::Drawn
    }
    fn block_units(&self) -> u32 {
        1_000
    }
    fn max_units(&self) -> u32 {
        100_000
    }
    fn generate_payload(&self, stream: &mut Stream, _lot: u8, out: &mut Vec<u8>) -> Played {
        let dice: [u8; DICE] = std::array::from_fn(|_| 1 + stream.below(6) as u8);
        out.extend_from_slice(&dice);
        play(&dice, None).expect("played to the end")
    }
    fn decode(&self, payload: &[u8]) -> Result<Box<dyn GameUnit>, InvalidUnit> {
        Ok(Box::new(Dice(dice(payload)?)))
    }
    fn lot_name(&self, code: u8) -> Option<&'static str> {
        match code {
            LOT_END => Some("fin"),
            LOT_STOPPED => Some("arret"),
            _ => None,
        }
    }
    fn step_by_step(&self) -> bool {
        true
    }
    fn early_stop_refusal(&self, steps: u32) -> String {
        format!("no stop after {steps} dice: throw the first die first")
    }
}

/// Its analysis, registered beside its rules: the PAR sheet from its exact
/// figures (with the engine's cross-checks) and its own audit tally.
impl GameAnalysis for DeDor {
    fn par_sheet(
        &self,
        game: Game,
        request: &ParRequest<'_>,
    ) -> Result<ParSheet, ticket_issuer::Error> {
        engine::par_sheet(game, request, |price_cents| DrawnFigures {
            price: "1".into(),
            rtp: Exact::ratio(625u32 * 160, 1296u32 * price_cents),
            hit_frequency: Exact::ratio(625u32, 1296u32),
        })
    }
    fn audit_tally(&self) -> Option<Box<dyn GameTally>> {
        Some(Box::new(FaceTally::default()))
    }
}

/// The audit's tally of « Dé d'or »: how often each face shows, and the
/// units whose prize is not their dice played to the end.
#[derive(Default)]
pub struct FaceTally {
    faces: [u64; 6],
    units: u64,
    wrong_prizes: Vec<u32>,
}

impl GameTally for FaceTally {
    fn add(&mut self, index: u32, payload: &[u8], prize_cents: u32) -> Result<(), String> {
        let dice = dice(payload)?;
        for d in dice {
            self.faces[usize::from(d - 1)] += 1;
        }
        self.units += 1;
        let played = play(&dice, None)?;
        if played.prize.amount() != Some(prize_cents) {
            self.wrong_prizes.push(index);
        }
        Ok(())
    }
    fn merge(&mut self, other: Box<dyn GameTally>) {
        let other = other
            .into_any()
            .downcast::<FaceTally>()
            .expect("a tally of the same game");
        for (mine, theirs) in self.faces.iter_mut().zip(other.faces) {
            *mine += theirs;
        }
        self.units += other.units;
        self.wrong_prizes.extend(other.wrong_prizes);
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
    fn findings(&self, scope: &TallyScope<'_>) -> GameFindings {
        let faces = stats::chi_square(&self.faces, &[1.0 / 6.0; 6]);
        let mut wrong = self.wrong_prizes.clone();
        wrong.sort_unstable();
        GameFindings {
            tests: vec![StatTest::chi_square(
                format!("{}/dice-faces", scope.id),
                scope.scope,
                "each face of the dice equally often (1/6)",
                &faces,
            )],
            checks: vec![Check::new(
                format!("{}/dice-prizes", scope.id),
                scope.scope,
                "every unit's prize is its dice played to the end",
                wrong.is_empty(),
                if wrong.is_empty() {
                    format!("{} units", self.units)
                } else {
                    format!("units at {wrong:?} pay otherwise")
                },
            )],
            plots: Vec::new(),
            figures: json!({ "faces": self.faces }),
        }
    }
}
