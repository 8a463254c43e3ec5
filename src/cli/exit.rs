//! The exit statuses of `issuer` (README §Exit codes, docs/CLI.md), and
//! the one mapping of an error's kind to its status.

use ticket_issuer::error::ErrorKind;

/// Exit status: done, every check passed.
pub const EXIT_OK: i32 = 0;
/// Exit status: a check failed or could not be made, or the request was
/// refused (not found, conflict, gone, rejected).
pub const EXIT_REFUSED: i32 = 1;
/// Exit status: bad usage or unreadable input.
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit status: the system could not do it now (I/O failure, full disk,
/// busy); nothing was half-done: retry once the cause is fixed.
pub const EXIT_UNAVAILABLE: i32 = 3;
/// Exit status: an internal fault of the tool.
pub const EXIT_INTERNAL: i32 = 4;

/// The exit status of an error of `kind`. No default arm: a new kind must
/// be given its exit status here.
pub fn exit_code(kind: ErrorKind) -> i32 {
    match kind {
        ErrorKind::InvalidInput => EXIT_BAD_INPUT,
        ErrorKind::NotFound | ErrorKind::Conflict | ErrorKind::Gone | ErrorKind::Rejected => {
            EXIT_REFUSED
        }
        ErrorKind::Unavailable => EXIT_UNAVAILABLE,
        ErrorKind::Internal => EXIT_INTERNAL,
    }
}
