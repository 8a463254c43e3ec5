//! [`ErrorReport`]: an error as data, and what of it a platform may see.

use std::path::PathBuf;

use serde::Serialize;

use super::kind::ErrorKind;
use super::variants::Error;

/// An error as data: what `--json` commands print on failure and what a
/// service answers (docs/CLI.md §Errors).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ErrorReport {
    /// The stable name of the failure (`already_redeemed`, `invalid_id`, …).
    pub error: &'static str,
    /// Its kind (`conflict`, `invalid_input`, …); a service's own
    /// refusals add `unauthorized`, `forbidden`, `method_not_allowed`,
    /// `timeout` and `too_large` (docs/API.md §Errors).
    #[schemars(with = "String")]
    pub category: ErrorKind,
    /// The message, in words.
    pub message: String,
    /// The unit ID concerned, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The emission concerned, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emission: Option<u32>,
    /// The file concerned, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// For `already_redeemed`: when the unit was redeemed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redeemed_at: Option<String>,
    /// For `already_sold`: when the unit was sold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sold_at: Option<String>,
    /// For `already_redeemed`: what it paid, in euros.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prize: Option<String>,
}

impl Error {
    /// Whether this refusal's words hold only what the asking platform
    /// gave or may know (its request, its own unit, the game's public
    /// rules): never a file, host, database user, ledger ID or another
    /// party's unit (docs/SECURITY.md §What each role may learn). Every
    /// other error reaches a platform by its code and kind only
    /// ([`Error::platform_report`]). A list of what may pass, not of what
    /// may not: a new variant stays generic until someone adds it here.
    #[must_use]
    pub fn speaks_to_platforms(&self) -> bool {
        matches!(
            self,
            Error::MalformedId { .. }
                | Error::UnknownGame { .. }
                | Error::UnsupportedPrice { .. }
                | Error::PriceNeeded { .. }
                | Error::CheckCodeMismatch { .. }
                | Error::AlreadyRedeemed { .. }
                | Error::UnknownUnit { .. }
                | Error::NotSold { .. }
                | Error::SoldOut { .. }
                | Error::PlayUnfinished { .. }
                | Error::PlayOver { .. }
                | Error::StepOutOfOrder { .. }
                | Error::NotPlayable { .. }
                | Error::IdempotencyKeyReused { .. }
                | Error::BadIdempotencyKey { .. }
                | Error::NoSaleUnderKey { .. }
                | Error::ClaimsEnded { .. }
                | Error::Suspended { .. }
                | Error::Withdrawn { .. }
                | Error::Voided { .. }
                | Error::BadStop { .. }
                | Error::EmissionRevealed { .. }
        )
    }

    /// The report a sales platform is answered: [`Error::client_report`]
    /// for a refusal that [speaks to platforms](Error::speaks_to_platforms),
    /// else the code and kind with a sentence that names nothing of the
    /// node (its operator reads the detail on the node's standard error).
    #[must_use]
    pub fn platform_report(&self) -> ErrorReport {
        let mut r = self.client_report();
        if self.speaks_to_platforms() {
            return r;
        }
        r.message = match (self.code(), self.kind()) {
            ("ledger_outcome_unknown", _) => "the ledger's answer to this operation was lost: it may or may not be recorded; retry it with the same idempotency key (docs/API.md §Retries)".into(),
            (_, ErrorKind::Unavailable) => "this node cannot serve the request now (its ledger or its files); nothing was recorded; retry, or another node".into(),
            (_, ErrorKind::Internal) => "this node failed on the request; its outcome is not known: look it up, or retry under the same idempotency key; the node's operator has the detail".into(),
            (code, _) => format!("this node refused the request ({code}); the node's operator has the detail"),
        };
        r.emission = None;
        r
    }

    /// The report for a client of the service, who must not learn the
    /// server's file system: no `path`, and the message names the file by
    /// its name only ("b000001.tkb", "ledger.sqlite").
    pub fn client_report(&self) -> ErrorReport {
        let mut r = self.report();
        if let Error::LedgerLoginRefused { .. } = self {
            // The database's host, user and message are the operator's.
            r.message = "this node's ledger database refused its login: the node's operator must mend its configuration (`issuer ledger --ledger URL` on the node names the cause); nothing was recorded".into();
        }
        if let Some(path) = r.path.take() {
            let shown = path.display().to_string();
            if !shown.is_empty() {
                let name = path
                    .file_name()
                    .map_or_else(|| "a file".into(), |n| n.to_string_lossy().into_owned());
                r.message = r.message.replace(&shown, &name);
            }
        }
        r
    }

    /// This error as data.
    pub fn report(&self) -> ErrorReport {
        let mut r = ErrorReport {
            error: self.code(),
            category: self.kind(),
            message: self.to_string(),
            id: None,
            emission: None,
            path: None,
            redeemed_at: None,
            sold_at: None,
            prize: None,
        };
        match self {
            Error::AlreadyRedeemed { id, at, prize } => {
                r.id = Some(id.clone());
                r.redeemed_at = Some(at.clone());
                r.prize = Some(prize.to_string());
            }
            Error::CheckCodeMismatch { id }
            | Error::IndexOutOfRange { id, .. }
            | Error::BadStop { id, .. }
            | Error::NotSold { id }
            | Error::UnknownUnit { id }
            | Error::PlayUnfinished { id, .. }
            | Error::PlayOver { id, .. }
            | Error::StepOutOfOrder { id, .. }
            | Error::NotPlayable { id, .. }
            | Error::Voided { id, .. }
            | Error::PlayStarted { id, .. } => r.id = Some(id.clone()),
            Error::AlreadySold { id, at } => {
                r.id = Some(id.clone());
                r.sold_at = Some(at.clone());
            }
            Error::UnknownEmission { id, emission, .. }
            | Error::UnknownBlock { id, emission, .. } => {
                r.id = Some(id.clone());
                r.emission = Some(*emission);
            }
            Error::NoSuchEmission { emission, .. }
            | Error::AmbiguousEmission { emission, .. }
            | Error::EmissionOfAnotherGame { emission, .. }
            | Error::EmissionClosed { emission }
            | Error::EmissionNotClosed { emission }
            | Error::EmissionRevealed { emission }
            | Error::NotRevealed { emission, .. }
            | Error::NoSuchBlock { emission, .. }
            | Error::EmissionNotInStore { emission, .. }
            | Error::BlockNotInStore { emission, .. }
            | Error::ClaimsEnded { emission, .. }
            | Error::ClaimsNotEnded { emission, .. }
            | Error::ClaimsStillOpen { emission, .. }
            | Error::ClaimsWithoutDeadline { emission }
            | Error::Suspended { emission, .. }
            | Error::Withdrawn { emission, .. }
            | Error::NotSuspended { emission, .. }
            | Error::WithdrawalIsPermanent { emission, .. }
            | Error::GenerationUnfinished { emission, .. }
            | Error::InvalidBlockChoice { emission, .. }
            | Error::MasterSecretMismatch { emission, .. }
            | Error::NoShareCommitments { emission }
            | Error::SharesNeeded { emission, .. }
            | Error::ShareMismatch { emission, .. }
            | Error::BeaconMismatch { emission, .. }
            | Error::EmissionBusy { emission, .. } => r.emission = Some(*emission),
            Error::BlockDiffersFromManifest { emission, path, .. }
            | Error::BlockInTheWay { emission, path, .. } => {
                r.emission = Some(*emission);
                r.path = Some(path.clone());
            }
            Error::Io { path, .. }
            | Error::UnreadableBlock { path, .. }
            | Error::AlreadyExists { path }
            | Error::BadKey { path, .. }
            | Error::WrongRecordsKey { path, .. }
            | Error::BlockRejected { path, .. }
            | Error::Ledger { path, .. }
            | Error::LedgerUnavailable { path, .. }
            | Error::LedgerDamaged { path, .. }
            | Error::LedgerRolledBack { path, .. }
            | Error::LedgerOutcomeUnknown { path, .. }
            | Error::BadFile { path, .. }
            | Error::NotRegularFile { path, .. }
            | Error::FileTooLarge { path, .. }
            | Error::OutputExists { path }
            | Error::InsideKeys { path, .. }
            | Error::LooseKeysFolder { path, .. }
            | Error::SigningKeyMismatch { private: path, .. }
            | Error::ParBlockMismatch { path, .. }
            | Error::EmissionOfAnotherLedger { file: path, .. }
            | Error::EmissionNotRouted { routes: path, .. }
            | Error::NoStore { store: path } => r.path = Some(path.clone()),
            // The rest carry nothing beyond their message.
            _ => {}
        }
        r
    }
}
