//! The picture as text: one line per row of squares (`[x]` a square
//! landed on), then the notes; ANSI colours only when asked (a terminal).

use anstyle::{AnsiColor, Style};

use super::drawing::{Picture, Tone};

/// The terminal style of a tone.
fn style(tone: Tone) -> Style {
    let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
    match tone {
        Tone::Plain => Style::new(),
        Tone::Start => fg(AnsiColor::Cyan).bold(),
        Tone::Path => fg(AnsiColor::Cyan),
        Tone::Closed => fg(AnsiColor::BrightBlack).bold(),
        Tone::Win => fg(AnsiColor::Green).bold(),
        Tone::Loss => fg(AnsiColor::Red),
        Tone::Life => fg(AnsiColor::Green),
        Tone::Trap => fg(AnsiColor::Red),
        Tone::Bronze => fg(AnsiColor::Yellow),
        Tone::Silver => fg(AnsiColor::White).bold(),
        Tone::Gold => fg(AnsiColor::BrightYellow).bold(),
        Tone::Muted => fg(AnsiColor::BrightBlack),
    }
}

/// `text` in `tone`'s style when `colour`.
fn paint(text: &str, tone: Tone, colour: bool) -> String {
    if !colour || tone == Tone::Plain {
        return text.to_string();
    }
    let s = style(tone);
    format!("{s}{text}{s:#}")
}

pub(super) fn write(p: &Picture, colour: bool) -> String {
    let mut out = paint(&p.title, Tone::Plain, false);
    out.push('\n');
    for row in &p.rows {
        let mut line = format!("{:>2}", row.label);
        for cell in &row.cells {
            let framed = if cell.landed {
                format!("[{}]", cell.mark)
            } else {
                format!(" {} ", cell.mark)
            };
            // Cells are 5 characters wide (3-character marks and a frame),
            // the padding outside the colour so that plain and coloured
            // lines end alike.
            let framed = framed.trim_end();
            line.push(' ');
            line.push_str(&paint(framed, cell.tone, colour));
            line.push_str(&" ".repeat(5usize.saturating_sub(framed.chars().count())));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for note in &p.notes {
        out.push_str(&paint(&note.text, note.tone, colour));
        out.push('\n');
    }
    out
}
