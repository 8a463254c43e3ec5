//! C2SP signed notes (c2sp.org/signed-note) as a witness reads them: the
//! verifier key strings (`vkey`s) of the two Ed25519 signature types this
//! project uses, 0x01 (a log's checkpoint signature) and 0x04 (a witness's
//! `cosignature/v1`), and a strict split of a note into its text and its
//! signature lines. The bytes verified are always the note's text as
//! received, never a re-encoding.

use std::fmt;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::VerifyingKey;
use sha2::{Digest, Sha256};

use ticket_issuer_core::seal;

/// Signature type 0x01: Ed25519 over the note text (signed-note §Ed25519
/// signatures): how a log signs its checkpoints.
pub const TYPE_ED25519: u8 = 0x01;
/// Signature type 0x04: a timestamped Ed25519 witness cosignature
/// (c2sp.org/tlog-cosignature).
pub const TYPE_COSIGNATURE_V1: u8 = 0x04;

/// Most signature lines read from one note: the spec asks to accept at
/// least 16; more than this is refused as malformed.
pub const MAX_SIGNATURES: usize = 64;

/// A signed-note key ID: SHA-256(name ‖ 0x0A ‖ type ‖ public key)[..4].
#[must_use]
pub fn key_id(name: &str, kind: u8, public: &VerifyingKey) -> [u8; 4] {
    let digest = Sha256::new()
        .chain_update(name.as_bytes())
        .chain_update([0x0a, kind])
        .chain_update(public.as_bytes())
        .finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

/// Whether `name` may name a key: non-empty, no Unicode space, no `+`
/// (signed-note §Format), no control character.
#[must_use]
pub fn valid_key_name(name: &str) -> bool {
    !name.is_empty()
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c == '+' || c.is_control())
}

/// An Ed25519 verifier key of type 0x01 or 0x04, as a `vkey` string
/// `<name>+<hex key ID>+<base64(type ‖ 32-byte public key)>`.
// INVARIANT: `id` is `key_id(name, kind, key)` and `name` is valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vkey {
    name: String,
    kind: u8,
    key: VerifyingKey,
    id: [u8; 4],
}

/// Why a vkey string was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VkeyError {
    /// Not three `+`-separated parts.
    #[error("a verifier key is <name>+<hex key ID>+<base64 key>; this one has no two '+'")]
    Parts,
    /// The name is empty or holds a space, a `+` or a control character.
    #[error("the key name {0:?} is empty or holds a space, '+' or a control character")]
    Name(String),
    /// The key ID is not 8 hex digits.
    #[error("the key ID {0:?} is not 8 hex digits")]
    Id(String),
    /// The key is not base64.
    #[error("the key is not base64")]
    Base64,
    /// A signature type this project does not verify.
    #[error(
        "signature type 0x{0:02x} is not supported (0x01 Ed25519 and 0x04 cosignature/v1 are)"
    )]
    Type(u8),
    /// Not a 32-byte Ed25519 public key.
    #[error("the key is not a 32-byte Ed25519 public key")]
    Key,
    /// The stated key ID is not the one derived from name, type and key.
    #[error("the key ID {stated} is not the one of this name and key ({derived}): a typo, or a key of another name")]
    IdMismatch {
        /// As written.
        stated: String,
        /// As derived.
        derived: String,
    },
}

impl Vkey {
    /// The vkey of `key` under `name` with signature type `kind`.
    pub fn new(name: &str, kind: u8, key: VerifyingKey) -> Result<Vkey, VkeyError> {
        if !valid_key_name(name) {
            return Err(VkeyError::Name(name.to_string()));
        }
        if kind != TYPE_ED25519 && kind != TYPE_COSIGNATURE_V1 {
            return Err(VkeyError::Type(kind));
        }
        Ok(Vkey {
            name: name.to_string(),
            kind,
            id: key_id(name, kind, &key),
            key,
        })
    }

    /// Parses a vkey string; the key ID must be the one derived.
    pub fn parse(text: &str) -> Result<Vkey, VkeyError> {
        let (name, rest) = text.split_once('+').ok_or(VkeyError::Parts)?;
        let (id, key) = rest.split_once('+').ok_or(VkeyError::Parts)?;
        if !valid_key_name(name) {
            return Err(VkeyError::Name(name.to_string()));
        }
        let stated: [u8; 4] = hex::decode(id)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| VkeyError::Id(id.to_string()))?;
        let bytes = BASE64.decode(key).map_err(|_| VkeyError::Base64)?;
        let (&kind, key) = bytes.split_first().ok_or(VkeyError::Key)?;
        if kind != TYPE_ED25519 && kind != TYPE_COSIGNATURE_V1 {
            return Err(VkeyError::Type(kind));
        }
        let key = <[u8; 32]>::try_from(key)
            .ok()
            .and_then(|k| VerifyingKey::from_bytes(&k).ok())
            .ok_or(VkeyError::Key)?;
        let vkey = Vkey::new(name, kind, key)?;
        if vkey.id != stated {
            return Err(VkeyError::IdMismatch {
                stated: id.to_string(),
                derived: hex::encode(vkey.id),
            });
        }
        Ok(vkey)
    }

    /// The key's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its signature type (0x01 or 0x04).
    #[must_use]
    pub fn kind(&self) -> u8 {
        self.kind
    }

    /// The Ed25519 public key.
    #[must_use]
    pub fn key(&self) -> &VerifyingKey {
        &self.key
    }

    /// Its key ID.
    #[must_use]
    pub fn id(&self) -> [u8; 4] {
        self.id
    }

    /// Whether `signature` is by this key (same name and key ID).
    #[must_use]
    pub fn names(&self, signature: &NoteSignature) -> bool {
        signature.name == self.name && signature.id == self.id
    }
}

impl fmt::Display for Vkey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut key = vec![self.kind];
        key.extend_from_slice(self.key.as_bytes());
        write!(
            f,
            "{}+{}+{}",
            self.name,
            hex::encode(self.id),
            BASE64.encode(key)
        )
    }
}

/// One signature line of a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteSignature<'a> {
    /// The key name.
    pub name: &'a str,
    /// The key ID (the first four bytes of the decoded signature).
    pub id: [u8; 4],
    /// The rest of the decoded signature.
    pub signature: Vec<u8>,
}

/// A note split into its text and its signatures, before any is verified.
#[derive(Clone, Debug)]
pub struct SignedNote<'a> {
    /// The text, with its final newline, as received: what is signed.
    pub text: &'a str,
    /// Its signature lines, in order.
    pub signatures: Vec<NoteSignature<'a>>,
}

/// Why a note is not a well-formed signed note.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoteError {
    /// A control character other than newline.
    #[error("the note holds a control character other than newline")]
    Control,
    /// No blank line before the signatures, or no newline at the end.
    #[error("not a signed note: it needs its text, a blank line, then signature lines, each ending in a newline")]
    Shape,
    /// A signature line is not `— <name> <base64>`.
    #[error("signature line {0} is not \"— <key name> <base64>\"")]
    Line(usize),
    /// More than [`MAX_SIGNATURES`] signature lines.
    #[error("more than {MAX_SIGNATURES} signature lines")]
    TooMany,
}

/// Splits `note` at its last blank line (signed-note §Format): the text
/// (ending in a newline), then one or more `— <name> <base64>` lines,
/// each ending in a newline.
pub fn parse(note: &str) -> Result<SignedNote<'_>, NoteError> {
    if note.chars().any(|c| c.is_control() && c != '\n') {
        return Err(NoteError::Control);
    }
    if !note.ends_with('\n') {
        return Err(NoteError::Shape);
    }
    let split = note.rfind("\n\n").ok_or(NoteError::Shape)?;
    let (text, lines) = (&note[..=split], &note[split + 2..]);
    if lines.is_empty() {
        return Err(NoteError::Shape);
    }
    let mut signatures = Vec::new();
    for (n, line) in lines.lines().enumerate() {
        if signatures.len() == MAX_SIGNATURES {
            return Err(NoteError::TooMany);
        }
        signatures.push(signature_line(line).ok_or(NoteError::Line(n + 1))?);
    }
    Ok(SignedNote { text, signatures })
}

/// `— <name> <base64(key ID ‖ signature)>`, without its newline.
fn signature_line(line: &str) -> Option<NoteSignature<'_>> {
    let (name, b64) = line.strip_prefix("\u{2014} ")?.split_once(' ')?;
    if !valid_key_name(name) {
        return None;
    }
    let blob = BASE64.decode(b64).ok()?;
    if blob.len() < 4 {
        return None;
    }
    Some(NoteSignature {
        name,
        id: [blob[0], blob[1], blob[2], blob[3]],
        signature: blob[4..].to_vec(),
    })
}

/// Whether a signature of `note` by `vkey` (type 0x01) verifies over its
/// text: `Ok(true)` if one does, `Ok(false)` if the note has none by this
/// key; a line by this key that does not verify is `Ok(false)` too (the
/// spec lets a verifier reject the whole note then).
pub fn signed_by(note: &SignedNote, vkey: &Vkey) -> bool {
    vkey.kind == TYPE_ED25519
        && note.signatures.iter().filter(|s| vkey.names(s)).any(|s| {
            <[u8; 64]>::try_from(s.signature.as_slice())
                .is_ok_and(|sig| seal::verify(&vkey.key, note.text.as_bytes(), &sig))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    // signed-note's own example key (c2sp.org/signed-note, quoted in
    // fixtures/witness/README.md): its name, type and key give its ID.
    const EXAMPLE: &str = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";

    #[test]
    fn vkey_parses_and_prints_back() {
        let vkey = Vkey::parse(EXAMPLE).unwrap();
        assert_eq!(vkey.name(), "example.com/foo");
        assert_eq!(vkey.kind(), TYPE_ED25519);
        assert_eq!(hex::encode(vkey.id()), "530d903a");
        assert_eq!(vkey.to_string(), EXAMPLE);
    }

    #[test]
    fn vkey_refusals() {
        let wrong_id = EXAMPLE.replace("530d903a", "530d903b");
        assert!(matches!(
            Vkey::parse(&wrong_id),
            Err(VkeyError::IdMismatch { .. })
        ));
        assert_eq!(Vkey::parse("a+b"), Err(VkeyError::Parts));
        assert_eq!(
            Vkey::parse("+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"),
            Err(VkeyError::Name(String::new()))
        );
        assert_eq!(
            Vkey::parse("a+530d903+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"),
            Err(VkeyError::Id("530d903".into()))
        );
        assert_eq!(Vkey::parse("a+530d903a+!!"), Err(VkeyError::Base64));
        assert_eq!(Vkey::parse("a+530d903a+AwEB"), Err(VkeyError::Type(3)));
        assert_eq!(Vkey::parse("a+530d903a+AQEB"), Err(VkeyError::Key));
    }

    #[test]
    fn signed_note_example_verifies() {
        // The example note of c2sp.org/signed-note's tests.
        let note = "This is an example message.\n\n\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n";
        let vkey = Vkey::parse(EXAMPLE).unwrap();
        let parsed = parse(note).unwrap();
        assert_eq!(parsed.text, "This is an example message.\n");
        assert!(signed_by(&parsed, &vkey));
        let altered = note.replace("example message", "example massage");
        assert!(!signed_by(&parse(&altered).unwrap(), &vkey));
    }

    #[test]
    fn malformed_notes() {
        assert_eq!(parse("text\n").unwrap_err(), NoteError::Shape);
        assert_eq!(parse("text\n\n").unwrap_err(), NoteError::Shape);
        assert_eq!(
            parse("text\n\n\u{2014} a AAAAAA==").unwrap_err(),
            NoteError::Shape
        );
        assert_eq!(
            parse("text\n\n- a AAAAAA==\n").unwrap_err(),
            NoteError::Line(1)
        );
        assert_eq!(
            parse("te\rxt\n\n\u{2014} a AAAAAA==\n").unwrap_err(),
            NoteError::Control
        );
    }
}
