//! `issuer status`.

use super::{print_json, LedgerArg};
use ticket_issuer::error::Error;
use ticket_issuer::status::{store_status, EmissionState, SignatureCheck, Standing};
use ticket_issuer::store::Store;

/// Arguments of `status`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// Per block: price, units, sold, unsold, played, redeemed, paid.
    #[arg(long)]
    pub blocks: bool,
    #[command(flatten)]
    pub ledger: LedgerArg,
}

/// Runs `status`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let status = store_status(store, &args.ledger.target(store)?)?;
    if args.json {
        print_json("status", &status);
        return Ok(0);
    }
    outln!(
        "store {} ({}); ledger {}",
        status.store,
        if status.has_secrets {
            "issuer's store: holds the secrets"
        } else {
            "no secrets: an auditor's or redemption service's store"
        },
        status.ledger
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
        let mut claims = match &e.claims_ended_at {
            Some(at) => format!("; claims ended {at}"),
            None => String::new(),
        };
        if let Some(at) = &e.suspended_since {
            claims += &format!("; SUSPENDED since {at}");
        }
        if e.withdrawn > 0 {
            claims += &format!("; {} unsold unit(s) withdrawn", e.withdrawn);
        }
        outln!(
            "  {} emission {}: {state}{claims}, {} block(s), {} units at {} €; sold {}, unsold {}, played {}, redeemed {} unit(s), {} € paid{signature}",
            e.game,
            e.emission,
            e.blocks,
            e.units,
            if e.prices.is_empty() { "-".to_string() } else { e.prices.join(", ") },
            e.sold,
            e.unsold,
            e.played,
            e.redeemed_units,
            e.redeemed_amount,
        );
        if args.blocks {
            for b in &e.block_status {
                let standing = match (b.standing, &b.since) {
                    (Standing::Suspended, Some(at)) => format!(" (suspended since {at})"),
                    (Standing::Withdrawn, Some(at)) => {
                        format!(
                            " (withdrawn since {at}: {} unsold unit(s) never sold)",
                            b.withdrawn
                        )
                    }
                    _ => String::new(),
                };
                outln!(
                    "    block {}{standing}: {} units at {} €; sold {}, unsold {}, played {}, redeemed {}, {} € paid",
                    b.block,
                    b.units,
                    b.price,
                    b.sold,
                    b.unsold,
                    b.played,
                    b.redeemed_units,
                    b.redeemed_amount
                );
            }
        }
    }
    Ok(0)
}
