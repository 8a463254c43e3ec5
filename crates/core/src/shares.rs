//! Seeds no one party controls (docs/EMISSIONS.md §A seed no one party
//! controls). Each party (operator, regulator, test lab, …) makes a secret
//! share for one emission and hands only its commitment to the operator;
//! the commitments, and optionally a public beacon round named in advance,
//! are signed into the emission's manifest before any block is made;
//! generation takes every share (and the beacon round's value), checks each
//! against its commitment and derives the emission seed key from them all;
//! the reveal publishes them, so anyone re-derives every block seed.
//!
//! The hashing rules are in [`crate::derive`] (docs/FORMAT.md §Keys and
//! derivations); this module holds the files, the names and the checks.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::derive::{self, BeaconRound};
use crate::error::{echo, Error};
use crate::fsutil;
use crate::game::Game;
use crate::hex_serde::{bytes as hex_bytes, key as hex_key, opt_bytes as opt_hex};
use crate::store::Store;

/// The `kind` of a share file.
pub const SHARE_KIND: &str = "ticket-issuer seed share";

/// The `kind` of the file in which a store keeps an emission's shares.
const KEPT_KIND: &str = "ticket-issuer kept seed shares";

/// Fewest parties an emission's seed key is made from.
pub const MIN_PARTIES: usize = 2;

/// Longest party or beacon name.
pub const NAME_MAX: usize = 64;

/// Longest beacon value, in bytes.
pub const BEACON_VALUE_MAX: usize = 1024;

/// Cap on a beacon value file (its value in hex, with some whitespace).
const BEACON_FILE_LIMIT: u64 = 4 * 1024;

/// Cap on a commitments file (about 700 parties).
const COMMITMENTS_LIMIT: u64 = 64 * 1024;

/// Checks a party's or a beacon's name: 1 to 64 of `A-Z a-z 0-9 - _ .`
/// (never a space, a colon or a 0x00, which the files and the derivation
/// use as separators).
pub fn check_name(name: &str) -> Result<(), String> {
    let fine = (1..=NAME_MAX).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    match fine {
        true => Ok(()),
        false => Err(format!(
            "{:?} is not a name: 1 to {NAME_MAX} of A-Z a-z 0-9 - _ .",
            echo(name)
        )),
    }
}

/// One party's share of one emission's seed key, as `issuer share new`
/// writes it (docs/FORMAT.md §Share files). `Debug` does not print the
/// share.
#[derive(Clone, PartialEq, Eq)]
pub struct ShareFile {
    /// The emission's game.
    pub game: Game,
    /// The emission the share is for (and for no other).
    pub emission: u32,
    /// The party's name.
    pub party: String,
    /// The share: 32 bytes from the operating system's random source.
    pub share: [u8; 32],
}

/// A share file as stored.
#[derive(Serialize, Deserialize)]
struct RawShareFile {
    kind: String,
    game: String,
    emission: u32,
    party: String,
    #[serde(with = "hex_key")]
    share: [u8; 32],
}

impl fmt::Debug for ShareFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShareFile")
            .field("game", &self.game)
            .field("emission", &self.emission)
            .field("party", &self.party)
            .field("share", &"<redacted>")
            .finish()
    }
}

impl ShareFile {
    /// A new share of `party` for emission `emission` of `game`, from the
    /// operating system's random source; `party` must be a name
    /// ([`check_name`]).
    pub fn random(game: Game, emission: u32, party: &str) -> Result<ShareFile, Error> {
        check_name(party).map_err(|what| Error::Internal { what })?;
        Ok(ShareFile {
            game,
            emission,
            party: party.to_string(),
            share: crate::store::os_random()?,
        })
    }

    /// Reads and checks a share file.
    pub fn read(path: &Path) -> Result<ShareFile, Error> {
        let bytes = fsutil::read_small(path, fsutil::KEY_FILE_LIMIT)?;
        let bad = |reason: String| Error::BadFile {
            path: path.to_path_buf(),
            reason,
        };
        let raw: RawShareFile =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("not a share file ({e})")))?;
        if raw.kind != SHARE_KIND {
            return Err(bad(format!(
                "kind is {:?}, expected {SHARE_KIND:?}",
                echo(&raw.kind)
            )));
        }
        check_name(&raw.party).map_err(|e| bad(format!("party: {e}")))?;
        let game = Game::from_slug(&raw.game)
            .ok_or_else(|| bad(format!("unknown game {:?}", echo(&raw.game))))?;
        Ok(ShareFile {
            game,
            emission: raw.emission,
            party: raw.party,
            share: raw.share,
        })
    }

    /// The file's bytes: pretty-printed JSON and a newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let raw = RawShareFile {
            kind: SHARE_KIND.into(),
            game: self.game.slug().into(),
            emission: self.emission,
            party: self.party.clone(),
            share: self.share,
        };
        let mut bytes = serde_json::to_vec_pretty(&raw).expect("a share file serialises");
        bytes.push(b'\n');
        bytes
    }

    /// Its commitment ([`derive::share_commitment`]), what the party hands
    /// to the operator before generation.
    pub fn commitment(&self) -> [u8; 32] {
        derive::share_commitment(self.game, self.emission, &self.party, &self.share)
    }
}

/// One party's commitment, as the manifest lists it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ShareCommitment {
    /// The party's name.
    pub party: String,
    /// SHA-256 commitment to its share, 64 lowercase hex digits.
    pub commitment: String,
}

/// The public beacon round named when the commitments were recorded, and
/// its value once generation was given it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Beacon {
    /// The beacon's name (e.g. `drand-quicknet`).
    pub name: String,
    /// The round named in advance.
    pub round: u64,
    /// The round's value, hex: absent until the emission's first generation.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_hex")]
    pub value: Option<Vec<u8>>,
}

impl std::str::FromStr for Beacon {
    type Err = String;

    /// `NAME:ROUND`, e.g. `drand-quicknet:12345678`.
    fn from_str(text: &str) -> Result<Beacon, String> {
        let (name, round) = text
            .rsplit_once(':')
            .ok_or_else(|| format!("{:?}: expected NAME:ROUND", echo(text)))?;
        check_name(name)?;
        let round = round.parse().map_err(|_| {
            format!(
                "{:?}: the round is a whole number (0 to 2^64 - 1)",
                echo(round)
            )
        })?;
        Ok(Beacon {
            name: name.to_string(),
            round,
            value: None,
        })
    }
}

impl fmt::Display for Beacon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "beacon {} round {}", self.name, self.round)
    }
}

/// A beacon round with its value, as contributions hold it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct BeaconOutput {
    /// The beacon's name.
    pub name: String,
    /// The round.
    pub round: u64,
    /// The round's value (hex in files).
    #[serde(with = "hex_bytes")]
    pub value: Vec<u8>,
}

/// The manifest's `seed_shares`: the commitments of every party, and the
/// beacon round named, recorded before any block is made.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct SeedShares {
    /// One per party, by party name.
    pub commitments: Vec<ShareCommitment>,
    /// The beacon round named in advance, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beacon: Option<Beacon>,
}

/// One party's share among an emission's contributions.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Share {
    /// The party's name.
    pub party: String,
    /// Its share (64 hex digits in files).
    #[serde(with = "hex_key")]
    pub share: [u8; 32],
}

impl fmt::Debug for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Share")
            .field("party", &self.party)
            .field("share", &"<redacted>")
            .finish()
    }
}

/// Everything an emission's seed key is made from: every party's share and
/// the beacon round's value. What the store keeps until the reveal, and
/// what the reveal publishes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Contributions {
    /// One per party, by party name.
    pub shares: Vec<Share>,
    /// The beacon round and its value, if the manifest names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beacon: Option<BeaconOutput>,
}

impl Contributions {
    /// The emission seed key they give (docs/FORMAT.md §Keys and
    /// derivations): every block seed of the emission derives from it.
    pub fn seed_key(&self, game: Game, emission: u32) -> [u8; 32] {
        let shares: Vec<(&str, &[u8; 32])> = self
            .shares
            .iter()
            .map(|s| (s.party.as_str(), &s.share))
            .collect();
        let beacon = self.beacon.as_ref().map(|b| BeaconRound {
            name: &b.name,
            round: b.round,
            value: &b.value,
        });
        derive::emission_seed_key(&derive::seed_contributions(&shares, beacon), game, emission)
    }
}

/// What the parties hand over for generation (or for `reveal --shares`):
/// their share files, and the beacon round's value.
#[derive(Clone, Debug, Default)]
pub struct GivenShares {
    /// One file per party.
    pub files: Vec<ShareFile>,
    /// The beacon round's value (`--beacon-value`).
    pub beacon_value: Option<Vec<u8>>,
}

/// Why shares and a beacon value are not an emission's contributions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// A party's share is there twice.
    Twice {
        /// The party.
        party: String,
    },
    /// A share of a party the manifest has no commitment of.
    Uncommitted {
        /// The party.
        party: String,
        /// The parties committed.
        committed: String,
    },
    /// A share that does not give its party's commitment.
    WrongShare {
        /// The party.
        party: String,
    },
    /// Two parties with the same share: one copied the other's.
    SameShare {
        /// The party.
        party: String,
        /// The party whose share it also is.
        other: String,
    },
    /// Committed parties without a share.
    Missing {
        /// Their names, comma-separated.
        parties: String,
    },
    /// A beacon value, but the manifest names no beacon round.
    BeaconNotNamed,
    /// The manifest names a beacon round, and no value is given or recorded.
    BeaconMissing {
        /// The round named.
        beacon: String,
    },
    /// Another beacon or round than the manifest names, or another value
    /// than the one it recorded.
    BeaconDiffers {
        /// What differs.
        what: String,
    },
}

impl Finding {
    /// The party it is about, if one.
    pub fn party(&self) -> Option<&str> {
        match self {
            Finding::Twice { party }
            | Finding::Uncommitted { party, .. }
            | Finding::WrongShare { party }
            | Finding::SameShare { party, .. } => Some(party),
            _ => None,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Twice { party } => write!(f, "the share of party {party} is given twice"),
            Finding::Uncommitted { party, committed } => write!(
                f,
                "party {party} has no commitment in the manifest (the parties committed are {committed})"
            ),
            Finding::WrongShare { party } => write!(
                f,
                "the share of party {party} does not match its commitment in the manifest"
            ),
            Finding::SameShare { party, other } => write!(
                f,
                "the share of party {party} is party {other}'s share too: each party makes its own (`issuer share new`)"
            ),
            Finding::Missing { parties } => write!(f, "no share of party {parties}"),
            Finding::BeaconNotNamed => write!(
                f,
                "a beacon value, but the manifest names no beacon round (the beacon is named when the commitments are recorded)"
            ),
            Finding::BeaconMissing { beacon } => write!(f, "no value of {beacon}"),
            Finding::BeaconDiffers { what } => write!(f, "{what}"),
        }
    }
}

impl SeedShares {
    /// Reads a commitments file (`issuer emission commit
    /// --share-commitments FILE`, docs/FORMAT.md §Share files): one
    /// `PARTY COMMITMENT` a line (blank lines and `#` comments allowed), at
    /// least two parties, each once.
    pub fn read(path: &Path, beacon: Option<Beacon>) -> Result<SeedShares, Error> {
        let text = fsutil::read_small_text(path, COMMITMENTS_LIMIT)?;
        let bad = |reason: String| Error::BadFile {
            path: path.to_path_buf(),
            reason,
        };
        let mut commitments: Vec<ShareCommitment> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [party, commitment] = fields[..] else {
                return Err(bad(format!(
                    "line {}: expected `PARTY COMMITMENT` (two fields), found {}",
                    n + 1,
                    fields.len()
                )));
            };
            check_name(party).map_err(|e| bad(format!("line {}: {e}", n + 1)))?;
            if !is_hex_digest(commitment) {
                return Err(bad(format!(
                    "line {}: the commitment of {party} is not 64 hex digits (`issuer share commit FILE` prints it)",
                    n + 1
                )));
            }
            if commitments.iter().any(|c| c.party == party) {
                return Err(bad(format!(
                    "line {}: party {party} is listed twice",
                    n + 1
                )));
            }
            commitments.push(ShareCommitment {
                party: party.to_string(),
                commitment: commitment.to_ascii_lowercase(),
            });
        }
        if commitments.len() < MIN_PARTIES {
            return Err(bad(format!(
                "{} part{} listed: a seed no one party controls needs at least {MIN_PARTIES}",
                commitments.len(),
                if commitments.len() == 1 { "y" } else { "ies" }
            )));
        }
        commitments.sort_by(|a, b| a.party.as_bytes().cmp(b.party.as_bytes()));
        Ok(SeedShares {
            commitments,
            beacon,
        })
    }

    /// What is wrong with the manifest's section itself (for its reader);
    /// `None` when it is well formed.
    pub fn malformed(&self) -> Option<String> {
        if self.commitments.len() < MIN_PARTIES {
            return Some(format!(
                "seed_shares lists {} commitment(s), fewer than {MIN_PARTIES}",
                self.commitments.len()
            ));
        }
        for (i, c) in self.commitments.iter().enumerate() {
            if let Err(e) = check_name(&c.party) {
                return Some(format!("seed_shares: party {e}"));
            }
            if !is_hex_digest(&c.commitment) || c.commitment != c.commitment.to_ascii_lowercase() {
                return Some(format!(
                    "seed_shares: the commitment of {} is not 64 lowercase hex digits",
                    c.party
                ));
            }
            if self.commitments[..i].iter().any(|o| o.party == c.party) {
                return Some(format!("seed_shares: party {} is listed twice", c.party));
            }
        }
        let beacon = self.beacon.as_ref()?;
        if let Err(e) = check_name(&beacon.name) {
            return Some(format!("seed_shares: beacon {e}"));
        }
        match &beacon.value {
            Some(v) if v.is_empty() || v.len() > BEACON_VALUE_MAX => Some(format!(
                "seed_shares: the beacon value holds {} bytes (1 to {BEACON_VALUE_MAX})",
                v.len()
            )),
            _ => None,
        }
    }

    /// The parties committed, comma-separated.
    pub fn parties(&self) -> String {
        self.commitments
            .iter()
            .map(|c| c.party.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Everything that keeps `shares` and `beacon` from being emission
    /// `emission`'s contributions; none when they are.
    pub fn findings(
        &self,
        game: Game,
        emission: u32,
        shares: &[Share],
        beacon: Option<&BeaconOutput>,
    ) -> Vec<Finding> {
        let mut found = Vec::new();
        for (i, s) in shares.iter().enumerate() {
            let party = s.party.clone();
            if shares[..i].iter().any(|o| o.party == s.party) {
                found.push(Finding::Twice { party });
                continue;
            }
            if let Some(other) = shares[..i].iter().find(|o| o.share == s.share) {
                found.push(Finding::SameShare {
                    party,
                    other: other.party.clone(),
                });
                continue;
            }
            match self.commitments.iter().find(|c| c.party == s.party) {
                None => found.push(Finding::Uncommitted {
                    party,
                    committed: self.parties(),
                }),
                Some(c) => {
                    let made = derive::share_commitment(game, emission, &s.party, &s.share);
                    if hex::encode(made) != c.commitment {
                        found.push(Finding::WrongShare { party });
                    }
                }
            }
        }
        let missing: Vec<&str> = self
            .commitments
            .iter()
            .filter(|c| !shares.iter().any(|s| s.party == c.party))
            .map(|c| c.party.as_str())
            .collect();
        if !missing.is_empty() {
            found.push(Finding::Missing {
                parties: missing.join(", "),
            });
        }
        match (&self.beacon, beacon) {
            (None, None) => {}
            (None, Some(_)) => found.push(Finding::BeaconNotNamed),
            (Some(named), None) => found.push(Finding::BeaconMissing {
                beacon: named.to_string(),
            }),
            (Some(named), Some(given)) => {
                if (named.name.as_str(), named.round) != (given.name.as_str(), given.round) {
                    found.push(Finding::BeaconDiffers {
                        what: format!(
                            "the value is of beacon {} round {}, not of the {named} the manifest names",
                            given.name, given.round
                        ),
                    });
                } else if named.value.as_ref().is_some_and(|v| *v != given.value) {
                    found.push(Finding::BeaconDiffers {
                        what: format!(
                            "the value of {named} differs from the one the manifest recorded at the emission's first generation"
                        ),
                    });
                }
            }
        }
        found
    }

    /// The contributions `given` makes for emission `emission`, each share
    /// checked against its commitment; the beacon's value is the one given,
    /// else the one the manifest recorded. Refused, naming the party, at
    /// the first finding.
    pub fn accept(
        &self,
        game: Game,
        emission: u32,
        given: &GivenShares,
    ) -> Result<Contributions, Error> {
        for file in &given.files {
            if (file.game, file.emission) != (game, emission) {
                return Err(Error::ShareMismatch {
                    emission,
                    party: file.party.clone(),
                    reason: format!(
                        "was made for {} emission {}: a share serves the emission it was made for only",
                        file.game.slug(),
                        file.emission
                    ),
                });
            }
        }
        let mut shares: Vec<Share> = given
            .files
            .iter()
            .map(|f| Share {
                party: f.party.clone(),
                share: f.share,
            })
            .collect();
        let beacon = match (&self.beacon, &given.beacon_value) {
            (None, None) => None,
            (None, Some(_)) => {
                return Err(Error::BeaconMismatch {
                    emission,
                    reason: Finding::BeaconNotNamed.to_string(),
                })
            }
            (Some(named), value) => {
                let value = value
                    .clone()
                    .or_else(|| named.value.clone())
                    .ok_or_else(|| Error::SharesNeeded {
                        emission,
                        what: format!("the value of {named} with --beacon-value FILE"),
                    })?;
                Some(BeaconOutput {
                    name: named.name.clone(),
                    round: named.round,
                    value,
                })
            }
        };
        shares.sort_by(|a, b| a.party.as_bytes().cmp(b.party.as_bytes()));
        let contributions = Contributions { shares, beacon };
        self.check(game, emission, &contributions)?;
        Ok(contributions)
    }

    /// `contributions` as emission `emission`'s, or the first finding as
    /// an error.
    pub fn check(
        &self,
        game: Game,
        emission: u32,
        contributions: &Contributions,
    ) -> Result<(), Error> {
        let found = self.findings(
            game,
            emission,
            &contributions.shares,
            contributions.beacon.as_ref(),
        );
        match found.into_iter().next() {
            None => Ok(()),
            Some(Finding::Missing { parties }) => Err(Error::SharesNeeded {
                emission,
                what: format!("the share of party {parties} with --shares FILE…"),
            }),
            Some(f @ Finding::BeaconMissing { .. }) => Err(Error::SharesNeeded {
                emission,
                what: format!("{f} with --beacon-value FILE"),
            }),
            Some(f) => match f.party() {
                Some(party) => Err(Error::ShareMismatch {
                    emission,
                    party: party.to_string(),
                    reason: share_reason(&f),
                }),
                None => Err(Error::BeaconMismatch {
                    emission,
                    reason: f.to_string(),
                }),
            },
        }
    }
}

/// What is wrong with a party's share, after "the share of party P".
fn share_reason(f: &Finding) -> String {
    match f {
        Finding::Twice { .. } => "is given twice".into(),
        Finding::Uncommitted { committed, .. } => {
            format!("has no commitment in the manifest (the parties committed are {committed})")
        }
        Finding::WrongShare { .. } => "does not match its commitment in the manifest".into(),
        Finding::SameShare { other, .. } => {
            format!("is party {other}'s share too: each party makes its own (`issuer share new`)")
        }
        other => other.to_string(),
    }
}

/// Reads a beacon value file (docs/FORMAT.md §Share files): hex digits
/// (whitespace around them ignored), else the file's raw bytes; 1 to
/// `BEACON_VALUE_MAX` bytes.
pub fn read_beacon_value(path: &Path) -> Result<Vec<u8>, Error> {
    let bytes = fsutil::read_small(path, BEACON_FILE_LIMIT)?;
    let trimmed = bytes.trim_ascii();
    let value = match hex::decode(trimmed) {
        Ok(v) if !v.is_empty() => v,
        _ => bytes,
    };
    if value.is_empty() || value.len() > BEACON_VALUE_MAX {
        return Err(Error::BadFile {
            path: path.to_path_buf(),
            reason: format!(
                "a beacon value holds 1 to {BEACON_VALUE_MAX} bytes, this one {}",
                value.len()
            ),
        });
    }
    Ok(value)
}

/// True for 64 hex digits (either case).
fn is_hex_digest(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The file in which a store keeps an emission's contributions.
#[derive(Serialize, Deserialize)]
struct KeptShares {
    kind: String,
    game: String,
    emission: u32,
    #[serde(flatten)]
    contributions: Contributions,
}

/// The shares a store keeps of its emissions made from shares, from their
/// first generation to their reveal (mode 0600 under `keys/shares/`,
/// docs/FORMAT.md §Store layout): the block seeds derive from them, for
/// the store's own checks and redemption as for the reveal.
impl Store {
    /// Where the store keeps emission `emission`'s shares.
    pub fn kept_shares_path(&self, game: Game, emission: u32) -> PathBuf {
        self.shares_dir()
            .join(game.slug())
            .join(format!("e{emission:06}.json"))
    }

    /// The contributions the store keeps for emission `emission`, if it was
    /// made from shares here.
    pub fn kept_shares(&self, game: Game, emission: u32) -> Result<Option<Contributions>, Error> {
        let path = self.kept_shares_path(game, emission);
        let Some(bytes) = fsutil::read_small_if_exists(&path, fsutil::KEY_FILE_LIMIT)? else {
            return Ok(None);
        };
        let kept: KeptShares = serde_json::from_slice(&bytes).map_err(|e| Error::BadFile {
            path: path.clone(),
            reason: format!("not the shares of an emission ({e})"),
        })?;
        if (kept.kind.as_str(), kept.game.as_str(), kept.emission)
            != (KEPT_KIND, game.slug(), emission)
        {
            return Err(Error::BadFile {
                path,
                reason: format!(
                    "expected the kept shares of {} emission {emission}",
                    game.slug()
                ),
            });
        }
        Ok(Some(kept.contributions))
    }

    /// Keeps `contributions` as emission `emission`'s (0600), or finds
    /// them kept already; other contributions kept for it are refused.
    pub(crate) fn keep_shares(
        &self,
        game: Game,
        emission: u32,
        contributions: &Contributions,
    ) -> Result<(), Error> {
        let path = self.kept_shares_path(game, emission);
        match self.kept_shares(game, emission)? {
            Some(kept) if kept == *contributions => return Ok(()),
            Some(_) => {
                return Err(Error::BadFile {
                    path,
                    reason: "it keeps other shares for this emission than the ones given, which match the manifest's commitments: it was altered; restore it from a backup".into(),
                })
            }
            None => {}
        }
        for dir in [self.shares_dir(), self.shares_dir().join(game.slug())] {
            fsutil::create_private_dir(&dir, 0o700)?;
        }
        let kept = KeptShares {
            kind: KEPT_KIND.into(),
            game: game.slug().into(),
            emission,
            contributions: contributions.clone(),
        };
        let mut bytes = serde_json::to_vec_pretty(&kept).expect("kept shares serialise");
        bytes.push(b'\n');
        fsutil::write_atomic(&path, &bytes, 0o600, false)
    }

    /// The format version of emission `emission`'s manifest (2: made from
    /// shares), `None` when it has no readable one. Read without its
    /// signature: a hint with which the store says it does not know a seed
    /// rather than derive a wrong one; an altered version only makes a
    /// check "not done" or fail, never pass.
    pub(crate) fn manifest_version(&self, game: Game, emission: u32) -> Option<u32> {
        #[derive(Deserialize)]
        struct Version {
            version: u32,
        }
        let path = self.emission_dir(game, emission).join("manifest.json");
        let bytes = fsutil::read_small(&path, fsutil::MANIFEST_LIMIT).ok()?;
        serde_json::from_slice::<Version>(&bytes)
            .ok()
            .map(|v| v.version)
    }

    /// The emission other than `game`'s `emission` whose kept shares hold
    /// `share`, if one: a share made public by one reveal must never seed
    /// another emission.
    pub(crate) fn emission_with_share(
        &self,
        share: &[u8; 32],
        game: Game,
        emission: u32,
    ) -> Result<Option<(Game, u32)>, Error> {
        for other_game in Game::all() {
            let dir = self.shares_dir().join(other_game.slug());
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries {
                let name = entry.map_err(|e| Error::io(&dir, e))?.file_name();
                let Some(number) = name
                    .to_str()
                    .and_then(|n| n.strip_prefix('e')?.strip_suffix(".json")?.parse().ok())
                else {
                    continue;
                };
                if (other_game, number) == (game, emission) {
                    continue;
                }
                let kept = self.kept_shares(other_game, number)?;
                if kept.is_some_and(|k| k.shares.iter().any(|s| s.share == *share)) {
                    return Ok(Some((other_game, number)));
                }
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commitments_file(text: &str) -> Result<SeedShares, Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("commitments.txt");
        std::fs::write(&path, text).unwrap();
        SeedShares::read(&path, None)
    }

    fn refusal(text: &str) -> String {
        commitments_file(text).unwrap_err().to_string()
    }

    const C: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    #[test]
    fn a_commitments_file_is_read_sorted_and_each_bad_line_named() {
        let read = commitments_file(&format!(
            "# parties\nregulator {C}\n\n  operator   {}  \n",
            C.to_uppercase()
        ))
        .unwrap();
        assert_eq!(read.parties(), "operator, regulator");
        assert_eq!(read.commitments[0].commitment, C, "lowercased");
        assert!(refusal(&format!("operator {C}\n")).contains("at least 2"));
        assert!(refusal(&format!("a {C}\na {C}\n")).contains("line 2: party a is listed twice"));
        assert!(refusal(&format!("a {C}\nb:c {C}\n")).contains("line 2: \"b:c\" is not a name"));
        assert!(refusal(&format!("a {C}\nb {}\n", &C[1..])).contains("line 2: the commitment of b"));
        assert!(refusal(&format!("a {C} extra\n")).contains("line 1: expected `PARTY COMMITMENT`"));
    }

    #[test]
    fn a_beacon_is_named_name_colon_round() {
        let b: Beacon = "drand-quicknet:12345678".parse().unwrap();
        assert_eq!((b.name.as_str(), b.round), ("drand-quicknet", 12345678));
        for bad in ["drand", "drand:", ":5", "dr and:5", "drand:-1", "drand:1.5"] {
            assert!(bad.parse::<Beacon>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_beacon_value_is_hex_or_raw_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("value");
        std::fs::write(&path, " 00ff10\n").unwrap();
        assert_eq!(read_beacon_value(&path).unwrap(), [0, 0xff, 0x10]);
        std::fs::write(&path, "not hex\n").unwrap();
        assert_eq!(read_beacon_value(&path).unwrap(), b"not hex\n");
        std::fs::write(&path, "").unwrap();
        assert!(read_beacon_value(&path).is_err());
        std::fs::write(&path, vec![7u8; BEACON_VALUE_MAX + 1]).unwrap();
        assert!(read_beacon_value(&path).is_err());
    }
}
