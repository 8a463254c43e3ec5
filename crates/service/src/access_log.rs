//! The access log (`serve --access-log`): a JSON line a request, to a
//! file (appended, 0600) or standard error; never a token or a secret.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::Request;
use serde::Serialize;
use ticket_issuer_core::error::Error;

/// One line of the access log: never a token or a secret.
#[derive(Serialize)]
struct AccessEntry<'a> {
    time: String,
    method: &'a str,
    route: &'a str,
    status: u16,
    latency_ms: f64,
    token: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unit_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
}

/// The access log: a JSON line a request, to a file (appended, 0600) or
/// standard error.
pub struct AccessLog(Mutex<Box<dyn std::io::Write + Send>>);

impl AccessLog {
    /// Opens `path` (`-`: standard error).
    pub fn open(path: &Path) -> Result<AccessLog, Error> {
        if path == Path::new("-") {
            return Ok(AccessLog(Mutex::new(Box::new(std::io::stderr()))));
        }
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        Ok(AccessLog(Mutex::new(Box::new(std::io::LineWriter::new(
            file,
        )))))
    }

    /// Writes the line of `request`, answered `status` after `latency`
    /// for the token named `token` (if any), refused with `error` (if so).
    pub(crate) fn write(
        &self,
        request: &Requested,
        status: u16,
        latency: Duration,
        token: Option<&str>,
        error: Option<&'static str>,
    ) {
        let entry = AccessEntry {
            time: ticket_issuer_ledger::ledger::claims::utc_now(),
            method: request.method.as_str(),
            route: &request.route,
            status,
            latency_ms: latency.as_secs_f64() * 1000.0,
            token,
            unit_id: request.unit_id.as_deref(),
            error,
        };
        if let Ok(mut line) = serde_json::to_vec(&entry) {
            line.push(b'\n');
            let mut out = self.0.lock().unwrap_or_else(|p| p.into_inner());
            // A log that cannot be written does not stop the service.
            let _ = out.write_all(&line);
        }
    }
}

/// What the access log says of a request: its method, its route pattern
/// and the unit ID its path holds, if any.
pub(crate) struct Requested {
    method: axum::http::Method,
    route: String,
    unit_id: Option<String>,
}

impl Requested {
    /// What `request` is, as the access log says it.
    pub(crate) fn of(request: &Request) -> Requested {
        let route = request
            .extensions()
            .get::<axum::extract::MatchedPath>()
            .map_or_else(|| "(no route)".to_string(), |p| p.as_str().to_string());
        let unit_id = request.uri().path().strip_prefix("/v1/").and_then(|rest| {
            let mut parts = rest.split('/');
            match (parts.next(), parts.next()) {
                (Some("units" | "plays"), Some(id)) => Some(id.to_string()),
                _ => None,
            }
        });
        Requested {
            method: request.method().clone(),
            route,
            unit_id,
        }
    }
}
