//! Several ledgers on one node (docs/REDEMPTION.md §Several ledgers): a
//! routing table the operator writes names the node's ledgers and, for
//! each emission it sells, the one ledger that emission goes through. The
//! node reads it at start; a unit of an emission the table does not route
//! is refused (`emission_not_routed`), never sold or paid in a ledger
//! chosen by default. Each emission's `ledger.json` binding still holds
//! underneath: a table that later routes an emission elsewhere is refused
//! by the binding (`emission_of_another_ledger`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::Error;
use crate::fsutil;
use crate::game::Game;

/// The table's `kind`.
pub const KIND: &str = "ticket-issuer ledger routes";

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoutesFile {
    kind: String,
    /// Ledger name → PostgreSQL URL, in the order sales try them.
    ledgers: Vec<NamedLedger>,
    emissions: Vec<EmissionRoute>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NamedLedger {
    name: String,
    url: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EmissionRoute {
    game: String,
    emission: u32,
    ledger: String,
}

/// A node's routing table: its ledgers and each emission's.
#[derive(Debug)]
pub struct Routes {
    path: PathBuf,
    ledgers: Vec<(String, String)>,
    emissions: HashMap<(Game, u32), String>,
}

impl Routes {
    /// Reads and checks the table at `path`: one ledger at least, names
    /// unique, every emission routed once to a ledger the table names.
    pub fn read(path: &Path) -> Result<Routes, Error> {
        let bytes =
            fsutil::read_small_if_exists(path, fsutil::KEY_FILE_LIMIT)?.ok_or_else(|| {
                Error::BadFile {
                    path: path.to_path_buf(),
                    reason: "no such routing table".into(),
                }
            })?;
        let bad = |reason: String| Error::BadFile {
            path: path.to_path_buf(),
            reason: format!("{reason} (docs/REDEMPTION.md §Several ledgers shows the table)"),
        };
        let file: RoutesFile =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("not a routing table: {e}")))?;
        if file.kind != KIND {
            return Err(bad(format!("its kind is {:?}, not {KIND:?}", file.kind)));
        }
        if file.ledgers.is_empty() {
            return Err(bad("it names no ledger".into()));
        }
        let mut names = BTreeMap::new();
        for l in &file.ledgers {
            if l.name.is_empty() || names.insert(l.name.as_str(), ()).is_some() {
                return Err(bad(format!(
                    "the ledger name {:?} is empty or named twice",
                    l.name
                )));
            }
        }
        let mut emissions = HashMap::new();
        for e in file.emissions {
            let game = Game::from_slug(&e.game).ok_or_else(|| {
                bad(format!(
                    "unknown game {:?} (known: {})",
                    e.game,
                    Game::known()
                ))
            })?;
            if !names.contains_key(e.ledger.as_str()) {
                return Err(bad(format!(
                    "{} emission {} is routed to {:?}, which is not among its ledgers",
                    e.game, e.emission, e.ledger
                )));
            }
            if emissions.insert((game, e.emission), e.ledger).is_some() {
                return Err(bad(format!(
                    "{} emission {} is routed twice",
                    e.game, e.emission
                )));
            }
        }
        Ok(Routes {
            path: path.to_path_buf(),
            ledgers: file.ledgers.into_iter().map(|l| (l.name, l.url)).collect(),
            emissions,
        })
    }

    /// The ledgers, name and URL, in the table's order.
    #[must_use]
    pub fn ledgers(&self) -> &[(String, String)] {
        &self.ledgers
    }

    /// The ledger `game`'s `emission` goes through; refused when the table
    /// routes it nowhere.
    pub fn route(&self, game: Game, emission: u32) -> Result<&str, Error> {
        self.emissions
            .get(&(game, emission))
            .map(String::as_str)
            .ok_or_else(|| self.not_routed(game, emission, "no ledger"))
    }

    /// Refuses `game`'s `emission` on the ledger `name` unless the table
    /// routes it there.
    pub fn check(&self, name: &str, game: Game, emission: u32) -> Result<(), Error> {
        match self.route(game, emission)? {
            routed if routed == name => Ok(()),
            routed => Err(self.not_routed(
                game,
                emission,
                &format!("the ledger {routed:?}, not {name:?}"),
            )),
        }
    }

    /// Whether `game`'s `emission` goes through the ledger `name`.
    #[must_use]
    pub fn routes_to(&self, name: &str, game: Game, emission: u32) -> bool {
        self.emissions
            .get(&(game, emission))
            .is_some_and(|l| l == name)
    }

    fn not_routed(&self, game: Game, emission: u32, routed: &str) -> Error {
        Error::EmissionNotRouted {
            game: game.slug().into(),
            emission,
            routes: self.path.clone(),
            routed: routed.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Result<Routes, Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("routes.json");
        std::fs::write(&path, text).unwrap();
        Routes::read(&path)
    }

    const GOOD: &str = r#"{"kind": "ticket-issuer ledger routes",
        "ledgers": [{"name": "a", "url": "postgres://u@h/a"}, {"name": "b", "url": "postgres://u@h/b"}],
        "emissions": [{"game": "tresors-ensables", "emission": 2, "ledger": "a"},
                      {"game": "ile-au-tresor", "emission": 2, "ledger": "b"}]}"#;

    #[test]
    fn a_table_routes_each_emission_to_its_ledger_and_refuses_the_others() {
        let routes = table(GOOD).unwrap();
        assert_eq!(routes.ledgers().len(), 2);
        assert_eq!(routes.route(Game::TRESORS_ENSABLES, 2).unwrap(), "a");
        assert_eq!(routes.route(Game::ILE_AU_TRESOR, 2).unwrap(), "b");
        assert!(routes.check("a", Game::TRESORS_ENSABLES, 2).is_ok());
        for (ledger, game, emission) in [
            ("b", Game::TRESORS_ENSABLES, 2),
            ("a", Game::ILE_AU_TRESOR, 2),
            ("a", Game::TRESORS_ENSABLES, 3),
        ] {
            let e = routes.check(ledger, game, emission).unwrap_err();
            assert_eq!(e.code(), "emission_not_routed", "{e}");
            assert!(e.to_string().contains("routes.json"), "{e}");
        }
    }

    #[test]
    fn a_table_that_does_not_hold_together_is_refused_naming_why() {
        for (text, why) in [
            ("{", "not a routing table"),
            (&GOOD.replace("ledger routes", "other"), "kind"),
            (
                r#"{"kind": "ticket-issuer ledger routes", "ledgers": [], "emissions": []}"#,
                "no ledger",
            ),
            (
                &GOOD.replace(r#""name": "b""#, r#""name": "a""#),
                "named twice",
            ),
            (
                &GOOD.replace(r#""ledger": "b""#, r#""ledger": "c""#),
                "not among",
            ),
            (
                &GOOD.replace("ile-au-tresor", "tresors-ensables"),
                "routed twice",
            ),
            (&GOOD.replace("ile-au-tresor", "loto"), "unknown game"),
            (&GOOD.replace(r#""url""#, r#""uri""#), "not a routing table"),
        ] {
            let e = table(text).unwrap_err();
            assert_eq!(e.code(), "bad_file", "{e}");
            assert!(e.to_string().contains(why), "{why}: {e}");
        }
    }
}
