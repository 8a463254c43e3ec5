//! What kind of failure an error is, what a header can get wrong, and how
//! a message quotes what it was given.

use serde::Serialize;

/// What kind of failure an error is: the closed set every edge (exit code,
/// HTTP status) is mapped from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request or an input file is malformed, or a needed input is
    /// missing: fix the input and try again.
    InvalidInput,
    /// The request names something that does not exist (an emission, a block).
    NotFound,
    /// The request conflicts with the current state (already redeemed, a
    /// file that exists, an emission closed to new blocks).
    Conflict,
    /// The thing exists but is no longer available (a revealed emission).
    Gone,
    /// A check failed: the request was refused for the reason given.
    Rejected,
    /// The system could not do it now (I/O failure, full disk, busy ledger
    /// or emission); nothing was half-done: retry once the cause is fixed.
    Unavailable,
    /// A fault of the tool itself; please report it.
    Internal,
}

impl ErrorKind {
    /// The kind's stable name (`invalid_input`, `not_found`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Gone => "gone",
            ErrorKind::Rejected => "rejected",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Internal => "internal",
        }
    }
}

/// Why a block file's header could not be read at all (the file is then
/// unreadable, not a failed check).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderProblem {
    /// The file does not start with the block magic `TKTBLOCK`.
    BadMagic([u8; 8]),
    /// A format version this code does not know.
    UnsupportedVersion {
        /// The version the file announces.
        found: u16,
        /// The version this code reads.
        supported: u16,
    },
    /// Fewer bytes than the header needs.
    Truncated {
        /// Bytes the header needs.
        needed: usize,
        /// Bytes the file has.
        found: usize,
    },
    /// A field holds a value no writer produces.
    Field(String),
}

impl std::fmt::Display for HeaderProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderProblem::BadMagic(m) => write!(
                f,
                "not a ticket-issuer block file (it starts with {}, a block starts with \"TKTBLOCK\")",
                hex::encode(m),
            ),
            HeaderProblem::UnsupportedVersion { found, supported } => write!(
                f,
                "unsupported block format version {found} (this issuer reads version {supported}); use a ticket-issuer release that knows it"
            ),
            HeaderProblem::Truncated { needed, found } => write!(
                f,
                "file is cut short inside the header ({found} bytes, the header needs {needed})"
            ),
            HeaderProblem::Field(what) => write!(f, "header: {what}"),
        }
    }
}

/// At most this many characters of a user's input are echoed in a message.
const ECHO_LIMIT: usize = 48;

/// `text` for an error message, cut to `ECHO_LIMIT` characters so a
/// message never echoes unbounded input.
pub fn echo(text: &str) -> String {
    if text.chars().count() <= ECHO_LIMIT {
        return text.to_string();
    }
    let head: String = text.chars().take(ECHO_LIMIT).collect();
    format!("{head}… ({} bytes in all)", text.len())
}
