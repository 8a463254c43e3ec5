//! A picture of a unit at a point of its play (docs/GAMES.md §What a
//! picture shows). Each game draws its units into this one game-neutral
//! model, in its own squares, marks and words ([`super::GameUnit::drawing`]);
//! the model is then written as text, coloured for a terminal or plain for
//! logs ([`Picture::text`]), or as SVG through an XML writer
//! ([`Picture::svg`]). Nothing here knows a game.

mod drawing;
mod svg;
mod text;

pub use drawing::{Cell, Moment, Note, Picture, Row, Tone};

impl Picture {
    /// The picture as text: ANSI colours when `colour` (a terminal), plain
    /// for logs and files.
    pub fn text(&self, colour: bool) -> String {
        text::write(self, colour)
    }

    /// The picture as an SVG document (UTF-8), well-formed XML.
    pub fn svg(&self) -> String {
        svg::write(self)
    }
}
