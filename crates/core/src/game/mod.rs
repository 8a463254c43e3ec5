//! The games and the one interface the shared machinery calls them by.
//!
//! A game is a folder that implements [`GameRules`] (its constants, unit
//! model, record payload, rule check, play, export line, picture and
//! refusal texts) and one line in `BUILT_IN` (`handle.rs`); its analysis
//! (PAR sheet, audit tally) is a [`crate::analysis::GameAnalysis`], a
//! layer above. A game made
//! elsewhere (a studio's, a test's) registers at run time with
//! [`Game::register`]. Shared modules (block, verify, export, the ledger,
//! the service, the CLI) hold a [`Game`] and call through it; a play is
//! seen through the game-neutral [`Tape`] of [`play`].
//!
//! Files: `id` ([`GameId`]), `lots` (lot tables), `rules` (the traits),
//! `handle` ([`Game`] and the list of games), one folder a game.

pub mod ile;
pub mod picture;
pub mod play;
pub mod tresors;

mod handle;
mod id;
mod lots;
mod rules;

pub use handle::Game;
pub use id::GameId;
pub use lots::{LotTable, LotTier};
pub use picture::{Moment, Picture};
pub use play::{Ending, Fields, State, Step, Tape};
pub use rules::{GameRules, GameUnit, InvalidUnit, Played, Prize, PrizeModel, StopRefusal};

/// A game's fields as serde_json writes its view, without braces: what
/// each game's hand-written export fields are tested against.
#[cfg(test)]
pub(crate) fn serde_members(view: impl serde::Serialize) -> Vec<u8> {
    let mut json = serde_json::to_vec(&view).expect("a view is plain JSON");
    json.remove(0);
    json.pop();
    json
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::unit_id::UnitId;

    #[test]
    fn a_game_played_step_by_step_gives_a_tape_and_only_then() {
        for game in Game::all() {
            for i in 0..200u64 {
                let mut payload = Vec::new();
                let played =
                    game.generate_payload(&mut Stream::new(&[7; 32], i + 1), 0, &mut payload);
                let unit = game.decode(&payload).unwrap();
                assert_eq!(unit.tape().is_some(), game.step_by_step(), "{game:?}");
                if game.prize_model() == PrizeModel::Drawn {
                    assert_eq!(unit.play_to_end(), Ok(played), "{game:?} unit {i}");
                }
            }
        }
    }

    #[test]
    fn unit_ids_are_written_as_display_writes_them() {
        for (game, index, code) in [
            (Game::ILE_AU_TRESOR, 0, [0u8; 5]),
            (Game::ILE_AU_TRESOR, 449_999, [0xff; 5]),
            (Game::TRESORS_ENSABLES, 123_456, [1, 2, 3, 4, 5]),
        ] {
            let id = UnitId {
                game,
                emission: 7,
                block: 12,
                index,
                check_code: code,
            };
            let mut out = Vec::new();
            id.write_to(&mut out);
            assert_eq!(String::from_utf8(out).unwrap(), id.to_string());
        }
    }
}
