//! Each variant's stable code and kind (the contract of codes, kinds and
//! exit codes; docs/CLI.md §Error codes).

use std::path::Path;

use super::kind::ErrorKind;
use super::variants::Error;

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The kind of failure, for the edges to map (exit codes, HTTP
    /// statuses): [`CODES`]'s, but an I/O error's depends on its cause.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io { source, .. } => io_kind(source),
            other => other.coded().1,
        }
    }

    /// A stable name for this failure (`already_redeemed`, `invalid_id`,
    /// …), for scripts and the JSON error object (docs/CLI.md).
    pub fn code(&self) -> &'static str {
        self.coded().0
    }
}

/// Each variant's code and kind, in one place: a new variant is its
/// definition above and one line here (docs/CLI.md §Error codes lists the
/// codes).
macro_rules! codes {
    ($($variant:ident => $code:literal, $kind:ident;)*) => {
        impl Error {
            fn coded(&self) -> (&'static str, ErrorKind) {
                match self {
                    $(Error::$variant { .. } => ($code, ErrorKind::$kind),)*
                }
            }
        }

        /// Every code and its kind (for the docs' test).
        pub const CODES: &[(&str, ErrorKind)] = &[$(($code, ErrorKind::$kind),)*];
    };
}

codes! {
    Io => "io", Unavailable;
    UnreadableBlock => "unreadable_block", InvalidInput;
    AlreadyExists => "already_exists", Conflict;
    NoSecrets => "no_secrets", InvalidInput;
    NoPublicKey => "no_public_key", InvalidInput;
    BadKey => "bad_key", InvalidInput;
    WrongRecordsKey => "wrong_records_key", InvalidInput;
    NeedRecordsKey => "need_records_key", InvalidInput;
    UnknownGame => "unknown_game", InvalidInput;
    UnsupportedPrice => "unsupported_price", InvalidInput;
    MalformedId => "invalid_id", InvalidInput;
    CheckCodeMismatch => "wrong_check_code", Rejected;
    IndexOutOfRange => "index_out_of_range", Rejected;
    UnknownEmission => "unknown_emission", NotFound;
    UnknownBlock => "unknown_block", NotFound;
    EmissionNotInStore => "unknown_emission", NotFound;
    BlockNotInStore => "unknown_block", NotFound;
    BlockRejected => "block_rejected", Rejected;
    AlreadyRedeemed => "already_redeemed", Conflict;
    NotSold => "not_sold", Conflict;
    UnknownUnit => "unknown_unit", NotFound;
    AlreadySold => "already_sold", Conflict;
    SoldOut => "sold_out", Conflict;
    PlayUnfinished => "play_unfinished", Conflict;
    PlayOver => "play_over", Conflict;
    StepOutOfOrder => "roll_out_of_order", Conflict;
    NotPlayable => "not_playable", InvalidInput;
    Ledger => "ledger_unavailable", Unavailable;
    LedgerUnavailable => "ledger_unavailable", Unavailable;
    LedgerDamaged => "ledger_damaged", Rejected;
    LedgerRolledBack => "ledger_rolled_back", Unavailable;
    LedgerOutcomeUnknown => "ledger_outcome_unknown", Unavailable;
    BadLedgerUrl => "bad_ledger_url", InvalidInput;
    LedgerLoginRefused => "ledger_login_refused", InvalidInput;
    EmissionOfAnotherLedger => "emission_of_another_ledger", InvalidInput;
    EmissionNotRouted => "emission_not_routed", Unavailable;
    IdempotencyKeyReused => "idempotency_key_reused", Rejected;
    BadIdempotencyKey => "bad_idempotency_key", InvalidInput;
    NoSaleUnderKey => "no_sale_under_key", NotFound;
    NotInLedger => "not_in_ledger", NotFound;
    ServiceConfig => "bad_service_config", InvalidInput;
    NoSuchEmission => "unknown_emission", NotFound;
    AmbiguousEmission => "ambiguous_emission", InvalidInput;
    EmissionOfAnotherGame => "emission_of_another_game", Conflict;
    EmissionClosed => "emission_closed", Conflict;
    EmissionNotClosed => "emission_not_closed", Conflict;
    EmissionRevealed => "emission_revealed", Gone;
    ClaimsEnded => "emission_closed", Conflict;
    ClaimsNotEnded => "claims_not_ended", Conflict;
    ClaimsStillOpen => "claims_still_open", Conflict;
    ClaimsWithoutDeadline => "claims_still_open", Conflict;
    ApprovalsNeeded => "approvals_needed", Rejected;
    BadApproval => "bad_approval", Rejected;
    Suspended => "suspended", Conflict;
    Withdrawn => "withdrawn", Conflict;
    Voided => "voided", Conflict;
    PlayStarted => "play_started", Conflict;
    NotSuspended => "not_suspended", Conflict;
    WithdrawalIsPermanent => "withdrawal_is_permanent", Conflict;
    BadOperatorRequest => "invalid_request", InvalidInput;
    NotRevealed => "emission_not_revealed", Conflict;
    NotATerminal => "not_a_terminal", InvalidInput;
    NoSuchBlock => "unknown_block", NotFound;
    GenerationUnfinished => "generation_unfinished", Conflict;
    InvalidBlockChoice => "invalid_block_choice", InvalidInput;
    BlockDiffersFromManifest => "block_differs_from_manifest", Rejected;
    BlockInTheWay => "block_in_the_way", Conflict;
    BadFile => "bad_file", InvalidInput;
    Internal => "internal", Internal;
    NotRegularFile => "not_regular_file", InvalidInput;
    FileTooLarge => "file_too_large", InvalidInput;
    OutputExists => "output_exists", Conflict;
    InsideKeys => "inside_keys", Rejected;
    SigningKeyMismatch => "signing_key_mismatch", InvalidInput;
    MasterSecretMismatch => "master_secret_mismatch", InvalidInput;
    NoShareCommitments => "no_share_commitments", InvalidInput;
    SharesNeeded => "shares_needed", InvalidInput;
    ShareMismatch => "share_mismatch", Rejected;
    BeaconMismatch => "beacon_mismatch", Rejected;
    LooseKeysFolder => "loose_keys_folder", InvalidInput;
    EmissionBusy => "emission_busy", Unavailable;
    NoStore => "no_store", InvalidInput;
    BlockUnits => "block_units", InvalidInput;
    BadStop => "bad_stop", Rejected;
    FixedBlockSize => "fixed_block_size", InvalidInput;
    PriceNeeded => "price_needed", InvalidInput;
    ParBlockMismatch => "par_block_mismatch", InvalidInput;
    ParOption => "par_option", InvalidInput;
    EmissionNumberTaken => "emission_number_taken", Conflict;
    BlockGap => "block_gap", InvalidInput;
    SecretToTerminal => "secret_to_terminal", InvalidInput;
}

/// An I/O error is the input's fault when the named file is missing, not
/// readable, not a file or a name the OS refuses (too long); otherwise (full
/// disk, a failing device) the system is unavailable.
fn io_kind(e: &std::io::Error) -> ErrorKind {
    use std::io::ErrorKind as Io;
    match e.kind() {
        Io::NotFound
        | Io::PermissionDenied
        | Io::IsADirectory
        | Io::NotADirectory
        | Io::InvalidFilename
        | Io::InvalidInput
        | Io::InvalidData
        | Io::UnexpectedEof => ErrorKind::InvalidInput,
        _ => ErrorKind::Unavailable,
    }
}

#[cfg(test)]
mod codes_tests {
    use super::{ErrorKind, CODES};

    /// Every code is documented in docs/CLI.md §Error codes, with its kind.
    #[test]
    fn every_code_is_documented_with_its_kind() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/CLI.md"))
                .unwrap();
        let section = &doc[doc.find("## Error codes").expect("the section")..];
        for (code, kind) in CODES {
            let kind = serde_json::to_value(kind).unwrap();
            let kind = kind.as_str().unwrap();
            let start = format!("| `{code}` | ");
            let row = section
                .lines()
                .find(|l| l.starts_with(&start))
                .unwrap_or_else(|| panic!("docs/CLI.md §Error codes lacks `{code}`"));
            let category = row[start.len()..].split(" |").next().unwrap();
            assert!(category.contains(kind), "`{code}` is {kind}: {row}");
        }
        // Refusals are every kind but the two failures.
        assert!(CODES
            .iter()
            .filter(|(c, _)| *c == "already_redeemed")
            .all(|(_, k)| !matches!(k, ErrorKind::Unavailable | ErrorKind::Internal)));
    }
}
