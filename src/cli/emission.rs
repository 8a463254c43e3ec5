//! `issuer close`, `issuer reveal` and `issuer keys`.

use std::path::PathBuf;

use clap::Subcommand;

use super::generate::parse_game;
use ticket_issuer::emission::Emission;
use ticket_issuer::error::Error;
use ticket_issuer::fsutil;
use ticket_issuer::records_key::{default_file_name, RecordsKeyFile};
use ticket_issuer::store::Store;

/// An emission number, and its game where several games have one.
#[derive(clap::Args, Debug)]
pub struct EmissionArg {
    /// Emission number.
    #[arg(long)]
    pub emission: u32,
    /// The emission's game (needed only when several games have this number).
    #[arg(long)]
    pub game: Option<String>,
}

impl EmissionArg {
    /// The emission named.
    pub fn open<'s>(&self, store: &'s Store) -> Result<Emission<'s>, Error> {
        let game = self.game.as_deref().map(parse_game).transpose()?;
        let game = store.emission_game(self.emission, game)?;
        Ok(Emission::new(store, game, self.emission))
    }
}

/// Arguments of `reveal`.
#[derive(clap::Args, Debug)]
pub struct RevealArgs {
    /// The emission.
    #[command(flatten)]
    pub emission: EmissionArg,
    /// Where to write the reveal file (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `keys` subcommands.
#[derive(Subcommand, Debug)]
pub enum KeysCommand {
    /// Write an emission's (or one block's) records key to a file, for an
    /// auditor or a redemption service.
    ExportRecordsKey {
        /// Emission number.
        #[arg(long)]
        emission: u32,
        /// Only this block's key.
        #[arg(long)]
        block: Option<u32>,
        /// The game (needed only when several games have this emission).
        #[arg(long)]
        game: Option<String>,
        /// Output file (default: records-key-<game>-e<N>[-b<B>].json here).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// Runs `close`.
pub fn close(store: &Store, args: &EmissionArg) -> Result<i32, Error> {
    let secrets = store.secrets()?;
    let manifest = args.open(store)?.close(&secrets)?;
    println!(
        "emission {} is closed: {} block(s); no more may be added",
        args.emission,
        manifest.blocks.len()
    );
    Ok(0)
}

/// Runs `reveal`.
pub fn reveal(store: &Store, args: &RevealArgs) -> Result<i32, Error> {
    let secrets = store.secrets()?;
    let reveal = args.emission.open(store)?.reveal(&secrets)?;
    let mut text = serde_json::to_string_pretty(&reveal).expect("a reveal serialises");
    text.push('\n');
    match &args.out {
        Some(path) => {
            fsutil::write_atomic(path, text.as_bytes(), 0o644, true)?;
            eprintln!(
                "revealed {} seed(s) of emission {} to {}; its redemption is now closed",
                reveal.blocks.len(),
                args.emission.emission,
                path.display()
            );
        }
        None => print!("{text}"),
    }
    Ok(0)
}

/// Runs `keys …`.
pub fn keys(store: &Store, cmd: &KeysCommand) -> Result<i32, Error> {
    let KeysCommand::ExportRecordsKey {
        emission,
        block,
        game,
        out,
    } = cmd;
    let secrets = store.secrets()?;
    let game = store.emission_game(*emission, game.as_deref().map(parse_game).transpose()?)?;
    let file = RecordsKeyFile::export(&secrets, game, *emission, *block);
    let path = out
        .clone()
        .unwrap_or_else(|| default_file_name(game, *emission, *block));
    let mut text = serde_json::to_string_pretty(&file).expect("a key file serialises");
    text.push('\n');
    fsutil::write_atomic(&path, text.as_bytes(), 0o600, false)?;
    println!(
        "wrote the records key of {} emission {}{} to {} (mode 0600): it opens {}, and signs nothing",
        game.slug(),
        emission,
        block.map(|b| format!(" block {b}")).unwrap_or_default(),
        path.display(),
        if block.is_some() { "that block only" } else { "every block of the emission" }
    );
    Ok(0)
}
