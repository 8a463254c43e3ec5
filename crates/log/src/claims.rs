//! The issuer's signed end of an emission's claim period
//! (docs/REDEMPTION.md §End of claims): a short statement signed with the
//! issuer's sealing key, published into the ledger (SQLite or PostgreSQL).
//! Every redemption's transaction looks it up and refuses the emission's
//! units once it is there, whatever the node's local files say; `reveal`
//! refuses until it is there.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::Serialize;

use ticket_issuer_core::game::Game;
use ticket_issuer_core::seal;

/// The statement's first line.
pub const HEADER: &str = "ticket-issuer end of claims/v1";

/// A published end of claims.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct EndOfClaims {
    /// Game slug.
    pub game: String,
    /// The emission's number within its game.
    pub emission: u32,
    /// When the issuer ended the claim period (RFC 3339 UTC).
    pub ended_at: String,
    /// The signed statement, as stored.
    pub statement: String,
}

/// The signed body: `HEADER\ngame <slug>\nemission <N>\nended_at <time>\n`.
fn body(game: &str, emission: u32, ended_at: &str) -> String {
    format!("{HEADER}\ngame {game}\nemission {emission}\nended_at {ended_at}\n")
}

impl EndOfClaims {
    /// The statement for `game`'s emission `emission`, ended now, signed.
    #[must_use]
    pub fn sign(key: &SigningKey, game: Game, emission: u32) -> EndOfClaims {
        EndOfClaims::sign_at(key, game.slug(), emission, &utc_now())
    }

    /// The statement of `game`'s emission `emission` ended at `ended_at`,
    /// signed: Ed25519 signs deterministically, so the same key gives
    /// again the statement first published (`issuer ledger recover`).
    #[must_use]
    pub fn sign_at(key: &SigningKey, game: &str, emission: u32, ended_at: &str) -> EndOfClaims {
        let text = body(game, emission, ended_at);
        let signature = seal::sign(key, text.as_bytes());
        EndOfClaims {
            game: game.into(),
            emission,
            statement: format!("{text}signature {}\n", BASE64.encode(signature)),
            ended_at: ended_at.into(),
        }
    }

    /// Reads a stored statement back and checks its signature by `issuer`
    /// and that it is about `game`'s emission `emission`.
    pub fn open(
        statement: &str,
        issuer: &VerifyingKey,
        game: Game,
        emission: u32,
    ) -> Result<EndOfClaims, String> {
        let (text, sig_line) = statement
            .trim_end_matches('\n')
            .rsplit_once('\n')
            .ok_or("the statement has no signature line")?;
        let text = format!("{text}\n");
        let signature: [u8; 64] = sig_line
            .strip_prefix("signature ")
            .and_then(|s| BASE64.decode(s).ok())
            .and_then(|s| s.try_into().ok())
            .ok_or("the signature line is not `signature <base64 of 64 bytes>`")?;
        if !seal::verify(issuer, text.as_bytes(), &signature) {
            return Err("its signature is not the issuer's".into());
        }
        let ended_at = text
            .lines()
            .find_map(|l| l.strip_prefix("ended_at "))
            .unwrap_or_default()
            .to_string();
        if text != body(game.slug(), emission, &ended_at) {
            return Err(format!(
                "it is not a statement about {} emission {emission}",
                game.slug()
            ));
        }
        Ok(EndOfClaims {
            game: game.slug().into(),
            emission,
            ended_at,
            statement: statement.to_string(),
        })
    }
}

/// Now, as RFC 3339 UTC to the second.
pub fn utc_now() -> String {
    utc_at(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
}

/// Unix time `secs` as `utc_now` writes it.
#[must_use]
pub fn utc_at(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_opens_only_with_its_key_and_for_its_emission() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let s = EndOfClaims::sign(&key, Game::ILE_AU_TRESOR, 2);
        assert!(s.ended_at.len() == 20 && s.ended_at.ends_with('Z'));
        let public = key.verifying_key();
        assert!(EndOfClaims::open(&s.statement, &public, Game::ILE_AU_TRESOR, 2).is_ok());
        assert!(EndOfClaims::open(&s.statement, &public, Game::ILE_AU_TRESOR, 3).is_err());
        let other = SigningKey::from_bytes(&[8; 32]).verifying_key();
        assert!(EndOfClaims::open(&s.statement, &other, Game::ILE_AU_TRESOR, 2).is_err());
        let forged = s.statement.replace("emission 2", "emission 3");
        assert!(EndOfClaims::open(&forged, &public, Game::ILE_AU_TRESOR, 3).is_err());
    }
}
