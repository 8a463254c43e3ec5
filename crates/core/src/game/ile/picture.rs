//! The unit drawn at a point of its play (docs/GAMES.md §What a picture
//! shows): the 8 × 8 map with « Départ », the nine chests, the pion's path
//! and the throws made so far (boussole and compteur, article 4.1), then
//! the outcome of article 4.5 once the four throws are made. Chests not
//! landed on stay closed, as the game leaves them at the end.

use super::regulation::{lot_name, Content, ARTICLE_4_5, MAP_HEIGHT, MAP_WIDTH, THROWS};
use super::unit::{Square, Unit};
use crate::game::picture::{Cell, Moment, Picture, Row, Tone};
use crate::game::StopRefusal;

impl Content {
    /// The regulation's word for what a chest holds (article 4.3).
    pub fn french(self) -> &'static str {
        match self {
            Content::Vide => "vide (croix)",
            Content::Chandelier => "chandelier",
            Content::Singe => "singe",
            Content::Saphir => "saphir",
            Content::TeteDeMort => "tête de mort",
        }
    }

    fn tone(self) -> Tone {
        match self {
            Content::Vide => Tone::Muted,
            Content::Chandelier => Tone::Gold,
            Content::Singe => Tone::Bronze,
            Content::Saphir => Tone::Silver,
            Content::TeteDeMort => Tone::Trap,
        }
    }
}

/// The legend under the map.
const LEGEND: &str = "D Départ · # coffre fermé · [1P] coffre découvert au lancer 1 : C chandelier, S singe, P saphir, T tête de mort, X vide (croix) · * case traversée";

impl Unit {
    /// The unit drawn after `moment`'s throws: `Moment::After(n)` for
    /// n ≤ 4, or `Moment::Paid(None)` (the four throws and the outcome).
    pub fn drawing(&self, moment: Moment) -> Result<Picture, StopRefusal> {
        let shown = match moment {
            Moment::After(n) if n as usize <= THROWS => n as usize,
            Moment::After(n) => {
                return Err(StopRefusal::Refused(format!(
                    "L'île au trésor has {THROWS} throws; a picture after {n} throws does not exist"
                )))
            }
            Moment::Paid(None) => THROWS,
            Moment::Paid(Some(_)) => {
                return Err(StopRefusal::Refused("L'île au trésor has no stop".into()))
            }
        };
        let landings = self.landings().map_err(StopRefusal::Invalid)?;
        let landings = &landings[..shown];
        // The squares the pion passed over, between its landings.
        let mut crossed = Vec::new();
        let mut at = self.start;
        for t in &self.throws[..shown] {
            for step in 1..t.steps {
                crossed.extend(at.moved(t.direction, step));
            }
            at = at.moved(t.direction, t.steps).unwrap_or(at);
        }
        let rows = (0..MAP_HEIGHT)
            .map(|y| Row {
                label: y.to_string(),
                cells: (0..MAP_WIDTH)
                    .map(|x| self.cell(Square { x, y }, landings, &crossed))
                    .collect(),
            })
            .collect();
        let place = |sq: Square| (usize::from(sq.y), usize::from(sq.x));
        let mut picture = Picture {
            title: "L'île au trésor".into(),
            rows,
            path: std::iter::once(self.start)
                .chain(landings.iter().copied())
                .map(place)
                .collect(),
            notes: Vec::new(),
            steps: shown as u32,
        };
        picture.note(LEGEND, Tone::Muted, "legend");
        picture.note(
            format!(
                "Lancers restants : {}",
                "● ".repeat(THROWS - shown) + &"○ ".repeat(shown)
            )
            .trim_end(),
            Tone::Plain,
            "throws-left",
        );
        for (i, (t, sq)) in self.throws[..shown].iter().zip(landings).enumerate() {
            let content = self.content_at(*sq).map_or("?", Content::french);
            picture.note(
                format!(
                    "lancer {} : boussole {}, compteur {} → case ({}, {}) : {content}",
                    i + 1,
                    t.direction.french(),
                    t.steps,
                    sq.x,
                    sq.y
                ),
                Tone::Path,
                "step",
            );
        }
        if shown < THROWS {
            picture.note(
                match THROWS - shown {
                    1 => "en cours : 1 lancer restant ; « Lancer »".to_string(),
                    n => format!("en cours : {n} lancers restants ; « Lancer »"),
                },
                Tone::Plain,
                "outcome",
            );
            return Ok(picture);
        }
        let lot = self.play().map_err(StopRefusal::Invalid)?;
        match lot_name(lot) {
            Some(_) => {
                let (content, count, _) = ARTICLE_4_5[usize::from(lot) - 1];
                let symbols = if count == 1 {
                    "symbole « {} » découvert"
                } else {
                    "symboles « {} » découverts"
                }
                .replace("{}", content.french());
                picture.note(
                    format!("issue : {count} {symbols} : gagnante (article 4.5)"),
                    Tone::Win,
                    "outcome",
                );
            }
            None => picture.note(
                "issue : perdante, aucun lot (article 4.6)",
                Tone::Loss,
                "outcome",
            ),
        }
        Ok(picture)
    }

    fn content_at(&self, sq: Square) -> Option<Content> {
        self.chests
            .iter()
            .find(|c| c.square == sq)
            .map(|c| c.content)
    }

    /// One square of the map after the throws that landed on `landings`.
    fn cell(&self, sq: Square, landings: &[Square], crossed: &[Square]) -> Cell {
        let cell = |mark: String, tone, class: &str, title: String, landed| Cell {
            mark,
            tone,
            class: class.into(),
            title,
            landed,
        };
        let at = format!("case ({}, {})", sq.x, sq.y);
        let landed = landings.iter().position(|l| *l == sq);
        match (self.content_at(sq), landed) {
            (Some(content), Some(n)) => cell(
                format!("{}{}", n + 1, content.letter()),
                content.tone(),
                &format!("chest opened {}", content.name()),
                format!(
                    "{at} : coffre découvert au lancer {} : {}",
                    n + 1,
                    content.french()
                ),
                true,
            ),
            (Some(_), None) => cell(
                "#".into(),
                Tone::Closed,
                "chest closed",
                format!("{at} : coffre fermé"),
                false,
            ),
            (None, _) if sq == self.start => cell(
                "D".into(),
                Tone::Start,
                "map-square start",
                format!("{at} : Départ"),
                false,
            ),
            (None, _) if crossed.contains(&sq) => cell(
                "*".into(),
                Tone::Path,
                "map-square crossed",
                format!("{at} : case traversée"),
                false,
            ),
            (None, _) => cell(".".into(), Tone::Plain, "map-square", at, false),
        }
    }
}
