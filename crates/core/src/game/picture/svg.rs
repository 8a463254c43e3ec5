//! The picture as SVG, written through quick-xml's writer (every text and
//! attribute escaped, every element closed): a `<g>` per square with its
//! classes, a `<title>` in the regulation's words, the pion's path as a
//! polyline, and the notes as lines of text.

use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use super::drawing::{Picture, Tone};

/// Side of a square, in SVG units.
const CELL: usize = 44;
/// Left margin (row labels) and top margin (the title).
const LEFT: usize = 36;
const TOP: usize = 40;
/// Height of a line of text under the board.
const LINE: usize = 18;

/// The style sheet: one rule per tone, for squares and lines.
const STYLE: &str = "\
text{font-family:sans-serif;font-size:13px}\
.title{font-size:16px;font-weight:bold}\
.label{fill:#555;font-size:11px}\
g rect{fill:#f6efd9;stroke:#b49a5a;stroke-width:1}\
g.landed rect{stroke:#0b5394;stroke-width:3}\
g text{text-anchor:middle;font-weight:bold}\
.path{fill:none;stroke:#0b5394;stroke-width:2;stroke-dasharray:4 3}\
.tone-start rect{fill:#cfe2f3}.tone-path rect{fill:#e3eef8}\
.tone-closed rect{fill:#8d6e4a}.tone-closed text{fill:#fff}\
.tone-win rect{fill:#d9ead3}.tone-win,.tone-win text{fill:#274e13}\
.tone-loss rect{fill:#f4cccc}.tone-loss,.tone-loss text{fill:#990000}\
.tone-life rect{fill:#d9ead3}.tone-trap rect{fill:#f4cccc}\
.tone-bronze rect{fill:#e6b8a2}.tone-silver rect{fill:#d9d9d9}.tone-gold rect{fill:#ffe599}\
.tone-muted{fill:#666}";

fn tone_class(tone: Tone) -> String {
    format!("tone-{}", tone.name())
}

/// The centre of square (row, column).
fn centre(row: usize, column: usize) -> (usize, usize) {
    (LEFT + column * CELL + CELL / 2, TOP + row * CELL + CELL / 2)
}

pub(super) fn write(p: &Picture) -> String {
    let columns = p.rows.iter().map(|r| r.cells.len()).max().unwrap_or(0);
    // Wide enough for the board and for the longest line (about 7 units
    // a character at 13 px).
    let longest = p
        .notes
        .iter()
        .map(|n| n.text.chars().count())
        .max()
        .unwrap_or(0);
    let width = (LEFT + columns * CELL + 16).max(16 + longest * 7);
    let board_bottom = TOP + p.rows.len() * CELL;
    let height = board_bottom + 16 + p.notes.len() * LINE + 8;
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 1);
    // Writing into a Vec cannot fail.
    let written = (|| -> std::io::Result<()> {
        w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
        let (width, height) = (width.to_string(), height.to_string());
        let view_box = format!("0 0 {width} {height}");
        w.create_element("svg")
            .with_attributes([
                ("xmlns", "http://www.w3.org/2000/svg"),
                ("width", width.as_str()),
                ("height", height.as_str()),
                ("viewBox", view_box.as_str()),
                ("class", "unit-picture"),
            ])
            .write_inner_content(|w| {
                w.create_element("title")
                    .write_text_content(BytesText::new(&p.title))?;
                w.create_element("style")
                    .write_text_content(BytesText::new(STYLE))?;
                w.create_element("text")
                    .with_attributes([("class", "title"), ("x", "8"), ("y", "24")])
                    .write_text_content(BytesText::new(&p.title))?;
                for (r, row) in p.rows.iter().enumerate() {
                    let y = (TOP + r * CELL + CELL / 2 + 4).to_string();
                    w.create_element("text")
                        .with_attributes([("class", "label"), ("x", "6"), ("y", y.as_str())])
                        .write_text_content(BytesText::new(&row.label))?;
                    for (c, cell) in row.cells.iter().enumerate() {
                        let mut class = format!("{} {}", cell.class, tone_class(cell.tone));
                        if cell.landed {
                            class.push_str(" landed");
                        }
                        let (x, y) = (LEFT + c * CELL, TOP + r * CELL);
                        let id = format!("cell-{r}-{c}");
                        w.create_element("g")
                            .with_attributes([("id", id.as_str()), ("class", class.as_str())])
                            .write_inner_content(|w| {
                                w.create_element("title")
                                    .write_text_content(BytesText::new(&cell.title))?;
                                let (x, y, side) =
                                    (x.to_string(), y.to_string(), (CELL - 2).to_string());
                                w.create_element("rect")
                                    .with_attributes([
                                        ("x", x.as_str()),
                                        ("y", y.as_str()),
                                        ("width", side.as_str()),
                                        ("height", side.as_str()),
                                        ("rx", "4"),
                                    ])
                                    .write_empty()?;
                                let (cx, cy) = centre(r, c);
                                let (cx, cy) = ((cx - 1).to_string(), (cy + 4).to_string());
                                w.create_element("text")
                                    .with_attributes([("x", cx.as_str()), ("y", cy.as_str())])
                                    .write_text_content(BytesText::new(&cell.mark))?;
                                Ok(())
                            })?;
                    }
                }
                if p.path.len() > 1 {
                    let points: Vec<String> = p
                        .path
                        .iter()
                        .map(|&(r, c)| {
                            let (x, y) = centre(r, c);
                            format!("{x},{y}")
                        })
                        .collect();
                    w.create_element("polyline")
                        .with_attributes([("class", "path"), ("points", points.join(" ").as_str())])
                        .write_empty()?;
                }
                for (i, note) in p.notes.iter().enumerate() {
                    let y = (board_bottom + 16 + i * LINE + 12).to_string();
                    let class = format!("note {} {}", note.class, tone_class(note.tone));
                    w.create_element("text")
                        .with_attributes([("class", class.as_str()), ("x", "8"), ("y", y.as_str())])
                        .write_text_content(BytesText::new(&note.text))?;
                }
                Ok(())
            })?;
        Ok(())
    })();
    debug_assert!(written.is_ok());
    let mut svg = String::from_utf8(w.into_inner()).unwrap_or_default();
    svg.push('\n');
    svg
}
