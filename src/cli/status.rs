//! `issuer status`.

use super::args::{redeemer, KeyArgs, LedgerArg};
use super::json::print_json;
use ticket_issuer::error::Error;
use ticket_issuer::redeemer::TopLots;
use ticket_issuer::status::{store_status, EmissionState, SignatureCheck, Standing, StoreStatus};
use ticket_issuer::store::Store;
use ticket_issuer::words::plural;

/// Arguments of `status`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print a JSON report on stdout.
    #[arg(long)]
    pub json: bool,
    /// Per block: price, units, sold, unsold, played, redeemed, paid.
    #[arg(long)]
    pub blocks: bool,
    /// Flag every game and price on sale whose K highest lots (or prize
    /// bands) are all sold while units remain (needs the records key).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub alert_top_lots: Option<u32>,
    /// Keys (for --alert-top-lots).
    #[command(flatten)]
    pub keys: KeyArgs,
    #[command(flatten)]
    pub ledger: LedgerArg,
}

/// Runs `status`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let status = store_status(store, &args.ledger.target(store)?)?;
    let alerts = match args.alert_top_lots {
        Some(k) => Some(redeemer(store, &args.keys, &args.ledger)?.top_lots(k as usize)?),
        None => None,
    };
    if args.json {
        #[derive(serde::Serialize)]
        struct WithAlerts<'a> {
            #[serde(flatten)]
            status: &'a StoreStatus,
            #[serde(skip_serializing_if = "Option::is_none")]
            alerts: Option<&'a Vec<TopLots>>,
        }
        print_json(
            "status",
            &WithAlerts {
                status: &status,
                alerts: alerts.as_ref(),
            },
        );
        return Ok(0);
    }
    for a in alerts.iter().flatten() {
        let top = a.top.join(", ");
        match a.gone {
            true => outln!(
                "ALERT: {} at {} €: the top lots are gone ({top}) while {} {} still on sale; `issuer suspend` stops selling",
                a.game,
                a.price,
                plural(a.unsold, "unit"),
                if a.unsold == 1 { "is" } else { "are" }
            ),
            false => outln!(
                "{} at {} €: {} of the top lots ({top}) left to win",
                a.game,
                a.price,
                plural(a.remaining, "unit")
            ),
        }
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
            if let Some(why) = &e.suspended_reason {
                claims += &format!(" ({why})");
            }
        }
        if e.withdrawn > 0 {
            claims += &format!("; {} withdrawn", plural(e.withdrawn, "unsold unit"));
        }
        let voided = match e.voided {
            0 => String::new(),
            n => format!(" ({} voided)", plural(n, "sale")),
        };
        outln!(
            "  {} emission {}: {state}{claims}, {}, {} at {} €; sold {}{voided}, unsold {}, played {}, redeemed {}, {} € paid{signature}",
            e.game,
            e.emission,
            plural(u64::try_from(e.blocks).unwrap_or(u64::MAX), "block"),
            plural(e.units, "unit"),
            if e.prices.is_empty() { "-".to_string() } else { e.prices.join(", ") },
            e.sold,
            e.unsold,
            e.played,
            plural(e.redeemed_units, "unit"),
            e.redeemed_amount,
        );
        for v in &e.voids {
            outln!(
                "    voided: block {} unit {} at {}: {}",
                v.block,
                v.index,
                v.at,
                v.reason
            );
        }
        if args.blocks {
            for b in &e.block_status {
                let why = b.reason.as_deref().unwrap_or("no reason recorded");
                let standing = match (b.standing, &b.since) {
                    (Standing::Suspended, Some(at)) => format!(" (suspended since {at}: {why})"),
                    (Standing::Withdrawn, Some(at)) => {
                        format!(
                            " (withdrawn since {at}: {why}; {} never sold)",
                            plural(b.withdrawn, "unsold unit")
                        )
                    }
                    _ => String::new(),
                };
                let voided = match b.voided {
                    0 => String::new(),
                    n => format!(" ({n} voided)"),
                };
                outln!(
                    "    block {}{standing}: {} at {} €; sold {}{voided}, unsold {}, played {}, redeemed {}, {} € paid",
                    b.block,
                    plural(b.units, "unit"),
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
