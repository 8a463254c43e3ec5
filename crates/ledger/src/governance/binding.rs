//! One ledger per emission (docs/REDEMPTION.md §One ledger per emission):
//! the first write about an emission (a sale, a play step, a redemption,
//! an end of claims) records in its folder which ledger it goes through
//! (`ledger.json`: the ledger's identity and name); every later write
//! through another ledger is refused (`emission_of_another_ledger`), so a
//! unit sold or paid in one ledger is never sold or paid again in another.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use serde::{Deserialize, Serialize};

use crate::emission::Emission;
use crate::error::Error;
use crate::fsutil;
use crate::game::Game;
use crate::ledger::ops::Op;
use crate::ledger::target::LedgerTarget;
use crate::store::Store;

/// The binding file's `kind`.
const KIND: &str = "ticket-issuer emission ledger";

/// An emission's binding file.
#[derive(Serialize, Deserialize)]
struct Binding {
    kind: String,
    game: String,
    emission: u32,
    /// The ledger's identity (`Backend::identity`).
    ledger_id: String,
    /// Its name when bound (a path, or a URL without password).
    ledger: String,
    bound_at: String,
}

/// The bindings one process has checked, for one ledger.
pub struct Bindings {
    store: Store,
    ledger: LedgerTarget,
    identity: OnceLock<String>,
    checked: Mutex<HashSet<(Game, u32)>>,
}

/// Where `emission`'s binding is kept.
#[must_use]
pub fn binding_path(store: &Store, game: Game, emission: u32) -> PathBuf {
    Emission::new(store, game, emission)
        .dir()
        .join("ledger.json")
}

impl Bindings {
    /// The bindings of `store`'s emissions to `ledger`.
    #[must_use]
    pub fn new(store: &Store, ledger: &LedgerTarget) -> Bindings {
        Bindings {
            store: store.clone(),
            ledger: ledger.clone(),
            identity: OnceLock::new(),
            checked: Mutex::new(HashSet::new()),
        }
    }

    /// Checks (binding on first use) every emission `ops` write about.
    pub fn check_ops(&self, ops: &[Op]) -> Result<(), Error> {
        for op in ops {
            for (game, emission) in op.emissions() {
                self.check(game, emission)?;
            }
        }
        Ok(())
    }

    /// Binds `game`'s `emission` to this ledger if it is bound to none;
    /// refuses it if it is bound to another.
    pub fn check(&self, game: Game, emission: u32) -> Result<(), Error> {
        let key = (game, emission);
        let mut checked = self.checked.lock().unwrap_or_else(PoisonError::into_inner);
        if checked.contains(&key) {
            return Ok(());
        }
        let path = binding_path(&self.store, game, emission);
        let bound = read(&path)?;
        // A ledger that does not exist yet is not made to be refused.
        let identity = match (self.identity.get(), &bound) {
            (Some(id), _) => Some(id.clone()),
            (None, bound) => self
                .ledger
                .identity(bound.is_none())?
                .map(|id| self.identity.get_or_init(|| id).clone()),
        };
        let bound = match (bound, &identity) {
            (Some(bound), _) => bound,
            (None, Some(identity)) => self.bind(game, emission, identity, &path)?,
            (None, None) => {
                return Err(Error::Internal {
                    what: format!("the ledger {} has no identity", self.ledger.describe()),
                })
            }
        };
        if identity.as_deref() != Some(bound.ledger_id.as_str()) {
            return Err(Error::EmissionOfAnotherLedger {
                game: game.slug().into(),
                emission,
                bound: format!("{} (id {})", bound.ledger, bound.ledger_id),
                file: path,
                this: format!(
                    "{} (id {})",
                    self.ledger.describe(),
                    identity.as_deref().unwrap_or("none: not made yet")
                ),
            });
        }
        checked.insert(key);
        Ok(())
    }

    /// Records the binding (unless another process just did: its stands).
    /// Another ledger than the store's own is refused for an emission the
    /// store's own ledger has sold or paid units of before bindings were
    /// kept.
    fn bind(
        &self,
        game: Game,
        emission: u32,
        identity: &str,
        path: &Path,
    ) -> Result<Binding, Error> {
        let own = LedgerTarget::of_store(&self.store);
        // Compared by identity; a store ledger not made yet holds nothing.
        if own.identity(false)?.is_some_and(|id| id != identity) {
            let used = own
                .activity()?
                .iter()
                .any(|a| a.game == game.slug() && a.emission == emission);
            if used {
                return Err(Error::EmissionOfAnotherLedger {
                    game: game.slug().into(),
                    emission,
                    bound: format!(
                        "{} (it holds this emission's sales or payments)",
                        own.describe()
                    ),
                    file: self.store.ledger_path(),
                    this: format!("{} (id {identity})", self.ledger.describe()),
                });
            }
        }
        let binding = Binding {
            kind: KIND.into(),
            game: game.slug().into(),
            emission,
            ledger_id: identity.into(),
            ledger: self.ledger.describe(),
            bound_at: crate::ledger::claims::utc_now(),
        };
        let mut text = serde_json::to_string_pretty(&binding).map_err(|e| Error::Internal {
            what: format!("the emission's ledger binding does not encode: {e}"),
        })?;
        text.push('\n');
        let mut tmp = fsutil::partial_beside(path, 0o644)?;
        tmp.write_all(text.as_bytes())
            .map_err(|e| Error::io(path, e))?;
        match fsutil::commit(tmp, path, false) {
            Ok(()) => Ok(binding),
            // Another process bound it first: its binding stands.
            Err(Error::AlreadyExists { .. }) => read(path)?.ok_or_else(|| Error::Internal {
                what: format!("{} vanished as it was read", path.display()),
            }),
            Err(e) => Err(e),
        }
    }
}

/// The ledger an emission is bound to, as its `ledger.json` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundLedger {
    /// The ledger's identity.
    pub ledger_id: String,
    /// Its name when bound (a path, or a URL without password).
    pub ledger: String,
}

/// The ledger the emission whose folder is `emission_dir` is bound to
/// (its `ledger.json`); `None` when nothing bound it yet.
pub fn bound_ledger(emission_dir: &Path) -> Result<Option<BoundLedger>, Error> {
    Ok(
        read(&emission_dir.join("ledger.json"))?.map(|b| BoundLedger {
            ledger_id: b.ledger_id,
            ledger: b.ledger,
        }),
    )
}

/// The binding at `path`, if any.
fn read(path: &Path) -> Result<Option<Binding>, Error> {
    let Some(bytes) = fsutil::read_small_if_exists(path, fsutil::KEY_FILE_LIMIT)? else {
        return Ok(None);
    };
    let binding: Binding = serde_json::from_slice(&bytes).map_err(|e| Error::BadFile {
        path: path.to_path_buf(),
        reason: format!("not an emission's ledger binding ({e})"),
    })?;
    if binding.kind != KIND {
        return Err(Error::BadFile {
            path: path.to_path_buf(),
            reason: format!("kind is not {KIND:?}"),
        });
    }
    Ok(Some(binding))
}
