//! Dual control (docs/REDEMPTION.md §Dual control): the operator names,
//! in the store's `dual-control` file, the actions that need two
//! approvers and the approvers' Ed25519 keys; each approver signs an
//! **approval**, a C2SP signed note naming one action exactly (the store
//! it is for, its game, emission, block and the SHA-256 of its reason)
//! until an expiry; the action goes ahead only with valid approvals of two
//! distinct approvers, on the command line and over HTTP alike, and the
//! ledger records who ran it and who approved it.
//!
//! An approval is
//!
//! ```text
//! ticket-issuer approval/v2
//! store 5f0c3a9d1e7b2468
//! action withdraw
//! game ile-au-tresor
//! emission 3
//! block 2
//! reason-sha256 <hex of SHA-256 of the reason's UTF-8>
//! expires 2026-12-03T10:00:00Z
//!
//! — alice <base64(key ID ‖ Ed25519 signature of the text above the blank line)>
//! ```
//!
//! (`store`: the store's identity, [`store_id`], so that an approval given
//! to one store is not replayed on another that names the same approvers;
//! `block -`: the whole emission; `reason-sha256 -`: an action without a
//! reason, the reveal), the key ID being the signed-note one
//! ([`crate::ledger::log::key_id`]). An approval of v1, which named no
//! store, is refused.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use ed25519_dalek::{Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::ledger::claims::{utc_at, utc_now};
use crate::ledger::log::key_id;
use crate::store::Store;

/// The first line of an approval.
const HEADER: &str = "ticket-issuer approval/v2";

/// The first line of an approval of the first format, which named no store
/// (recognised only to say why it is refused).
const HEADER_V1: &str = "ticket-issuer approval/v1";

/// The configuration file's name in the store.
pub const FILE: &str = "dual-control";

/// Approvals needed for a covered action.
pub const NEEDED: usize = 2;

/// The actions dual control may cover.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Guarded {
    /// `withdraw` (permanent).
    Withdraw,
    /// `end-claims --force` (claims ended before the deadline).
    EndClaimsForce,
    /// `reveal` (the seeds published).
    Reveal,
}

impl Guarded {
    /// Every one.
    pub const ALL: [Guarded; 3] = [Guarded::Withdraw, Guarded::EndClaimsForce, Guarded::Reveal];

    /// Its name in the file, in approvals and on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Guarded::Withdraw => "withdraw",
            Guarded::EndClaimsForce => "end-claims-force",
            Guarded::Reveal => "reveal",
        }
    }

    /// The action named `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Guarded> {
        Guarded::ALL.into_iter().find(|g| g.name() == name)
    }
}

impl fmt::Display for Guarded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A store's identity in its approvals: the first 8 bytes of SHA-256 of
/// the issuer's Ed25519 public key (`keys/issuer.pub.pem`), 16 hex digits.
/// `issuer dual-control` prints it for the operator to give the approvers.
#[must_use]
pub fn store_id(issuer: &VerifyingKey) -> String {
    hex::encode(&Sha256::digest(issuer.as_bytes())[..8])
}

/// An identity [`store_id`] may have: 16 lowercase hex digits.
pub fn check_store_id(id: &str) -> Result<(), String> {
    if id.len() == 16 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(())
    } else {
        Err(format!(
            "the store ID {id:?} is not 16 lowercase hex digits (`issuer dual-control` prints the store's)"
        ))
    }
}

/// What an approval approves: one action on one store, exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subject {
    /// The store's identity ([`store_id`]).
    pub store: String,
    /// The action.
    pub action: Guarded,
    /// Game slug.
    pub game: String,
    /// The emission.
    pub emission: u32,
    /// The block; `None`: the whole emission.
    pub block: Option<u32>,
    /// The reason given for the action (`None`: the reveal has none).
    pub reason: Option<String>,
}

impl Subject {
    /// The approval's lines between its `store` line and its expiry.
    fn lines(&self) -> String {
        let block = self.block.map_or("-".to_string(), |b| b.to_string());
        let reason = self.reason.as_deref().map_or("-".to_string(), |r| {
            hex::encode(Sha256::digest(r.as_bytes()))
        });
        format!(
            "action {}\ngame {}\nemission {}\nblock {block}\nreason-sha256 {reason}\n",
            self.action, self.game, self.emission
        )
    }
}

/// An approver: a name and a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approver {
    /// The name its approvals are signed under.
    pub name: String,
    /// Its Ed25519 public key.
    pub key: VerifyingKey,
}

/// The store's dual control: the actions it covers and who approves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DualControl {
    /// Actions needing two approvals.
    pub require: Vec<Guarded>,
    /// Who may approve.
    pub approvers: Vec<Approver>,
}

/// A name an approver may have: letters, digits, `-`, `_`, `.`, 1 to 24
/// (two fit in the ledger's `by`, [`recorded_by`]).
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 24
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the approver name {name:?} is not 1 to 24 letters, digits, '-', '_' or '.'"
        ))
    }
}

impl DualControl {
    /// Where the store keeps it.
    #[must_use]
    pub fn path(store: &Store) -> PathBuf {
        store.root().join(FILE)
    }

    /// The store's (none configured: nothing required).
    pub fn load(store: &Store) -> Result<DualControl, Error> {
        let path = DualControl::path(store);
        match std::fs::read_to_string(&path) {
            Ok(text) => DualControl::parse(&text).map_err(|reason| Error::BadFile { path, reason }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DualControl::default()),
            Err(e) => Err(Error::io(&path, e)),
        }
    }

    /// Reads the file's text: `require <action>` and `approver <name>
    /// <hex public key>` lines; `#` starts a comment.
    pub fn parse(text: &str) -> Result<DualControl, String> {
        let mut config = DualControl::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            let at = |what: String| format!("line {}: {what}", n + 1);
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["require", action] => {
                    let g = Guarded::from_name(action).ok_or_else(|| {
                        at(format!(
                            "{action:?} is not an action dual control covers (withdraw, end-claims-force, reveal)"
                        ))
                    })?;
                    if !config.require.contains(&g) {
                        config.require.push(g);
                    }
                }
                ["approver", name, key] => {
                    check_name(name).map_err(at)?;
                    let key = parse_key(key).map_err(at)?;
                    if config
                        .approvers
                        .iter()
                        .any(|a| a.name == *name || a.key == key)
                    {
                        return Err(at(format!(
                            "the approver {name} (or its key) is named twice"
                        )));
                    }
                    config.approvers.push(Approver {
                        name: (*name).to_string(),
                        key,
                    });
                }
                _ => {
                    return Err(at(format!(
                        "{line:?} is neither `require ACTION` nor `approver NAME HEX_KEY`"
                    )))
                }
            }
        }
        if !config.require.is_empty() && config.approvers.len() < NEEDED {
            return Err(format!(
                "{} action(s) need two approvals but {} approver(s) are named",
                config.require.len(),
                config.approvers.len()
            ));
        }
        Ok(config)
    }

    /// The file's text.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out =
            String::from("# ticket-issuer dual control (docs/REDEMPTION.md §Dual control)\n");
        for g in &self.require {
            out += &format!("require {g}\n");
        }
        for a in &self.approvers {
            out += &format!("approver {} {}\n", a.name, hex::encode(a.key.as_bytes()));
        }
        out
    }

    /// The approvers of `subject` among `approvals` (each `(which,
    /// note)`: `which` names it in errors), once checked: none needed
    /// when dual control does not cover the action; otherwise two
    /// distinct approvers' valid approvals of exactly `subject`, or an
    /// error. An approval given for an action not covered is checked all
    /// the same (a wrong one is an error, never ignored).
    pub fn approve(
        &self,
        subject: &Subject,
        approvals: &[(String, String)],
    ) -> Result<Vec<String>, Error> {
        let mut names: Vec<String> = Vec::new();
        for (which, note) in approvals {
            let name = self
                .check_one(subject, note)
                .map_err(|reason| Error::BadApproval {
                    which: which.clone(),
                    reason,
                })?;
            if !names.contains(&name) {
                names.push(name);
            }
        }
        if self.require.contains(&subject.action) && names.len() < NEEDED {
            return Err(Error::ApprovalsNeeded {
                action: subject.action.to_string(),
                have: names.len(),
                approvers: self
                    .approvers
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        Ok(names)
    }

    /// Checks one approval of `subject`; returns its approver's name.
    fn check_one(&self, subject: &Subject, note: &str) -> Result<String, String> {
        let note = format!("{}\n", note.trim_end_matches(['\n', '\r']));
        let split = note
            .find("\n\n")
            .ok_or("not a signed note: no blank line between its text and its signature")?;
        let (body, signatures) = (&note[..=split], &note[split + 2..]);
        let elsewhere = |signed_for: &str| {
            format!(
                "it was signed for {signed_for}; this store is {id}: ask for an approval for this store (`issuer approve … --store-id {id}`)",
                id = subject.store
            )
        };
        let rest = match body.split_once('\n') {
            Some((HEADER, rest)) => rest,
            Some((HEADER_V1, _)) => return Err(elsewhere("no store in particular (approval/v1)")),
            _ => return Err(format!("its first line is not {HEADER:?}")),
        };
        let (for_store, rest) = rest
            .split_once('\n')
            .and_then(|(line, rest)| Some((line.strip_prefix("store ")?, rest)))
            .ok_or("its second line is not `store <store ID>`")?;
        if for_store != subject.store {
            return Err(elsewhere(&format!("store {for_store}")));
        }
        let expires = rest
            .strip_prefix(&subject.lines())
            .ok_or_else(|| {
                format!(
                    "it approves another action than {} of {} emission {}{} with this reason",
                    subject.action,
                    subject.game,
                    subject.emission,
                    subject
                        .block
                        .map_or(String::new(), |b| format!(" block {b}"))
                )
            })?
            .strip_prefix("expires ")
            .and_then(|e| e.strip_suffix('\n'))
            .filter(|e| !e.contains('\n'))
            .ok_or("its last line is not `expires <time>`")?;
        if utc_now().as_str() >= expires {
            return Err(format!("it expired at {expires}; sign a new one"));
        }
        for line in signatures.lines() {
            let Some((name, b64)) = line
                .strip_prefix("\u{2014} ")
                .and_then(|l| l.split_once(' '))
            else {
                return Err(format!("{line:?} is not a signature line"));
            };
            let Some(approver) = self.approvers.iter().find(|a| a.name == name) else {
                continue;
            };
            let blob = BASE64
                .decode(b64)
                .map_err(|_| format!("{name}'s signature is not base64"))?;
            if blob.len() != 68 || blob[..4] != key_id(name, &approver.key) {
                return Err(format!(
                    "{name}'s signature is not by the key the store's dual control names for {name}"
                ));
            }
            let signature = ed25519_dalek::Signature::from_slice(&blob[4..])
                .map_err(|_| format!("{name}'s signature is malformed"))?;
            approver
                .key
                .verify(body.as_bytes(), &signature)
                .map_err(|_| format!("{name}'s signature does not verify"))?;
            return Ok(name.to_string());
        }
        Err(format!(
            "it is signed by none of the store's approvers ({})",
            self.approvers
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }
}

/// Who the ledger records as having acted: `by` alone, or, for an action
/// two approvers approved, `<by>;approved-by:<name>:<name>` (who ran it
/// and who approved it; no `by`, token name or approver's name has a
/// `;`).
#[must_use]
pub fn recorded_by(by: &str, approvers: &[String]) -> String {
    if approvers.is_empty() {
        by.to_string()
    } else {
        format!("{by};approved-by:{}", approvers.join(":"))
    }
}

/// A public key written as 64 hex digits.
fn parse_key(text: &str) -> Result<VerifyingKey, String> {
    let bytes: [u8; 32] = hex::decode(text)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or(format!(
            "{text:?} is not an Ed25519 public key in 64 hex digits"
        ))?;
    VerifyingKey::from_bytes(&bytes)
        .map_err(|_| format!("{text} is not a valid Ed25519 public key"))
}

/// `approver`'s approval of `subject`, signed with `key`, valid for
/// `hours`.
pub fn sign(
    subject: &Subject,
    approver: &str,
    key: &SigningKey,
    hours: u64,
) -> Result<String, Error> {
    check_name(approver).map_err(|what| Error::BadOperatorRequest { what })?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    check_store_id(&subject.store).map_err(|what| Error::BadOperatorRequest { what })?;
    let body = format!(
        "{HEADER}\nstore {}\n{}expires {}\n",
        subject.store,
        subject.lines(),
        utc_at(now + hours * 3600)
    );
    let signature = key.sign(body.as_bytes()).to_bytes();
    let mut blob = key_id(approver, &key.verifying_key()).to_vec();
    blob.extend_from_slice(&signature);
    Ok(format!(
        "{body}\n\u{2014} {approver} {}\n",
        BASE64.encode(blob)
    ))
}

/// Reads approval files (`-`: none allowed; each names itself in errors).
pub fn read_files(paths: &[PathBuf]) -> Result<Vec<(String, String)>, Error> {
    paths
        .iter()
        .map(|p| {
            std::fs::read_to_string(p)
                .map(|text| (p.display().to_string(), text))
                .map_err(|e| Error::io(Path::new(p), e))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> SigningKey {
        SigningKey::from_bytes(&[n; 32])
    }

    fn config() -> DualControl {
        DualControl {
            require: vec![Guarded::Withdraw, Guarded::Reveal],
            approvers: ["alice", "bob", "carol"]
                .iter()
                .zip(1..)
                .map(|(name, n)| Approver {
                    name: (*name).into(),
                    key: key(n).verifying_key(),
                })
                .collect(),
        }
    }

    /// The store the approvals are asked by.
    const STORE: &str = "0123456789abcdef";

    fn subject() -> Subject {
        Subject {
            store: STORE.into(),
            action: Guarded::Withdraw,
            game: "ile-au-tresor".into(),
            emission: 3,
            block: Some(2),
            reason: Some("fraud suspected".into()),
        }
    }

    fn approval(name: &str, n: u8, s: &Subject) -> (String, String) {
        (name.into(), sign(s, name, &key(n), 1).unwrap())
    }

    #[test]
    fn two_distinct_approvers_approve_exactly_their_subject() {
        let c = config();
        let s = subject();
        let both = [approval("alice", 1, &s), approval("bob", 2, &s)];
        assert_eq!(c.approve(&s, &both).unwrap(), ["alice", "bob"]);
        // One approver twice is one approval.
        let twice = [approval("alice", 1, &s), approval("alice", 1, &s)];
        assert!(matches!(
            c.approve(&s, &twice),
            Err(Error::ApprovalsNeeded { have: 1, .. })
        ));
        assert!(matches!(
            c.approve(&s, &[]),
            Err(Error::ApprovalsNeeded { have: 0, .. })
        ));
        // Not covered: nothing needed.
        let force = Subject {
            action: Guarded::EndClaimsForce,
            ..subject()
        };
        assert!(c.approve(&force, &[]).unwrap().is_empty());
    }

    #[test]
    fn an_approval_of_anything_else_is_refused() {
        let c = config();
        let s = subject();
        for other in [
            Subject {
                block: None,
                ..subject()
            },
            Subject {
                block: Some(3),
                ..subject()
            },
            Subject {
                emission: 4,
                ..subject()
            },
            Subject {
                reason: Some("fraud suspected.".into()),
                ..subject()
            },
            Subject {
                game: "tresors-ensables".into(),
                ..subject()
            },
        ] {
            let given = [approval("alice", 1, &other), approval("bob", 2, &s)];
            let e = c.approve(&s, &given).unwrap_err();
            assert!(
                matches!(&e, Error::BadApproval { which, .. } if which == "alice"),
                "{e}"
            );
        }
    }

    #[test]
    fn an_approval_for_another_store_or_for_no_store_is_refused() {
        let c = config();
        let s = subject();
        let bob = approval("bob", 2, &s);
        // Alice approved exactly this action, on another store with the
        // same approvers: not this store's.
        let elsewhere = Subject {
            store: "fedcba9876543210".into(),
            ..subject()
        };
        let replayed = approval("alice", 1, &elsewhere);
        let e = c.approve(&s, &[replayed, bob.clone()]).unwrap_err();
        let Error::BadApproval { which, reason } = &e else {
            panic!("{e}")
        };
        assert_eq!(which, "alice");
        assert!(
            reason.contains("signed for store fedcba9876543210")
                && reason.contains(&format!("this store is {STORE}")),
            "{reason}"
        );
        // A v1 approval (no store line), validly signed by alice.
        let body = format!(
            "ticket-issuer approval/v1\n{}expires 2999-01-01T00:00:00Z\n",
            s.lines()
        );
        let mut blob = key_id("alice", &key(1).verifying_key()).to_vec();
        blob.extend_from_slice(&key(1).sign(body.as_bytes()).to_bytes());
        let v1 = format!("{body}\n\u{2014} alice {}\n", BASE64.encode(blob));
        let e = c.approve(&s, &[("alice".into(), v1), bob]).unwrap_err();
        assert!(
            matches!(&e, Error::BadApproval { reason, .. } if reason.contains("approval/v1") && reason.contains(STORE)),
            "{e}"
        );
        // The store's identity is the issuer key's, 16 hex digits.
        let id = store_id(&key(5).verifying_key());
        assert!(check_store_id(&id).is_ok(), "{id}");
        assert_ne!(id, store_id(&key(6).verifying_key()));
        assert!(check_store_id("0123").is_err());
    }

    #[test]
    fn forged_tampered_or_stale_approvals_are_refused() {
        let c = config();
        let s = subject();
        let bob = approval("bob", 2, &s);
        // Signed by a key that is not alice's.
        let forged = approval("alice", 9, &s);
        // Alice's, one byte of its text changed.
        let tampered = (
            "alice".to_string(),
            approval("alice", 1, &s)
                .1
                .replace("emission 3", "emission 3 "),
        );
        // Signed by someone the store does not name.
        let stranger = approval("mallory", 1, &s);
        let expired = ("alice".to_string(), sign(&s, "alice", &key(1), 0).unwrap());
        for bad in [forged, tampered, stranger, expired] {
            let e = c.approve(&s, &[bad.clone(), bob.clone()]).unwrap_err();
            assert!(matches!(e, Error::BadApproval { .. }), "{}: {e}", bad.1);
        }
    }

    #[test]
    fn the_file_reads_back_and_refuses_what_it_cannot_mean() {
        let c = config();
        assert_eq!(DualControl::parse(&c.to_text()).unwrap(), c);
        assert!(DualControl::parse("require withdraw\napprover a 00\n").is_err());
        assert!(DualControl::parse("require nothing\n").is_err());
        let one = format!(
            "require reveal\napprover a {}\n",
            hex::encode(key(1).verifying_key().as_bytes())
        );
        assert!(DualControl::parse(&one).unwrap_err().contains("1 approver"));
    }
}
