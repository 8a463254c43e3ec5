//! An operator's action as the log holds it (docs/REDEMPTION.md
//! §Suspend, withdraw and void): suspend, resume, withdraw, void, the
//! closing statement and an early end of claims, with its log line
//! (`operator/v1`) and the rule a reason must follow.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// What the operator did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// No sale, play step or redemption until resumed.
    Suspend,
    /// Ends a suspension made at the same level (emission or block).
    Resume,
    /// Never sold again, for good; sold units still play and redeem.
    Withdraw,
    /// A sale cancelled before its play began: the unit is never sold
    /// again and never paid.
    Void,
    /// The emission's closing statement, once its claims ended
    /// (the ledger's closing statement): its text is the signed statement.
    Closing,
    /// The claims ended before the deadline set at close, by the issuer's
    /// choice (`end-claims --force`): its text is the reason.
    EarlyEnd,
}

impl Action {
    /// Its word in the log and in answers.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            Action::Suspend => "suspend",
            Action::Resume => "resume",
            Action::Withdraw => "withdraw",
            Action::Void => "void",
            Action::Closing => "closing",
            Action::EarlyEnd => "early_end",
        }
    }

    /// The action a stored word names.
    #[must_use]
    pub fn parse(word: &str) -> Option<Action> {
        [
            Action::Suspend,
            Action::Resume,
            Action::Withdraw,
            Action::Void,
            Action::Closing,
            Action::EarlyEnd,
        ]
        .into_iter()
        .find(|a| a.word() == word)
    }
}

/// Most bytes of a reason.
pub const MAX_REASON: usize = 1000;

/// How an action's reason put back from the published log reads
/// (`issuer ledger recover`): the log holds its SHA-256 only, which follows.
pub const HASHED_REASON: &str = "recovered from the log, known by its SHA-256 only: ";

/// One action, as the ledger keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OperatorAction {
    /// What was done.
    pub action: Action,
    /// Game slug.
    pub game: String,
    /// The emission's number within its game.
    pub emission: u32,
    /// The block; `None`: the whole emission (never for a void).
    pub block: Option<u32>,
    /// The unit voided (a void only).
    pub index: Option<u32>,
    /// The voided unit's ID as the operator gave it, for messages only
    /// (neither kept nor logged: the place is).
    #[serde(skip)]
    pub unit_id: Option<String>,
    /// Why, in the operator's words (kept in the ledger; its SHA-256 is in
    /// the log's line).
    pub reason: String,
    /// Who: the operator token's name, or `cli` for the command line.
    pub by: String,
    /// When (the ledger's clock; set as the action commits).
    pub at: String,
}

impl OperatorAction {
    /// The log's line at `seq`:
    /// `operator/v1|seq|action|game|emission|block|index|by|at|reason_sha256\n`
    /// (`block`, `index` empty where they do not apply).
    #[must_use]
    pub fn line(&self, seq: u64) -> String {
        let opt = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
        format!(
            "operator/v1|{seq}|{}|{}|{}|{}|{}|{}|{}|{}\n",
            self.action.word(),
            self.game,
            self.emission,
            opt(self.block),
            opt(self.index),
            self.by,
            self.at,
            self.reason_sha256()
        )
    }

    /// The SHA-256 of its reason, hex; a reason put back from the log
    /// ([`HASHED_REASON`]) is known by this hash only.
    #[must_use]
    pub fn reason_sha256(&self) -> String {
        match self.reason.strip_prefix(HASHED_REASON) {
            Some(hash) if hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
                hash.to_ascii_lowercase()
            }
            _ => hex::encode(Sha256::digest(self.reason.as_bytes())),
        }
    }

    /// What it is, for messages ("the suspension of ile-au-tresor emission
    /// 1 block 2").
    #[must_use]
    pub fn what(&self) -> String {
        let noun = match self.action {
            Action::Suspend => "the suspension",
            Action::Resume => "the resumption",
            Action::Withdraw => "the withdrawal",
            Action::Void => "the void",
            Action::Closing => "the closing statement",
            Action::EarlyEnd => "the early end of claims",
        };
        format!("{noun} of {}", self.scope())
    }

    /// What it acts on, in words.
    #[must_use]
    pub fn scope(&self) -> String {
        let mut s = format!("{} emission {}", self.game, self.emission);
        if let Some(b) = self.block {
            s += &format!(" block {b}");
        }
        if let Some(i) = self.index {
            s += &format!(" unit {i}");
        }
        s
    }
}

impl OperatorAction {
    /// An action as read back from [`COLUMNS`]. An unknown action word
    /// (a damaged row) is read as a void of no unit, which no line of the
    /// log can match: `ledger verify` names it.
    #[allow(clippy::too_many_arguments)]
    #[must_use]
    pub fn from_columns(
        action: String,
        game: String,
        emission: u32,
        block: Option<u32>,
        index: Option<u32>,
        reason: String,
        by: String,
        at: String,
    ) -> OperatorAction {
        let parsed = Action::parse(&action);
        OperatorAction {
            action: parsed.unwrap_or(Action::Void),
            game: if parsed.is_some() {
                game
            } else {
                format!("{game} (unknown action {action:?})")
            },
            emission,
            block,
            index,
            unit_id: None,
            reason,
            by,
            at,
        }
    }
}

/// Refuses a reason that is empty, too long, or holds a control character
/// (it is shown in answers and kept for auditors), or a `by` name that is
/// not a token name's characters.
pub fn check_reason(reason: &str) -> Result<(), String> {
    if reason.trim().is_empty() {
        return Err("the reason is empty: say why (it is kept in the ledger for auditors)".into());
    }
    if reason.len() > MAX_REASON {
        return Err(format!(
            "the reason is {} bytes; at most {MAX_REASON}",
            reason.len()
        ));
    }
    if reason.chars().any(char::is_control) {
        return Err("the reason holds a control character (a line break, a tab…)".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_line_holds_the_reasons_digest_not_the_reason() {
        let a = OperatorAction {
            action: Action::Void,
            game: "tresors-ensables".into(),
            emission: 3,
            block: Some(1),
            index: Some(17),
            unit_id: None,
            reason: "payment failed | retry".into(),
            by: "ops-1".into(),
            at: "2026-12-02T09:00:00.000Z".into(),
        };
        let line = a.line(9);
        assert_eq!(
            line,
            format!(
                "operator/v1|9|void|tresors-ensables|3|1|17|ops-1|2026-12-02T09:00:00.000Z|{}\n",
                hex::encode(Sha256::digest(b"payment failed | retry"))
            )
        );
        assert_eq!(
            a.what(),
            "the void of tresors-ensables emission 3 block 1 unit 17"
        );
        assert!(check_reason("").is_err());
        assert!(check_reason("a\nb").is_err());
        assert!(check_reason("fraud suspected on block 2").is_ok());
    }
}
