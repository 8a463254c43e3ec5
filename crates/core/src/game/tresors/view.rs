//! What is shown of a unit: the export view and fields, the text picture
//! of `issuer show`, and the play as the shared machinery's tape.

use serde::Serialize;

use super::{End, Square, Step, StopRefused, Unit, BOARD_SQUARES, CHESTS, MAX_LIFE};
use crate::game::play as game;
use crate::money::Cents;

/// A unit, as exported (field order is the export schema's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnitView {
    /// The 61 square tokens, square 0 first.
    pub board: Vec<&'static str>,
    /// The ten chests' values in euros ("0.1", "10000"), square 6 first.
    pub chests: Vec<String>,
    /// The dice tape.
    pub dice: Vec<u8>,
}

impl Unit {
    /// The serialisable view used by `export`.
    pub fn view(&self) -> UnitView {
        UnitView {
            board: self.board.iter().map(|q| q.token()).collect(),
            chests: (0..CHESTS)
                .map(|k| Cents::from(self.chest_cents(k)).to_string())
                .collect(),
            dice: self.dice().to_vec(),
        }
    }

    /// Appends the unit's export fields (the members of [`Unit::view`] as
    /// serde_json writes them) to `out`.
    pub fn write_export_fields(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(br#""board":["#);
        for (n, q) in self.board.iter().enumerate() {
            out.extend_from_slice(if n == 0 { b"\"" } else { b",\"" });
            out.extend_from_slice(q.token().as_bytes());
            out.push(b'"');
        }
        out.extend_from_slice(br#"],"chests":["#);
        for k in 0..CHESTS {
            if k > 0 {
                out.push(b',');
            }
            out.push(b'"');
            Cents::from(self.chest_cents(k)).write(out);
            out.push(b'"');
        }
        out.extend_from_slice(br#"],"dice":["#);
        for (i, d) in self.dice().iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'0' + d);
        }
        out.push(b']');
    }

    /// The unit as text for `issuer show`: the board (ten squares a row,
    /// landings in brackets), each roll up to the stop or the end, the
    /// chests opened and the outcome.
    pub fn picture(&self, stop_after_rolls: Option<u32>) -> Result<String, StopRefused> {
        let outcome = self.play(stop_after_rolls)?;
        let mut landed = [false; BOARD_SQUARES];
        let mut path = String::new();
        let mut chests = String::new();
        for step in self.steps().take(outcome.rolls as usize) {
            landed[usize::from(step.to)] = true;
            path.push_str(&format!(
                "roll {:>2}: die {} -> square {:>2} {:<7} life {}\n",
                step.roll,
                step.die,
                step.to,
                step.square.token(),
                step.life
            ));
            if let Some(cents) = step.chest_cents {
                chests.push_str(&format!(
                    "{} chest on square {}: {} €\n",
                    step.square.token(),
                    step.to,
                    Cents::from(cents)
                ));
            }
        }
        let mut out = format!(" 0 {}\n", self.board[0].mark());
        let rows = self.board[1..].chunks(10).zip(landed[1..].chunks(10));
        for (row, (squares, landed)) in rows.enumerate() {
            let mut line = format!("{:>2}", row * 10 + 1);
            for (square, &landed) in squares.iter().zip(landed) {
                let mark = square.mark();
                let cell = if landed {
                    format!("[{mark}]")
                } else {
                    format!(" {mark} ")
                };
                line.push_str(&format!(" {cell:<4}"));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push_str(PICTURE_LEGEND);
        out.push_str(&path);
        out.push_str(&chests);
        out.push_str(&outcome.describe());
        out.push('\n');
        Ok(out)
    }
}

/// The legend printed under the board.
pub const PICTURE_LEGEND: &str = "@ start; . blank; +1 +2 life; -1 -2 -3 trap; B bronze, S silver, G gold chest; [x] landed on\n";

impl Square {
    /// Two characters for the text picture.
    fn mark(self) -> &'static str {
        match self {
            Square::Start => "@",
            Square::Blank => ".",
            Square::LifePlus1 => "+1",
            Square::LifePlus2 => "+2",
            Square::Trap1 => "-1",
            Square::Trap2 => "-2",
            Square::Trap3 => "-3",
            Square::Bronze => "B",
            Square::Silver => "S",
            Square::Gold => "G",
        }
    }
}

impl Unit {
    /// The play to the end as the shared machinery sees it: each roll in
    /// this game's words, a stop allowed from the first chest (3.2.6), a
    /// death (paying nothing) or the gold chest ending it by itself.
    pub fn tape(&self) -> game::Tape {
        let steps: Vec<Step> = self.steps().collect();
        let mut chests_opened = 0u8;
        let state = |rolls: u32, position: u8, life: u8, chests: u8, found_cents: u32| {
            let found = Cents::from(found_cents).to_string();
            game::State {
                text: format!(
                    "{}, square {position}, life {life}, {found} € found",
                    crate::words::plural(rolls, "roll")
                ),
                fields: game::Fields::new()
                    .with("position", position)
                    .with("life", life)
                    .with("chests_opened", chests)
                    .with("found", found),
                found_cents,
            }
        };
        game::Tape {
            start: state(0, 0, MAX_LIFE, 0, 0),
            first_stop: steps
                .iter()
                .find(|s| s.chest_cents.is_some())
                .map(|s| s.roll),
            steps: steps
                .iter()
                .map(|s| {
                    chests_opened += u8::from(s.chest_cents.is_some());
                    let found = Cents::from(s.found_cents).to_string();
                    let chest = s.chest_cents.map(|c| Cents::from(c).to_string());
                    let mut shown = game::Fields::new()
                        .with("roll", s.roll)
                        .with("die", s.die)
                        .with("from", s.from)
                        .with("to", s.to)
                        .with("square", s.square.token())
                        .with("life", s.life);
                    if let Some(chest) = &chest {
                        shown = shown.with("chest", chest.as_str());
                    }
                    game::Step {
                        text: format!(
                            "roll {:>2}: die {} -> square {:>2} {:<7} life {}{}",
                            s.roll,
                            s.die,
                            s.to,
                            s.square.token(),
                            s.life,
                            chest
                                .map(|c| format!(", chest {c} € (found {found} €)"))
                                .unwrap_or_default()
                        ),
                        shown: shown.with("found", found),
                        state: state(s.roll, s.to, s.life, chests_opened, s.found_cents),
                        ends: s.end.map(|end| match end {
                            End::Death => game::Ending {
                                name: "death",
                                prize_cents: 0,
                            },
                            End::Gold | End::Stopped => game::Ending {
                                name: if end == End::Gold { "gold" } else { "stopped" },
                                prize_cents: s.found_cents,
                            },
                        }),
                    }
                })
                .collect(),
        }
    }
}
