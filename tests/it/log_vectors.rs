//! The ledger log vectors of fixtures/log/ (README there): leaf data lines of
//! every kind (`sale/v1`, `play/v1`, `ledger/v1`), their RFC 9162 leaf
//! hashes, the root after each entry, the C2SP checkpoint signed at the final
//! size by a fixed ledger key, and an inclusion and a consistency proof.
//!
//! `log_vectors_hold` recomputes every file with the ledger's own code and
//! compares it byte for byte: a change of the log's encoding fails it.
//! `log_vector_files_verify` reads the files alone and checks them as an
//! outside verifier does (SHA-256 and Ed25519), and with the project's
//! `open_checkpoint` and Merkle proof verifiers.
//!
//! Regenerate them with
//! `cargo test --release --test it -- --ignored log_vectors::generate_log_vectors`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::{Signature, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};
use ticket_issuer::derive;
use ticket_issuer::ledger::claims::EndOfClaims;
use ticket_issuer::ledger::log::{self, open_checkpoint, EntryFields, LedgerKey, LogEntry, Place};
use ticket_issuer::merkle::{self, Frontier, Hash};
use ticket_issuer::seal;
use ticket_issuer::store::Store;

const REGENERATE: &str =
    "cargo test --release --test it -- --ignored log_vectors::generate_log_vectors";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/log")
}

/// The ledger key's seed: bytes 00 01 … 1f (a public test key).
fn seed() -> [u8; 32] {
    std::array::from_fn(|i| i as u8)
}

/// The ledger key as the ledger loads it: its PEM file written into a
/// throwaway store's keys folder, then `LedgerKey::from_signing(store.ledger_signing_key())`.
fn ledger_key() -> LedgerKey {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::new(tmp.path());
    let keys = store.keys_dir();
    std::fs::create_dir(&keys).unwrap();
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o700)).unwrap();
    let signing = SigningKey::from_bytes(&seed());
    let path = keys.join("ledger.key.pem");
    std::fs::write(&path, seal::private_pem(&signing)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let key = LedgerKey::from_signing(store.ledger_signing_key().unwrap());
    assert_eq!(
        key.public(),
        signing.verifying_key(),
        "the ledger loaded another key than the one written"
    );
    key
}

/// Unit IDs of fixtures/derive/ (emission 1, block 1 of master 00 01 … 1f).
const IAT_0: &str = "IAT-1-1-0-7Z4ZQFW2";
const TE_0: &str = "TE-1-1-0-BDW418Y0";
const TE_1: &str = "TE-1-1-1-DJK0A3GQ";

/// A stand-in record digest: SHA-256 of a label naming the unit (the log
/// hashes the field as given; these vectors are about the log's encoding).
fn record_sha256(unit_id: &str) -> String {
    hex::encode(derive::sha256(
        format!("ticket-issuer log vector record {unit_id}").as_bytes(),
    ))
}

/// The log's entries in `seq` order: what each records, and its leaf data.
fn entries() -> Vec<(String, String)> {
    let place = |game, index| Place {
        game,
        emission: 1,
        block: 1,
        index,
    };
    let iat0 = place("ile-au-tresor", 0);
    let te0 = place("tresors-ensables", 0);
    let te1 = place("tresors-ensables", 1);
    let (iat0_record, te0_record) = (record_sha256(IAT_0), record_sha256(TE_0));
    vec![
        (
            format!("the sale of {IAT_0} (L'île au trésor)"),
            LogEntry::Sale {
                unit: iat0,
                sold_at: "2025-06-02T08:00:00.000Z",
            }
            .line(0),
        ),
        (
            format!("the sale of {TE_0} (Trésors Ensablés)"),
            LogEntry::Sale {
                unit: te0,
                sold_at: "2025-06-02T08:01:15.250Z",
            }
            .line(1),
        ),
        (
            format!("the play of {TE_0}: the player stopped after 3 rolls"),
            LogEntry::PlayEnd {
                unit: te0,
                steps: 3,
                how: "stop",
                ended_at: "2025-06-02T08:02:40.500Z",
            }
            .line(2),
        ),
        (
            format!("the sale of {TE_1} (Trésors Ensablés)"),
            LogEntry::Sale {
                unit: te1,
                sold_at: "2025-06-02T08:03:05.007Z",
            }
            .line(3),
        ),
        (
            format!("the play of {TE_1}: it ended by itself at roll 7"),
            LogEntry::PlayEnd {
                unit: te1,
                steps: 7,
                how: "end",
                ended_at: "2025-06-02T08:04:59.999Z",
            }
            .line(4),
        ),
        (
            format!("the redemption of {IAT_0}: lot 6 (singe-2), 10.00 EUR, no stop"),
            LogEntry::Redemption(EntryFields {
                game: "ile-au-tresor",
                emission: 1,
                block: 1,
                index: 0,
                unit_id: IAT_0,
                lot: 6,
                prize_cents: 1000,
                record_sha256: &iat0_record,
                redeemed_at: "2025-06-02T08:10:00.000Z",
                stopped_after_steps: None,
            })
            .line(5),
        ),
        (
            format!("the redemption of {TE_0}: lot 2 (arret), 2.50 EUR, stopped after 3 rolls"),
            LogEntry::Redemption(EntryFields {
                game: "tresors-ensables",
                emission: 1,
                block: 1,
                index: 0,
                unit_id: TE_0,
                lot: 2,
                prize_cents: 250,
                record_sha256: &te0_record,
                redeemed_at: "2025-06-02T08:11:30.125Z",
                stopped_after_steps: Some(3),
            })
            .line(6),
        ),
        (
            "the end of claims of Trésors Ensablés emission 1 (issue 21)".to_string(),
            LogEntry::EndOfClaims(&end_of_claims(
                "tresors-ensables",
                "2025-09-01T00:00:00.000Z",
            ))
            .line(7),
        ),
        (
            "the end of claims of L'île au trésor emission 1".to_string(),
            LogEntry::EndOfClaims(&end_of_claims("ile-au-tresor", "2025-09-01T00:00:01.000Z"))
                .line(8),
        ),
    ]
}

/// An end of claims with a stand-in statement: the log hashes the
/// statement as stored (`claims/v1`'s last field is its SHA-256).
fn end_of_claims(game: &str, ended_at: &str) -> EndOfClaims {
    EndOfClaims {
        game: game.into(),
        emission: 1,
        ended_at: ended_at.into(),
        statement: format!("ticket-issuer log vector statement {game} 1 {ended_at}\n"),
    }
}

/// The entry whose inclusion proof is given (in the tree of 9, its path
/// ends with the lone ninth leaf's subtree on its right).
const INCLUSION_INDEX: usize = 6;
/// The older size of the consistency proof (not a power of two: its root is
/// not a node of the newer tree).
const CONSISTENCY_FROM: usize = 3;

/// A leaf data line shown on one text line: `\` as `\\`, newline as `\n`.
fn visible(data: &str) -> String {
    data.replace('\\', "\\\\").replace('\n', "\\n")
}

/// The bytes a [`visible`] line shows.
fn unescape(shown: &str) -> String {
    let mut out = String::new();
    let mut chars = shown.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('\\') => out.push('\\'),
            other => panic!("bad escape \\{other:?} in {shown:?}"),
        }
    }
    out
}

fn header(what: &str, lines: &[&str]) -> String {
    let mut out = format!(
        "# {what} (fixtures/log/README.md). Written by the code:\n#   {REGENERATE}\n\
         # and checked byte for byte by tests/it/log_vectors.rs (log_vectors::log_vectors_hold).\n"
    );
    for l in lines {
        out.push_str(&format!("# {l}\n"));
    }
    out
}

/// Every fixture file as the code makes it: (file name, contents).
fn render() -> Vec<(&'static str, String)> {
    let key = ledger_key();
    let public = key.public();
    let origin = log::origin(&public);
    let key_id = log::key_id(&origin, &public);

    let key_txt = header(
        "The ledger key of the log vectors",
        &[
            "A test key (its seed is public): never use it for a real ledger. The origin is",
            "\"ticket-issuer/ledger/\" and SHA-256(public key)[:8] in hex; the key ID is",
            "SHA-256(origin || 0x0a || 0x01 || public key)[:4]; the verifier key is Go's note",
            "format: origin+keyid hex+base64(0x01 || public key). ledger.pub.pem is the",
            "same public key as SPKI PEM (for OpenSSL).",
        ],
    ) + &format!(
        "seed: {}\npublic-key: {}\norigin: {origin}\nkey-id: {}\nverifier-key: {}\n",
        hex::encode(seed()),
        hex::encode(public.as_bytes()),
        hex::encode(key_id),
        log::verifier_key(&public),
    );

    let entries = entries();
    let mut frontier = Frontier::default();
    let mut leaves: Vec<Hash> = Vec::new();
    let mut entries_txt = header(
        "The log vectors' entries: leaf data, leaf hashes, roots",
        &[
            "`entry N data` is entry N's leaf data (docs/REDEMPTION.md §Tamper-evident log),",
            "ASCII, shown on one line: `\\n` is its one newline byte (0x0a), `\\\\` a backslash.",
            "`entry N leaf` is SHA-256(0x00 || data); `root N` is the RFC 9162 Merkle Tree",
            "Hash of the first N leaf hashes (`root 0`: SHA-256 of nothing). The facts are",
            "stand-ins: the unit IDs are those of fixtures/derive/, each record_sha256 is",
            "SHA-256(\"ticket-issuer log vector record <unit ID>\").",
        ],
    );
    entries_txt.push_str(&format!("root 0: {}\n", hex::encode(frontier.root())));
    for (seq, (what, data)) in entries.iter().enumerate() {
        let leaf = merkle::leaf_hash(data.as_bytes());
        leaves.push(leaf);
        frontier.push(leaf);
        assert_eq!(
            frontier.root(),
            merkle::root_from_hashes(&leaves),
            "the Frontier and the tree code disagree at size {}",
            leaves.len()
        );
        entries_txt.push_str(&format!(
            "# entry {seq}: {what}\nentry {seq} data: {}\nentry {seq} leaf: {}\nroot {}: {}\n",
            visible(data),
            hex::encode(leaf),
            frontier.size(),
            hex::encode(frontier.root()),
        ));
    }

    let size = frontier.size();
    let root = frontier.root();
    let note = key.sign_checkpoint(size, &root);
    let (body, signature_line) = note
        .split_once("\n\n")
        .map(|(b, s)| (format!("{b}\n"), s.trim_end_matches('\n')))
        .expect("a signed note has a blank line");
    let blob = BASE64
        .decode(signature_line.rsplit_once(' ').unwrap().1)
        .unwrap();
    let head_txt = header(
        "The parts of checkpoint.txt, the signed head",
        &[
            "checkpoint.txt is the C2SP tlog-checkpoint signed note, byte for byte. Its signed",
            "body is its three first lines (origin, size, base64 root), each with its newline;",
            "after a blank line comes the signature line: U+2014 (em dash), a space, the key",
            "name (the origin), a space, base64(key ID || Ed25519 signature over the body).",
            "`signed-body` is shown as in entries.txt (`\\n`: one newline byte).",
        ],
    ) + &format!(
        "size: {size}\nroot: {}\nroot-base64: {}\nsigned-body: {}\nkey-id: {}\nsignature: {}\nsignature-line: {signature_line}\n",
        hex::encode(root),
        BASE64.encode(root),
        visible(&body),
        hex::encode(&blob[..4]),
        hex::encode(&blob[4..]),
    );

    let n = leaves.len();
    let inclusion = merkle::inclusion_proof(&leaves, INCLUSION_INDEX).unwrap();
    let consistency = merkle::consistency_proof(&leaves, CONSISTENCY_FROM).unwrap();
    let mut proofs_txt = header(
        "Proofs over the tree of entries.txt",
        &[
            "`inclusion path` is the RFC 9162 §2.1.3 inclusion proof (audit path) of entry",
            "`inclusion leaf-index` in the tree of `inclusion tree-size` entries, bottom-up;",
            "verify it with §2.1.3.2 from `inclusion leaf` to `inclusion root`.",
            "`consistency path` is the §2.1.4 consistency proof from the tree of `consistency",
            "from` entries to the one of `consistency to` entries; verify it with §2.1.4.2.",
        ],
    );
    proofs_txt.push_str(&format!(
        "inclusion leaf-index: {INCLUSION_INDEX}\ninclusion tree-size: {n}\ninclusion leaf: {}\ninclusion root: {}\n",
        hex::encode(leaves[INCLUSION_INDEX]),
        hex::encode(root),
    ));
    for (i, p) in inclusion.iter().enumerate() {
        proofs_txt.push_str(&format!("inclusion path {i}: {}\n", hex::encode(p)));
    }
    proofs_txt.push_str(&format!(
        "consistency from: {CONSISTENCY_FROM}\nconsistency to: {n}\nconsistency from-root: {}\nconsistency to-root: {}\n",
        hex::encode(merkle::root_from_hashes(&leaves[..CONSISTENCY_FROM])),
        hex::encode(root),
    ));
    for (i, p) in consistency.iter().enumerate() {
        proofs_txt.push_str(&format!("consistency path {i}: {}\n", hex::encode(p)));
    }

    vec![
        ("key.txt", key_txt),
        ("ledger.pub.pem", seal::public_pem(&public)),
        ("entries.txt", entries_txt),
        ("checkpoint.txt", note),
        ("head.txt", head_txt),
        ("proofs.txt", proofs_txt),
    ]
}

#[test]
#[ignore = "writes fixtures/log; run by hand to regenerate"]
fn generate_log_vectors() {
    std::fs::create_dir_all(dir()).unwrap();
    for (name, text) in render() {
        std::fs::write(dir().join(name), text).unwrap();
    }
}

/// The code still makes every file of fixtures/log/, byte for byte.
#[test]
fn log_vectors_hold() {
    for (name, text) in render() {
        let path = dir().join(name);
        let stored = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; regenerate: {REGENERATE}", path.display()));
        assert!(
            stored == text.as_bytes(),
            "fixtures/log/{name} differs from what the code makes now: the log's encoding \
             changed (every stored leaf and head would stop verifying). If that is meant, \
             regenerate with `{REGENERATE}`.\n--- stored\n{}\n--- made\n{text}",
            String::from_utf8_lossy(&stored)
        );
    }
}

/// The `name: value` lines of a vector file.
fn values(name: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir().join(name)).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (k, v) = l
                .split_once(": ")
                .unwrap_or_else(|| panic!("{name}: bad line {l:?}"));
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn value<'a>(values: &'a [(String, String)], name: &str) -> &'a str {
    values
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name:?} line"))
}

fn hash(hex_text: &str) -> Hash {
    hex::decode(hex_text)
        .ok()
        .and_then(|b| Hash::try_from(b.as_slice()).ok())
        .unwrap_or_else(|| panic!("not a 32-byte hex hash: {hex_text:?}"))
}

/// The `<prefix> 0`, `<prefix> 1`, … hashes of a file.
fn path(values: &[(String, String)], prefix: &str) -> Vec<Hash> {
    (0..)
        .map_while(|i| {
            values
                .iter()
                .find(|(k, _)| *k == format!("{prefix} {i}"))
                .map(|(_, v)| hash(v))
        })
        .collect()
}

/// Each hash of `proof` with one bit flipped.
fn flipped(proof: &[Hash]) -> impl Iterator<Item = Vec<Hash>> + '_ {
    (0..proof.len()).map(|i| {
        let mut bad = proof.to_vec();
        bad[i][i % 32] ^= 0x01;
        bad
    })
}

/// The files, read alone, check out: as an outside verifier checks them
/// (SHA-256, Ed25519 over the note's body, the RFC 9162 algorithms as
/// docs/REDEMPTION.md §Vectors describes them), and with the project's
/// `open_checkpoint` and `merkle` verifiers; a changed note, key or proof
/// is refused.
#[test]
fn log_vector_files_verify() {
    // The key.
    let key = values("key.txt");
    let public_bytes: [u8; 32] = hex::decode(value(&key, "public-key"))
        .unwrap()
        .try_into()
        .unwrap();
    let public = VerifyingKey::from_bytes(&public_bytes).unwrap();
    assert_eq!(
        public,
        SigningKey::from_bytes(&hash(value(&key, "seed"))).verifying_key()
    );
    assert_eq!(
        seal::read_public(&dir().join("ledger.pub.pem")).unwrap(),
        public
    );
    let origin = format!(
        "ticket-issuer/ledger/{}",
        hex::encode(&Sha256::digest(public_bytes)[..8])
    );
    assert_eq!(value(&key, "origin"), origin);
    assert_eq!(log::origin(&public), origin);
    let mut id_input = origin.as_bytes().to_vec();
    id_input.extend_from_slice(&[0x0a, 0x01]);
    id_input.extend_from_slice(&public_bytes);
    let key_id = Sha256::digest(&id_input)[..4].to_vec();
    assert_eq!(value(&key, "key-id"), hex::encode(&key_id));
    assert_eq!(log::key_id(&origin, &public).to_vec(), key_id);
    let mut raw = vec![0x01];
    raw.extend_from_slice(&public_bytes);
    let verifier = format!("{origin}+{}+{}", hex::encode(&key_id), BASE64.encode(raw));
    assert_eq!(value(&key, "verifier-key"), verifier);
    assert_eq!(log::verifier_key(&public), verifier);

    // The leaves and roots: SHA-256(0x00 || data), then the Merkle Tree Hash.
    let entry_values = values("entries.txt");
    let mut leaves = Vec::new();
    for seq in 0.. {
        let Some((_, shown)) = entry_values
            .iter()
            .find(|(k, _)| *k == format!("entry {seq} data"))
        else {
            break;
        };
        let data = unescape(shown);
        assert!(
            data.is_ascii() && data.ends_with('\n') && data.matches('\n').count() == 1,
            "entry {seq}: not one ASCII line: {data:?}"
        );
        let leaf: Hash = Sha256::new()
            .chain_update([0x00])
            .chain_update(data.as_bytes())
            .finalize()
            .into();
        assert_eq!(merkle::leaf_hash(data.as_bytes()), leaf);
        assert_eq!(
            hash(value(&entry_values, &format!("entry {seq} leaf"))),
            leaf
        );
        leaves.push(leaf);
    }
    assert_eq!(leaves.len(), entries().len());
    let roots: Vec<Hash> = (0..=leaves.len())
        .map(|n| hash(value(&entry_values, &format!("root {n}"))))
        .collect();
    for (n, root) in roots.iter().enumerate() {
        assert_eq!(merkle::root_from_hashes(&leaves[..n]), *root, "root {n}");
    }
    let size = leaves.len();

    // The checkpoint, as an outside verifier reads it: body, blank line,
    // `— <name> <base64(key ID || signature)>`.
    let note = std::fs::read_to_string(dir().join("checkpoint.txt")).unwrap();
    let head = values("head.txt");
    let (body, signatures) = note.split_once("\n\n").unwrap();
    let body = format!("{body}\n");
    assert_eq!(unescape(value(&head, "signed-body")), body);
    assert_eq!(
        body,
        format!("{origin}\n{size}\n{}\n", BASE64.encode(roots[size]))
    );
    assert_eq!(value(&head, "size"), size.to_string());
    assert_eq!(hash(value(&head, "root")), roots[size]);
    assert_eq!(value(&head, "root-base64"), BASE64.encode(roots[size]));
    let signature_line = signatures.strip_suffix('\n').unwrap();
    assert!(!signature_line.contains('\n'), "one signature line");
    assert_eq!(value(&head, "signature-line"), signature_line);
    let (name, b64) = signature_line
        .strip_prefix("\u{2014} ")
        .and_then(|rest| rest.split_once(' '))
        .unwrap();
    assert_eq!(name, origin);
    let blob = BASE64.decode(b64).unwrap();
    assert_eq!(blob.len(), 68);
    assert_eq!(blob[..4], key_id[..]);
    assert_eq!(value(&head, "key-id"), hex::encode(&blob[..4]));
    assert_eq!(value(&head, "signature"), hex::encode(&blob[4..]));
    let signature = Signature::from_slice(&blob[4..]).unwrap();
    public
        .verify_strict(body.as_bytes(), &signature)
        .expect("the checkpoint's signature verifies over its body");

    // The checkpoint with the ledger's own reader.
    let checkpoint = open_checkpoint(&note, &public).unwrap();
    assert_eq!(checkpoint.origin, origin);
    assert_eq!(checkpoint.size, size as u64);
    assert_eq!(checkpoint.root, roots[size]);
    let other = SigningKey::from_bytes(&[7; 32]).verifying_key();
    assert!(open_checkpoint(&note, &other).is_err(), "another key");
    let grown = note.replacen(&format!("\n{size}\n"), &format!("\n{}\n", size + 1), 1);
    assert_ne!(grown, note);
    assert!(open_checkpoint(&grown, &public).is_err(), "a changed size");
    let mut sig = blob.clone();
    sig[40] ^= 0x01;
    let forged = note.replace(b64, &BASE64.encode(&sig));
    assert!(
        open_checkpoint(&forged, &public).is_err(),
        "a changed signature"
    );

    // The inclusion proof.
    let proofs = values("proofs.txt");
    let index: u64 = value(&proofs, "inclusion leaf-index").parse().unwrap();
    let tree_size: u64 = value(&proofs, "inclusion tree-size").parse().unwrap();
    let leaf = hash(value(&proofs, "inclusion leaf"));
    let root = hash(value(&proofs, "inclusion root"));
    let inclusion = path(&proofs, "inclusion path");
    assert_eq!(leaf, leaves[index as usize]);
    assert_eq!(root, roots[tree_size as usize]);
    assert_eq!(
        tree_size, checkpoint.size,
        "the proof leads to the signed root"
    );
    assert!(!inclusion.is_empty());
    assert!(merkle::verify_inclusion(
        &leaf, index, tree_size, &inclusion, &root
    ));
    for bad in flipped(&inclusion) {
        assert!(!merkle::verify_inclusion(
            &leaf, index, tree_size, &bad, &root
        ));
    }
    assert!(!merkle::verify_inclusion(
        &leaves[0], index, tree_size, &inclusion, &root
    ));

    // The consistency proof.
    let from: u64 = value(&proofs, "consistency from").parse().unwrap();
    let to: u64 = value(&proofs, "consistency to").parse().unwrap();
    let from_root = hash(value(&proofs, "consistency from-root"));
    let to_root = hash(value(&proofs, "consistency to-root"));
    let consistency = path(&proofs, "consistency path");
    assert_eq!(from_root, roots[from as usize]);
    assert_eq!(to_root, roots[to as usize]);
    assert_eq!(to, checkpoint.size, "the proof leads to the signed root");
    assert!(!consistency.is_empty());
    assert!(merkle::verify_consistency(
        from,
        to,
        &consistency,
        &from_root,
        &to_root
    ));
    for bad in flipped(&consistency) {
        assert!(!merkle::verify_consistency(
            from, to, &bad, &from_root, &to_root
        ));
    }
    assert!(!merkle::verify_consistency(
        from,
        to,
        &consistency,
        &roots[from as usize - 1],
        &to_root
    ));
}
