//! `issuer export` and `issuer show`.

use std::path::PathBuf;

use super::{records_key_file, secrets_if_any, trusted_key};
use crate::block::authentic::AuthenticBlock;
use crate::error::Error;
use crate::export::export_jsonl;
use crate::records_key::KeyAccess;
use crate::redeem::{redeem, RedeemKeys};
use crate::store::Store;

/// Export formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
}

/// Arguments of `export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The block file.
    pub block: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: Format,
    /// The issuer's public key (SPKI PEM); default: the store's.
    #[arg(long)]
    pub public_key: Option<PathBuf>,
    /// A records key file, when the store has no master secret.
    #[arg(long)]
    pub records_key: Option<PathBuf>,
}

/// Arguments of `show`.
#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// The unit ID.
    pub id: String,
    /// The issuer's public key (SPKI PEM); default: the store's.
    #[arg(long)]
    pub public_key: Option<PathBuf>,
    /// A records key file, when the store has no master secret.
    #[arg(long)]
    pub records_key: Option<PathBuf>,
}

/// Runs `export`.
pub fn export(store: &Store, args: &ExportArgs) -> Result<i32, Error> {
    let trusted = trusted_key(store, args.public_key.as_deref())?;
    let secrets = secrets_if_any(store)?;
    let key_file = records_key_file(args.records_key.as_deref())?;
    let access = KeyAccess {
        secrets: secrets.as_ref(),
        file: key_file.as_ref().map(|(f, p)| (f, p.as_path())),
    };
    let block = AuthenticBlock::open(&args.block, &trusted, access, "export")?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    match args.format {
        Format::Jsonl => export_jsonl(&block, &mut out)?,
    };
    Ok(0)
}

/// Runs `show`: the unit as its player sees it, without recording anything.
pub fn show(store: &Store, args: &ShowArgs) -> Result<i32, Error> {
    let trusted = trusted_key(store, args.public_key.as_deref())?;
    let secrets = secrets_if_any(store)?;
    let key_file = records_key_file(args.records_key.as_deref())?;
    let keys = RedeemKeys {
        public_key: &trusted,
        access: KeyAccess {
            secrets: secrets.as_ref(),
            file: key_file.as_ref().map(|(f, p)| (f, p.as_path())),
        },
    };
    let r = redeem(store, &keys, &args.id, true)?;
    println!(
        "unit {} ({} emission {} block {} index {})",
        r.id, r.game, r.emission, r.block, r.index
    );
    print!("{}", r.picture);
    println!("{}", super::redeem::outcome_words(&r));
    Ok(0)
}
