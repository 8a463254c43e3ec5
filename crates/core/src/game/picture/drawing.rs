//! What a picture is made of: its rows of cells, its path, its notes and
//! their tones, and the moment of a play it shows.

/// The point of its play a picture shows a unit at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// After exactly this many steps (rolls, throws; 0: before the first),
    /// the play going on: nothing beyond them is drawn, and an outcome only
    /// if those steps ended the play by themselves.
    After(u32),
    /// The play as it is paid: stopped after this many steps (`None`:
    /// played to its end), with its outcome.
    Paid(Option<u32>),
}

/// What a square or a line is, for its colour on a terminal and its style
/// in the SVG (class `tone-…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Nothing in particular.
    Plain,
    /// The start (« Départ »).
    Start,
    /// Crossed by the pion, or a step of the path.
    Path,
    /// A chest still closed.
    Closed,
    /// A winning symbol, a gain, a winning outcome.
    Win,
    /// A losing outcome, a symbol that wins nothing by itself.
    Loss,
    /// A square that gives life.
    Life,
    /// A trap, a square that takes life.
    Trap,
    /// A bronze chest.
    Bronze,
    /// A silver chest.
    Silver,
    /// A gold chest.
    Gold,
    /// Secondary text: a legend.
    Muted,
}

impl Tone {
    /// The tone's name in SVG classes (`tone-gold`).
    pub fn name(self) -> &'static str {
        match self {
            Tone::Plain => "plain",
            Tone::Start => "start",
            Tone::Path => "path",
            Tone::Closed => "closed",
            Tone::Win => "win",
            Tone::Loss => "loss",
            Tone::Life => "life",
            Tone::Trap => "trap",
            Tone::Bronze => "bronze",
            Tone::Silver => "silver",
            Tone::Gold => "gold",
            Tone::Muted => "muted",
        }
    }
}

/// One square of a board or a map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// At most 3 characters: the square in the text picture, its label in
    /// the SVG.
    pub mark: String,
    /// Its colour.
    pub tone: Tone,
    /// Its classes in the SVG, the kind first (`chest closed`, `square
    /// trap`): what tests and style sheets find it by.
    pub class: String,
    /// Its name in the regulation's words (the SVG's `<title>`).
    pub title: String,
    /// The pion landed on it (framed: `[x]`).
    pub landed: bool,
}

/// A row of squares, with its label (a square number, a row number).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Printed before the row (right-aligned, 2 characters).
    pub label: String,
    /// The squares, west to east.
    pub cells: Vec<Cell>,
}

/// A line under the board: the legend, a step, the gauge, the outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The text, in the regulation's words.
    pub text: String,
    /// Its colour.
    pub tone: Tone,
    /// Its class in the SVG (`legend`, `step`, `life`, `gains`, `outcome`).
    pub class: &'static str,
}

/// A unit drawn at a point of its play: a grid of squares, the pion's path
/// over it, and lines of text. Holds only what the moment shows
/// (docs/API.md: a play's future never leaves the server).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picture {
    /// The game's name (« L'île au trésor »).
    pub title: String,
    /// The squares, north first.
    pub rows: Vec<Row>,
    /// The pion's path, start first: (row, column) in [`Picture::rows`].
    pub path: Vec<(usize, usize)>,
    /// The lines under the board.
    pub notes: Vec<Note>,
    /// Steps (rolls, throws) the picture shows.
    pub steps: u32,
}

impl Picture {
    /// A line under the board.
    pub fn note(&mut self, text: impl Into<String>, tone: Tone, class: &'static str) {
        self.notes.push(Note {
            text: text.into(),
            tone,
            class,
        });
    }
}
