//! The client a log uses to ask a witness for a cosignature
//! ([`add_checkpoint`]): plain HTTP (ureq), c2sp.org/tlog-witness.

use std::time::Duration;

use ticket_issuer_core::merkle::Hash;
use ticket_issuer_ledger::witness::{AddRequest, SIZE_CONTENT_TYPE};

/// What a witness answered to [`add_checkpoint`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddOutcome {
    /// 200: its cosignature lines, each with its newline; check them with
    /// `ticket_issuer_ledger::witness::cosignature::verify_cosignature`
    /// against the witness's vkey before using them.
    Cosigned(Vec<String>),
    /// 409 `text/x.tlog.size`: the size the witness last cosigned; send
    /// again from it (with the proof from that size).
    Conflict(u64),
    /// Any other answer: its status and body (400 malformed, 403 not
    /// signed by the key it knows, 404 unknown log, 409 split view, 422
    /// bad proof, 5xx).
    Refused {
        /// The HTTP status.
        status: u16,
        /// The body, as text (at most 4 KiB read).
        body: String,
    },
}

/// Why [`add_checkpoint`] got no answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request did not reach the witness, or its answer did not come.
    #[error("the witness at {url} did not answer: {reason}")]
    Transport {
        /// Where.
        url: String,
        /// What happened.
        reason: String,
    },
    /// A 200 or 409 whose body is not what the spec says.
    #[error(
        "the witness at {url} answered {status} with a body the protocol does not allow: {body:?}"
    )]
    Protocol {
        /// Where.
        url: String,
        /// The status.
        status: u16,
        /// The body read.
        body: String,
    },
}

/// Asks the witness whose submission prefix is `url` (e.g.
/// `http://127.0.0.1:7380`) to cosign the checkpoint `note` (its signed
/// note, with the log's signature), proving it extends the size
/// `old_size` it last cosigned with `proof` (RFC 9162 consistency proof;
/// empty for `old_size` 0). Plain HTTP (ureq); 20 s overall.
pub fn add_checkpoint(
    url: &str,
    old_size: u64,
    proof: &[Hash],
    note: &str,
) -> Result<AddOutcome, ClientError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into();
    let target = format!("{}/add-checkpoint", url.trim_end_matches('/'));
    let transport = |e: ureq::Error| ClientError::Transport {
        url: target.clone(),
        reason: e.to_string(),
    };
    let mut response = agent
        .post(&target)
        .content_type("text/plain; charset=utf-8")
        .send(AddRequest::body(old_size, proof, note))
        .map_err(transport)?;
    let status = response.status().as_u16();
    let sized = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim() == SIZE_CONTENT_TYPE);
    let body = response
        .body_mut()
        .with_config()
        .limit(4096)
        .read_to_string()
        .map_err(transport)?;
    let protocol = |body: String| ClientError::Protocol {
        url: target.clone(),
        status,
        body,
    };
    match status {
        200 => {
            let lines: Vec<String> = body.split_inclusive('\n').map(str::to_string).collect();
            if lines.is_empty()
                || lines
                    .iter()
                    .any(|l| !l.starts_with("\u{2014} ") || !l.ends_with('\n'))
            {
                return Err(protocol(body));
            }
            Ok(AddOutcome::Cosigned(lines))
        }
        409 if sized => body
            .strip_suffix('\n')
            .and_then(|s| s.parse().ok())
            .map(AddOutcome::Conflict)
            .ok_or_else(|| protocol(body.clone())),
        _ => Ok(AddOutcome::Refused { status, body }),
    }
}
