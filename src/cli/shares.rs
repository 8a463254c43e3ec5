//! The seed ceremony (docs/EMISSIONS.md §A seed no one party controls):
//! `issuer share new` and `issuer share commit`, run by each party,
//! `issuer emission commit`, run by the operator before the first block, and
//! the `--shares` that `generate` and `reveal` take.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde::Serialize;

use super::args::{parse_game, GameSlug};
use super::json::print_json;
use ticket_issuer::emission::Emission;
use ticket_issuer::error::Error;
use ticket_issuer::shares::{self, Beacon, GivenShares, SeedShares, ShareFile};
use ticket_issuer::store::Store;

/// `share` subcommands: what each party runs, on its own machine (no store
/// is read or written).
#[derive(Subcommand, Debug)]
pub enum ShareCommand {
    /// Make a party's secret share of an emission's seed key: 32 bytes from
    /// the operating system's random source, written 0600; prints its
    /// commitment, the line to hand to the operator.
    New(NewArgs),
    /// Print a share's commitment: `PARTY COMMITMENT`, a line of the file
    /// `emission commit --share-commitments` takes.
    Commit(CommitArgs),
}

/// Arguments of `share new`.
#[derive(clap::Args, Debug)]
pub struct NewArgs {
    /// The party's name: 1 to 64 of A-Z a-z 0-9 - _ . (unique among the
    /// emission's parties).
    #[arg(long, value_parser = party_name)]
    pub party: String,
    /// The emission's game.
    #[arg(long, value_parser = GameSlug)]
    pub game: String,
    /// The emission the share is for (and for no other).
    #[arg(long)]
    pub emission: u32,
    /// Where to write the share (`-`: standard output); an existing file is
    /// never replaced.
    #[arg(long, short = 'o', value_name = "FILE|-")]
    pub out: PathBuf,
    /// Print a JSON report on stdout (with `-o FILE`).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `share commit`.
#[derive(clap::Args, Debug)]
pub struct CommitArgs {
    /// The share file (`share new`).
    pub file: PathBuf,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `emission` subcommands.
#[derive(Subcommand, Debug)]
pub enum EmissionCommand {
    /// Begin an emission made from shares: record every party's commitment
    /// (and the public beacon round named in advance) in its signed
    /// manifest, before any block. Publish the manifest then.
    Commit(EmissionCommitArgs),
}

/// Arguments of `emission commit`.
#[derive(clap::Args, Debug)]
pub struct EmissionCommitArgs {
    /// The game.
    #[arg(long, value_parser = GameSlug)]
    pub game: String,
    /// The emission (a new one).
    #[arg(long)]
    pub emission: u32,
    /// The parties' commitments: one `PARTY COMMITMENT` a line (what `share
    /// commit` prints), at least two parties.
    #[arg(long, value_name = "FILE")]
    pub share_commitments: PathBuf,
    /// A public randomness beacon round whose value is not yet known, mixed
    /// into the seed key: NAME:ROUND (e.g. drand-quicknet:12345678).
    #[arg(long, value_name = "NAME:ROUND", value_parser = beacon)]
    pub beacon: Option<Beacon>,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// The shares handed to `generate` or `reveal`.
#[derive(clap::Args, Debug)]
pub struct SharesArg {
    /// For an emission made from shares: every party's share file
    /// (`share new`), each checked against its commitment in the manifest.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub shares: Vec<PathBuf>,
    /// The value of the beacon round the manifest names: hex digits, or
    /// raw bytes (docs/FORMAT.md §Share files); needed until the manifest
    /// records it (at the emission's first generation).
    #[arg(long, value_name = "FILE", requires = "shares")]
    pub beacon_value: Option<PathBuf>,
}

impl SharesArg {
    /// `emission`, given the shares named, if any.
    pub fn give<'s>(&self, emission: Emission<'s>) -> Result<Emission<'s>, Error> {
        if self.shares.is_empty() {
            return Ok(emission);
        }
        let files = self
            .shares
            .iter()
            .map(|p| ShareFile::read(p))
            .collect::<Result<Vec<_>, Error>>()?;
        let beacon_value = self
            .beacon_value
            .as_deref()
            .map(shares::read_beacon_value)
            .transpose()?;
        Ok(emission.with_shares(GivenShares {
            files,
            beacon_value,
        }))
    }
}

fn party_name(text: &str) -> Result<String, String> {
    shares::check_name(text).map(|()| text.to_string())
}

fn beacon(text: &str) -> Result<Beacon, String> {
    text.parse()
}

/// What `share new` and `share commit` report under `--json`.
#[derive(Serialize)]
struct ShareReport<'a> {
    party: &'a str,
    game: &'static str,
    emission: u32,
    commitment: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    out: Option<String>,
}

/// The commitment line of `share`: `PARTY COMMITMENT`.
fn commitment_line(share: &ShareFile) -> String {
    format!("{} {}", share.party, hex::encode(share.commitment()))
}

/// Runs `share …`.
pub fn share(store: &Store, cmd: &ShareCommand) -> Result<i32, Error> {
    match cmd {
        ShareCommand::New(args) => new(store, args),
        ShareCommand::Commit(args) => {
            let share = ShareFile::read(&args.file)?;
            if args.json {
                print_json("share_commitment", &report(&share, None));
            } else {
                outln!("{}", commitment_line(&share));
            }
            Ok(0)
        }
    }
}

fn report(share: &ShareFile, out: Option<String>) -> ShareReport<'_> {
    ShareReport {
        party: &share.party,
        game: share.game.slug(),
        emission: share.emission,
        commitment: hex::encode(share.commitment()),
        out,
    }
}

/// Runs `share new`.
fn new(store: &Store, args: &NewArgs) -> Result<i32, Error> {
    let game = parse_game(&args.game)?;
    // The output is checked (not in keys/, not existing) before the share
    // is drawn.
    let mut out = store.output(&args.out, 0o600, false)?;
    let share = ShareFile::random(game, args.emission, &args.party)?;
    let to = out.describe();
    out.write_all(&share.to_bytes())
        .map_err(|e| Error::io(Path::new(&to), e))?;
    out.finish()?;
    let to_stdout = args.out == Path::new("-");
    match (args.json, to_stdout) {
        (true, false) => print_json("share", &report(&share, Some(to.clone()))),
        // Standard output is the share itself.
        (_, true) => eprintln!("{}", commitment_line(&share)),
        (false, false) => outln!("{}", commitment_line(&share)),
    }
    eprintln!(
        "wrote the share of party {} for {} emission {} to {to}{}: keep it secret until the emission's reveal; hand the operator its commitment, the line `{}`, now, and the share itself only for the generation",
        share.party,
        game.slug(),
        share.emission,
        if to_stdout { "" } else { " (mode 0600)" },
        commitment_line(&share),
    );
    Ok(0)
}

/// What `emission commit --json` reports.
#[derive(Serialize)]
struct Committed<'a> {
    game: &'static str,
    emission: u32,
    parties: Vec<&'a str>,
    beacon: Option<&'a Beacon>,
    manifest: String,
}

/// Runs `emission …`.
pub fn emission(store: &Store, cmd: &EmissionCommand) -> Result<i32, Error> {
    let EmissionCommand::Commit(args) = cmd;
    let game = parse_game(&args.game)?;
    let ceremony = SeedShares::read(&args.share_commitments, args.beacon.clone())?;
    if store.ensure_keys()? {
        eprintln!(
            "created issuer keys in {} (hand {} to auditors)",
            store.keys_dir().display(),
            store.public_key_path().display()
        );
    }
    let secrets = store.secrets()?;
    let emission = Emission::new(store, game, args.emission);
    let manifest = emission.commit_shares(&secrets, ceremony)?;
    let ceremony = manifest
        .seed_shares
        .as_ref()
        .expect("a committed manifest records its shares");
    let path = emission.manifest_path().display().to_string();
    if args.json {
        print_json(
            "emission_commit",
            &Committed {
                game: game.slug(),
                emission: args.emission,
                parties: ceremony
                    .commitments
                    .iter()
                    .map(|c| c.party.as_str())
                    .collect(),
                beacon: ceremony.beacon.as_ref(),
                manifest: path,
            },
        );
        return Ok(0);
    }
    outln!(
        "{} emission {} is committed to the shares of {} parties ({}){}; its manifest is signed: {path}",
        game.slug(),
        args.emission,
        ceremony.commitments.len(),
        ceremony.parties(),
        ceremony
            .beacon
            .as_ref()
            .map(|b| format!(" and to {b}"))
            .unwrap_or_default(),
    );
    eprintln!(
        "publish the manifest and its .sig now, before {}any party hands over its share; then `issuer generate … --shares FILE…{}`",
        ceremony
            .beacon
            .as_ref()
            .map(|b| format!("{b} is drawn and "))
            .unwrap_or_default(),
        if ceremony.beacon.is_some() {
            " --beacon-value FILE"
        } else {
            ""
        }
    );
    Ok(0)
}
