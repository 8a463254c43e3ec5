//! The play engine: a unit played one roll at a time (life, chests, the
//! gold chest), the stops the rules allow (3.2.4, 3.2.6) and the outcome.

use crate::words::plural;
use serde::Serialize;

use super::{Square, Unit, GOLD_SQUARE, MAX_LIFE};
use crate::money::Cents;

impl Unit {
    /// A play of this unit, one roll at a time.
    pub fn start(&self) -> Play<'_> {
        Play {
            unit: self,
            rolls: 0,
            position: 0,
            life: MAX_LIFE,
            found_cents: 0,
            chests_opened: 0,
            end: None,
        }
    }

    /// Plays the unit to the end (`None`) or stops it after
    /// `stop_after_rolls` rolls, if the rules allow a stop there (3.2.6).
    pub fn play(&self, stop_after_rolls: Option<u32>) -> Result<Outcome, StopRefused> {
        let mut play = self.start();
        match stop_after_rolls {
            None => Ok(play.finish()),
            Some(k) => {
                let tape = u32::from(self.rolls);
                if k > tape {
                    return Err(StopRefused::BeyondTape { rolls: k, tape });
                }
                while play.rolls < k && play.roll().is_some() {}
                play.stop_at(k)
            }
        }
    }

    /// What the unit pays played to the end: 0 on a death.
    pub fn prize_to_end_cents(&self) -> u32 {
        self.start().finish().prize_cents
    }

    /// Every roll of the unit played to the end.
    pub fn steps(&self) -> Play<'_> {
        self.start()
    }
}

/// How a play ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum End {
    /// Life fell to 0: no gain at all (3.2.8).
    Death,
    /// The gold chest was reached and opened (3.3.5).
    Gold,
    /// The player stopped and took the gains found (3.2.6 a).
    Stopped,
}

/// The result of a play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// How it ended.
    pub end: End,
    /// Rolls played.
    pub rolls: u32,
    /// The square the player is on.
    pub position: u8,
    /// Life points left (0 on a death).
    pub life: u8,
    /// Chests opened.
    pub chests_opened: u8,
    /// Sum of the chests opened, in cents, whether kept or lost.
    pub found_cents: u32,
    /// What the unit pays, in cents: `found_cents`, or 0 on a death.
    pub prize_cents: u32,
}

impl Outcome {
    /// One line saying how the play ended and what it pays.
    pub fn describe(&self) -> String {
        let found = Cents::from(self.found_cents);
        let opened = plural(self.chests_opened, "chest");
        let life = plural(self.life, "life point");
        match self.end {
            End::Death => format!(
                "lost the last life point on square {} at roll {}: no gain ({opened} opened, {found} € found and lost)",
                self.position, self.rolls
            ),
            End::Gold => format!(
                "reached the gold chest in {} with {life}: wins {found} € ({opened})",
                plural(self.rolls, "roll")
            ),
            End::Stopped => format!(
                "stopped on square {} after {} with {life}: wins {found} € ({opened})",
                self.position,
                plural(self.rolls, "roll")
            ),
        }
    }
}

/// One roll of a play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Step {
    /// The roll's number, from 1.
    pub roll: u32,
    /// The die.
    pub die: u8,
    /// The square left.
    pub from: u8,
    /// The square landed on.
    pub to: u8,
    /// What that square holds.
    pub square: Square,
    /// Life points after the square applied.
    pub life: u8,
    /// The value of the chest opened on this square, in cents.
    pub chest_cents: Option<u32>,
    /// Sum of the chests opened so far, in cents.
    pub found_cents: u32,
    /// Set when this roll ended the play (a death or the gold chest).
    pub end: Option<End>,
}

/// A stop the rules do not allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StopRefused {
    /// No chest opened yet: the player must roll until a first gain (3.2.4).
    #[error("cannot stop after {}: no chest opened yet; the player must roll until a first gain (3.2.4, 3.2.6)", plural(*.rolls, "roll"))]
    BeforeFirstChest {
        /// The requested stop.
        rolls: u32,
    },
    /// Life fell to 0 at or before the requested stop (3.2.8).
    #[error("cannot stop after {}: the unit was lost at roll {death_roll} (life 0); play it to the end instead", plural(*.rolls, "roll"))]
    AfterDeath {
        /// The requested stop.
        rolls: u32,
        /// The roll that took the last life point.
        death_roll: u32,
    },
    /// The gold chest was reached at that roll: the unit is over (3.3.5).
    #[error("cannot stop after {}: roll {rolls} reached the gold chest and ended the unit; play it to the end instead", plural(*.rolls, "roll"))]
    AtEnd {
        /// The requested stop, the tape's last roll.
        rolls: u32,
    },
    /// The tape has fewer rolls than asked.
    #[error("cannot stop after {}: the unit's dice tape has only {tape}; give a stop of at most {tape}", plural(*.rolls, "roll"))]
    BeyondTape {
        /// The requested stop.
        rolls: u32,
        /// The tape's length.
        tape: u32,
    },
}

/// A play in progress: [`Play::roll`] one roll at a time, [`Play::stop`]
/// when allowed, or iterate the remaining steps.
pub struct Play<'a> {
    unit: &'a Unit,
    rolls: u32,
    position: u8,
    life: u8,
    found_cents: u32,
    chests_opened: u8,
    end: Option<End>,
}

impl Play<'_> {
    /// Plays the next roll; `None` once the play is over (death or gold).
    pub fn roll(&mut self) -> Option<Step> {
        if self.end.is_some() {
            return None;
        }
        let die = *self.unit.dice().get(self.rolls as usize)?;
        self.rolls += 1;
        let from = self.position;
        self.position = (from + die).min(GOLD_SQUARE);
        let square = self.unit.board[usize::from(self.position)];
        let mut chest_cents = None;
        match square {
            Square::Bronze | Square::Silver | Square::Gold => {
                let cents = self.unit.chest_cents(usize::from(self.position / 6) - 1);
                chest_cents = Some(cents);
                self.found_cents += cents;
                self.chests_opened += 1;
                if square == Square::Gold {
                    self.end = Some(End::Gold);
                }
            }
            _ => {
                let life = (self.life as i8 + square.life_change()).clamp(0, MAX_LIFE as i8);
                self.life = life as u8;
                if self.life == 0 {
                    self.end = Some(End::Death);
                }
            }
        }
        Some(Step {
            roll: self.rolls,
            die,
            from,
            to: self.position,
            square,
            life: self.life,
            chest_cents,
            found_cents: self.found_cents,
            end: self.end,
        })
    }

    /// Whether the player may stop now, and why not.
    pub fn may_stop(&self) -> Result<(), StopRefused> {
        match self.end {
            Some(End::Death) => Err(StopRefused::AfterDeath {
                rolls: self.rolls,
                death_roll: self.rolls,
            }),
            Some(_) => Err(StopRefused::AtEnd { rolls: self.rolls }),
            None if self.chests_opened == 0 => {
                Err(StopRefused::BeforeFirstChest { rolls: self.rolls })
            }
            None => Ok(()),
        }
    }

    /// Stops now and takes the gains found, if the rules allow it.
    pub fn stop(&self) -> Result<Outcome, StopRefused> {
        self.stop_at(self.rolls)
    }

    /// Stops as asked after `asked` rolls (the play has rolled up to
    /// `asked` or until it ended, whichever came first).
    fn stop_at(&self, asked: u32) -> Result<Outcome, StopRefused> {
        match self.may_stop() {
            Err(StopRefused::AfterDeath { death_roll, .. }) => Err(StopRefused::AfterDeath {
                rolls: asked,
                death_roll,
            }),
            Err(refused) => Err(refused),
            Ok(()) => Ok(self.outcome(End::Stopped)),
        }
    }

    /// Plays every remaining roll and returns the outcome.
    pub fn finish(mut self) -> Outcome {
        while self.roll().is_some() {}
        // INVARIANT: a checked tape ends on 60, so the play ended.
        let end = self.end.unwrap_or(End::Gold);
        self.outcome(end)
    }

    fn outcome(&self, end: End) -> Outcome {
        Outcome {
            end,
            rolls: self.rolls,
            position: self.position,
            life: self.life,
            chests_opened: self.chests_opened,
            found_cents: self.found_cents,
            prize_cents: if end == End::Death {
                0
            } else {
                self.found_cents
            },
        }
    }
}

impl Iterator for Play<'_> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        self.roll()
    }
}
