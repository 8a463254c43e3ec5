//! Pictures of units (docs/API.md `GET /v1/plays/{id}/picture.svg`,
//! docs/CLI.md `show`), drawn by each unit's game and shown by the rule of
//! docs/REDEMPTION.md §What an answer shows: a unit whose play is not over
//! is drawn after the rolls revealed at most, never beyond.

use super::disclosure::{self, Disclosure};
use super::state::Redeemer;
use crate::error::Error;
use crate::game::{Moment, Picture, StopRefusal};
use crate::unit_id::UnitId;

/// What picture of a unit is asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PictureAsk {
    /// After this many steps (rolls, throws); `None`: as the play stands,
    /// or as it is paid once over.
    pub after: Option<u32>,
    /// Played to this stop (Trésors Ensablés, once its play is over: the
    /// recorded one; with `reveal_all`, any the rules allow).
    pub stop: Option<u32>,
    /// An operator's or auditor's replay: the whole unit, whatever its
    /// play (never a platform's or a player's).
    pub reveal_all: bool,
}

impl Redeemer {
    /// Unit `id` drawn by its game, no further than its play may be shown:
    /// authenticated first; a unit whose play is not over only up to the
    /// rolls revealed (an unsold one not at all: `not_sold`); asking for
    /// more is refused alike whatever the rolls to come (`play_unfinished`).
    /// Records nothing.
    pub fn picture(&self, id: &UnitId, ask: PictureAsk) -> Result<Picture, Error> {
        let located = self.units.locate(id)?;
        let moment = if ask.reveal_all {
            match ask.after {
                Some(n) => Moment::After(n),
                None => Moment::Paid(ask.stop),
            }
        } else {
            self.shown_moment(id, ask)?
        };
        located.unit.drawing(moment).map_err(|e| match e {
            StopRefusal::Refused(reason) => Error::BadStop {
                id: id.to_string(),
                reason,
            },
            StopRefusal::Invalid(m) => located.reject(m),
        })
    }

    /// The picture of a play as it stands (`GET /v1/plays/{id}/picture.svg`):
    /// refused as the play routes refuse (`not_playable`, `not_sold`).
    pub fn play_picture(&self, id: &UnitId) -> Result<Picture, Error> {
        if !id.game.step_by_step() {
            // Authenticated first, as the play routes do.
            self.units.locate(id)?;
            return Err(Error::NotPlayable {
                id: id.to_string(),
                game: id.game.slug(),
            });
        }
        self.picture(id, PictureAsk::default())
    }

    /// The moment of its play a picture of `id` may show, by the rule of
    /// [`Disclosure`].
    fn shown_moment(&self, id: &UnitId, ask: PictureAsk) -> Result<Moment, Error> {
        match self.disclosure(id)? {
            Disclosure::Partial { sold, rolls } => {
                if !sold || ask.stop.is_some() || ask.after.is_some_and(|n| n > rolls) {
                    return Err(disclosure::unfinished(id, sold, rolls));
                }
                Ok(Moment::After(ask.after.unwrap_or(rolls)))
            }
            Disclosure::Whole { stop: recorded } => {
                let paid = disclosure::paid_stop(id, ask.stop, recorded)?;
                match (ask.after, paid) {
                    (None, paid) => Ok(Moment::Paid(paid)),
                    (Some(n), Some(stop)) if id.game.step_by_step() && n > stop => {
                        Err(Error::BadStop {
                            id: id.to_string(),
                            reason: format!(
                                "the play stopped after {stop} rolls; a picture shows at most those"
                            ),
                        })
                    }
                    (Some(n), _) => Ok(Moment::After(n)),
                }
            }
        }
    }
}
