//! Connections: the pool, each connection's prepared statements, the
//! session's timeouts, and how a database error is told.

use std::collections::HashMap;
use std::time::Duration;

use postgres::NoTls;
use r2d2_postgres::PostgresConnectionManager;

/// Connections kept per process beside the writers': the sequencer's and
/// reads.
pub(super) const POOL_SIZE: u32 = 6;

/// Every session's bounds: a lock waited for at most 1 s, a statement run
/// at most 10 s (a migration and an audit's reads lift them).
pub const SESSION_TIMEOUTS: &str = "-c lock_timeout=1000 -c statement_timeout=10000";

/// How long a request waits for a connection before "unavailable".
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The server's refusal of a login or of the connection's settings, which
/// no retry mends: an authentication failure (SQLSTATE class 28), an
/// unknown database (3D000), a setting refused, or settings that cannot
/// connect (no user).
pub(super) fn refusal(e: &postgres::Error) -> Option<String> {
    use postgres::error::SqlState;
    let refused = match e.code() {
        Some(code) => {
            code.code().starts_with("28")
                || *code == SqlState::INVALID_CATALOG_NAME
                || *code == SqlState::INVALID_PARAMETER_VALUE
                || *code == SqlState::UNDEFINED_OBJECT
        }
        None => e.to_string().starts_with("invalid configuration"),
    };
    refused.then(|| db_text(e))
}

pub(super) type Pool = r2d2::Pool<Manager>;

/// Statements prepared on one connection, by their text: prepared once
/// per connection, not once per transaction (a prepare is a round trip).
pub(super) type Statements = HashMap<&'static str, postgres::Statement>;

/// `sql` prepared on `client`, once a connection: from `statements`, or
/// prepared now and kept there.
pub(super) fn prepared(
    client: &mut impl postgres::GenericClient,
    statements: &mut Statements,
    sql: &'static str,
) -> Result<postgres::Statement, postgres::Error> {
    if let Some(s) = statements.get(sql) {
        return Ok(s.clone());
    }
    let s = client.prepare(sql)?;
    statements.insert(sql, s.clone());
    Ok(s)
}

/// A pooled connection with its prepared statements.
pub(super) struct PgConn {
    pub(super) client: postgres::Client,
    pub(super) statements: Statements,
}

impl std::ops::Deref for PgConn {
    type Target = postgres::Client;
    fn deref(&self) -> &postgres::Client {
        &self.client
    }
}

impl std::ops::DerefMut for PgConn {
    fn deref_mut(&mut self) -> &mut postgres::Client {
        &mut self.client
    }
}

/// r2d2's PostgreSQL manager, its connections keeping their statements.
pub(super) struct Manager(pub(super) PostgresConnectionManager<NoTls>);

impl r2d2::ManageConnection for Manager {
    type Connection = PgConn;
    type Error = postgres::Error;

    fn connect(&self) -> Result<PgConn, postgres::Error> {
        Ok(PgConn {
            client: self.0.connect()?,
            statements: HashMap::new(),
        })
    }

    fn is_valid(&self, conn: &mut PgConn) -> Result<(), postgres::Error> {
        self.0.is_valid(&mut conn.client)
    }

    fn has_broken(&self, conn: &mut PgConn) -> bool {
        self.0.has_broken(&mut conn.client)
    }
}

/// A PostgreSQL error's text: the server's message, detail and code for
/// an error the server sent; the client's own otherwise.
pub(super) fn db_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut text = format!("{} ({})", db.message(), db.code().code());
            if let Some(detail) = db.detail() {
                text.push_str(": ");
                text.push_str(detail);
            }
            text
        }
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

/// A `u32` the ledger wrote as BIGINT.
pub(super) fn small(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// `url` without its password, to name the ledger in messages: neither
/// the URL's `user:password@` nor a `password=` parameter (`?password=…`,
/// or the key=value form's `password=…` or `password='…'`) is shown.
pub(super) fn redact(url: &str) -> String {
    let url = match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_string(),
    };
    const KEY: &str = "password=";
    let mut out = String::with_capacity(url.len());
    let mut rest = url.as_str();
    while let Some(i) = rest.to_ascii_lowercase().find(KEY) {
        let start = i + KEY.len();
        out.push_str(&rest[..start]);
        out.push_str("<hidden>");
        let value = &rest[start..];
        let end = match value.strip_prefix('\'') {
            Some(quoted) => quoted.find('\'').map_or(value.len(), |e| e + 2),
            None => value
                .find(|c: char| c == '&' || c.is_whitespace())
                .unwrap_or(value.len()),
        };
        rest = &value[end..];
    }
    out.push_str(rest);
    out
}

/// Writer threads per node by default (`ISSUER_PG_WRITERS` sets it):
/// their transactions may overlap (nothing every operation shares is
/// locked), but on the 2-core machine of docs/PERFORMANCE.md one writer
/// batches best (§Shared PostgreSQL ledger, issue 21 run).
pub const WRITERS: usize = 1;

/// Writer threads per node: `ISSUER_PG_WRITERS` (1 to 64), else
/// [`WRITERS`].
#[must_use]
pub fn writers() -> usize {
    std::env::var("ISSUER_PG_WRITERS")
        .ok()
        .and_then(|w| w.parse().ok())
        .filter(|w| (1..=64).contains(w))
        .unwrap_or(WRITERS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_url_is_named_without_its_password() {
        assert_eq!(
            super::redact("postgres://redeem:s3cret@db:5432/ledger"),
            "postgres://redeem@db:5432/ledger"
        );
        assert_eq!(
            super::redact("postgres://db/ledger"),
            "postgres://db/ledger"
        );
        assert_eq!(
            super::redact("postgres://redeem@db/ledger?sslmode=require&password=s3cret&x=1"),
            "postgres://redeem@db/ledger?sslmode=require&password=<hidden>&x=1"
        );
        assert_eq!(
            super::redact("host=db user=redeem PASSWORD='a b' dbname=ledger"),
            "host=db user=redeem PASSWORD=<hidden> dbname=ledger"
        );
        assert_eq!(
            super::redact("host=db password=s3cret"),
            "host=db password=<hidden>"
        );
    }
}
