//! Witness cosignatures, `cosignature/v1` (c2sp.org/tlog-cosignature): a
//! timestamped Ed25519 signature line a witness adds to a checkpoint to
//! say "as of this time, this is the largest consistent head I have seen
//! of this log". The line is one more signature of the signed note, so a
//! checkpoint with cosignatures still opens with the log's key
//! ([`crate::log::open_checkpoint`] skips lines by other keys).

use std::path::Path;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::{SigningKey, VerifyingKey};
use rand::rngs::OsRng;
use rand::TryRngCore;
use sha2::{Digest, Sha256};

use super::note::{self, NoteError, Vkey, TYPE_COSIGNATURE_V1};
use ticket_issuer_core::error::Error;
use ticket_issuer_core::{fsutil, seal};

/// The header line of the signed message, its domain separation.
pub const HEADER: &str = "cosignature/v1";

/// Bytes of a cosignature after its key ID: 8-byte big-endian timestamp
/// and 64-byte Ed25519 signature (`timestamped_signature`).
pub const TIMESTAMPED_SIGNATURE_LEN: usize = 72;

/// A cosigner's key ID: SHA-256(name ‖ 0x0A ‖ 0x04 ‖ public key)[..4].
#[must_use]
pub fn key_id(name: &str, public: &VerifyingKey) -> [u8; 4] {
    note::key_id(name, TYPE_COSIGNATURE_V1, public)
}

/// The message a cosignature signs: `cosignature/v1\ntime <seconds>\n`
/// then the checkpoint's whole note text (`body`, with its final newline,
/// without the signatures).
#[must_use]
pub fn signed_message(time: u64, body: &str) -> String {
    format!("{HEADER}\ntime {time}\n{body}")
}

/// The default name of a witness key: `ticket-issuer/witness/<first 8
/// bytes of SHA-256(public key), hex>`, as the ledger names its log.
#[must_use]
pub fn default_name(public: &VerifyingKey) -> String {
    let digest = Sha256::digest(public.as_bytes());
    format!("ticket-issuer/witness/{}", hex::encode(&digest[..8]))
}

/// A witness's signing key and name.
pub struct Cosigner {
    signing: SigningKey,
    vkey: Vkey,
}

impl Cosigner {
    /// The cosigner of `signing` under `name` (default: [`default_name`]).
    pub fn new(signing: SigningKey, name: Option<&str>) -> Result<Cosigner, Error> {
        let public = signing.verifying_key();
        let name = name.map_or_else(|| default_name(&public), str::to_string);
        let vkey =
            Vkey::new(&name, TYPE_COSIGNATURE_V1, public).map_err(|e| Error::ServiceConfig {
                reason: format!("--name: {e}"),
            })?;
        Ok(Cosigner { signing, vkey })
    }

    /// Makes a new key and writes it to `path` (PKCS#8 PEM, mode 0600);
    /// an existing file is never overwritten.
    pub fn generate(path: &Path, name: Option<&str>) -> Result<Cosigner, Error> {
        let mut seed = [0u8; 32];
        OsRng
            .try_fill_bytes(&mut seed)
            .map_err(|e| Error::Internal {
                what: format!("the OS random source failed ({e})"),
            })?;
        let signing = SigningKey::from_bytes(&seed);
        fsutil::write_atomic(path, seal::private_pem(&signing).as_bytes(), 0o600, false)?;
        Cosigner::new(signing, name)
    }

    /// Reads the key at `path`; refused if others may read it.
    pub fn load(path: &Path, name: Option<&str>) -> Result<Cosigner, Error> {
        ticket_issuer_core::store::private_only(path)?;
        Cosigner::new(seal::read_private(path)?, name)
    }

    /// Its verifier key (type 0x04), what a log or client is configured with.
    #[must_use]
    pub fn vkey(&self) -> &Vkey {
        &self.vkey
    }

    /// The cosignature line of the checkpoint text `body` at `time`:
    /// `— <name> <base64(key ID ‖ time, 8 bytes big-endian ‖ signature)>\n`.
    #[must_use]
    pub fn cosign(&self, body: &str, time: u64) -> String {
        let signature = seal::sign(&self.signing, signed_message(time, body).as_bytes());
        let mut blob = self.vkey.id().to_vec();
        blob.extend_from_slice(&time.to_be_bytes());
        blob.extend_from_slice(&signature);
        format!("\u{2014} {} {}\n", self.vkey.name(), BASE64.encode(blob))
    }
}

/// Why a note carries no valid cosignature by a witness.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CosignatureError {
    /// The vkey is not a cosignature key (type 0x04).
    #[error("the key {0} is not a cosignature/v1 key (type 0x04)")]
    NotCosignatureKey(String),
    /// The note is not a signed note.
    #[error("not a signed note: {0}")]
    Note(#[from] NoteError),
    /// No line carries this witness's name and key ID.
    #[error("no cosignature by {name} (key ID {id}) in the note")]
    Missing {
        /// The witness's name.
        name: String,
        /// Its key ID, hex.
        id: String,
    },
    /// The line by this key is not 72 bytes after its key ID.
    #[error(
        "the cosignature by {0} is not a timestamped signature (8-byte time, 64-byte signature)"
    )]
    Length(String),
    /// The signature does not verify over the message at its time.
    #[error("the cosignature by {name} at time {time} does not verify: the checkpoint or the time was altered")]
    Invalid {
        /// The witness's name.
        name: String,
        /// The time the line states.
        time: u64,
    },
}

/// Verifies the cosignature by `vkey` (type 0x04) in the signed note
/// `note` (a checkpoint with its signature lines) and returns its time,
/// in seconds since the Unix epoch. Lines by other keys are ignored; a
/// line by this key that does not verify is an error.
pub fn verify_cosignature(note: &str, vkey: &Vkey) -> Result<u64, CosignatureError> {
    if vkey.kind() != TYPE_COSIGNATURE_V1 {
        return Err(CosignatureError::NotCosignatureKey(vkey.to_string()));
    }
    let parsed = note::parse(note)?;
    let line = parsed
        .signatures
        .iter()
        .find(|s| vkey.names(s))
        .ok_or_else(|| CosignatureError::Missing {
            name: vkey.name().to_string(),
            id: hex::encode(vkey.id()),
        })?;
    if line.signature.len() != TIMESTAMPED_SIGNATURE_LEN {
        return Err(CosignatureError::Length(vkey.name().to_string()));
    }
    let (time, signature) = line.signature.split_at(8);
    let time = u64::from_be_bytes(time.try_into().expect("8 bytes"));
    let signature: [u8; 64] = signature.try_into().expect("64 bytes");
    let message = signed_message(time, parsed.text);
    if !seal::verify(vkey.key(), message.as_bytes(), &signature) {
        return Err(CosignatureError::Invalid {
            name: vkey.name().to_string(),
            time,
        });
    }
    Ok(time)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vector file: `key: value` header lines, a blank line, the note.
    fn vector(text: &str) -> (std::collections::BTreeMap<&str, &str>, &str) {
        let (header, body) = text.split_once("\n\n").unwrap();
        let fields = header.lines().filter_map(|l| l.split_once(": ")).collect();
        (fields, body)
    }

    const REMORA: &str = include_str!("../../../../fixtures/witness/remora-cosignature.txt");

    #[test]
    fn public_witness_cosignature_verifies() {
        let (fields, note) = vector(REMORA);
        let vkey = Vkey::parse(fields["witness"]).unwrap();
        assert_eq!(hex::encode(vkey.id()), "da77ade7");
        assert_eq!(
            hex::encode(key_id(vkey.name(), vkey.key())),
            "da77ade7",
            "the cosigner key ID derivation"
        );
        let time: u64 = fields["time"].parse().unwrap();
        assert_eq!(verify_cosignature(note, &vkey), Ok(time));
        // The log's own signature is still there for the log's key.
        let log = Vkey::parse(fields["log"]).unwrap();
        assert!(note::signed_by(&note::parse(note).unwrap(), &log));
    }

    #[test]
    fn public_witness_tampered() {
        let (fields, note) = vector(REMORA);
        let vkey = Vkey::parse(fields["witness"]).unwrap();
        // One bit of the size flipped: the text is not what was cosigned.
        let altered = note.replacen("1432088532", "1432088533", 1);
        assert!(matches!(
            verify_cosignature(&altered, &vkey),
            Err(CosignatureError::Invalid { .. })
        ));
    }

    fn cosigner() -> Cosigner {
        Cosigner::new(SigningKey::from_bytes(&[7; 32]), Some("witness.test/w1")).unwrap()
    }

    const BODY: &str = "example.com/log\n5\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";

    fn signed() -> String {
        format!("{BODY}\n\u{2014} example.com/log AAAAAAAA\n")
    }

    #[test]
    fn cosign_then_verify() {
        let c = cosigner();
        let note = signed() + &c.cosign(BODY, 1_700_000_000);
        assert_eq!(verify_cosignature(&note, c.vkey()), Ok(1_700_000_000));
        let printed = c.vkey().to_string();
        assert_eq!(Vkey::parse(&printed).unwrap(), *c.vkey());
        assert!(printed.starts_with("witness.test/w1+"));
    }

    #[test]
    fn tamper_vectors() {
        let c = cosigner();
        let line = c.cosign(BODY, 1_700_000_000);
        let blob = BASE64
            .decode(line.trim_end().rsplit_once(' ').unwrap().1)
            .unwrap();
        let relined = |blob: &[u8]| format!("\u{2014} witness.test/w1 {}\n", BASE64.encode(blob));
        // A bit of the signature flipped.
        let mut flipped = blob.clone();
        flipped[20] ^= 1;
        assert!(matches!(
            verify_cosignature(&(signed() + &relined(&flipped)), c.vkey()),
            Err(CosignatureError::Invalid { .. })
        ));
        // Another time than signed.
        let mut later = blob.clone();
        later[11] ^= 1;
        assert_eq!(
            verify_cosignature(&(signed() + &relined(&later)), c.vkey()),
            Err(CosignatureError::Invalid {
                name: "witness.test/w1".into(),
                time: 1_700_000_001
            })
        );
        // Another key ID: the line is not this witness's.
        let mut other = blob.clone();
        other[0] ^= 1;
        assert!(matches!(
            verify_cosignature(&(signed() + &relined(&other)), c.vkey()),
            Err(CosignatureError::Missing { .. })
        ));
        // Trailing garbage in the signature.
        let mut long = blob.clone();
        long.push(0);
        assert_eq!(
            verify_cosignature(&(signed() + &relined(&long)), c.vkey()),
            Err(CosignatureError::Length("witness.test/w1".into()))
        );
        // Signed with the type-0x01 key ID of the same key: not a cosignature.
        let plain = Vkey::new("witness.test/w1", note::TYPE_ED25519, *c.vkey().key()).unwrap();
        assert!(matches!(
            verify_cosignature(&(signed() + &line), &plain),
            Err(CosignatureError::NotCosignatureKey(_))
        ));
    }
}
