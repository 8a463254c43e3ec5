//! `issuer audit`: the auditor's kit (docs/AUDIT.md). Reads an emission's
//! block files (or block files given alone) with the public key and the
//! records keys, and writes the evidence set into a new folder: the report
//! as JSON and as one self-contained HTML page, every block's outcome file,
//! and `SHA256SUMS` of it all.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use ticket_issuer::ledger::witnessed::Quorum;

use sha2::{Digest, Sha256};

use super::args::{GameSlug, KeyArgs, LedgerArg, LoadedKeys};
use super::exit::{EXIT_OK, EXIT_REFUSED};
use super::json::{json_pretty, print_json};
use super::progress;
use ticket_issuer::audit::verify_emission;
use ticket_issuer::block::authentic::AuthenticBlock;
use ticket_issuer::emission::Reveal;
use ticket_issuer::error::Error;
use ticket_issuer::evidence::block::{audit_block, emission_tests, BlockAudit};
use ticket_issuer::evidence::proof::{self, UnitProof};
use ticket_issuer::evidence::report::{AuditReport, DEFAULT_LEVELS};
use ticket_issuer::evidence::{payout, Check};
use ticket_issuer::game::Game;
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::verify::{verify_block, Scope, VerifyOptions};
use ticket_issuer::words::plural;

/// Arguments of `audit`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Block files to audit (without --emission).
    #[arg(required_unless_present = "emission")]
    pub files: Vec<PathBuf>,
    /// Audit every block of this emission, against its signed manifest.
    #[arg(long, conflicts_with = "files")]
    pub emission: Option<u32>,
    /// The emission's game (needed only when several games have this number).
    #[arg(long, requires = "emission", value_parser = GameSlug)]
    pub game: Option<String>,
    /// The emission's reveal file: also check each seed and regenerate
    /// each block from it.
    #[arg(long, requires = "emission")]
    pub seeds: Option<PathBuf>,
    /// The folder to write the evidence into; it must not exist (or be
    /// empty), unless --force.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an existing --out folder.
    #[arg(long)]
    pub force: bool,
    /// The level the exit status is judged at (verdicts are also given at
    /// 0.01 and 0.05).
    #[arg(long, default_value_t = 0.01, value_parser = parse_level)]
    pub level: f64,
    /// Keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// The ledger to reconcile (with --emission).
    #[command(flatten)]
    pub ledger: LedgerArg,
    /// Do not read the ledger (with --emission): the blocks only.
    #[arg(long, requires = "emission")]
    pub no_ledger: bool,
    /// Also write this unit's inclusion proof (`proofs/ID.json`), read
    /// only, at any time: after the reveal too, when `redeem --check`
    /// refuses the emission. Repeatable; the unit must be in a block
    /// audited.
    #[arg(long, value_name = "ID")]
    pub prove: Vec<String>,
    /// The ledger's public key (PEM) its heads are checked with; default:
    /// the store's. A shared PostgreSQL ledger: repeat it for each node's.
    #[arg(long, value_name = "FILE", requires = "emission")]
    pub ledger_key: Vec<PathBuf>,
    /// A witness's verifier key (C2SP vkey): the ledger's latest witnessed
    /// head must carry --witness-quorum of their cosignatures
    /// (`ledger/witnessed`). Repeat for each witness.
    #[arg(long, value_name = "VKEY")]
    pub witness_key: Vec<String>,
    /// With --witness-key: cosignatures needed (default: every witness's).
    #[arg(long, value_name = "K", requires = "witness_key")]
    pub witness_quorum: Option<usize>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// A level in (0, 0.5].
fn parse_level(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(l) if l > 0.0 && l <= 0.5 => Ok(l),
        _ => Err(format!(
            "{text:?}: a level is a number above 0 and at most 0.5 (e.g. 0.01)"
        )),
    }
}

/// Runs `audit`.
pub fn run(store: &Store, args: &Args) -> Result<i32, Error> {
    let mut keys = LoadedKeys::load(store, &args.keys)?;
    let reveal = args.seeds.as_deref().map(Reveal::read).transpose()?;
    if let (Some(r), Some(path)) = (&reveal, &args.seeds) {
        keys.files.push((r.records_key_file(), path.clone()));
    }
    let target = prepare_out(&args.out, args.force)?;
    let mut provenance = Vec::new();
    if keys.secrets.is_some() && keys.files.is_empty() {
        provenance.push(Check::new(
            "keys/records".into(),
            "keys",
            "records keys",
            true,
            "derived from the store's master secret (an auditor runs this with `--records-key`, the exported records key, and never holds the master secret)".into(),
        ));
    }
    // The blocks, and what proves them: the manifest or the seals alone.
    // Each block's verification report: one reading of its file, whose
    // digest the evidence then quotes.
    let (checked, emission_number, ledger_of) = match args.emission {
        Some(number) => {
            let emission = super::emission::EmissionArg {
                emission: number,
                game: args.game.clone(),
            }
            .open(store)?;
            let mut opts = VerifyOptions::new(&keys.trusted, keys.access());
            opts.scope = if reveal.is_some() {
                Scope::Full
            } else {
                Scope::Structure
            };
            let report = verify_emission(&emission, &opts, reveal.as_ref())?;
            provenance.push(Check::new(
                "manifest/signature".into(),
                "emission",
                "the manifest is signed by the issuer key",
                report.manifest_signature_ok,
                format!(
                    "emission {} of {}, {}, {}",
                    report.emission,
                    report.game,
                    plural(report.blocks.len(), "block"),
                    if report.closed { "closed" } else { "open" }
                ),
            ));
            for p in &report.problems {
                provenance.push(Check::new(
                    format!("manifest/{:?}", p.kind).to_lowercase(),
                    &p.block.map_or("emission".into(), |b| format!("block {b}")),
                    "the emission's files match its manifest",
                    false,
                    p.message.clone(),
                ));
            }
            let (id, name) = (
                "manifest/seeds".to_string(),
                "every block regenerated from its revealed seed",
            );
            provenance.push(match (&reveal, report.seeds_checked) {
                (None, _) => Check::not_done(
                    id,
                    "emission",
                    name,
                    "no reveal given: once the emission is revealed, run the audit again with --seeds REVEAL to regenerate every block from its seed".into(),
                ),
                (Some(_), true) => Check::new(
                    id,
                    "emission",
                    name,
                    true,
                    "every seed matches its commitment and regenerates its block byte for byte".into(),
                ),
                (Some(_), false) => Check::new(
                    id,
                    "emission",
                    name,
                    false,
                    "the seeds could not all be checked: see `issuer verify --emission`".into(),
                ),
            });
            (report.blocks, Some(number), Some(emission.game))
        }
        None => {
            // Each file on its own: its seal, layout and digests (the
            // records are checked as the audit reads them).
            let mut opts = VerifyOptions::new(&keys.trusted, keys.access());
            opts.scope = Scope::Structure;
            let reports = args
                .files
                .iter()
                .map(|path| verify_block(path, &opts))
                .collect::<Result<Vec<_>, Error>>()?;
            (reports, None, None)
        }
    };
    let paths: Vec<PathBuf> = checked
        .iter()
        .map(|b| PathBuf::from(&b.summary.path))
        .collect();
    let bar = progress::bar(0, args.quiet);
    let mut blocks: Vec<BlockAudit> = Vec::new();
    let mut game: Option<Game> = ledger_of;
    for (seal, path) in checked.iter().zip(&paths) {
        provenance.push(Check::new(
            format!("block-{}/seal", seal.summary.block),
            &format!("block {}", seal.summary.block),
            "the block's seal, layout and digests verify with the issuer key",
            seal.ok,
            format!("{} ({})", path.display(), seal.summary.merkle_root),
        ));
        let block = AuthenticBlock::open(path, &keys.trusted, keys.access(), "audit")?;
        let h = &block.file.header;
        if let Some(g) = game.filter(|g| *g != h.game) {
            return Err(Error::BadFile {
                path: path.clone(),
                reason: format!(
                    "a block of {}, audited with blocks of {}: audit one game at a time",
                    h.game.slug(),
                    g.slug()
                ),
            });
        }
        game = Some(h.game);
        blocks.push(audit_block(&block, &seal.summary.file_sha256)?);
        bar.inc(u64::from(h.unit_count));
    }
    bar.finish_and_clear();
    let game = game.ok_or_else(|| Error::BadFile {
        path: args.out.clone(),
        reason: "no block to audit".into(),
    })?;
    let mut report = assemble(game, emission_number, &blocks, args.level);
    if let (Some(emission), false) = (emission_number, args.no_ledger) {
        report.ledger = Some(reconcile_ledger(
            store, args, game, emission, &blocks, &keys,
        )?);
    }
    report.provenance = provenance;
    report.judge();
    let proofs = args
        .prove
        .iter()
        .map(|id| prove(id, game, &blocks, &keys))
        .collect::<Result<Vec<_>, Error>>()?;
    write_evidence(&target, &report, &blocks, game, &proofs)?;
    finish_out(target, &args.out, args.force)?;
    if args.json {
        print_json("audit", &report);
    } else {
        print_summary(&report, &args.out, args.quiet);
    }
    Ok(if report.ok { EXIT_OK } else { EXIT_REFUSED })
}

/// The report of `blocks`, before the ledger and the verdicts.
fn assemble(game: Game, emission: Option<u32>, blocks: &[BlockAudit], level: f64) -> AuditReport {
    let mut levels: Vec<f64> = DEFAULT_LEVELS.to_vec();
    if !levels.contains(&level) {
        levels.push(level);
    }
    let mut tests = Vec::new();
    let mut checks = Vec::new();
    let mut plots = Vec::new();
    for b in blocks {
        tests.extend(b.tests.iter().cloned());
        checks.extend(b.checks.iter().cloned());
        plots.extend(b.plots.iter().cloned());
    }
    let (emission_tests, emission_plots) = emission_tests(blocks);
    tests.extend(emission_tests);
    plots.extend(emission_plots);
    let payout = payout_checks(game, blocks);
    AuditReport {
        game: game.slug().to_string(),
        emission,
        issuer_version: env!("CARGO_PKG_VERSION").to_string(),
        levels,
        level,
        correction: "Holm (step-down), over every test of the report".into(),
        provenance: Vec::new(),
        blocks: blocks.iter().map(|b| b.evidence.clone()).collect(),
        checks,
        tests,
        par: serde_json::to_value(
            game.return_figures(blocks.first().map_or(0, |b| b.evidence.price_cents)),
        )
        .unwrap_or_default(),
        payout,
        ledger: None,
        plots,
        ok: false,
        summary: Default::default(),
    }
}

/// The ledger (`--ledger`, else the store's) against the audited blocks;
/// its heads checked with each `--ledger-key`, else the store's ledger key.
fn reconcile_ledger(
    store: &Store,
    args: &Args,
    game: Game,
    emission: u32,
    blocks: &[BlockAudit],
    keys: &LoadedKeys,
) -> Result<ticket_issuer::evidence::LedgerEvidence, Error> {
    let target = args.ledger.target(store)?;
    let paths = match args.ledger_key.is_empty() {
        true => vec![store.ledger_public_key_path()]
            .into_iter()
            .filter(|p| p.exists())
            .collect(),
        false => args.ledger_key.clone(),
    };
    let signers = paths
        .iter()
        .map(|p| ticket_issuer::seal::read_public(p))
        .collect::<Result<Vec<_>, _>>()?;
    let witnesses = Quorum::from_args(&args.witness_key, args.witness_quorum)
        .map_err(|what| Error::BadOperatorRequest { what })?;
    ticket_issuer::reconcile(
        &target,
        game,
        emission,
        blocks,
        &keys.access(),
        &signers,
        witnesses.as_ref(),
    )
}

/// The payout rule against the game's exact figures and the blocks'.
fn payout_checks(game: Game, blocks: &[BlockAudit]) -> Vec<payout::BandCheck> {
    let category = game.instant_category();
    let mut out = Vec::new();
    let mut prices: Vec<u32> = blocks.iter().map(|b| b.evidence.price_cents).collect();
    prices.sort_unstable();
    prices.dedup();
    for price in prices {
        for f in game.return_figures(price) {
            out.extend(payout::bands_of(category, &f, "par"));
        }
        let (paid, stakes) = blocks
            .iter()
            .filter(|b| b.evidence.price_cents == price)
            .fold((0u64, 0u64), |(p, s), b| {
                (
                    p + b.evidence.paid_cents,
                    s + b.evidence.units * u64::from(price),
                )
            });
        let rate = ticket_issuer::par::Exact::ratio(paid, stakes.max(1));
        let realised = payout::bands(
            category,
            &format!(
                "the blocks at {} €, played to the end",
                ticket_issuer::Cents::from(price)
            ),
            "blocks",
            &rate,
            false,
        );
        out.extend(realised.into_iter().map(|mut b| {
            if b.applies {
                b.why.push_str(
                    "; a realised figure (it varies with the draws: the binding figure is the PAR sheet's)",
                );
            }
            b
        }));
    }
    out
}

/// The inclusion proof of unit `id`, from the audited block it names.
fn prove(
    id: &str,
    game: Game,
    blocks: &[BlockAudit],
    keys: &LoadedKeys,
) -> Result<UnitProof, Error> {
    let unit: UnitId = id.parse()?;
    let audited = blocks
        .iter()
        .map(|b| &b.evidence)
        .find(|b| unit.game == game && (b.emission, b.block) == (unit.emission, unit.block));
    match audited {
        Some(b) => {
            let path = Path::new(&b.path);
            let block = AuthenticBlock::open(path, &keys.trusted, keys.access(), "audit")?;
            proof::unit_proof(&block, &unit)
        }
        // Where the blocks audited are.
        None => Err(Error::UnknownBlock {
            id: unit.to_string(),
            emission: unit.emission,
            block: unit.block,
            path: blocks
                .first()
                .and_then(|b| Path::new(&b.evidence.path).parent().map(Path::to_path_buf))
                .unwrap_or_default(),
        }),
    }
}

/// A new, empty folder beside `out` to write the evidence into.
fn prepare_out(out: &Path, force: bool) -> Result<tempfile::TempDir, Error> {
    let exists_with_files = match std::fs::read_dir(out) {
        Ok(mut entries) => entries.next().is_some(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(Error::io(out, e)),
    };
    if exists_with_files && !force {
        return Err(Error::OutputExists {
            path: out.to_path_buf(),
        });
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "audit".into());
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(ticket_issuer::fsutil::PARTIAL_SUFFIX)
        .tempdir_in(&parent)
        .map_err(|e| Error::io(&parent, e))
}

/// Moves the finished folder to `out` (replacing it with --force).
fn finish_out(tmp: tempfile::TempDir, out: &Path, force: bool) -> Result<(), Error> {
    if out.exists() {
        let empty = std::fs::read_dir(out)
            .map_err(|e| Error::io(out, e))?
            .next()
            .is_none();
        if !empty && !force {
            return Err(Error::OutputExists {
                path: out.to_path_buf(),
            });
        }
        std::fs::remove_dir_all(out).map_err(|e| Error::io(out, e))?;
    }
    let path = tmp.keep();
    std::fs::rename(&path, out).map_err(|e| {
        let _ = std::fs::remove_dir_all(&path);
        Error::io(out, e)
    })
}

/// Writes every file of the evidence set into `dir`, then `SHA256SUMS`.
fn write_evidence(
    dir: &tempfile::TempDir,
    report: &AuditReport,
    blocks: &[BlockAudit],
    game: Game,
    proofs: &[UnitProof],
) -> Result<(), Error> {
    let dir = dir.path();
    if !proofs.is_empty() {
        let sub = dir.join("proofs");
        std::fs::create_dir(&sub).map_err(|e| Error::io(&sub, e))?;
    }
    let mut sums = String::new();
    let mut put = |name: &str, bytes: &[u8]| -> Result<(), Error> {
        let path = dir.join(name);
        let mut f = std::fs::File::create(&path).map_err(|e| Error::io(&path, e))?;
        f.write_all(bytes).map_err(|e| Error::io(&path, e))?;
        f.sync_all().map_err(|e| Error::io(&path, e))?;
        sums.push_str(&format!("{}  {name}\n", hex::encode(Sha256::digest(bytes))));
        Ok(())
    };
    for b in blocks {
        let mut text = Vec::with_capacity(b.outcomes.len() * 48);
        text.extend_from_slice(b"id\tindex\tlot\tprize_eur\n");
        for o in &b.outcomes {
            let id = UnitId {
                game,
                emission: b.evidence.emission,
                block: b.evidence.block,
                index: o.index,
                check_code: o.check_code,
            };
            id.write_to(&mut text);
            let lot = game.lot_name(o.lot).unwrap_or("-");
            let _ = writeln!(
                text,
                "\t{}\t{lot}\t{}",
                o.index,
                ticket_issuer::Cents::from(o.prize_cents)
            );
        }
        put(&b.evidence.outcomes_file, &text)?;
    }
    for p in proofs {
        put(
            &format!("proofs/{}.json", p.id),
            json_pretty("unit_proof", p).as_bytes(),
        )?;
    }
    let json = json_pretty("audit", report);
    put("report.json", json.as_bytes())?;
    put(
        "report.html",
        ticket_issuer::report_html::render(report).as_bytes(),
    )?;
    let path = dir.join("SHA256SUMS");
    std::fs::write(&path, sums).map_err(|e| Error::io(&path, e))
}

/// One test in a line: verdict at the report's level (adjusted), id,
/// statistic, dof, p raw and adjusted, and each level's verdicts.
fn print_test(t: &ticket_issuer::evidence::StatTest) {
    use ticket_issuer::evidence::Verdict;
    let word = |v: Verdict| match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "FAIL",
        Verdict::NotRun => "not run",
    };
    let levels: Vec<String> = t
        .verdicts
        .iter()
        .map(|v| format!("{}: {}/{}", v.level, word(v.raw), word(v.adjusted)))
        .collect();
    match (t.statistic, t.p) {
        (Some(stat), Some(p)) => outln!(
            "  {:<44} {:<10} stat {stat:>10.4}{}  p {p:.3e}  adjusted {:.3e}  [{}]",
            t.id,
            t.method.split(' ').next().unwrap_or(""),
            t.dof.map_or(String::new(), |d| format!(" dof {d}")),
            t.p_adjusted.unwrap_or(f64::NAN),
            levels.join(", ")
        ),
        _ => outln!("  {:<44} not run: {}", t.id, t.note),
    }
}

/// The report in words.
fn print_summary(report: &AuditReport, out: &Path, quiet: bool) {
    let s = &report.summary;
    if !quiet {
        for t in &report.tests {
            print_test(t);
        }
    }
    outln!(
        "audit of {}{}: {}, {} run ({} could not run), {} failing at {} after Holm's correction ({} before), {} failing",
        report.game,
        report.emission.map_or(String::new(), |e| format!(" emission {e}")),
        plural(report.blocks.len(), "block"),
        plural(s.tests_run, "test"),
        s.tests_not_run,
        s.failed_adjusted,
        report.level,
        s.failed_raw,
        plural(s.checks_failed, "check")
    );
    for c in report.all_checks().filter(|c| !c.ok) {
        outln!("  FAIL check {}: {} ({})", c.id, c.name, c.detail);
    }
    for c in report.all_checks().filter(|c| !c.done) {
        outln!("  NOT DONE check {}: {} ({})", c.id, c.name, c.detail);
    }
    for b in report.band_breaches() {
        outln!(
            "  outside the band, not binding: {} — {}: {}",
            b.figure,
            b.article,
            b.why
        );
    }
    for t in report.tests.iter().filter(|t| t.fails_at(report.level)) {
        outln!(
            "  FAIL test {}: {} (p {:.3e}, adjusted {:.3e})",
            t.id,
            t.name,
            t.p.unwrap_or(f64::NAN),
            t.p_adjusted.unwrap_or(f64::NAN)
        );
    }
    for b in report.payout.iter().filter(|b| b.binding && !b.met) {
        outln!("  FAIL payout {}: {} — {}", b.article, b.figure, b.why);
    }
    outln!(
        "{}: evidence in {} (report.html, report.json, outcomes, SHA256SUMS)",
        if report.ok { "PASS" } else { "FAIL" },
        out.display()
    );
}
