//! Bearer tokens and their roles (docs/API.md §Tokens and roles): a
//! platform's token sells, plays and redeems (`sales`); an operator's
//! suspends, resumes, withdraws and voids (`operator`); a scraper's reads
//! `/metrics` (`metrics`). A token holds the roles its line of the token
//! file gives it, `sales` by default. A token's name is its platform's
//! lane (docs/SECURITY.md §Each platform in its own lane).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use axum::http::{header, HeaderMap, Method};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use ticket_issuer_core::error::Error;

/// What a token may do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Roles {
    /// Sell, play and redeem: a sales platform.
    pub sales: bool,
    /// Suspend, resume, withdraw and void: the operator.
    pub operator: bool,
    /// Read `/metrics` (and nothing else): a Prometheus scraper.
    pub metrics: bool,
}

impl Roles {
    /// A platform's token: `sales` only (a line without roles).
    pub const SALES: Roles = Roles {
        sales: true,
        operator: false,
        metrics: false,
    };

    /// The roles of `list` (`sales`, `operator`, comma-separated).
    fn parse(list: &str) -> Result<Roles, String> {
        let mut roles = Roles::default();
        for role in list.split(',') {
            match role {
                "sales" => roles.sales = true,
                "operator" => roles.operator = true,
                "metrics" => roles.metrics = true,
                other => {
                    return Err(format!(
                        "unknown role {other:?} (roles: sales, operator, metrics)"
                    ))
                }
            }
        }
        Ok(roles)
    }

    /// The roles as the token file writes them.
    #[must_use]
    pub fn names(self) -> String {
        let mut names = Vec::new();
        if self.sales {
            names.push("sales");
        }
        if self.operator {
            names.push("operator");
        }
        if self.metrics {
            names.push("metrics");
        }
        names.join(",")
    }
}

/// The role a request needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needed {
    /// A platform's or the operator's token (reads, health, the OpenAPI
    /// document): not a scraper's.
    Any,
    /// `sales`: every `POST` outside `/v1/operator/`.
    Sales,
    /// `operator`: `/v1/operator/…`.
    Operator,
    /// `metrics` or `operator`: `/metrics` (the node's counters and the
    /// top-lots watch's gauges are the operator's).
    Metrics,
}

impl Needed {
    /// The role `method` on `path` needs.
    #[must_use]
    pub fn of(method: &Method, path: &str) -> Needed {
        if path.starts_with("/v1/operator/") {
            Needed::Operator
        } else if path == "/metrics" {
            Needed::Metrics
        } else if method == Method::POST {
            Needed::Sales
        } else {
            Needed::Any
        }
    }

    /// Whether `roles` may.
    #[must_use]
    pub fn allows(self, roles: Roles) -> bool {
        match self {
            Needed::Any => roles.sales || roles.operator,
            Needed::Sales => roles.sales,
            Needed::Operator => roles.operator,
            Needed::Metrics => roles.metrics || roles.operator,
        }
    }

    /// The role's name, for the refusal.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Needed::Any => "sales or operator",
            Needed::Sales => "sales",
            Needed::Operator => "operator",
            Needed::Metrics => "metrics (or operator)",
        }
    }
}

/// An accepted bearer token: its name, which the access log shows (never
/// the token), its roles, and its SHA-256 (compared in constant time).
#[derive(Clone)]
pub struct Token {
    /// `name` of a `name:token` line, else `line-N` (its line in the file).
    pub name: String,
    /// What it may do.
    pub roles: Roles,
    digest: [u8; 32],
}

impl Token {
    /// A platform's (`sales`) token named `name`.
    pub fn new(name: &str, secret: &str) -> Token {
        Token::with_roles(name, secret, Roles::SALES)
    }

    /// A token named `name` with `roles`.
    pub fn with_roles(name: &str, secret: &str, roles: Roles) -> Token {
        Token {
            name: name.to_string(),
            roles,
            digest: Sha256::digest(secret.as_bytes()).into(),
        }
    }

    /// A line of a token file: `[ROLES ]name:token` (a name of letters,
    /// digits, `_`, `-` and `.`, up to 64), else `[ROLES ]token`; ROLES a
    /// comma-separated list of `sales` and `operator` before a space
    /// (default `sales`).
    fn parse(line: &str, number: usize) -> Result<(String, &str, Roles), String> {
        let (roles, rest) = match line.split_once(char::is_whitespace) {
            Some((roles, rest)) => (Roles::parse(roles)?, rest.trim_start()),
            None => (Roles::SALES, line),
        };
        Ok(match rest.split_once(':') {
            Some((name, secret)) if ticket_issuer_ledger::ledger::ops::check_lane(name).is_ok() => {
                (name.to_string(), secret, roles)
            }
            _ => (format!("line-{number}"), rest, roles),
        })
    }
}

/// The accepted tokens, shared by the requests and the SIGHUP reload.
pub type TokenSet = std::sync::Arc<std::sync::RwLock<Vec<Token>>>;

/// Reads the bearer tokens of `path`: one a line, `[ROLES ]name:token` or
/// `[ROLES ]token` (blank lines and `#` comments skipped). The file must
/// be the owner's alone (no group or other permission bits).
pub fn read_tokens(path: &Path) -> Result<Vec<Token>, Error> {
    let bad = |reason: String| Error::BadFile {
        path: path.to_path_buf(),
        reason,
    };
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(bad(format!(
            "the token file is mode {mode:o}, readable by others; run `chmod 600 {}`",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut tokens = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, secret, roles) =
            Token::parse(line, n + 1).map_err(|e| bad(format!("line {}: {e}", n + 1)))?;
        if secret.len() < 16 {
            return Err(bad(format!(
                "the token of line {} ({name}) has {} characters, too short to resist guessing; use at least 16",
                n + 1,
                secret.len()
            )));
        }
        // Two lines of one name are one platform's lane with two tokens (a
        // rotation: docs/API.md §Tokens and roles); they must not differ
        // in what they may do.
        if let Some(other) = tokens
            .iter()
            .find(|t: &&Token| t.name == name && t.roles != roles)
        {
            return Err(bad(format!(
                "line {}: the token {name} has the role {}, another line of that name has {}; two lines of one name are one platform's tokens and take the same roles",
                n + 1,
                roles.names(),
                other.roles.names()
            )));
        }
        tokens.push(Token::with_roles(&name, secret, roles));
    }
    if tokens.is_empty() {
        return Err(bad("the token file holds no token (one a line)".into()));
    }
    Ok(tokens)
}

/// The request's bearer token (its name and roles) when it is one of the
/// accepted ones; every accepted token is compared, each in constant time,
/// over SHA-256 digests (so neither the tokens' content nor their length
/// leaks through timing).
pub(crate) fn authorised(tokens: &[Token], headers: &HeaderMap) -> Option<(String, Roles)> {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    let digest: [u8; 32] = Sha256::digest(given.as_bytes()).into();
    let mut found = None;
    for token in tokens {
        if bool::from(token.digest.ct_eq(&digest)) {
            found = Some((token.name.clone(), token.roles));
        }
    }
    found.filter(|_| !given.is_empty())
}

#[cfg(test)]
mod tests {
    use crate::tokens::*;

    #[test]
    fn a_line_gives_its_roles_and_a_line_without_is_a_platforms() {
        let t = |line| Token::parse(line, 3);
        assert_eq!(
            t("platform-a:0123456789abcdef").unwrap(),
            ("platform-a".into(), "0123456789abcdef", Roles::SALES)
        );
        let (name, secret, roles) = t("operator ops-1:0123456789abcdef").unwrap();
        assert_eq!((name.as_str(), secret), ("ops-1", "0123456789abcdef"));
        assert_eq!(roles.names(), "operator");
        assert_eq!(
            t("sales,operator 0123456789abcdef").unwrap().2.names(),
            "sales,operator"
        );
        assert_eq!(t("0123456789abcdef").unwrap().0, "line-3");
        assert!(t("admin ops:0123456789abcdef")
            .unwrap_err()
            .contains("unknown role \"admin\""));
        let (get, post) = (Method::GET, Method::POST);
        assert_eq!(Needed::of(&post, "/v1/operator/void"), Needed::Operator);
        assert_eq!(Needed::of(&get, "/v1/operator/void"), Needed::Operator);
        assert_eq!(Needed::of(&post, "/v1/sales"), Needed::Sales);
        assert_eq!(Needed::of(&get, "/v1/units/X"), Needed::Any);
        assert!(!Needed::Sales.allows(Roles {
            operator: true,
            ..Roles::default()
        }));
        assert_eq!(Needed::of(&get, "/metrics"), Needed::Metrics);
        assert!(!Needed::Metrics.allows(Roles::SALES));
        assert!(Needed::Metrics.allows(t("metrics prom:0123456789abcdef").unwrap().2));
    }
}
