//! `issuer verify --emission N`: every block of an emission against its
//! signed manifest, and with a reveal file, every seed against its
//! commitment and every block regenerated from its seed.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use crate::derive;
use crate::emission::{Emission, Manifest, ManifestBlock, Reveal};
use crate::error::Error;
use crate::fsutil;
use crate::game::Game;
use crate::verify::{verify_block, BlockReport, Scope, VerifyOptions};

/// What kind of emission-level problem was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemKind {
    /// The manifest's signature does not verify.
    ManifestSignature,
    /// A block listed in the manifest has no file.
    MissingBlock,
    /// A block file that the manifest does not list.
    ExtraBlock,
    /// A file holding another block than its name says (e.g. two swapped).
    MisplacedBlock,
    /// A block file that differs from its manifest entry.
    AlteredBlock,
    /// A block that fails its own checks.
    BlockFails,
    /// A block file that can't be read as a block at all (not a block, an
    /// unsupported version, a header cut short, an I/O error).
    UnreadableBlock,
    /// The reveal file has no seed for a block.
    SeedMissing,
    /// A revealed seed does not match the block's commitment.
    SeedMismatch,
    /// The reveal file is for another emission or game.
    RevealMismatch,
    /// The revealed shares (or beacon value) of an emission made from
    /// shares are not the ones its manifest commits to, or the reveal and
    /// the manifest disagree on whether it was made from shares.
    ShareMismatch,
}

/// One emission-level problem.
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    /// Its kind.
    pub kind: ProblemKind,
    /// The block concerned, if one.
    pub block: Option<u32>,
    /// In words.
    pub message: String,
}

/// The report on an emission.
#[derive(Clone, Debug, Serialize)]
pub struct EmissionReport {
    /// Emission number.
    pub emission: u32,
    /// Game slug.
    pub game: String,
    /// Whether the manifest says it is closed.
    pub closed: bool,
    /// Whether the manifest's signature verified.
    pub manifest_signature_ok: bool,
    /// Whether seeds were checked and every block regenerated.
    pub seeds_checked: bool,
    /// Each block file's report.
    pub blocks: Vec<BlockReport>,
    /// Emission-level problems.
    pub problems: Vec<Problem>,
    /// What was asked for.
    pub scope: Scope,
    /// True iff no problem and every block report is ok.
    pub ok: bool,
    /// True iff the manifest was checked and every block's report is
    /// complete for the scope (seeds are a further step: `seeds_checked`).
    pub complete: bool,
}

/// The emission-level problems found so far.
#[derive(Default)]
struct Problems(Vec<Problem>);

impl Problems {
    fn add(&mut self, kind: ProblemKind, block: Option<u32>, message: String) {
        self.0.push(Problem {
            kind,
            block,
            message,
        });
    }
}

/// Verifies emission `emission` of its store against its manifest.
pub fn verify_emission(
    emission: &Emission,
    opts: &VerifyOptions,
    reveal: Option<&Reveal>,
) -> Result<EmissionReport, Error> {
    let trusted = opts.public_key;
    let manifest_path = emission.manifest_path();
    let mut problems = Problems::default();
    // The manifest and its signature as one unit (a save may be under way).
    // An unreadable signature is a failed one: reported, not fatal.
    let (read_path, bytes, signature_ok) = match emission.read_signed_manifest(trusted) {
        Ok(Some(read)) => (read.path, read.bytes, read.signed),
        Ok(None) | Err(_) => (
            manifest_path.clone(),
            fsutil::read_small(&manifest_path, fsutil::MANIFEST_LIMIT)?,
            false,
        ),
    };
    // The same reading as everywhere else: kind, version and prices checked.
    let manifest = Manifest::parse(&read_path, &bytes)?;
    if !signature_ok {
        return unsigned_manifest_report(emission, opts, manifest, problems);
    }
    if let Some(r) = reveal {
        if r.emission != manifest.emission || r.game != manifest.game {
            problems.add(
                ProblemKind::RevealMismatch,
                None,
                format!(
                    "the seed file is for {} emission {}, not {} emission {}",
                    r.game, r.emission, manifest.game, manifest.emission
                ),
            );
        }
    }

    // An emission made from shares: its seeds are derived again from the
    // revealed shares, each checked against its commitment.
    let derived = reveal.and_then(|r| revealed_seed_key(&manifest, r, &mut problems));

    let mut listed = BTreeSet::new();
    let mut blocks = Vec::new();
    for entry in &manifest.blocks {
        listed.insert(entry.file.clone());
        let path = emission.dir().join(&entry.file);
        if !path.exists() {
            problems.add(
                ProblemKind::MissingBlock,
                Some(entry.block),
                format!(
                    "block {} is missing: no file {}",
                    entry.block,
                    path.display()
                ),
            );
            continue;
        }
        let seed = reveal
            .and_then(|r| revealed_block_seed(r, derived, manifest.emission, entry, &mut problems));
        let block_opts = VerifyOptions {
            revealed_seed: seed,
            ..*opts
        };
        // One unreadable file is a problem of the emission, not the end of
        // its verification: the other blocks are still checked.
        let report = match verify_block(&path, &block_opts) {
            Ok(report) => report,
            Err(e) => {
                problems.add(
                    ProblemKind::UnreadableBlock,
                    Some(entry.block),
                    e.to_string(),
                );
                continue;
            }
        };
        compare_with_entry(&report, entry, manifest.emission, &mut problems);
        if !report.ok {
            problems.add(
                ProblemKind::BlockFails,
                Some(entry.block),
                format!(
                    "block {} fails {}; see its report",
                    entry.block,
                    crate::words::plural(report.failure_count, "check")
                ),
            );
        }
        blocks.push(report);
    }
    for name in block_files(&emission.dir())? {
        if !listed.contains(&name) {
            problems.add(
                ProblemKind::ExtraBlock,
                None,
                format!("{name} is in the emission folder but not in the manifest"),
            );
        }
    }
    let ok = problems.0.is_empty() && blocks.iter().all(|b| b.ok);
    let complete = blocks.len() == manifest.blocks.len() && blocks.iter().all(|b| b.complete);
    Ok(EmissionReport {
        emission: manifest.emission,
        game: manifest.game,
        closed: manifest.closed,
        manifest_signature_ok: signature_ok,
        seeds_checked: reveal.is_some() && opts.scope == Scope::Full,
        blocks,
        problems: problems.0,
        scope: opts.scope,
        ok,
        complete,
    })
}

/// The report of an emission whose manifest is not signed by the issuer
/// key: an unsigned manifest is no evidence (comparing the blocks with it
/// would blame them for its alteration), so each block file is checked
/// on its own.
fn unsigned_manifest_report(
    emission: &Emission,
    opts: &VerifyOptions,
    manifest: Manifest,
    mut problems: Problems,
) -> Result<EmissionReport, Error> {
    problems.add(
        ProblemKind::ManifestSignature,
        None,
        format!(
            "{} is not signed by the issuer key ({} missing or does not verify): the manifest was altered; \
             the block files were checked on their own, not against it (nor against any seeds): \
             restore the signed manifest (the published copy) and verify again",
            emission.manifest_path().display(),
            emission.signature_path().display()
        ),
    );
    let mut blocks = Vec::new();
    for name in block_files(&emission.dir())? {
        let report = match verify_block(&emission.dir().join(&name), opts) {
            Ok(report) => report,
            Err(e) => {
                problems.add(ProblemKind::UnreadableBlock, None, e.to_string());
                continue;
            }
        };
        if !report.ok {
            problems.add(
                ProblemKind::BlockFails,
                Some(report.summary.block),
                format!(
                    "{name} fails {}; see its report",
                    crate::words::plural(report.failure_count, "check")
                ),
            );
        }
        blocks.push(report);
    }
    Ok(EmissionReport {
        emission: manifest.emission,
        game: manifest.game,
        closed: manifest.closed,
        manifest_signature_ok: false,
        seeds_checked: false,
        blocks,
        problems: problems.0,
        scope: opts.scope,
        ok: false,
        complete: false,
    })
}

/// Block `entry`'s seed from the reveal, once it matches the block's
/// published commitment and (for an emission made from shares) the seed
/// the revealed shares give; else a problem and `None`.
fn revealed_block_seed(
    reveal: &Reveal,
    derived: Option<(Game, [u8; 32])>,
    emission: u32,
    entry: &ManifestBlock,
    problems: &mut Problems,
) -> Option<[u8; 32]> {
    let block = entry.block;
    match reveal.seed(block) {
        None => problems.add(
            ProblemKind::SeedMissing,
            Some(block),
            format!("the seed file has no seed for block {block}"),
        ),
        Some(Err(e)) => problems.add(ProblemKind::SeedMismatch, Some(block), e),
        Some(Ok(s)) if hex::encode(derive::seed_commitment(&s)) != entry.seed_commitment => {
            problems.add(
                ProblemKind::SeedMismatch,
                Some(block),
                format!("block {block}: the revealed seed does not match its published commitment"),
            )
        }
        Some(Ok(s))
            if derived.is_some_and(|(game, key)| {
                derive::block_seed(&key, game, emission, block) != s
            }) =>
        {
            problems.add(
                ProblemKind::SeedMismatch,
                Some(block),
                format!("block {block}: the revealed seed is not the one the revealed shares give"),
            )
        }
        Some(Ok(s)) => return Some(s),
    }
    None
}

/// Compares a block's report with its manifest entry: the file must hold
/// the block the entry names, with the entry's digest, root, commitment,
/// price and unit count.
fn compare_with_entry(
    report: &BlockReport,
    entry: &ManifestBlock,
    emission: u32,
    problems: &mut Problems,
) {
    if report.summary.block != entry.block || report.summary.emission != emission {
        problems.add(
            ProblemKind::MisplacedBlock,
            Some(entry.block),
            format!(
                "{} holds emission {} block {}, but the manifest lists it as block {}",
                entry.file, report.summary.emission, report.summary.block, entry.block
            ),
        );
        return;
    }
    let mut differs = Vec::new();
    if report.summary.file_sha256 != entry.file_sha256 {
        differs.push("file SHA-256");
    }
    if report.summary.merkle_root != entry.merkle_root {
        differs.push("Merkle root");
    }
    if report.summary.seed_commitment != entry.seed_commitment {
        differs.push("seed commitment");
    }
    if report.summary.price != entry.price || report.summary.units != entry.units {
        differs.push("price or unit count");
    }
    if !differs.is_empty() {
        problems.add(
            ProblemKind::AlteredBlock,
            Some(entry.block),
            format!(
                "block {} differs from the manifest: {}",
                entry.block,
                differs.join(", ")
            ),
        );
    }
}

/// The emission seed key the reveal's shares give (with the game), once
/// every share matches its commitment in `manifest` and the beacon its
/// round; else each finding is a `share_mismatch` problem and `None`.
/// `None`, with no problem, for an emission whose seeds come from the
/// master secret.
fn revealed_seed_key(
    manifest: &Manifest,
    reveal: &Reveal,
    problems: &mut Problems,
) -> Option<(Game, [u8; 32])> {
    let game = Game::from_slug(&manifest.game)?;
    match (&manifest.seed_shares, &reveal.seed_shares) {
        (None, None) => None,
        (None, Some(_)) => {
            problems.add(
                ProblemKind::ShareMismatch,
                None,
                "the reveal publishes shares, but the manifest commits to none: the emission's seeds come from the master secret".into(),
            );
            None
        }
        (Some(committed), None) => {
            problems.add(
                ProblemKind::ShareMismatch,
                None,
                format!(
                    "the manifest commits to the shares of {}, but the reveal publishes none: its seeds can't be derived again",
                    committed.parties()
                ),
            );
            None
        }
        (Some(committed), Some(revealed)) => {
            let found = committed.findings(
                game,
                manifest.emission,
                &revealed.shares,
                revealed.beacon.as_ref(),
            );
            for finding in &found {
                problems.add(
                    ProblemKind::ShareMismatch,
                    None,
                    format!("the reveal's shares: {finding}"),
                );
            }
            found
                .is_empty()
                .then(|| (game, revealed.seed_key(game, manifest.emission)))
        }
    }
}

/// Names of the block files (`b*.tkb`) in an emission folder.
fn block_files(dir: &Path) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let name = entry
            .map_err(|e| Error::io(dir, e))?
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name.starts_with('b') && name.ends_with(".tkb") {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}
