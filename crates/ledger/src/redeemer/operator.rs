//! The operator's actions through the redeemer (docs/REDEMPTION.md
//! §Suspend, withdraw and void): checked against the store (the emission
//! and block exist; a voided unit's ID authenticates), then applied by
//! the ledger's writer like a sale, so the service and the command line
//! act alike.

use serde::Serialize;

use super::state::Redeemer;
use crate::approval::{recorded_by, store_id, DualControl, Guarded, Subject};
use crate::closing::{ClaimsEnded, EarlyEnd};
use crate::error::Error;
use crate::game::Game;
use crate::ledger::operator::{check_reason, Action, OperatorAction};
use crate::ledger::ops::{Done, Op};
use crate::unit_id::UnitId;

/// What an action did (`kind: "operator_action"`; docs/API.md §Operator).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Acted {
    /// `suspend`, `resume`, `withdraw` or `void`.
    pub action: Action,
    /// Game slug.
    pub game: String,
    /// The emission.
    pub emission: u32,
    /// The block; absent: the whole emission.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<u32>,
    /// The unit voided (a void only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The reason given.
    pub reason: String,
    /// Who acted: the operator token's name, `cli` from the command line.
    pub by: String,
    /// When it was recorded; when `already`, when the action in force was.
    pub at: String,
    /// It was in force already: nothing new was recorded.
    pub already: bool,
    /// The action's entry is in the log (`false` on PostgreSQL until the
    /// sequencer places it, or when `already`).
    pub sequenced: bool,
    /// Its place in the log, once sequenced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_entry: Option<u64>,
}

impl Redeemer {
    /// Suspends, resumes or withdraws `game`'s `emission` (or one of its
    /// blocks), as `by` for `reason`; a withdrawal with the `approvals`
    /// the store's dual control asks for (docs/REDEMPTION.md §Dual
    /// control; each `(which, signed note)`), recorded as theirs.
    #[allow(clippy::too_many_arguments)]
    pub fn control(
        &self,
        action: Action,
        game: Game,
        emission: u32,
        block: Option<u32>,
        reason: &str,
        by: &str,
        approvals: &[(String, String)],
    ) -> Result<Acted, Error> {
        match action {
            Action::Void => {
                return Err(Error::BadOperatorRequest {
                    what: "a void names a unit: use void with its ID".into(),
                })
            }
            Action::Closing | Action::EarlyEnd => {
                return Err(Error::BadOperatorRequest {
                    what: "a closing statement or an early end of claims is the issuer's, written by end-claims".into(),
                })
            }
            _ => {}
        }
        let manifest = self.require_closed(game, emission)?;
        if let Some(b) = block {
            if !manifest.blocks.iter().any(|m| m.block == b) {
                return Err(Error::NoSuchBlock {
                    game: game.slug().into(),
                    emission,
                    block: b,
                    blocks: manifest.blocks.iter().map(|m| m.block).collect(),
                });
            }
        }
        let approvers = match action {
            Action::Withdraw => DualControl::load(&self.units.store)?.approve(
                &Subject {
                    store: store_id(self.public_key()),
                    action: Guarded::Withdraw,
                    game: game.slug().into(),
                    emission,
                    block,
                    reason: Some(reason.into()),
                },
                approvals,
            )?,
            _ if approvals.is_empty() => Vec::new(),
            _ => {
                return Err(Error::BadOperatorRequest {
                    what: format!("approvals are for a withdrawal, not a {}", action.word()),
                })
            }
        };
        self.act(OperatorAction {
            action,
            game: game.slug().into(),
            emission,
            block,
            index: None,
            unit_id: None,
            reason: reason.into(),
            by: recorded_by(by, &approvers),
            at: String::new(),
        })
    }

    /// Ends the claims of `game`'s `emission` as `by` with the issuer's
    /// key this redeemer holds ([`crate::closing::end_claims`]); refused
    /// `no_secrets` on a node without it.
    pub fn end_claims(
        &self,
        game: Game,
        emission: u32,
        by: &str,
        early: Option<&EarlyEnd<'_>>,
    ) -> Result<ClaimsEnded, Error> {
        let store = &self.units.store;
        let secrets = self
            .units
            .keys
            .secrets
            .as_ref()
            .ok_or_else(|| Error::NoSecrets {
                store: store.root().to_path_buf(),
            })?;
        crate::closing::end_claims(store, secrets, &self.ledger, game, emission, by, early)
    }

    /// Voids the sale of `id` before its play began, as `by` for `reason`.
    pub fn void(&self, id: &UnitId, reason: &str, by: &str) -> Result<Acted, Error> {
        // The ID authenticates first: a void says nothing of a unit whose
        // check code is wrong.
        self.units.locate(id)?;
        self.act(OperatorAction {
            action: Action::Void,
            game: id.game.slug().into(),
            emission: id.emission,
            block: Some(id.block),
            index: Some(id.index),
            unit_id: Some(id.to_string()),
            reason: reason.into(),
            by: by.into(),
            at: String::new(),
        })
    }

    fn act(&self, a: OperatorAction) -> Result<Acted, Error> {
        check_reason(&a.reason).map_err(|what| Error::BadOperatorRequest { what })?;
        let outcome = self.submit(vec![Op::Operator(a.clone())]).pop();
        match outcome {
            Some(Ok(Done::Acted { seq, at, already })) => Ok(Acted {
                action: a.action,
                game: a.game,
                emission: a.emission,
                block: a.block,
                id: a.unit_id,
                reason: a.reason,
                by: a.by,
                at,
                already,
                sequenced: seq.is_some(),
                ledger_entry: seq,
            }),
            Some(Err(e)) => Err(e),
            _ => Err(Error::Internal {
                what: "the ledger answered an operator's action with another operation".into(),
            }),
        }
    }
}
