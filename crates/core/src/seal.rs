//! The issuer's Ed25519 signing key, its PEM files, and the seal: a
//! signature over a block header (or a manifest) exactly as stored.

use std::path::Path;

use ed25519_dalek::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, KeypairBytes,
};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};

use crate::error::Error;
use crate::fsutil;

/// PEM line endings.
use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;

/// Signs `message` (header or manifest bytes as stored).
pub fn sign(key: &SigningKey, message: &[u8]) -> [u8; 64] {
    key.sign(message).to_bytes()
}

/// True iff `signature` is `signer`'s Ed25519 signature of `message`
/// (strict verification: no malleable or small-order forms).
pub fn verify(signer: &VerifyingKey, message: &[u8], signature: &[u8; 64]) -> bool {
    let sig = Signature::from_bytes(signature);
    signer.verify(message, &sig).is_ok() && signer.verify_strict(message, &sig).is_ok()
}

/// The private key as PKCS#8 v1 PEM (no embedded public key), which
/// OpenSSL 3.0 reads; ed25519-dalek's own encoder writes v2.
pub fn private_pem(key: &SigningKey) -> String {
    let pair = KeypairBytes {
        secret_key: key.to_bytes(),
        public_key: None,
    };
    pair.to_pkcs8_pem(LineEnding::LF)
        .expect("a 32-byte key always encodes")
        .to_string()
}

/// The public key as SPKI PEM.
pub fn public_pem(key: &VerifyingKey) -> String {
    key.to_public_key_pem(LineEnding::LF)
        .expect("a public key always encodes")
}

/// Reads a PKCS#8 (v1 or v2) private key PEM file.
pub fn read_private(path: &Path) -> Result<SigningKey, Error> {
    let text = fsutil::read_small_text(path, fsutil::KEY_FILE_LIMIT)?;
    private_from_pem(path, &text)
}

/// Parses a PKCS#8 (v1 or v2) private key PEM; `path` names it in messages.
pub fn private_from_pem(path: &Path, text: &str) -> Result<SigningKey, Error> {
    SigningKey::from_pkcs8_pem(text).map_err(|e| Error::BadKey {
        path: path.to_path_buf(),
        reason: format!("not an Ed25519 PKCS#8 private key PEM ({e})"),
    })
}

/// Reads an SPKI public key PEM file.
pub fn read_public(path: &Path) -> Result<VerifyingKey, Error> {
    let text = fsutil::read_small_text(path, fsutil::KEY_FILE_LIMIT)?;
    public_from_pem(path, &text)
}

/// Parses an SPKI public key PEM; `path` names it in messages.
pub fn public_from_pem(path: &Path, text: &str) -> Result<VerifyingKey, Error> {
    VerifyingKey::from_public_key_pem(text).map_err(|e| Error::BadKey {
        path: path.to_path_buf(),
        reason: format!("not an Ed25519 SPKI public key PEM ({e})"),
    })
}
