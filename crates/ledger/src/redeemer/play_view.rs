//! Where a play stands ([`PlayView`]): only what the steps revealed so far,
//! and the outcome a step shows for the first time ([`FirstShown`]).

use serde::Serialize;

use crate::game::{Fields, Game, Step, Tape};
use crate::money::Cents;
use crate::record::RecordPrefix;
use crate::unit_id::UnitId;

/// A unit whose outcome an answer shows for the first time: its game and
/// price, and what it holds (its record prefix: lot, prize played to the
/// end). Never answered: the top-lots watch acts on it.
#[derive(Clone, Copy, Debug)]
pub struct FirstShown {
    /// The game.
    pub game: Game,
    /// Its block's unit price, cents.
    pub price_cents: u32,
    /// Its record's prefix.
    pub held: RecordPrefix,
}

/// Where a play stands after some steps (rolls, in the API's words): only
/// what those steps revealed. The game renders the state and the steps;
/// this view adds what every game's play has.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct PlayView {
    /// The unit ID.
    pub id: String,
    /// Steps revealed.
    pub rolls: u32,
    /// Where the play stands, in the game's words (for Trésors Ensablés:
    /// `position`, `life`, `chests_opened`, `found`).
    #[serde(flatten)]
    pub state: Fields,
    /// The player may stop now.
    pub may_stop: bool,
    /// The play is over.
    pub over: bool,
    /// How it ended: `stopped`, or how the game's step ended it by itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<&'static str>,
    /// What the unit pays, euros, once over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prize: Option<String>,
    /// The steps this answer reveals: the one asked (a roll), or every
    /// step so far (the play's state), in the game's words.
    pub steps: Vec<Fields>,
    /// The step was done before (a retry): nothing changed.
    pub replayed: bool,
    /// In the step that ended the play: its entry is in the ledger's log
    /// (`false`: queued for the sequencer, PostgreSQL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequenced: Option<bool>,
    /// The play's entry in the ledger's log, once over and sequenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_entry: Option<u64>,
    /// The steps revealed and then the state, as lines of text.
    #[serde(skip)]
    pub lines: Vec<String>,
    /// The outcome this step shows for the first time (a step that ended
    /// the play, not a retry): never answered; the top-lots watch reads
    /// it.
    #[serde(skip)]
    pub first_shown: Option<FirstShown>,
}

impl PlayView {
    /// The play after `rolls` steps of `tape`, with every step revealed so
    /// far.
    pub(super) fn so_far(id: &UnitId, tape: &Tape, rolls: u32, stopped: bool) -> Self {
        PlayView::at(id, tape, rolls, stopped, tape.first(rolls))
    }

    /// The play after `rolls` steps of `tape`, `stopped` there or not;
    /// `shown` are the steps to reveal.
    pub(super) fn at(id: &UnitId, tape: &Tape, rolls: u32, stopped: bool, shown: &[Step]) -> Self {
        let state = tape.state_after(rolls);
        let end = match (stopped, tape.ended_within(rolls)) {
            (true, _) => Some("stopped"),
            (false, ending) => ending.map(|e| e.name),
        };
        let prize = tape
            .prize_cents(rolls, stopped)
            .map(|cents| Cents::from(cents).to_string());
        let over = end.is_some();
        let may_stop = !over && tape.may_stop_after(rolls);
        let mut lines: Vec<String> = shown.iter().map(|s| s.text.clone()).collect();
        lines.push(format!(
            "{id}: {}{}{}",
            state.text,
            match (&end, &prize) {
                (Some(end), Some(prize)) => format!("; over ({end}): pays {prize} €"),
                _ => String::new(),
            },
            if may_stop { "; may stop" } else { "" }
        ));
        PlayView {
            id: id.to_string(),
            rolls,
            state: state.fields.clone(),
            may_stop,
            over,
            end,
            prize,
            steps: shown.iter().map(|s| s.shown.clone()).collect(),
            replayed: false,
            sequenced: None,
            ledger_entry: None,
            lines,
            first_shown: None,
        }
    }
}
