//! `issuer redeem --batch FILE|-`: one ID (and optional stop) a line in,
//! one JSON result a line out, each line independent of the others.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use serde::Serialize;
use ticket_issuer::error::Error;
use ticket_issuer::redeem::Redeemer;
use ticket_issuer::redeemer::batch_parts;
use ticket_issuer::unit_id::UnitId;

use crate::cli::exit::exit_code;
use crate::cli::json::JSON_SCHEMA;

/// Lines redeemed together (one ledger commit when they authenticate).
const LINES_AT_ONCE: usize = 512;

/// A numbered input line, parsed (or why not).
type Parsed = (u64, Result<(UnitId, Option<u32>), Error>);

/// One output line: a redemption or an error, with the input line number.
#[derive(Serialize)]
struct Line<'a, T: Serialize> {
    kind: &'a str,
    schema: u32,
    line: u64,
    #[serde(flatten)]
    body: T,
}

/// Parses `ID [STOP]`; `None` for a blank or `#` comment line.
pub fn parse_line(text: &str) -> Option<Result<(UnitId, Option<u32>), Error>> {
    let text = text.trim();
    if text.is_empty() || text.starts_with('#') {
        return None;
    }
    let mut words = text.split_whitespace();
    let id = words.next().unwrap_or_default();
    let stop = words.next();
    Some((|| {
        let id: UnitId = id.parse()?;
        let stop = stop
            .map(|s| {
                s.parse::<u32>().map_err(|_| Error::MalformedId {
                    id: text.to_string(),
                    reason: format!("the stop {s:?} after the ID is not a number of rolls"),
                })
            })
            .transpose()?;
        if words.next().is_some() {
            return Err(Error::MalformedId {
                id: text.to_string(),
                reason: "a line holds an ID and at most a stop".into(),
            });
        }
        Ok((id, stop))
    })())
}

/// Runs the batch; exit 0 when every line was redeemed, else the exit code
/// of the worst refusal (each line's own result is on its line). Under an
/// idempotency `key` the whole input is read first: the key names the
/// batch as a whole (docs/API.md §Idempotency).
pub fn run(redeemer: &Redeemer, from: &Path, key: Option<&str>) -> Result<i32, Error> {
    let input: Box<dyn BufRead> = if from.as_os_str() == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        let file = std::fs::File::open(from).map_err(|e| Error::io(from, e))?;
        Box::new(BufReader::new(file))
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut worst = 0;
    let mut pending: Vec<Parsed> = Vec::new();
    let mut raw: Vec<String> = Vec::new();
    let mut lines = input.lines();
    let mut number = 0u64;
    loop {
        let next = lines.next();
        if let Some(line) = &next {
            number += 1;
            let line = line
                .as_ref()
                .map_err(|e| Error::io(from, std::io::Error::new(e.kind(), e.to_string())))?;
            if let Some(parsed) = parse_line(line) {
                pending.push((number, parsed));
                if key.is_some() {
                    raw.push(line.trim().to_string());
                }
            }
        }
        let at_once = key.is_none() && pending.len() >= LINES_AT_ONCE;
        if at_once || (next.is_none() && !pending.is_empty()) {
            let request = key.map(|k| (k, raw.as_slice()));
            worst = worst.max(flush(
                redeemer,
                std::mem::take(&mut pending),
                request,
                &mut out,
            )?);
        }
        if next.is_none() {
            break;
        }
    }
    out.flush()
        .map_err(|e| Error::io(Path::new("standard output"), e))?;
    Ok(worst)
}

/// Redeems the parsed lines together and prints one result for each.
fn flush(
    redeemer: &Redeemer,
    pending: Vec<Parsed>,
    key: Option<(&str, &[String])>,
    out: &mut impl Write,
) -> Result<i32, Error> {
    let units: Vec<(UnitId, Option<u32>)> = pending
        .iter()
        .filter_map(|(_, p)| p.as_ref().ok().cloned())
        .collect();
    let redeemed = match key {
        Some((key, lines)) => {
            let request = batch_parts(lines.iter().map(|l| (l.as_str(), None)));
            redeemer.redeem_batch_keyed(&units, key, &request)?
        }
        None => redeemer.redeem_many(&units),
    };
    let mut redeemed = redeemed.into_iter();
    let mut worst = 0;
    for (line, parsed) in pending {
        let outcome = match parsed {
            Ok(_) => redeemed.next().unwrap_or_else(|| {
                Err(Error::Internal {
                    what: "a batch line got no outcome".into(),
                })
            }),
            Err(e) => Err(e),
        };
        let text = match outcome {
            Ok(r) => serde_json::to_string(&Line {
                kind: "redemption",
                schema: JSON_SCHEMA,
                line,
                body: r,
            }),
            Err(e) => {
                worst = worst.max(exit_code(e.kind()));
                serde_json::to_string(&Line {
                    kind: "error",
                    schema: JSON_SCHEMA,
                    line,
                    body: e.report(),
                })
            }
        }
        .map_err(|e| Error::Internal {
            what: format!("a result does not serialise: {e}"),
        })?;
        writeln!(out, "{text}").map_err(|e| Error::io(Path::new("standard output"), e))?;
    }
    Ok(worst)
}
