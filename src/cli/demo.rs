//! `issuer demo`: the main job end to end on one store: keys, a new
//! emission of one 450,000-unit block, its verification, an export (every
//! unit re-checked, the first lines kept), its close, the sale of a unit of
//! that emission and its redemption, and the redemption of a winning unit
//! marked sold (twice, to show the second is refused).

use std::io::Write;
use std::path::PathBuf;

use super::verify::print_block;
use ticket_issuer::audit::verify_emission;
use ticket_issuer::block::authentic::AuthenticBlock;
use ticket_issuer::emission::{BlockChoice, Emission};
use ticket_issuer::error::Error;
use ticket_issuer::export::{export_jsonl, unit_id};
use ticket_issuer::game::Game;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::record::RecordPrefix;
use ticket_issuer::records_key::KeyAccess;
use ticket_issuer::redeem::{OwnedKeys, Redeemer};
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::verify::VerifyOptions;
use ticket_issuer::words::plural;
use ticket_issuer::Output;

/// Arguments of `demo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// No progress bar and no steps: only the last line (the ledger's
    /// totals) or what failed.
    #[arg(short, long)]
    pub quiet: bool,
    /// Print a JSON report on stdout (the steps' words go to stderr).
    #[arg(long)]
    pub json: bool,
}

/// Lines of the export the demo keeps.
const PREVIEW_LINES: usize = 1_000;

/// A writer that passes on the first `lines_left` lines and drops the rest.
struct Preview<W> {
    inner: W,
    lines_left: usize,
}

impl<W: Write> Write for Preview<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.lines_left > 0 {
            let mut end = buf.len();
            for (i, _) in buf.iter().enumerate().filter(|(_, b)| **b == b'\n') {
                self.lines_left -= 1;
                if self.lines_left == 0 {
                    end = i + 1;
                    break;
                }
            }
            self.inner.write_all(&buf[..end])?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Runs the demo.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    if args.json {
        super::out::words_to_stderr();
    }
    if args.quiet {
        super::out::quiet();
    }
    if store.ensure_keys()? {
        outln!(
            "1. created issuer keys in {}",
            store.root().join("keys").display()
        );
    } else {
        outln!(
            "1. using the issuer keys in {}",
            store.root().join("keys").display()
        );
    }
    let secrets = store.secrets()?;
    let game = Game::ILE_AU_TRESOR;
    let number = store.next_emission_number();
    let emission = Emission::new(store, game, number);
    outln!(
        "2. generating emission {number}: one block of {} units of {} at 1 €",
        game.block_units(),
        game.slug()
    );
    let bar = super::progress::bar(u64::from(game.block_units()), args.quiet);
    let blocks = emission.generate(&secrets, 100, BlockChoice::Count(1), &|n| bar.inc(n))?;
    bar.finish_and_clear();
    let block = &blocks[0];
    outln!(
        "   sealed {}\n   merkle root {}",
        block.summary.path,
        block.summary.merkle_root
    );

    outln!("3. verifying emission {number} against its signed manifest");
    let trusted = store.public_key()?;
    let access = KeyAccess {
        secrets: Some(&secrets),
        files: &[],
    };
    let opts = VerifyOptions::new(&trusted, access);
    let report = verify_emission(&emission, &opts, None)?;
    for b in &report.blocks {
        print_block(b, false);
    }
    if !report.ok {
        concludeln!("demo: emission {number} FAILED verification; stopping");
        return Ok(1);
    }

    let path = PathBuf::from(&block.summary.path);
    let export_path = store
        .root()
        .join("exports")
        .join(format!("e{number}-b{}.jsonl", block.summary.block));
    let opened = AuthenticBlock::open(&path, &trusted, access, "export")?;
    // Like `export -o`: never over an existing file, complete or absent.
    // Every unit is exported (and re-checked); only the first lines are
    // kept, not 254 MB on every run.
    let mut out = Preview {
        inner: std::io::BufWriter::new(store.output(&export_path, 0o600, false)?),
        lines_left: PREVIEW_LINES,
    };
    let lines = export_jsonl(&opened, &mut out, &|_| {})?;
    Output::finish_buffered(out.inner)?;
    outln!(
        "4. exported {lines} units, each re-checked; the first {PREVIEW_LINES} lines are in {}\n   (`issuer export {}` writes them all)",
        export_path.display(),
        path.display()
    );

    // The best lots in the first chunk: a winner to redeem.
    let records = opened.chunk_records(0)?.records;
    let size = usize::from(opened.file.header.record_size);
    let mut winners: Vec<RecordPrefix> = records
        .chunks_exact(size)
        .filter_map(RecordPrefix::parse)
        .filter(|p| p.lot != 0)
        .collect();
    winners.sort_by_key(|p| (p.lot, p.index));
    emission.close(&secrets)?;
    outln!("5. closed emission {number}: its signed manifest is final; its units may be sold");
    // The store's own ledger, through the ledger's database-neutral
    // interface: the same steps on any database.
    let ledger = LedgerTarget::of_store(store);
    let redeemer = Redeemer::new(
        store.clone(),
        OwnedKeys {
            public_key: trusted,
            secrets: Some(store.secrets()?),
            records_keys: Vec::new(),
        },
    )
    .with_ledger(ledger.clone());
    // From this emission: an earlier run's emissions, still on sale, come
    // first in the sale order.
    let sale = redeemer.sell_from(game, 100, number)?;
    outln!(
        "6. sold the next unit, {} (block {} index {}), at {}",
        sale.id,
        sale.block,
        sale.index,
        sale.sold_at
    );
    let sold: UnitId = sale.id.parse()?;
    let r = redeemer.redeem(&sold, None)?;
    outln!(
        "   its player redeems it: {}",
        super::redeem::outcome_words(&r)
    );
    // The best winner but the unit just sold.
    let best = winners
        .iter()
        .find(|p| (number, block.summary.block, p.index) != (sold.emission, sold.block, sold.index))
        .ok_or_else(|| Error::BlockRejected {
            path: path.clone(),
            reason: "its first chunk holds no winner".into(),
        })?;
    let winner = unit_id(&opened, best);
    redeemer.mark_sold(std::slice::from_ref(&winner), None)?;
    outln!("7. a platform handing out IDs itself marked {winner} sold; redeeming it");
    let r = redeemer.redeem(&winner, None)?;
    out!("{}", super::redeem::picture(&r));
    outln!(
        "   {}; recorded at {}",
        super::redeem::outcome_words(&r),
        r.redeemed_at.as_deref().unwrap_or("-")
    );
    outln!(
        "   inclusion proof: {} hashes up to root {}",
        r.inclusion_proof.len(),
        r.merkle_root
    );
    match redeemer.redeem(&winner, None) {
        Err(e @ Error::AlreadyRedeemed { .. }) => {
            outln!("   a second redemption is refused: {e}")
        }
        Err(e) => return Err(e),
        Ok(_) => {
            concludeln!("demo: a second redemption was accepted: this is a bug");
            return Ok(1);
        }
    }
    drop(redeemer);
    let summary = ledger.summary()?;
    if args.json {
        #[derive(serde::Serialize)]
        struct Demo<'a> {
            emission: u32,
            redeemed_units: u64,
            paid: String,
            digest: &'a str,
            reconciled: bool,
        }
        super::json::print_json(
            "demo",
            &Demo {
                emission: number,
                redeemed_units: summary.units,
                paid: summary.paid.to_string(),
                digest: &summary.digest,
                reconciled: summary.reconciled,
            },
        );
    }
    concludeln!(
        "{}ledger: {} redeemed, {} € paid, digest {}, {}",
        if args.quiet { "demo: " } else { "8. " },
        plural(summary.units, "unit"),
        summary.paid,
        summary.digest,
        if summary.reconciled {
            "reconciled"
        } else {
            "DOES NOT RECONCILE"
        }
    );
    Ok(0)
}
