//! The arguments several commands share, flattened into each one's own
//! (`#[command(flatten)]`), and what they name: the game, the ledger, the
//! keys that check a block, an idempotency key, `--json`.

use std::path::PathBuf;

use ed25519_dalek::VerifyingKey;

use ticket_issuer::error::Error;
use ticket_issuer::game::Game;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::records_key::{KeyAccess, RecordsKeyFile};
use ticket_issuer::store::{Secrets, Store};

/// `--json` alone.
#[derive(clap::Args, Debug, Clone)]
pub struct JsonArg {
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Which ledger to use (docs/REDEMPTION.md §PostgreSQL).
#[derive(clap::Args, Debug, Clone)]
pub struct LedgerArg {
    /// A shared PostgreSQL ledger (postgres://USER[:PASSWORD]@HOST[:PORT]/DB);
    /// default: the SQLite ledger in the store.
    #[arg(long = "ledger", env = "ISSUER_LEDGER", value_name = "URL")]
    pub url: Option<String>,
}

impl LedgerArg {
    /// The ledger named.
    pub fn target(&self, store: &Store) -> Result<LedgerTarget, Error> {
        LedgerTarget::new(store, self.url.as_deref())
    }
}

/// A client's idempotency key (docs/API.md §Idempotency).
#[derive(clap::Args, Debug, Clone)]
pub struct IdempotencyArg {
    /// Do this once under KEY: run again with the same KEY and the same
    /// request, it answers what the first run did (after a lost answer or
    /// `ledger_outcome_unknown`); the same KEY with another request is
    /// refused (`idempotency_key_reused`). 1 to 128 of A-Z a-z 0-9 - _ . :
    #[arg(long = "idempotency-key", value_name = "KEY")]
    pub key: Option<String>,
}

/// `--game`: any text, refused by the command with the known games when
/// it names none (`unknown_game`); its possible values (every game
/// registered) are what help and shell completions offer.
#[derive(Clone, Copy, Debug)]
pub struct GameSlug;

impl clap::builder::TypedValueParser for GameSlug {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            Game::all().map(|g| clap::builder::PossibleValue::new(g.slug())),
        ))
    }
}

/// The game a `--game` ([`GameSlug`]) names.
pub fn parse_game(name: &str) -> Result<Game, Error> {
    Game::from_slug(name).ok_or_else(|| Error::UnknownGame {
        name: name.to_string(),
        known: Game::known(),
    })
}

/// The key options of every command that reads a block: the trusted
/// public key and the records keys (docs/CLI.md).
#[derive(clap::Args, Debug)]
pub struct KeyArgs {
    /// The issuer's public key (SPKI PEM); default: the store's.
    #[arg(long)]
    pub public_key: Option<PathBuf>,
    /// A records key file (`issuer keys export-records-key`), a reveal file
    /// (its emission's key), or a folder of them, for an auditor or a
    /// redemption service without the issuer's master secret; repeat it for
    /// several emissions (each block uses the file for its emission).
    #[arg(long, value_name = "FILE|DIR")]
    pub records_key: Vec<PathBuf>,
}

/// A redeemer of `store` with the keys of `keys` on the ledger `ledger`
/// names: what `sell`, `play`, `redeem`, the operator's commands and
/// `remaining` work through.
pub fn redeemer(
    store: &Store,
    keys: &KeyArgs,
    ledger: &LedgerArg,
) -> Result<ticket_issuer::Redeemer, Error> {
    let keys = LoadedKeys::load(store, keys)?;
    Ok(
        ticket_issuer::Redeemer::new(store.clone(), keys.owned())
            .with_ledger(ledger.target(store)?),
    )
}

/// The keys a command works with: the trusted public key, the store's
/// secrets if it has them, and a records key file if one was given.
pub struct LoadedKeys {
    pub trusted: VerifyingKey,
    pub secrets: Option<Secrets>,
    pub files: Vec<(RecordsKeyFile, PathBuf)>,
}

impl LoadedKeys {
    /// The keys `args` names, read.
    pub fn load(store: &Store, args: &KeyArgs) -> Result<LoadedKeys, Error> {
        let trusted = match &args.public_key {
            Some(path) => ticket_issuer::seal::read_public(path)?,
            None => store.public_key()?,
        };
        // An auditor's store has the public key only.
        let secrets = match store.master_path().exists() {
            true => Some(store.secrets()?),
            false => None,
        };
        let mut files = Vec::new();
        for path in &args.records_key {
            files.extend(ticket_issuer::key_files::read_key_files(path)?);
        }
        Ok(LoadedKeys {
            trusted,
            secrets,
            files,
        })
    }

    /// The keys, owned, for a long-lived redeemer.
    pub fn owned(self) -> ticket_issuer::OwnedKeys {
        ticket_issuer::OwnedKeys {
            public_key: self.trusted,
            secrets: self.secrets,
            records_keys: self.files,
        }
    }

    /// The secret keys, borrowed, for reading records.
    pub fn access(&self) -> KeyAccess<'_> {
        KeyAccess {
            secrets: self.secrets.as_ref(),
            files: &self.files,
        }
    }
}
