//! An emission's closing statement (docs/REDEMPTION.md §Closing
//! statement): written by `end-claims` once the claims ended, per block
//! the units sold, voided, withdrawn and unsold, the prizes paid and the
//! prizes unclaimed, signed with the issuer's key and published in the
//! ledger as a log entry (an operator's action `closing` whose text is the
//! statement). Its figures are the audit's reconciliation of the ledger
//! with the blocks ([`super::reconcile`]), so an auditor's `issuer audit`
//! of the emission gives the same numbers.

use std::fmt::Write as _;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::Serialize;

use super::approval::{recorded_by, store_id, DualControl, Guarded, Subject};
use crate::block::authentic::AuthenticBlock;
use crate::emission::Emission;
use crate::error::Error;
use crate::evidence::block::audit_block;
use crate::game::Game;
use crate::ledger::claims::utc_now;
use crate::ledger::operator::{Action, OperatorAction};
use crate::ledger::target::LedgerTarget;
use crate::money::Cents;
use crate::records_key::KeyAccess;
use crate::seal;
use crate::store::Store;

/// The statement's first line.
pub const HEADER: &str = "ticket-issuer closing statement/v1";

/// Who publishes it, in the log's `by`.
pub const BY: &str = "issuer";

/// One block's line.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct ClosingBlock {
    /// Block number.
    pub block: u32,
    /// Unit price, cents.
    pub price_cents: u32,
    /// Units in the block.
    pub units: u64,
    /// Units sold (voided sales included).
    pub sold: u64,
    /// Of those, sales voided (refunded, never paid).
    pub voided: u64,
    /// Units never sold because the block (or its emission) was withdrawn.
    pub withdrawn: u64,
    /// Units never sold otherwise.
    pub unsold: u64,
    /// Units redeemed.
    pub redeemed: u64,
    /// What they were paid, cents.
    pub paid_cents: u64,
    /// Units sold, not voided and not redeemed that won (played to their
    /// recorded end or stop; a play not over when the claims ended: the
    /// most it could have paid).
    pub unclaimed: u64,
    /// What those would have paid, cents.
    pub unclaimed_cents: u64,
}

/// A closing statement.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ClosingStatement {
    /// Game slug.
    pub game: String,
    /// The emission.
    pub emission: u32,
    /// When its claims ended (the end of claims' own time).
    pub claims_ended_at: String,
    /// When the statement was made.
    pub made_at: String,
    /// Every check of the ledger's reconciliation with the blocks held
    /// (the emission's rows; the log's own verification is `ledger
    /// verify`'s).
    pub reconciled: bool,
    /// Per block.
    pub blocks: Vec<ClosingBlock>,
    /// The signed statement, as published.
    pub statement: String,
}

impl ClosingStatement {
    /// The signed text: `HEADER`, then `key value` lines, one line per
    /// block, then `signature <base64>` over everything before it.
    fn body(&self) -> String {
        let mut text = format!(
            "{HEADER}\ngame {}\nemission {}\nclaims_ended_at {}\nmade_at {}\nreconciled {}\n",
            self.game, self.emission, self.claims_ended_at, self.made_at, self.reconciled
        );
        for b in &self.blocks {
            let _ = writeln!(
                text,
                "block {} price_cents {} units {} sold {} voided {} withdrawn {} unsold {} redeemed {} paid_cents {} unclaimed {} unclaimed_cents {}",
                b.block,
                b.price_cents,
                b.units,
                b.sold,
                b.voided,
                b.withdrawn,
                b.unsold,
                b.redeemed,
                b.paid_cents,
                b.unclaimed,
                b.unclaimed_cents
            );
        }
        text
    }

    /// Signs the statement with the issuer's `key`.
    fn sign(mut self, key: &SigningKey) -> ClosingStatement {
        let text = self.body();
        let signature = seal::sign(key, text.as_bytes());
        self.statement = format!("{text}signature {}\n", BASE64.encode(signature));
        self
    }

    /// Whether `statement` is one signed by `issuer`.
    #[must_use]
    pub fn verifies(statement: &str, issuer: &VerifyingKey) -> bool {
        let Some((text, sig_line)) = statement.trim_end_matches('\n').rsplit_once('\n') else {
            return false;
        };
        let signature: Option<[u8; 64]> = sig_line
            .strip_prefix("signature ")
            .and_then(|s| BASE64.decode(s).ok())
            .and_then(|s| s.try_into().ok());
        text.starts_with(HEADER)
            && signature.is_some_and(|s| seal::verify(issuer, format!("{text}\n").as_bytes(), &s))
    }

    /// Totals over the blocks, in words (for the command's summary).
    #[must_use]
    pub fn totals(&self) -> String {
        let sum = |f: fn(&ClosingBlock) -> u64| self.blocks.iter().map(f).sum::<u64>();
        format!(
            "{} sold ({} voided), {} withdrawn, {} unsold; {} redeemed, {} € paid; {} unclaimed, {} €",
            sum(|b| b.sold),
            sum(|b| b.voided),
            sum(|b| b.withdrawn),
            sum(|b| b.unsold),
            sum(|b| b.redeemed),
            Cents::from(sum(|b| b.paid_cents)),
            sum(|b| b.unclaimed),
            Cents::from(sum(|b| b.unclaimed_cents)),
        )
    }
}

/// What [`close`] needs of the issuer.
pub struct Issuer<'a> {
    /// The store (its emissions and blocks).
    pub store: &'a Store,
    /// The issuer's public key, which sealed the blocks.
    pub trusted: &'a VerifyingKey,
    /// The records keys.
    pub keys: KeyAccess<'a>,
    /// The issuer's signing key.
    pub signing: &'a SigningKey,
}

/// The closing statement of `game`'s `emission` in `target`: the one
/// published, or, once the claims ended, a new one made, signed and
/// published (the first published stands). Refused before the end of
/// claims (`claims_not_ended`).
pub fn close(
    issuer: &Issuer<'_>,
    target: &LedgerTarget,
    game: Game,
    emission: u32,
) -> Result<ClosingStatement, Error> {
    let gate = target.gate(game, emission)?.unwrap_or_default();
    let Some(claims_ended_at) = gate.claims_ended.clone() else {
        return Err(Error::ClaimsNotEnded {
            game: game.slug(),
            emission,
            ledger: target.describe(),
        });
    };
    if let Some(published) = &gate.closing {
        return Ok(read_back(
            game,
            emission,
            &claims_ended_at,
            &published.reason,
        ));
    }
    let manifest = Emission::new(issuer.store, game, emission).require_manifest(issuer.trusted)?;
    let mut audits = Vec::with_capacity(manifest.blocks.len());
    for b in &manifest.blocks {
        let path = issuer.store.block_path(game, emission, b.block);
        let block = AuthenticBlock::open(&path, issuer.trusted, issuer.keys, "end-claims")?;
        audits.push(audit_block(&block, &b.file_sha256)?);
    }
    let signers: Vec<VerifyingKey> = Vec::new();
    let evidence = super::reconcile::reconcile(
        target,
        game,
        emission,
        &audits,
        &issuer.keys,
        &signers,
        None,
    )?;
    let reconciled = evidence
        .checks
        .iter()
        .filter(|c| c.id != "ledger/log-verifies")
        .all(|c| c.ok);
    let blocks = evidence
        .blocks
        .iter()
        .zip(&audits)
        .map(|(l, a)| {
            let never_sold = l.units.saturating_sub(l.sold);
            let withdrawn = gate.withdrawn(l.block).is_some();
            ClosingBlock {
                block: l.block,
                price_cents: a.evidence.price_cents,
                units: l.units,
                sold: l.sold,
                voided: l.voided,
                withdrawn: if withdrawn { never_sold } else { 0 },
                unsold: if withdrawn { 0 } else { never_sold },
                redeemed: l.redeemed,
                paid_cents: l.paid_cents,
                unclaimed: l.unclaimed,
                unclaimed_cents: l.liability_cents,
            }
        })
        .collect();
    let statement = ClosingStatement {
        game: game.slug().into(),
        emission,
        claims_ended_at,
        made_at: utc_now(),
        reconciled,
        blocks,
        statement: String::new(),
    }
    .sign(issuer.signing);
    let action = OperatorAction {
        action: Action::Closing,
        game: game.slug().into(),
        emission,
        block: None,
        index: None,
        unit_id: None,
        reason: statement.statement.clone(),
        by: BY.into(),
        at: String::new(),
    };
    target.publish_action(issuer.store, action)?;
    // The first published stands (another process may have closed it
    // meanwhile): read back what the ledger holds.
    let gate = target.gate(game, emission)?.unwrap_or_default();
    match gate.closing {
        Some(published) if published.reason == statement.statement => Ok(statement),
        Some(published) => Ok(read_back(
            game,
            emission,
            &statement.claims_ended_at,
            &published.reason,
        )),
        None => Err(Error::Internal {
            what: "the closing statement just published is not in the ledger".into(),
        }),
    }
}

/// A published statement read back from its text.
fn read_back(game: Game, emission: u32, claims_ended_at: &str, text: &str) -> ClosingStatement {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{key} ")))
            .unwrap_or_default()
            .to_string()
    };
    let blocks = text
        .lines()
        .filter_map(|l| l.strip_prefix("block "))
        .filter_map(|l| {
            let v: Vec<u64> = l
                .split(' ')
                .enumerate()
                .filter(|(i, _)| i % 2 == 0)
                .filter_map(|(_, n)| n.parse().ok())
                .collect();
            let n = |i: usize| v.get(i).copied().unwrap_or_default();
            Some(ClosingBlock {
                block: u32::try_from(n(0)).ok()?,
                price_cents: u32::try_from(n(1)).ok()?,
                units: n(2),
                sold: n(3),
                voided: n(4),
                withdrawn: n(5),
                unsold: n(6),
                redeemed: n(7),
                paid_cents: n(8),
                unclaimed: n(9),
                unclaimed_cents: n(10),
            })
        })
        .collect();
    ClosingStatement {
        game: game.slug().into(),
        emission,
        claims_ended_at: claims_ended_at.into(),
        made_at: field("made_at"),
        reconciled: field("reconciled") == "true",
        blocks,
        statement: text.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_signs_its_figures_and_reads_back_the_same() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let s = ClosingStatement {
            game: "tresors-ensables".into(),
            emission: 2,
            claims_ended_at: "2026-12-02T09:00:00Z".into(),
            made_at: "2026-12-02T09:00:01Z".into(),
            reconciled: true,
            blocks: vec![ClosingBlock {
                block: 1,
                price_cents: 100,
                units: 20,
                sold: 9,
                voided: 1,
                withdrawn: 11,
                unsold: 0,
                redeemed: 3,
                paid_cents: 450,
                unclaimed: 2,
                unclaimed_cents: 120,
            }],
            statement: String::new(),
        }
        .sign(&key);
        assert!(ClosingStatement::verifies(
            &s.statement,
            &key.verifying_key()
        ));
        let forged = s.statement.replace("paid_cents 450", "paid_cents 45");
        assert!(!ClosingStatement::verifies(&forged, &key.verifying_key()));
        let back = read_back(Game::TRESORS_ENSABLES, 2, &s.claims_ended_at, &s.statement);
        assert_eq!(back.blocks, s.blocks);
        assert_eq!(
            (back.made_at.as_str(), back.reconciled),
            ("2026-12-02T09:00:01Z", true)
        );
    }
}

/// Claims ended before the deadline set at close, or of an emission closed
/// without one: why, and the approvals the store's dual control asks for
/// (docs/REDEMPTION.md §Dual control).
pub struct EarlyEnd<'a> {
    /// Why, published in the log.
    pub reason: &'a str,
    /// Each `(which, signed approval)`.
    pub approvals: &'a [(String, String)],
}

/// What ending an emission's claims published.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ClaimsEnded {
    /// The end of claims, signed by the issuer.
    #[serde(flatten)]
    pub end: crate::ledger::claims::EndOfClaims,
    /// The emission's closing statement.
    pub closing: ClosingStatement,
}

/// Ends the claims of `game`'s closed `emission` in `ledger` (`issuer
/// end-claims`, `POST /v1/operator/end-claims`) as `by` (the operator
/// token's name, or [`BY`] from the command line): before the deadline set
/// at close, or at any time when none was set, only with `early` (its
/// reason in the log first, as the store's dual control approves it,
/// recorded as `by`'s); then the end of claims signed with the issuer's
/// key, after which every node refuses the emission's units, and the
/// closing statement. Rerun, it answers what was published first.
pub fn end_claims(
    store: &Store,
    secrets: &crate::store::Secrets,
    ledger: &LedgerTarget,
    game: Game,
    emission: u32,
    by: &str,
    early: Option<&EarlyEnd<'_>>,
) -> Result<ClaimsEnded, Error> {
    let trusted = secrets.signing.verifying_key();
    // Claims end only once the units could be claimed: a closed emission,
    // its commitments published.
    let manifest = Emission::new(store, game, emission).require_manifest(&trusted)?;
    if !manifest.closed {
        return Err(Error::EmissionNotClosed { emission });
    }
    // Published in the ledger the emission is sold through, or none yet.
    super::binding::Bindings::new(store, ledger).check(game, emission)?;
    if ledger.end_of_claims(game, emission)?.is_none() {
        let ending = Ending {
            store,
            issuer: &trusted,
            ledger,
            game,
            emission,
            by,
        };
        match manifest.claims_until.as_deref() {
            // Without a deadline there is no "after the deadline": every
            // end is early, so that dual control and the record cover it.
            None => ending.early(None, early)?,
            Some(until) if utc_now().as_str() < until => ending.early(Some(until), early)?,
            Some(_) => {}
        }
    }
    let statement = crate::ledger::claims::EndOfClaims::sign(&secrets.signing, game, emission);
    let end = ledger.publish_end_of_claims(store, game, &statement)?;
    // The claims ended: nothing of the emission changes any more, so its
    // closing statement is final.
    let issuer = Issuer {
        store,
        trusted: &trusted,
        keys: KeyAccess {
            secrets: Some(secrets),
            files: &[],
        },
        signing: &secrets.signing,
    };
    let closing = close(&issuer, ledger, game, emission)?;
    Ok(ClaimsEnded { end, closing })
}

/// An end of claims under way: where, of what, by whom.
struct Ending<'a> {
    store: &'a Store,
    /// The issuer's public key: the store's identity in approvals.
    issuer: &'a VerifyingKey,
    ledger: &'a LedgerTarget,
    game: Game,
    emission: u32,
    by: &'a str,
}

impl Ending<'_> {
    /// Publishes the early end of claims (open `until`, or no deadline
    /// set: `None`), refused without `early` (`claims_still_open`) or
    /// without the approvals dual control asks for; recorded as `by`'s and
    /// the approvers'.
    fn early(&self, until: Option<&str>, early: Option<&EarlyEnd<'_>>) -> Result<(), Error> {
        let emission = self.emission;
        let Some(early) = early else {
            return Err(match until {
                Some(until) => Error::ClaimsStillOpen {
                    emission,
                    until: until.to_string(),
                },
                None => Error::ClaimsWithoutDeadline { emission },
            });
        };
        crate::ledger::operator::check_reason(early.reason)
            .map_err(|what| Error::BadOperatorRequest { what })?;
        let approvers = DualControl::load(self.store)?.approve(
            &Subject {
                store: store_id(self.issuer),
                action: Guarded::EndClaimsForce,
                game: self.game.slug().into(),
                emission,
                block: None,
                reason: Some(early.reason.into()),
            },
            early.approvals,
        )?;
        let reason = match until {
            Some(until) => format!("claims were open until {until}: {}", early.reason),
            None => format!("the emission had no claim deadline: {}", early.reason),
        };
        self.ledger.publish_action(
            self.store,
            OperatorAction {
                action: Action::EarlyEnd,
                game: self.game.slug().into(),
                emission,
                block: None,
                index: None,
                unit_id: None,
                reason,
                by: recorded_by(self.by, &approvers),
                at: String::new(),
            },
        )
    }
}
