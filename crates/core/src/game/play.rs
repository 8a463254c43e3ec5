//! A unit played one step at a time, as the shared machinery sees it: a
//! tape of steps, where a stop is first allowed, and how a step can end the
//! play by itself. The game renders each step and each state in its own
//! words ([`Fields`], a line of text); the ledger, the service and the CLI
//! only know "a step", "may stop", "over" and "prize".

use serde::ser::SerializeMap;
use serde::Serialize;

/// JSON members a game renders, in the game's order (what a player's
/// screen shows of a step or of where the play stands).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields(Vec<(&'static str, serde_json::Value)>);

impl Fields {
    /// No member.
    pub fn new() -> Fields {
        Fields::default()
    }

    /// These fields and member `name` last.
    pub fn with(mut self, name: &'static str, value: impl Into<serde_json::Value>) -> Fields {
        self.0.push((name, value.into()));
        self
    }

    /// The value of member `name`.
    pub fn get(&self, name: &str) -> Option<&serde_json::Value> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// A game's own members: an object whose members the game names (its
/// step's die, square, life…; docs/GAMES.md per game).
impl schemars::JsonSchema for Fields {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "GameFields".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "description": "the members the game renders, in its own words (docs/GAMES.md)",
            "additionalProperties": true,
        })
    }
}

impl Serialize for Fields {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// How a step ends a play by itself (not a stop).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    /// Its name in answers (`end`), in the game's words.
    pub name: &'static str,
    /// What the unit pays, cents.
    pub prize_cents: u32,
}

/// Where a play stands: before its first step, or after one.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// The members an answer shows (flattened into the play's view).
    pub fields: Fields,
    /// The same as a line of text (`issuer play`).
    pub text: String,
    /// What a stop here pays, cents (the gains found so far).
    pub found_cents: u32,
}

/// One step of a play.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// What the player is shown of it (one element of an answer's `steps`).
    pub shown: Fields,
    /// The same as a line of text (`issuer play`).
    pub text: String,
    /// Where the play stands after it.
    pub state: State,
    /// Set when this step ends the play by itself.
    pub ends: Option<Ending>,
}

/// Every step of a unit played to the end, from its payload.
#[derive(Clone, Debug, PartialEq)]
pub struct Tape {
    /// Where the play stands before its first step.
    pub start: State,
    /// The steps, in order; the last ends the play by itself.
    pub steps: Vec<Step>,
    /// The first step after which the player may stop (`None`: never).
    pub first_stop: Option<u32>,
}

impl Tape {
    /// The step that ends the play by itself (the tape's length).
    pub fn end_step(&self) -> u32 {
        u32::try_from(self.steps.len()).unwrap_or(u32::MAX)
    }

    /// The steps among the first `n`.
    pub fn first(&self, n: u32) -> &[Step] {
        &self.steps[..(n as usize).min(self.steps.len())]
    }

    /// Where the play stands after `n` steps.
    pub fn state_after(&self, n: u32) -> &State {
        self.first(n).last().map_or(&self.start, |s| &s.state)
    }

    /// How the play ended by itself within its first `n` steps.
    pub fn ended_within(&self, n: u32) -> Option<Ending> {
        self.first(n).last().and_then(|s| s.ends)
    }

    /// A stop after `n` steps is allowed by the rules (the play not over).
    pub fn may_stop_after(&self, n: u32) -> bool {
        self.ended_within(n).is_none() && self.first_stop.is_some_and(|f| n >= f)
    }

    /// What the play pays once over after `n` steps (`stopped` there or
    /// ended by itself); `None` while it goes on.
    pub fn prize_cents(&self, n: u32, stopped: bool) -> Option<u32> {
        match self.ended_within(n) {
            Some(ending) => Some(ending.prize_cents),
            None if stopped => Some(self.state_after(n).found_cents),
            None => None,
        }
    }
}
