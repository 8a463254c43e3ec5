//! An emission's manifest (docs/EMISSIONS.md §Manifest): its blocks, their
//! roots and digests, and the checks a manifest's bytes pass when read.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{echo, Error};
use crate::game::Game;
use crate::money::Cents;
use crate::shares::SeedShares;

/// The `kind` of a manifest file.
pub(crate) const MANIFEST_KIND: &str = "ticket-issuer emission manifest";

/// One block as the manifest lists it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ManifestBlock {
    /// Block number.
    pub block: u32,
    /// Unit price in euros (decimal string).
    pub price: String,
    /// Units.
    pub units: u32,
    /// RFC 9162 root over its records, hex.
    pub merkle_root: String,
    /// SHA-256 of the block file, hex.
    pub file_sha256: String,
    /// SHA-256 of its seed, hex.
    pub seed_commitment: String,
    /// The file's name in the emission folder.
    pub file: String,
}

/// The signed list of an emission's blocks (docs/EMISSIONS.md §Manifest).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    /// Always "ticket-issuer emission manifest".
    pub kind: String,
    /// Manifest format version (1).
    pub version: u32,
    /// Game slug.
    pub game: String,
    /// Emission number.
    pub emission: u32,
    /// True once closed: no more blocks.
    pub closed: bool,
    /// The issuer's Ed25519 public key, hex.
    pub issuer_public_key: String,
    /// Commitment to the master secret the emission was begun with, hex
    /// (`derive::master_commitment`); absent in manifests written before it
    /// existed (docs/EMISSIONS.md §Master secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_commitment: Option<String>,
    /// For an emission made from shares: every party's commitment and the
    /// beacon round named, recorded before its first block (manifest
    /// version 2; docs/EMISSIONS.md §A seed no one party controls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_shares: Option<SeedShares>,
    /// The claim period's end set at close (`YYYY-MM-DDTHH:MM:SSZ`, UTC):
    /// `end-claims` before it is refused unless forced with a reason
    /// (docs/EMISSIONS.md §Close). Absent: no deadline was set, and every
    /// end of claims is forced with a reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims_until: Option<String>,
    /// The blocks, by number.
    pub blocks: Vec<ManifestBlock>,
}

/// The game a manifest names.
pub fn manifest_game(manifest: &Manifest, path: &Path) -> Result<Game, Error> {
    Game::from_slug(&manifest.game).ok_or_else(|| Error::BadFile {
        path: path.to_path_buf(),
        reason: format!("unknown game {:?}", echo(&manifest.game)),
    })
}

impl Manifest {
    /// The manifest format version its content needs: 2 for an emission
    /// made from shares (an issuer that reads only version 1 then refuses
    /// it, rather than adding blocks seeded from its master secret), else 1.
    pub fn format_version(&self) -> u32 {
        match self.seed_shares {
            Some(_) => 2,
            None => 1,
        }
    }

    /// Parses and checks manifest bytes (kind, version, prices) after their
    /// signature was checked; `path` names them in messages.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Manifest, Error> {
        let manifest: Manifest = serde_json::from_slice(bytes).map_err(|e| Error::BadFile {
            path: path.to_path_buf(),
            reason: format!("not a manifest ({e})"),
        })?;
        if manifest.kind != MANIFEST_KIND || !(1..=2).contains(&manifest.version) {
            return Err(Error::BadFile {
                path: path.to_path_buf(),
                reason: format!(
                    "kind {:?} version {} is not a manifest this issuer reads",
                    echo(&manifest.kind),
                    manifest.version
                ),
            });
        }
        if manifest.version != manifest.format_version() {
            return Err(Error::BadFile {
                path: path.to_path_buf(),
                reason: format!(
                    "version {} {} seed_shares (version 2 is an emission made from shares, and only it)",
                    manifest.version,
                    match manifest.seed_shares {
                        Some(_) => "with",
                        None => "without",
                    }
                ),
            });
        }
        if let Some(reason) = manifest
            .seed_shares
            .as_ref()
            .and_then(SeedShares::malformed)
        {
            return Err(Error::BadFile {
                path: path.to_path_buf(),
                reason,
            });
        }
        for b in &manifest.blocks {
            if Cents::parse_price(&b.price).is_none() {
                return Err(Error::BadFile {
                    path: path.to_path_buf(),
                    reason: format!(
                        "block {} has an unreadable price {:?}",
                        b.block,
                        echo(&b.price)
                    ),
                });
            }
        }
        Ok(manifest)
    }
}

/// A claim deadline as `close --claims-until` takes it: `YYYY-MM-DD` (the
/// claims stay open through that day, UTC: `YYYY-MM-DDT23:59:59Z`) or
/// `YYYY-MM-DDTHH:MM:SSZ`; the time in the latter form.
pub fn claims_deadline(text: &str) -> Result<String, String> {
    let full = match text.len() {
        10 => format!("{text}T23:59:59Z"),
        _ => text.to_string(),
    };
    let b = full.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        b.get(r.clone())?
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| full[r].parse().ok())?
    };
    let shape = b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z';
    let fields = (
        digits(0..4),
        digits(5..7),
        digits(8..10),
        digits(11..13),
        digits(14..16),
        digits(17..19),
    );
    match (shape, fields) {
        (true, (Some(y), Some(m), Some(d), Some(h), Some(min), Some(sec)))
            if y >= 2000 && (1..=12).contains(&m) && (1..=31).contains(&d) && h < 24 && min < 60 && sec < 60 =>
        {
            Ok(full)
        }
        _ => Err(format!(
            "{text:?} is not a claim deadline: give a UTC date, 2027-06-30 (claims open through that day), or a time, 2027-06-30T12:00:00Z"
        )),
    }
}
