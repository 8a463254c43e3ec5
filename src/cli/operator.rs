//! `issuer suspend`, `resume`, `withdraw` and `void`: the operator's
//! controls over an emission's life, each an entry of the ledger's log
//! (docs/REDEMPTION.md §Suspend, withdraw and void).

use super::args::{self, KeyArgs, LedgerArg};
use super::emission::EmissionArg;
use super::json::print_json;
use ticket_issuer::error::Error;
use ticket_issuer::ledger::operator::Action;
use ticket_issuer::redeem::Redeemer;
use ticket_issuer::redeemer::Acted;
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

/// Who acted, and why.
#[derive(clap::Args, Debug)]
pub struct ActorArgs {
    /// Why, in words (kept in the ledger for auditors; its SHA-256 is in
    /// the log).
    #[arg(long)]
    pub reason: String,
    /// Who acts, as the ledger records it (letters, digits, `_ - . :`).
    #[arg(long, default_value = "cli")]
    pub by: String,
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// The ledger.
    #[command(flatten)]
    pub ledger: LedgerArg,
}

/// Arguments of `suspend`, `resume` and `withdraw`.
#[derive(clap::Args, Debug)]
pub struct ControlArgs {
    /// The emission.
    #[command(flatten)]
    pub emission: EmissionArg,
    /// One block of it (default: the whole emission).
    #[arg(long)]
    pub block: Option<u32>,
    /// A signed approval (`issuer approve`), when the store's dual control
    /// covers the action (withdraw): two, by distinct approvers.
    #[arg(long, value_name = "FILE")]
    pub approval: Vec<std::path::PathBuf>,
    /// Who and why.
    #[command(flatten)]
    pub actor: ActorArgs,
}

/// Arguments of `void`.
#[derive(clap::Args, Debug)]
pub struct VoidArgs {
    /// The unit ID whose sale is cancelled.
    pub id: String,
    /// Who and why.
    #[command(flatten)]
    pub actor: ActorArgs,
}

/// Refuses a `by` that is not a token name's characters.
pub fn check_by(by: &str) -> Result<(), Error> {
    if (1..=64).contains(&by.len())
        && by
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b))
    {
        return Ok(());
    }
    Err(Error::BadOperatorRequest {
        what: format!("--by {by:?}: 1 to 64 letters, digits, `_`, `-`, `.` or `:`"),
    })
}

fn redeemer(store: &Store, actor: &ActorArgs) -> Result<Redeemer, Error> {
    check_by(&actor.by)?;
    args::redeemer(store, &actor.keys, &actor.ledger)
}

/// Runs `suspend`, `resume` or `withdraw`.
pub fn control(store: &Store, action: Action, args: &ControlArgs) -> Result<i32, Error> {
    let emission = args.emission.open(store)?;
    let redeemer = redeemer(store, &args.actor)?;
    let acted = redeemer.control(
        action,
        emission.game,
        args.emission.emission,
        args.block,
        &args.actor.reason,
        &args.actor.by,
        &ticket_issuer::approval::read_files(&args.approval)?,
    )?;
    report(&acted, args.actor.json);
    Ok(0)
}

/// Runs `void`.
pub fn void(store: &Store, args: &VoidArgs) -> Result<i32, Error> {
    let id: UnitId = args.id.parse()?;
    let redeemer = redeemer(store, &args.actor)?;
    let acted = redeemer.void(&id, &args.actor.reason, &args.actor.by)?;
    report(&acted, args.actor.json);
    Ok(0)
}

fn report(acted: &Acted, json: bool) {
    if json {
        print_json("operator_action", acted);
        return;
    }
    let what = match (&acted.id, acted.block) {
        (Some(id), _) => format!("the sale of {id}"),
        (None, Some(b)) => format!("{} emission {} block {b}", acted.game, acted.emission),
        (None, None) => format!("{} emission {}", acted.game, acted.emission),
    };
    let done = match acted.action {
        Action::Suspend => "suspended",
        Action::Resume => "resumed",
        Action::Withdraw => "withdrawn",
        Action::Void => "voided",
        Action::Closing => "closed",
        Action::EarlyEnd => "ended early",
    };
    if acted.already && acted.action == Action::Resume {
        outln!("{what} is not suspended: nothing to resume (nothing recorded)");
    } else if acted.already {
        outln!(
            "{what} was {done} already, at {} (nothing recorded)",
            acted.at
        );
    } else {
        let entry = acted.ledger_entry.map_or_else(
            || "queued for the log".into(),
            |seq| format!("log entry {seq}"),
        );
        outln!("{what} {done} at {} by {} ({entry})", acted.at, acted.by);
    }
}
