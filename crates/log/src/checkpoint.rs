//! The log's key and its checkpoints: C2SP tlog-checkpoint signed notes
//! (origin, size, base64 root) signed with the ledger's Ed25519 key, and
//! their opening.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};
use ticket_issuer_core::merkle::Hash;
use ticket_issuer_core::seal;

/// The key that signs the ledger's heads: its own Ed25519 key, kept in
/// the store's keys folder (`ledger.key.pem`, 0600, and `ledger.pub.pem`),
/// made on the first redemption. Separate from the issuer's sealing key, so
/// a redemption host never holds the key that seals blocks.
pub struct LedgerKey {
    signing: SigningKey,
    name: String,
}

/// The log's name (its checkpoint origin and key name), from its key:
/// `ticket-issuer/ledger/<first 8 bytes of SHA-256(public key), hex>`.
#[must_use]
pub fn origin(public: &VerifyingKey) -> String {
    let digest = Sha256::digest(public.as_bytes());
    format!("ticket-issuer/ledger/{}", hex::encode(&digest[..8]))
}

/// C2SP signed-note key ID of an Ed25519 key:
/// SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[..4].
#[must_use]
pub fn key_id(name: &str, public: &VerifyingKey) -> [u8; 4] {
    let digest = Sha256::new()
        .chain_update(name.as_bytes())
        .chain_update([0x0a, 0x01])
        .chain_update(public.as_bytes())
        .finalize();
    [digest[0], digest[1], digest[2], digest[3]]
}

/// The note verifier key line Go's `note.NewVerifier` reads:
/// `<name>+<hex key id>+<base64(0x01 ‖ public key)>`.
#[must_use]
pub fn verifier_key(public: &VerifyingKey) -> String {
    let name = origin(public);
    let mut key = vec![0x01];
    key.extend_from_slice(public.as_bytes());
    format!(
        "{name}+{}+{}",
        hex::encode(key_id(&name, public)),
        BASE64.encode(key)
    )
}

/// The checkpoint body (C2SP tlog-checkpoint): origin, size, base64 root.
fn checkpoint_body(origin: &str, size: u64, root: &Hash) -> String {
    format!("{origin}\n{size}\n{}\n", BASE64.encode(root))
}

impl LedgerKey {
    /// The ledger key `signing`.
    #[must_use]
    pub fn from_signing(signing: SigningKey) -> LedgerKey {
        let name = origin(&signing.verifying_key());
        LedgerKey { signing, name }
    }

    /// The public key.
    #[must_use]
    pub fn public(&self) -> VerifyingKey {
        self.signing.verifying_key()
    }

    /// The signed note of the head (`size`, `root`).
    #[must_use]
    pub fn sign_checkpoint(&self, size: u64, root: &Hash) -> String {
        let body = checkpoint_body(&self.name, size, root);
        let signature = self.signing.sign(body.as_bytes()).to_bytes();
        let mut blob = key_id(&self.name, &self.public()).to_vec();
        blob.extend_from_slice(&signature);
        format!("{body}\n\u{2014} {} {}\n", self.name, BASE64.encode(blob))
    }
}

/// A checkpoint whose signature verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// Its origin line.
    pub origin: String,
    /// The log size it signs.
    pub size: u64,
    /// The root it signs.
    pub root: Hash,
}

/// Opens a signed note as a checkpoint of the log of `public`: the body is
/// origin, size and base64 root; a signature line by the key's name and key
/// ID must verify over the body. Newlines after the last signature line
/// are one (a note saved with `jq -r` or an editor has more). `Err` says
/// what is wrong.
pub fn open_checkpoint(note: &str, public: &VerifyingKey) -> Result<Checkpoint, String> {
    let note = format!("{}\n", note.trim_end_matches('\n'));
    let split = note
        .rfind("\n\n")
        .ok_or("not a signed note: no blank line between its text and its signatures")?;
    let (body, signatures) = (&note[..=split], &note[split + 2..]);
    let name = origin(public);
    let id = key_id(&name, public);
    let mut others = Vec::new();
    let mut signed = false;
    for (n, line) in signatures.lines().enumerate() {
        let (signer, b64) = line
            .strip_prefix("\u{2014} ")
            .and_then(|rest| rest.rsplit_once(' '))
            .ok_or_else(|| {
                format!(
                    "signature line {} is not \"— <key name> <base64>\": {line:?}",
                    n + 1
                )
            })?;
        let blob = BASE64
            .decode(b64)
            .map_err(|_| format!("the signature by {signer} is not base64"))?;
        if signer != name || blob.len() != 68 || blob[..4] != id {
            others.push(signer.to_string());
            continue;
        }
        let sig: [u8; 64] = blob[4..].try_into().map_err(|_| "bad signature length")?;
        if !seal::verify(public, body.as_bytes(), &sig) {
            return Err(format!(
                "the signature by the ledger key {name} does not verify: the note's text was altered"
            ));
        }
        signed = true;
        break;
    }
    if !signed {
        return Err(format!(
            "signed by {} but not by the ledger key given ({name}, key ID {}): check --ledger-key",
            others.join(", "),
            hex::encode(id)
        ));
    }
    let mut lines = body.lines();
    let origin_line = lines.next().unwrap_or_default().to_string();
    if origin_line != name {
        return Err(format!("origin {origin_line:?} is not this log's ({name})"));
    }
    let size = lines
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or("the size line is not a decimal number")?;
    let root = lines
        .next()
        .and_then(|r| BASE64.decode(r).ok())
        .and_then(|r| Hash::try_from(r.as_slice()).ok())
        .ok_or("the root line is not a base64 SHA-256 hash")?;
    Ok(Checkpoint {
        origin: origin_line,
        size,
        root,
    })
}
