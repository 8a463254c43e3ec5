//! Dual control (docs/REDEMPTION.md §Dual control): `issuer approver-key`
//! makes an approver's key, `issuer dual-control` shows or sets what the
//! store requires, `issuer approve` signs one approval. The actions it
//! covers take the approvals with `--approval FILE`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::json::print_json;
use ticket_issuer::approval::{self, Approver, DualControl, Guarded, Subject};
use ticket_issuer::error::Error;
use ticket_issuer::fsutil;
use ticket_issuer::game::Game;
use ticket_issuer::seal;
use ticket_issuer::store::Store;

/// Arguments of `approver-key`.
#[derive(clap::Args, Debug)]
pub struct ApproverKeyArgs {
    /// Where to write the approver's private key (PEM, mode 0600; never
    /// replaced).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// The approver's name (1 to 24 letters, digits, `-`, `_`, `.`).
    #[arg(long)]
    pub name: String,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `dual-control`.
#[derive(clap::Args, Debug)]
pub struct ConfigArgs {
    /// An action that needs two approvals: withdraw, end-claims-force,
    /// reveal (repeat; with --approver, replaces the store's setting).
    #[arg(long, value_name = "ACTION", value_parser = guarded)]
    pub require: Vec<Guarded>,
    /// An approver: `NAME=HEX_PUBLIC_KEY`, as `approver-key` prints it
    /// (repeat; at least two).
    #[arg(long, value_name = "NAME=KEY")]
    pub approver: Vec<String>,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `approve`.
#[derive(clap::Args, Debug)]
pub struct ApproveArgs {
    /// The action approved: withdraw, end-claims-force, reveal.
    #[arg(value_parser = guarded)]
    pub action: Guarded,
    /// The store it is for: its ID as `issuer dual-control` prints it on
    /// that store (an approval for one store is refused by any other).
    #[arg(long, value_name = "ID", value_parser = store_id)]
    pub store_id: String,
    /// The game.
    #[arg(long)]
    pub game: String,
    /// The emission.
    #[arg(long)]
    pub emission: u32,
    /// The block withdrawn (withdraw only; default: the whole emission).
    #[arg(long)]
    pub block: Option<u32>,
    /// The reason, word for word as the action will give it (withdraw,
    /// end-claims-force).
    #[arg(long)]
    pub reason: Option<String>,
    /// The approver's private key (`approver-key`).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// The approver's name, as the store's dual control names it.
    #[arg(long)]
    pub name: String,
    /// Hours the approval stays valid.
    #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u64).range(1..=720))]
    pub hours: u64,
    /// Where to write it (default, or `-`: stdout).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

fn store_id(text: &str) -> Result<String, String> {
    approval::check_store_id(text).map(|()| text.to_string())
}

fn guarded(text: &str) -> Result<Guarded, String> {
    Guarded::from_name(text)
        .ok_or_else(|| format!("{text:?}: one of withdraw, end-claims-force, reveal"))
}

/// Runs `approver-key`.
pub fn key(args: &ApproverKeyArgs) -> Result<i32, Error> {
    approval::check_name(&args.name).map_err(|what| Error::BadOperatorRequest { what })?;
    let signing = ed25519_dalek::SigningKey::from_bytes(&ticket_issuer::store::os_random()?);
    fsutil::write_atomic(
        &args.key,
        seal::private_pem(&signing).as_bytes(),
        0o600,
        false,
    )?;
    let public = hex::encode(signing.verifying_key().as_bytes());
    if args.json {
        print_json(
            "approver_key",
            &serde_json::json!({
                "name": args.name,
                "key": args.key.display().to_string(),
                "public_key": public,
                "approver": format!("{}={public}", args.name),
            }),
        );
    } else {
        outln!(
            "wrote {}'s approver key to {}",
            args.name,
            args.key.display()
        );
        outln!("--approver {}={public}", args.name);
    }
    Ok(0)
}

/// Runs `dual-control`.
pub fn config(store: &Store, args: &ConfigArgs) -> Result<i32, Error> {
    let path = DualControl::path(store);
    // What the approvers sign for (`approve --store-id`).
    let id = approval::store_id(&store.public_key()?);
    let config = if args.require.is_empty() && args.approver.is_empty() {
        DualControl::load(store)?
    } else {
        let mut text = String::new();
        for g in &args.require {
            text += &format!("require {g}\n");
        }
        for a in &args.approver {
            let (name, key) = a.split_once('=').ok_or_else(|| Error::BadOperatorRequest {
                what: format!("--approver {a:?}: NAME=HEX_PUBLIC_KEY"),
            })?;
            text += &format!("approver {name} {key}\n");
        }
        let config = DualControl::parse(&text).map_err(|what| Error::BadOperatorRequest {
            what: format!("dual control: {what}"),
        })?;
        fsutil::write_atomic(&path, config.to_text().as_bytes(), 0o644, true)?;
        config
    };
    if args.json {
        print_json(
            "dual_control",
            &serde_json::json!({
                "file": path.display().to_string(),
                "store_id": id,
                "require": config.require.iter().map(|g| g.name()).collect::<Vec<_>>(),
                "approvers": config.approvers.iter().map(|a: &Approver| serde_json::json!({
                    "name": a.name,
                    "public_key": hex::encode(a.key.as_bytes()),
                })).collect::<Vec<_>>(),
            }),
        );
        return Ok(0);
    }
    if config.require.is_empty() {
        outln!(
            "dual control: no action needs two approvals ({})",
            path.display()
        );
    } else {
        outln!(
            "dual control: {} need two approvals of {} ({})",
            config
                .require
                .iter()
                .map(|g| g.name())
                .collect::<Vec<_>>()
                .join(", "),
            config
                .approvers
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            path.display()
        );
    }
    outln!("store ID {id} (approvers sign for it: `issuer approve --store-id {id} …`)");
    Ok(0)
}

/// Runs `approve`.
pub fn approve(args: &ApproveArgs) -> Result<i32, Error> {
    let game = Game::from_slug(&args.game).ok_or_else(|| Error::UnknownGame {
        name: args.game.clone(),
        known: Game::known(),
    })?;
    let misuse = |what: &str| Err(Error::BadOperatorRequest { what: what.into() });
    match (args.action, &args.reason, args.block) {
        (Guarded::Reveal, Some(_), _) => {
            return misuse("a reveal has no reason: leave --reason out")
        }
        (Guarded::Withdraw | Guarded::EndClaimsForce, None, _) => {
            return misuse("--reason: the reason the action will give, word for word")
        }
        (Guarded::Reveal | Guarded::EndClaimsForce, _, Some(_)) => {
            return misuse("--block is for a withdrawal only")
        }
        _ => {}
    }
    let key = seal::read_private(&args.key)?;
    let note = approval::sign(
        &Subject {
            store: args.store_id.clone(),
            action: args.action,
            game: game.slug().into(),
            emission: args.emission,
            block: args.block,
            reason: args.reason.clone(),
        },
        &args.name,
        &key,
        args.hours,
    )?;
    match args.out.as_deref().filter(|p| *p != Path::new("-")) {
        Some(path) => {
            fsutil::write_atomic(path, note.as_bytes(), 0o644, false)?;
            eprintln!(
                "wrote {}'s approval of {} to {}",
                args.name,
                args.action,
                path.display()
            );
        }
        None => {
            let mut out = std::io::stdout();
            out.write_all(note.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| Error::io(Path::new("-"), e))?;
        }
    }
    Ok(0)
}
