//! The unit drawn at a point of its play (docs/GAMES.md §What a picture
//! shows): the 61 squares (annex 3.2.1), the life gauge, the dice rolled
//! so far and the squares they reached, the chests opened and what they
//! held, and how the play stands or ended.
//!
//! A picture after k rolls is drawn from the board (shown before the first
//! roll, 3.2.4) and the first k rolls only: no later die, no chest not yet
//! opened is read, so it equals, byte for byte, the picture of any unit
//! with the same board and the same first k rolls (tested).

use super::{End, Square, Step, Unit, BOARD_SQUARES, MAX_LIFE};
use crate::game::picture::{Cell, Moment, Picture, Row, Tone};
use crate::game::StopRefusal;
use crate::money::Cents;
use crate::words::plural;

impl Square {
    /// The square's mark in a picture (3 characters at most).
    fn picture_mark(self) -> &'static str {
        match self {
            Square::Start => "D",
            Square::Blank => ".",
            Square::LifePlus1 => "+1",
            Square::LifePlus2 => "+2",
            Square::Trap1 => "-1",
            Square::Trap2 => "-2",
            Square::Trap3 => "-3",
            Square::Bronze => "B",
            Square::Silver => "A",
            Square::Gold => "O",
        }
    }

    /// The regulation's name of the square (3.2.1, 3.2.3).
    pub fn french(self) -> &'static str {
        match self {
            Square::Start => "Départ",
            Square::Blank => "case vierge",
            Square::LifePlus1 => "vie +1",
            Square::LifePlus2 => "vie +2",
            Square::Trap1 => "piège -1",
            Square::Trap2 => "piège -2",
            Square::Trap3 => "piège -3",
            Square::Bronze => "coffre bronze",
            Square::Silver => "coffre argent",
            Square::Gold => "coffre or",
        }
    }

    /// The square's colour and SVG classes.
    fn look(self) -> (Tone, &'static str) {
        match self {
            Square::Start => (Tone::Start, "square start"),
            Square::Blank => (Tone::Plain, "square blank"),
            Square::LifePlus1 | Square::LifePlus2 => (Tone::Life, "square life"),
            Square::Trap1 | Square::Trap2 | Square::Trap3 => (Tone::Trap, "square trap"),
            Square::Bronze => (Tone::Bronze, "square chest bronze"),
            Square::Silver => (Tone::Silver, "square chest silver"),
            Square::Gold => (Tone::Gold, "square chest gold"),
        }
    }
}

/// The legend under the board.
const LEGEND: &str = "D Départ · . case vierge · +1 +2 vie · -1 -2 -3 piège · B coffre bronze, A coffre argent, O coffre or · [x] case atteinte";

/// Where square `n` is drawn: square 0 alone on the first row, then rows of
/// ten.
fn place(n: u8) -> (usize, usize) {
    match n {
        0 => (0, 0),
        n => (usize::from(n - 1) / 10 + 1, usize::from(n - 1) % 10),
    }
}

impl Unit {
    /// The unit drawn after exactly k rolls (`Moment::After(k)`, refused
    /// past the roll that ended the play) or as paid at a stop
    /// (`Moment::Paid`, refused where the rules refuse the stop).
    pub fn drawing(&self, moment: Moment) -> Result<Picture, StopRefusal> {
        let (steps, stopped) = match moment {
            Moment::After(k) => (self.first_rolls(k)?, false),
            Moment::Paid(stop) => {
                let outcome = self
                    .play(stop)
                    .map_err(|e| StopRefusal::Refused(e.to_string()))?;
                let steps: Vec<Step> = self.steps().take(outcome.rolls as usize).collect();
                (steps, outcome.end == End::Stopped)
            }
        };
        Ok(draw(&self.board, &steps, stopped))
    }

    /// The first `k` rolls, refused past the roll that ended the play.
    fn first_rolls(&self, k: u32) -> Result<Vec<Step>, StopRefusal> {
        let mut play = self.steps();
        let mut steps = Vec::new();
        while steps.len() < k as usize {
            match play.roll() {
                Some(step) => steps.push(step),
                None => {
                    return Err(StopRefusal::Refused(format!(
                        "the play ended at roll {}: a picture after {k} rolls does not exist",
                        steps.len()
                    )))
                }
            }
        }
        Ok(steps)
    }
}

/// The picture of `board` after `steps` (the player having pressed
/// « Arrêter » after them when `stopped`). Reads nothing else of the unit.
fn draw(board: &[Square; BOARD_SQUARES], steps: &[Step], stopped: bool) -> Picture {
    let mut landed = [false; BOARD_SQUARES];
    let mut opened = [None; BOARD_SQUARES];
    for s in steps {
        landed[usize::from(s.to)] = true;
        if let Some(cents) = s.chest_cents {
            opened[usize::from(s.to)] = Some(cents);
        }
    }
    let cell = |n: u8| {
        let square = board[usize::from(n)];
        let (tone, class) = square.look();
        let mut title = format!("case {n} : {}", square.french());
        if let Some(cents) = opened[usize::from(n)] {
            title.push_str(&format!(", ouvert : {} €", Cents::from(cents).french()));
        }
        Cell {
            mark: square.picture_mark().into(),
            tone,
            class: class.into(),
            title,
            landed: landed[usize::from(n)],
        }
    };
    let mut rows = vec![Row {
        label: "0".into(),
        cells: vec![cell(0)],
    }];
    for first in (1..BOARD_SQUARES as u8).step_by(10) {
        rows.push(Row {
            label: first.to_string(),
            cells: (first..first + 10).map(cell).collect(),
        });
    }
    let mut picture = Picture {
        title: "Trésors Ensablés".into(),
        rows,
        path: std::iter::once(0)
            .chain(steps.iter().map(|s| s.to))
            .map(place)
            .collect(),
        notes: Vec::new(),
        steps: steps.len() as u32,
    };
    picture.note(LEGEND, Tone::Muted, "legend");
    let last = steps.last();
    let life = last.map_or(MAX_LIFE, |s| s.life);
    picture.note(
        format!(
            "points de vie : {} ({life}/{MAX_LIFE})",
            ("♥ ".repeat(usize::from(life)) + &"♡ ".repeat(usize::from(MAX_LIFE - life)))
                .trim_end()
        ),
        if life == 0 { Tone::Loss } else { Tone::Life },
        "life",
    );
    let dice: Vec<String> = steps.iter().map(|s| s.die.to_string()).collect();
    picture.note(
        match dice.len() {
            0 => "dés : aucun lancer".to_string(),
            _ => format!("dés : {}", dice.join(" ")),
        },
        Tone::Path,
        "dice",
    );
    for s in steps {
        let what = match s.chest_cents {
            Some(cents) => format!(
                "{} ouvert, {} €",
                s.square.french(),
                Cents::from(cents).french()
            ),
            None => s.square.french().to_string(),
        };
        picture.note(
            format!(
                "lancer {:>2} : dé {} → case {:>2} : {what} ; vie {}",
                s.roll, s.die, s.to, s.life
            ),
            Tone::Path,
            "step",
        );
    }
    let chests: Vec<String> = steps
        .iter()
        .filter_map(|s| {
            s.chest_cents.map(|c| {
                format!(
                    "{} (case {}) {} €",
                    s.square.french(),
                    s.to,
                    Cents::from(c).french()
                )
            })
        })
        .collect();
    let found = Cents::from(last.map_or(0, |s| s.found_cents)).french();
    picture.note(
        match chests.len() {
            0 => "gains trouvés : aucun coffre ouvert".to_string(),
            _ => format!("gains trouvés : {found} € ({})", chests.join(", ")),
        },
        if chests.is_empty() {
            Tone::Plain
        } else {
            Tone::Win
        },
        "gains",
    );
    let rolls = steps.len();
    let (text, tone) = match (last.and_then(|s| s.end), stopped) {
        (Some(End::Death), _) => (
            format!("issue : plus aucun point de vie au lancer {rolls} : perdante, aucun gain ({found} € trouvés perdus, 3.2.8)"),
            Tone::Loss,
        ),
        (Some(_), _) => (
            format!("issue : coffre or atteint en {} : gagne {found} € (3.3.5)", plural(rolls, "lancer")),
            Tone::Win,
        ),
        (None, true) => (
            format!("issue : « Arrêter » après {} : gagne {found} € (3.2.6)", plural(rolls, "lancer")),
            Tone::Win,
        ),
        (None, false) if chests.is_empty() => (
            format!("en cours après {} : « Lancer »", plural(rolls, "lancer")),
            Tone::Plain,
        ),
        (None, false) => (
            format!("en cours après {} : « Lancer » ou « Arrêter » avec {found} €", plural(rolls, "lancer")),
            Tone::Plain,
        ),
    };
    picture.note(text, tone, "outcome");
    picture
}
