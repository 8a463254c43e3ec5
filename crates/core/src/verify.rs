//! Re-checking a block from the file alone (README, docs/FORMAT.md): structure,
//! digests and seal without any key; with the records key, every unit
//! against the game rules, the regulation's exact lot table and the Merkle
//! root. Nothing in the file that can be recomputed is trusted.

use std::io::Read;
use std::path::Path;

use ed25519_dalek::VerifyingKey;
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::block::build::{self, BlockSpec};
use crate::block::reader::BlockFile;
pub use crate::block::unit_check::{check_unit, check_unit_played, FailureKind};
use crate::block::{BlockSummary, Header, SEAL_LEN};
use crate::cipher::OpenProblem;
use crate::derive;
use crate::error::Error;
use crate::game::{LotTable, PrizeModel};
use crate::merkle::{self, Hash};
use crate::money::Cents;
use crate::record::RecordPrefix;
use crate::records_key::KeyAccess;
use crate::seal;

/// Failures listed in a report; more are counted, not listed.
pub const MAX_LISTED_FAILURES: usize = 100;

/// One failed check.
#[derive(Clone, Debug, Serialize)]
pub struct Failure {
    /// What failed.
    pub kind: FailureKind,
    /// The chunk, where it applies.
    pub chunk: Option<u32>,
    /// The unit index, where it applies.
    pub unit: Option<u32>,
    /// What is wrong, in words.
    pub message: String,
}

/// Outcome of one named check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Checked and holds.
    Passed,
    /// Checked and fails (see the failures).
    Failed,
    /// Not checked (the detail says what it needs).
    NotDone,
}

/// One named check.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// Its name.
    pub check: &'static str,
    /// The outcome.
    pub status: Status,
    /// What was checked, or what it needs.
    pub detail: String,
}

/// What a verification is asked to cover.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every check: structure, seal, and with the records key and seed,
    /// every unit. A check that could not be made leaves it incomplete.
    #[default]
    Full,
    /// Everything but the checks that need the block seed (check codes,
    /// seed commitment): what an auditor holding the records key but not
    /// the seeds can make before the reveal. Asked for by name.
    Records,
    /// Only what needs no secret: layout, index digest, seal, index roots
    /// and every chunk's ciphertext digest. Asked for by name
    /// (`--structure-only`); complete when those are made.
    Structure,
}

impl Scope {
    fn opens_records(self) -> bool {
        self != Scope::Structure
    }

    fn uses_seed(self) -> bool {
        self == Scope::Full
    }
}

/// The report on one block file.
#[derive(Clone, Debug, Serialize)]
pub struct BlockReport {
    /// The block.
    #[serde(flatten)]
    pub summary: BlockSummary,
    /// What was asked for.
    pub scope: Scope,
    /// True iff no check failed (checks not done don't fail).
    pub ok: bool,
    /// True iff every check of the scope was done.
    pub complete: bool,
    /// Every check.
    pub checks: Vec<Check>,
    /// Failures found (at most MAX_LISTED_FAILURES).
    pub failures: Vec<Failure>,
    /// All failures found, listed or not.
    pub failure_count: usize,
}

/// What a verification may use.
#[derive(Clone, Copy)]
pub struct VerifyOptions<'a> {
    /// The trusted public key of the issuer: the seal is checked against it.
    pub public_key: &'a VerifyingKey,
    /// Where records keys and seeds come from.
    pub keys: KeyAccess<'a>,
    /// A revealed seed to regenerate the block from.
    pub revealed_seed: Option<[u8; 32]>,
    /// What to cover.
    pub scope: Scope,
    /// Told the units of each chunk as it is checked.
    pub progress: Option<&'a (dyn Fn(u64) + Sync)>,
    /// Accept test-size blocks (docs/FORMAT.md §Test-size blocks). Only
    /// tests set it; the command line never does.
    pub allow_test_sizes: bool,
}

impl<'a> VerifyOptions<'a> {
    /// A full verification against `public_key`, with the keys of `keys`.
    pub fn new(public_key: &'a VerifyingKey, keys: KeyAccess<'a>) -> VerifyOptions<'a> {
        VerifyOptions {
            public_key,
            keys,
            revealed_seed: None,
            scope: Scope::Full,
            progress: None,
            allow_test_sizes: false,
        }
    }
}

struct Findings {
    checks: Vec<Check>,
    failures: Vec<Failure>,
    count: usize,
}

impl Findings {
    fn fail(&mut self, kind: FailureKind, chunk: Option<u32>, unit: Option<u32>, message: String) {
        self.count += 1;
        if self.failures.len() < MAX_LISTED_FAILURES {
            self.failures.push(Failure {
                kind,
                chunk,
                unit,
                message,
            });
        }
    }

    /// Records a check as passed unless failures were added since `before`.
    fn check(&mut self, check: &'static str, before: usize, detail: impl Into<String>) {
        let status = if self.count > before {
            Status::Failed
        } else {
            Status::Passed
        };
        self.checks.push(Check {
            check,
            status,
            detail: detail.into(),
        });
    }

    fn not_done(&mut self, check: &'static str, detail: impl Into<String>) {
        self.checks.push(Check {
            check,
            status: Status::NotDone,
            detail: detail.into(),
        });
    }
}

/// SHA-256 of a whole file, read in 1 MiB pieces.
pub fn file_sha256(path: &Path) -> Result<Hash, Error> {
    let mut file = crate::fsutil::open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().into())
}

/// SHA-256 of a block file over the pieces its checks read: header, index,
/// every chunk's ciphertext in index order, seal. When those pieces tile the
/// file (the layout a sealed block has), that is the file's digest, of the
/// very bytes checked. A block whose pieces do not tile it (truncated,
/// trailing bytes, a gap or overlap in its index) fails `layout` anyway; its
/// digest is then read whole through the same open file.
struct FileDigest {
    hasher: Sha256,
    /// Where the next piece must start for the pieces to tile the file;
    /// `None` once they do not.
    next: Option<u64>,
}

impl FileDigest {
    fn new(block: &BlockFile) -> FileDigest {
        let h = &block.header;
        let mut hasher = Sha256::new();
        hasher.update(&block.header_bytes);
        hasher.update(&block.index_bytes);
        let tiled = block.header_bytes.len() as u64 == h.index_offset()
            && block.index_bytes.len() == h.index_len();
        FileDigest {
            hasher,
            next: tiled.then(|| h.chunks_offset()),
        }
    }

    /// Chunk `chunk`, read as `ciphertext`.
    fn chunk(&mut self, block: &BlockFile, chunk: u32, ciphertext: &[u8]) {
        self.hasher.update(ciphertext);
        let fits = block
            .index
            .get(chunk as usize)
            .is_some_and(|e| Some(e.offset) == self.next && ciphertext.len() == e.length as usize);
        self.next = self
            .next
            .filter(|_| fits)
            .map(|at| at + ciphertext.len() as u64);
    }

    /// The digest, once every chunk was added.
    fn finish(mut self, block: &BlockFile) -> Result<Hash, Error> {
        let h = &block.header;
        let tiled = self.next == Some(h.seal_offset)
            && block.index.len() == h.chunk_count as usize
            && block.file_len == h.seal_offset + SEAL_LEN as u64;
        match (&block.seal, tiled) {
            (Some(seal), true) => {
                self.hasher.update(seal);
                Ok(self.hasher.finalize().into())
            }
            _ => block.sha256(),
        }
    }
}

/// Per-chunk outcome of the parallel pass.
#[derive(Default)]
struct ChunkOutcome {
    failures: Vec<(FailureKind, Option<u32>, String)>,
    lot_counts: Vec<u64>,
    prize_cents: u64,
    root: Option<Hash>,
    opened: bool,
    /// With a revealed seed: whether the records are byte for byte those
    /// the seed regenerates.
    regenerated: Option<bool>,
}

/// Verifies the block at `path`: a sequence of named checks, each a
/// function below that records its findings. `Err` only when the file can't
/// be read at all (exit 2); a block that fails checks gives a report with
/// `ok == false`.
pub fn verify_block(path: &Path, opts: &VerifyOptions) -> Result<BlockReport, Error> {
    let block = BlockFile::open(path)?;
    let h = &block.header;
    let mut f = Findings {
        checks: vec![Check {
            check: "format",
            status: Status::Passed,
            detail: format!(
                "magic, format version {}, header of {} bytes",
                crate::block::FORMAT_VERSION,
                h.encoded_len()
            ),
        }],
        failures: Vec::new(),
        count: 0,
    };
    check_block_size(&mut f, h, opts);
    check_layout(&mut f, &block);
    check_index_digest(&mut f, &block);
    check_seal(&mut f, &block, opts.public_key);
    check_index_roots(&mut f, &block);

    // A header that fails its seal can't be trusted to pick the key: the
    // outcome checks are then not done rather than refused as "wrong key".
    let header_authentic = !f
        .failures
        .iter()
        .any(|x| matches!(x.kind, FailureKind::SealInvalid | FailureKind::WrongSigner));
    let records_key = match opts.keys.records_key(&block) {
        _ if !opts.scope.opens_records() => None,
        Err(Error::WrongRecordsKey { .. }) if !header_authentic => None,
        other => other?,
    };
    // A price the regulation does not sell at has no lot table to check the
    // units against: a failure, and the outcome checks are not done.
    let regulation = match h.game.lot_table_for(h.price_cents, h.unit_count) {
        Ok(table) => Some(table),
        Err(e) => {
            f.fail(FailureKind::LotTable, None, None, e.to_string());
            None
        }
    };
    let records_key = records_key.filter(|_| regulation.is_some());
    // The block seed: revealed, or derived from the issuer's secret (or the
    // emission's kept shares).
    let seed = match (opts.revealed_seed, opts.keys.secrets) {
        _ if !opts.scope.uses_seed() => None,
        (Some(seed), _) => Some(seed),
        (None, Some(secrets)) => secrets.block_seed(h.game, h.emission, h.block)?,
        (None, None) => None,
    };
    // With a revealed seed each chunk is regenerated and compared with its
    // records in the chunk pass (their check codes come with it); the
    // block's lot order is drawn once for all chunks.
    let regeneration = match (opts.revealed_seed, &regulation, &records_key) {
        (Some(seed), Some(table), Some(_))
            if opts.scope.uses_seed()
                && (1..=h.game.max_units()).contains(&h.unit_count)
                && usize::from(h.record_size) == crate::record::record_size(h.game) =>
        {
            Some((seed, build::lot_order(&seed, table, h.unit_count)))
        }
        _ => None,
    };
    // The file's digest is taken over the bytes the checks read, as they
    // are read (STYLE.md §4), never over a second read of the path: the
    // header, the index, each chunk's ciphertext in file order, the seal.
    // Chunks are read and checked a batch at a time, so memory stays that
    // of a batch.
    let (chunk_results, file_sha) = chunk_pass(
        &block,
        opts,
        records_key.as_ref(),
        regulation.as_ref(),
        seed.as_ref(),
        regeneration.as_ref().map(|(s, lots)| (s, lots.as_slice())),
    )?;

    let before = f.count;
    chunk_failures(&mut f, &chunk_results, |k| k == FailureKind::ChunkDigest);
    f.check(
        "chunk_digests",
        before,
        "SHA-256 of every chunk's ciphertext against the index",
    );
    outcome_checks(
        &mut f,
        &block,
        opts,
        &chunk_results,
        records_key.is_some(),
        regulation.as_ref(),
        seed.as_ref(),
    )?;

    let complete = f.checks.iter().all(|c| c.status != Status::NotDone);
    Ok(BlockReport {
        summary: BlockSummary::new(path, h, &file_sha),
        scope: opts.scope,
        ok: f.count == 0,
        complete,
        checks: f.checks,
        failures: f.failures,
        failure_count: f.count,
    })
}

/// The chunk pass: every chunk read once, a batch at a time in parallel,
/// and checked (`check_chunk`), with the file's digest taken over the
/// bytes the checks read, as they are read (STYLE.md §4), never over a
/// second read of the path: the header, the index, each chunk's
/// ciphertext in file order, the seal. Memory stays that of a batch.
fn chunk_pass(
    block: &BlockFile,
    opts: &VerifyOptions,
    records_key: Option<&[u8; 32]>,
    regulation: Option<&LotTable>,
    seed: Option<&[u8; 32]>,
    regeneration: Option<(&[u8; 32], &[u8])>,
) -> Result<(Vec<ChunkOutcome>, Hash), Error> {
    let h = &block.header;
    let mut file_digest = FileDigest::new(block);
    let chunks = h.chunk_count.min(block.index.len() as u32);
    let batch = (rayon::current_num_threads() * 8).max(1);
    let mut chunk_results: Vec<ChunkOutcome> = Vec::with_capacity(chunks as usize);
    for first in (0..chunks).step_by(batch) {
        let last = first.saturating_add(batch as u32).min(chunks);
        let read: Vec<(ChunkOutcome, Vec<u8>)> = (first..last)
            .into_par_iter()
            .map(|chunk| {
                let ciphertext = block.read_ciphertext(chunk)?;
                let outcome = check_chunk(
                    block,
                    chunk,
                    &ciphertext,
                    records_key,
                    regulation,
                    seed,
                    regeneration,
                );
                if let Some(progress) = opts.progress {
                    progress(u64::from(h.units_in_chunk(chunk)));
                }
                Ok((outcome?, ciphertext))
            })
            .collect::<Result<_, Error>>()?;
        for (chunk, (outcome, ciphertext)) in (first..).zip(read) {
            file_digest.chunk(block, chunk, &ciphertext);
            chunk_results.push(outcome);
        }
    }
    Ok((chunk_results, file_digest.finish(block)?))
}

/// The checks on what the chunks hold: their digests, then (in scope)
/// the records against the lot table and root, the check codes, the
/// seed commitment and the regeneration from a revealed seed.
fn outcome_checks(
    f: &mut Findings,
    block: &BlockFile,
    opts: &VerifyOptions,
    chunk_results: &[ChunkOutcome],
    have_records_key: bool,
    regulation: Option<&LotTable>,
    seed: Option<&[u8; 32]>,
) -> Result<(), Error> {
    let h = &block.header;
    if opts.scope.opens_records() {
        match (have_records_key, regulation) {
            (true, Some(regulation)) => outcome_findings(f, block, chunk_results, regulation),
            _ => {
                for c in ["records", "lot_table", "merkle_root"] {
                    f.not_done(
                        c,
                        "needs the records key (the issuer's store, or --records-key FILE) and an authentic header",
                    );
                }
            }
        }
    }
    if opts.scope.uses_seed() {
        check_check_codes(f, chunk_results, seed.is_some() && have_records_key);
        check_seed_commitment(f, h, seed);
        if let (Some(seed), Some(_)) = (opts.revealed_seed, regulation) {
            check_regeneration(f, h, &seed, chunk_results)?;
        }
    }

    Ok(())
}

/// `block_size`: a production block holds the game's units; a test-size
/// block passes only where the caller allows it (tests).
fn check_block_size(f: &mut Findings, h: &Header, opts: &VerifyOptions) {
    let before = f.count;
    let production_units = h.game.block_units();
    if h.game.is_test_size(h.unit_count) && !opts.allow_test_sizes {
        f.fail(
            FailureKind::BlockSize,
            None,
            None,
            format!(
                "a test-size block of {} units, not a production block (a {} block holds {})",
                h.unit_count,
                h.game.slug(),
                production_units
            ),
        );
    }
    f.check("block_size", before, format!("{} units", h.unit_count));
}

/// `layout`: the file is exactly header, index, chunks (tiling the chunk
/// area in order), seal.
fn check_layout(f: &mut Findings, block: &BlockFile) {
    let h = &block.header;
    let before = f.count;
    let expected_len = h.seal_offset + SEAL_LEN as u64;
    if block.file_len < expected_len {
        f.fail(
            FailureKind::Truncated,
            None,
            None,
            format!(
                "file is {} bytes, its header says {expected_len}: truncated",
                block.file_len
            ),
        );
    } else if block.file_len > expected_len {
        f.fail(
            FailureKind::TrailingBytes,
            None,
            None,
            format!(
                "{} bytes follow the seal (file is {} bytes, header says {expected_len})",
                block.file_len - expected_len,
                block.file_len
            ),
        );
    }
    let mut offset = h.chunks_offset();
    for (i, e) in block.index.iter().enumerate() {
        let i = i as u32;
        if e.offset != offset || e.units != h.units_in_chunk(i) {
            f.fail(
                FailureKind::IndexLayout,
                Some(i),
                None,
                format!(
                    "index entry {i}: offset {} / {} units, expected offset {offset} / {} units",
                    e.offset,
                    e.units,
                    h.units_in_chunk(i)
                ),
            );
        }
        offset = e.offset.saturating_add(u64::from(e.length));
    }
    if block.index.len() == h.chunk_count as usize && offset != h.seal_offset {
        f.fail(
            FailureKind::IndexLayout,
            None,
            None,
            format!(
                "chunks end at {offset} but the seal is at {}",
                h.seal_offset
            ),
        );
    }
    f.check(
        "layout",
        before,
        format!(
            "header, index of {} chunks, chunks, seal; {} bytes",
            h.chunk_count, expected_len
        ),
    );
}

/// `index_digest`: the chunk index bytes as read hash to the header's.
fn check_index_digest(f: &mut Findings, block: &BlockFile) {
    let before = f.count;
    if !block.index_digest_ok() {
        f.fail(
            FailureKind::IndexDigest,
            None,
            None,
            "the chunk index does not match the index digest in the header".into(),
        );
    }
    f.check("index_digest", before, "SHA-256 of the chunk index");
}

/// `seal`: the header names the trusted key and its Ed25519 seal verifies
/// over the header bytes as read.
fn check_seal(f: &mut Findings, block: &BlockFile, trusted: &VerifyingKey) {
    let h = &block.header;
    let before = f.count;
    if h.signer != trusted.to_bytes() {
        f.fail(
            FailureKind::WrongSigner,
            None,
            None,
            format!(
                "sealed by key {}, not by the trusted issuer key {}",
                hex::encode(h.signer),
                hex::encode(trusted.to_bytes())
            ),
        );
    } else {
        let valid = block
            .seal
            .as_ref()
            .is_some_and(|s| seal::verify(trusted, &block.header_bytes, s));
        if !valid {
            f.fail(
                FailureKind::SealInvalid,
                None,
                None,
                "the seal is not the issuer's signature of this header".into(),
            );
        }
    }
    f.check(
        "seal",
        before,
        "Ed25519 signature of the header by the issuer key",
    );
}

/// `index_roots`: the index's chunk subtree roots make the header's root.
fn check_index_roots(f: &mut Findings, block: &BlockFile) {
    let before = f.count;
    let index_roots: Vec<Hash> = block.index.iter().map(|e| e.subtree_root).collect();
    if merkle::root_from_hashes(&index_roots) != block.header.merkle_root {
        f.fail(
            FailureKind::IndexRoots,
            None,
            None,
            "the index's chunk roots do not make the header's Merkle root".into(),
        );
    }
    f.check(
        "index_roots",
        before,
        "RFC 9162 root over the chunk subtree roots",
    );
}

/// Adds the chunks' failures whose kind `wanted` selects.
fn chunk_failures(
    f: &mut Findings,
    results: &[ChunkOutcome],
    wanted: impl Fn(FailureKind) -> bool,
) {
    for (chunk, r) in results.iter().enumerate() {
        for (kind, unit, message) in &r.failures {
            if wanted(*kind) {
                f.fail(*kind, Some(chunk as u32), *unit, message.clone());
            }
        }
    }
}

/// `check_codes`: every unit's check code is the one its seed derives
/// (made in the chunk pass when seed and records key were both there).
fn check_check_codes(f: &mut Findings, results: &[ChunkOutcome], made: bool) {
    if !made {
        f.not_done(
            "check_codes",
            "needs the block seed and the records key (the issuer's store, with its kept shares for an emission made from shares)",
        );
        return;
    }
    let before = f.count;
    chunk_failures(f, results, |k| k == FailureKind::CheckCode);
    f.check(
        "check_codes",
        before,
        "every unit's check code against the block seed",
    );
}

/// `seed_commitment`: SHA-256 of the seed is the header's commitment.
fn check_seed_commitment(f: &mut Findings, h: &Header, seed: Option<&[u8; 32]>) {
    let Some(seed) = seed else {
        f.not_done(
            "seed_commitment",
            "needs the block seed (the issuer's store, with its kept shares for an emission made from shares, or a reveal file)",
        );
        return;
    };
    let before = f.count;
    if derive::seed_commitment(seed) != h.seed_commitment {
        f.fail(
            FailureKind::SeedCommitment,
            None,
            None,
            "SHA-256 of the seed is not the header's seed commitment".into(),
        );
    }
    f.check(
        "seed_commitment",
        before,
        "SHA-256(seed) against the header",
    );
}

/// `regeneration`: every unit regenerated from the revealed seed makes the
/// block's Merkle root. When the chunk pass found every chunk's records
/// byte for byte those the seed regenerates, the regenerated root is the
/// records' root (from the chunk pass); otherwise the block is rebuilt
/// from the seed.
fn check_regeneration(
    f: &mut Findings,
    h: &Header,
    seed: &[u8; 32],
    results: &[ChunkOutcome],
) -> Result<(), Error> {
    let before = f.count;
    let all_equal = results.len() == h.chunk_count as usize
        && results.iter().all(|r| r.regenerated == Some(true));
    let roots: Vec<Hash> = results.iter().filter_map(|r| r.root).collect();
    let regenerated_root = if all_equal && roots.len() == results.len() {
        merkle::root_from_hashes(&roots)
    } else {
        let spec = BlockSpec {
            game: h.game,
            emission: h.emission,
            block: h.block,
            price_cents: h.price_cents,
            units: h.unit_count,
        };
        build::build(spec, seed, None, &|_| {})?.merkle_root
    };
    if regenerated_root != h.merkle_root {
        f.fail(
            FailureKind::Regeneration,
            None,
            None,
            format!(
                "regenerating from the revealed seed gives root {}, the block has {}",
                hex::encode(regenerated_root),
                hex::encode(h.merkle_root)
            ),
        );
    }
    f.check(
        "regeneration",
        before,
        "every unit regenerated from the revealed seed",
    );
    Ok(())
}

/// Checks that need the records: per-unit rules, exact lot table and total,
/// subtree and Merkle roots.
fn outcome_findings(
    f: &mut Findings,
    block: &BlockFile,
    results: &[ChunkOutcome],
    regulation: &LotTable,
) {
    let h = &block.header;
    let before = f.count;
    chunk_failures(f, results, |k| {
        !matches!(k, FailureKind::ChunkDigest | FailureKind::CheckCode)
    });
    let opened = results.iter().filter(|r| r.opened).count();
    f.check(
        "records",
        before,
        format!(
            "{opened} of {} chunks decrypted; every unit decoded and played under the {} rules",
            h.chunk_count,
            h.game.slug()
        ),
    );

    let before = f.count;
    if h.lot_table != *regulation {
        f.fail(
            FailureKind::LotTable,
            None,
            None,
            format!(
                "the header's lot table is not the regulation's table for {} € units",
                Cents::from(h.price_cents)
            ),
        );
    }
    // Counts, total and root over unreadable chunks would only repeat the
    // chunks' own failures: say they were not made instead.
    let unread = h.chunk_count as usize - opened;
    if unread > 0 {
        let why = format!("{unread} chunk(s) could not be read, see their failures");
        if f.count > before {
            f.check("lot_table", before, why.clone());
        } else {
            f.not_done("lot_table", why.clone());
        }
        f.not_done("merkle_root", why);
        return;
    }
    let mut counts = vec![0u64; 256];
    let mut total = 0u64;
    for r in results {
        for (lot, n) in r.lot_counts.iter().enumerate() {
            counts[lot] += n;
        }
        total += r.prize_cents;
    }
    match h.game.prize_model() {
        PrizeModel::FixedTable => fixed_table_findings(f, h, regulation, &counts, total, before),
        // A drawn game has no table to meet: each unit's prize was checked
        // against its own replay (`records`); the totals are reported.
        PrizeModel::Drawn => {
            let winners: u64 = counts[1..].iter().sum();
            f.check(
                "lot_table",
                before,
                format!(
                    "no fixed lot table ({} draws from published probabilities): {winners} units pay {} € played to the end, each prize its replay's",
                    h.game.slug(),
                    Cents::from(total)
                ),
            );
        }
    }

    let before = f.count;
    for (chunk, r) in results.iter().enumerate() {
        let entry = &block.index[chunk];
        if let Some(root) = r.root {
            if root != entry.subtree_root {
                f.fail(
                    FailureKind::SubtreeRoot,
                    Some(chunk as u32),
                    None,
                    format!("chunk {chunk}'s records do not hash to its subtree root in the index"),
                );
            }
        }
    }
    if results.iter().all(|r| r.root.is_some()) {
        let roots: Vec<Hash> = results.iter().filter_map(|r| r.root).collect();
        if merkle::root_from_hashes(&roots) != h.merkle_root {
            f.fail(
                FailureKind::MerkleRoot,
                None,
                None,
                "the records do not hash to the header's Merkle root".into(),
            );
        }
    } else {
        f.fail(
            FailureKind::MerkleRoot,
            None,
            None,
            "the Merkle root can't be recomputed: some chunks could not be read".into(),
        );
    }
    f.check(
        "merkle_root",
        before,
        "RFC 9162 root recomputed over every record",
    );
}

/// Reads, authenticates and (with the key) checks one chunk.
fn check_chunk(
    block: &BlockFile,
    chunk: u32,
    ciphertext: &[u8],
    records_key: Option<&[u8; 32]>,
    regulation: Option<&LotTable>,
    seed: Option<&[u8; 32]>,
    regeneration: Option<(&[u8; 32], &[u8])>,
) -> Result<ChunkOutcome, Error> {
    let h = &block.header;
    let mut out = ChunkOutcome {
        lot_counts: vec![0; 256],
        ..Default::default()
    };
    let entry = block.entry(chunk)?;
    let digest: Hash = Sha256::digest(ciphertext).into();
    if digest != entry.ciphertext_sha256 {
        out.failures.push((
            FailureKind::ChunkDigest,
            None,
            format!("chunk {chunk}: ciphertext does not match its digest in the index"),
        ));
    }
    let (Some(key), Some(regulation)) = (records_key, regulation) else {
        return Ok(out);
    };
    let records = match block.open_chunk(chunk, ciphertext, key) {
        Ok(r) => r,
        Err(problem) => {
            let kind = match problem {
                OpenProblem::Decrypt => FailureKind::Decrypt,
                OpenProblem::Decompress(_) => FailureKind::Decompress,
                OpenProblem::NotOneFrame { .. } => FailureKind::ChunkFrames,
                OpenProblem::WrongSize { .. } => FailureKind::RecordCount,
            };
            out.failures
                .push((kind, None, format!("chunk {chunk}: {problem}")));
            return Ok(out);
        }
    };
    out.opened = true;
    let size = usize::from(h.record_size);
    let units = h.units_in_chunk(chunk);
    let first = chunk * h.chunk_units;
    let mut leaves = Vec::with_capacity(units as usize);
    let codes = seed.map(derive::CheckCodes::new);
    // The records the revealed seed makes (the caller checked the record
    // size): their check codes are the derived ones.
    let regenerated = regeneration
        .map(|(seed, lots)| build::records(h.game, seed, regulation, lots, first, units));
    let derived_code = |i: usize, position: u32, codes: &derive::CheckCodes| {
        regenerated
            .as_ref()
            .and_then(|r| RecordPrefix::parse(&r[i * size..]))
            .map_or_else(|| codes.code(position), |p| p.check_code)
    };
    for (i, record) in records.chunks_exact(size).enumerate() {
        let position = first + i as u32;
        leaves.push(merkle::leaf_hash(record));
        match check_unit(h, regulation, position, record) {
            Ok(prefix) => {
                out.lot_counts[usize::from(prefix.lot)] += 1;
                out.prize_cents += u64::from(prefix.prize_cents);
                if let Some(codes) = &codes {
                    if derived_code(i, position, codes) != prefix.check_code {
                        out.failures.push((
                            FailureKind::CheckCode,
                            Some(position),
                            format!(
                                "unit {position}: check code is not derived from the block seed"
                            ),
                        ));
                    }
                }
            }
            Err((kind, message)) => {
                // The lot table check counts what the records claim, so a
                // unit whose claim is false fails here, and only here.
                if let Some(prefix) = RecordPrefix::parse(record) {
                    out.lot_counts[usize::from(prefix.lot)] += 1;
                    out.prize_cents += u64::from(prefix.prize_cents);
                }
                out.failures
                    .push((kind, Some(position), format!("unit {position}: {message}")));
            }
        }
    }
    out.root = Some(merkle::root_from_hashes(&leaves));
    out.regenerated = regenerated.map(|r| r == records);
    Ok(out)
}

/// A fixed-table game's block must hold exactly its lot table: the count of
/// every lot, the losers and the total of the prizes.
fn fixed_table_findings(
    f: &mut Findings,
    h: &Header,
    regulation: &LotTable,
    counts: &[u64],
    total: u64,
    before: usize,
) {
    for tier in &regulation.tiers {
        let found = counts[usize::from(tier.code)];
        if found != u64::from(tier.count) {
            f.fail(
                FailureKind::LotCounts,
                None,
                None,
                format!(
                    "{} lots of {} € ({}): the regulation says {}",
                    found,
                    Cents::from(tier.amount_cents),
                    h.game.lot_name(tier.code).unwrap_or("?"),
                    tier.count
                ),
            );
        }
    }
    let losers = u64::from(h.unit_count) - regulation.winners();
    if counts[0] != losers {
        f.fail(
            FailureKind::LotCounts,
            None,
            None,
            format!("{} losing units, expected {losers}", counts[0]),
        );
    }
    if total != regulation.total_cents() {
        f.fail(
            FailureKind::Total,
            None,
            None,
            format!(
                "prizes total {} €, the regulation's table totals {} €",
                Cents::from(total),
                Cents::from(regulation.total_cents())
            ),
        );
    }
    f.check(
        "lot_table",
        before,
        format!(
            "{} winners and {} € in prizes, exactly the regulation's table",
            regulation.winners(),
            Cents::from(regulation.total_cents())
        ),
    );
}
