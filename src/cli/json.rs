//! The `--json` outputs: every report in one envelope, its kind and
//! schema version first (docs/CLI.md).

use serde::Serialize;

use super::out;

/// The version of every `--json` output's shape (docs/CLI.md).
pub const JSON_SCHEMA: u32 = 1;

/// The envelope of every `--json` output: its kind and schema version
/// first, then the report's own fields (docs/CLI.md).
#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    kind: &'a str,
    schema: u32,
    #[serde(flatten)]
    body: &'a T,
}

/// Prints `body` as one line of JSON on stdout, as a report of `kind`.
/// Always on standard output, even when the command's words go to
/// standard error (`demo --json`).
pub(crate) fn print_json<T: Serialize>(kind: &str, body: &T) {
    let mut line = json_line(kind, body);
    line.push('\n');
    out::bytes(line.as_bytes());
}

/// `body` as indented JSON, a report of `kind` (a file people read).
pub(crate) fn json_pretty<T: Serialize>(kind: &str, body: &T) -> String {
    serde_json::to_string_pretty(&envelope(kind, body)).expect("reports serialise") + "\n"
}

/// `body` as one line of JSON, a report of `kind`.
pub(crate) fn json_line<T: Serialize>(kind: &str, body: &T) -> String {
    serde_json::to_string(&envelope(kind, body)).expect("reports serialise")
}

/// `body` in its envelope, a report of `kind`.
fn envelope<'a, T: Serialize>(kind: &'a str, body: &'a T) -> Envelope<'a, T> {
    Envelope {
        kind,
        schema: JSON_SCHEMA,
        body,
    }
}
