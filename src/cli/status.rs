//! `issuer status`.

use super::print_json;
use ticket_issuer::error::Error;
use ticket_issuer::status::{store_status, EmissionState, SignatureCheck};
use ticket_issuer::store::Store;

/// Arguments of `status`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs `status`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let status = store_status(store)?;
    if args.json {
        print_json("status", &status);
        return Ok(0);
    }
    outln!(
        "store {} ({})",
        status.store,
        if status.has_secrets {
            "issuer's store: holds the secrets"
        } else {
            "no secrets: an auditor's or redemption service's store"
        }
    );
    if status.emissions.is_empty() {
        outln!("  no emissions yet");
    }
    for e in &status.emissions {
        let state = match e.state {
            EmissionState::Open => "open",
            EmissionState::Closed => "closed",
            EmissionState::Revealed => "revealed",
        };
        let signature = match e.manifest_signature {
            SignatureCheck::Ok => "",
            SignatureCheck::Failed => "  MANIFEST SIGNATURE FAILS: run `issuer verify --emission`",
            SignatureCheck::Unchecked => "  (manifest signature not checked: no public key)",
        };
        outln!(
            "  {} emission {}: {state}, {} block(s), {} units at {} €; redeemed {} unit(s), {} € paid{signature}",
            e.game,
            e.emission,
            e.blocks,
            e.units,
            if e.prices.is_empty() { "-".to_string() } else { e.prices.join(", ") },
            e.redeemed_units,
            e.redeemed_amount,
        );
    }
    Ok(0)
}
