//! The ledger's log as C2SP tlog-tiles (issue 26): `issuer serve`'s
//! `/v1/log/checkpoint` and `/v1/log/tile/…`, and the static files of
//! `issuer ledger tiles --out DIR`, read by a client written here from
//! c2sp.org/tlog-tiles, c2sp.org/signed-note and RFC 9162 alone (its own
//! tile paths, its own SHA-256 hashing; nothing of the library's tiles or
//! Merkle code): the checkpoint's signature, every tile and bundle, the
//! root, and an inclusion proof made from the tiles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};
use ticket_issuer::game::Game;
use ticket_issuer::store::Store;

use crate::common::{agent, issuer, played, te_store, valid_id_of, Server, TOKEN};

type Hash = [u8; 32];

// ---------------------------------------------------------------------------
// A tlog-tiles client from the specs alone
// ---------------------------------------------------------------------------

fn sha(parts: &[&[u8]]) -> Hash {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// RFC 9162 §2.1.1: a leaf is SHA-256(0x00 ‖ entry), a node SHA-256(0x01 ‖ l ‖ r).
fn leaf(entry: &[u8]) -> Hash {
    sha(&[&[0], entry])
}

fn node(l: &Hash, r: &Hash) -> Hash {
    sha(&[&[1], l, r])
}

/// MTH over hashes already leaf-hashed.
fn mth(hashes: &[Hash]) -> Hash {
    match hashes.len() {
        0 => sha(&[]),
        1 => hashes[0],
        n => {
            let k = 1 << (n - 1).ilog2();
            node(&mth(&hashes[..k]), &mth(&hashes[k..]))
        }
    }
}

/// tlog-tiles: `tile/<L>/<N>[.p/<W>]`, `N` in 3-digit groups, all but the
/// last prefixed `x`; `kind` is the level or `entries`.
fn spec_path(kind: &str, index: u64, width: u64) -> String {
    let mut n = format!("{:03}", index % 1000);
    let mut rest = index / 1000;
    while rest > 0 {
        n = format!("x{:03}/{n}", rest % 1000);
        rest /= 1000;
    }
    if width < 256 {
        format!("tile/{kind}/{n}.p/{width}")
    } else {
        format!("tile/{kind}/{n}")
    }
}

/// A signed note's checkpoint (origin, size, root), its Ed25519 signature
/// by `key` checked: key ID SHA-256(name ‖ 0x0A ‖ 0x01 ‖ key)[..4], the
/// signature over the text up to and including the blank line's first
/// newline.
fn open_checkpoint(note: &str, key: &VerifyingKey) -> (String, u64, Hash) {
    let split = note
        .find("\n\n")
        .expect("a blank line before the signatures");
    let (body, signatures) = (&note[..=split], &note[split + 2..]);
    let lines: Vec<&str> = body.lines().collect();
    let origin = lines[0];
    let key_id = &sha(&[origin.as_bytes(), &[0x0a, 0x01], key.as_bytes()])[..4];
    let signed = signatures.lines().any(|line| {
        let Some(b64) = line.strip_prefix(&format!("\u{2014} {origin} ")) else {
            return false;
        };
        let blob = BASE64.decode(b64).unwrap();
        blob.len() == 68
            && &blob[..4] == key_id
            && key
                .verify(body.as_bytes(), &Signature::from_slice(&blob[4..]).unwrap())
                .is_ok()
    });
    assert!(signed, "no signature by the ledger's key verifies: {note}");
    let root: Hash = BASE64.decode(lines[2]).unwrap().try_into().unwrap();
    (origin.to_string(), lines[1].parse().unwrap(), root)
}

/// What the client read and checked.
struct Read {
    size: u64,
    root: Hash,
    /// Every tile's hashes, by level (the level's tiles in order).
    levels: Vec<Vec<Hash>>,
    entries: Vec<Vec<u8>>,
}

impl Read {
    /// MTH(D[a:b]) from the tiles: a perfect aligned subtree of height h is
    /// 2^(h mod 8) hashes of level h div 8, hashed up.
    fn subtree(&self, a: u64, b: u64) -> Hash {
        let n = b - a;
        if n.is_power_of_two() && a.is_multiple_of(n) {
            let h = n.trailing_zeros();
            let (level, up) = ((h / 8) as usize, h % 8);
            let first = (a >> (8 * level as u32)) as usize;
            return mth(&self.levels[level][first..first + (1 << up)]);
        }
        let k = 1 << (n - 1).ilog2();
        node(&self.subtree(a, a + k), &self.subtree(a + k, b))
    }

    /// RFC 9162 §2.1.3.1 PATH(m, D[a:b]), from the tiles.
    fn inclusion(&self, m: u64, a: u64, b: u64, out: &mut Vec<Hash>) {
        if b - a <= 1 {
            return;
        }
        let k = 1 << (b - a - 1).ilog2();
        if m < a + k {
            self.inclusion(m, a, a + k, out);
            out.push(self.subtree(a + k, b));
        } else {
            self.inclusion(m, a + k, b, out);
            out.push(self.subtree(a, a + k));
        }
    }
}

/// RFC 9162 §2.1.3.2: verifies an inclusion proof.
fn verify_inclusion(index: u64, size: u64, leaf: Hash, proof: &[Hash], root: &Hash) -> bool {
    if index >= size {
        return false;
    }
    let (mut f, mut s, mut r) = (index, size - 1, leaf);
    for p in proof {
        if s == 0 {
            return false;
        }
        if f & 1 == 1 || f == s {
            r = node(p, &r);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = node(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    s == 0 && r == *root
}

/// Reads the whole log through `fetch` (a resource's path under the
/// prefix → its bytes) and checks it: the checkpoint's signature, each
/// tile's length, the higher tiles against the leaves, the root of size N
/// from the tiles against the checkpoint's, each bundle entry against its
/// leaf hash.
fn read_log(fetch: &mut dyn FnMut(&str) -> Vec<u8>, key: &VerifyingKey) -> Read {
    let note = String::from_utf8(fetch("checkpoint")).unwrap();
    let (_, size, root) = open_checkpoint(&note, key);
    let mut levels = Vec::new();
    let mut span = 1u64;
    // Level L holds ⌊size / 256^L⌋ hashes, in tiles of 256 and a partial.
    while size / span > 0 {
        let count = size / span;
        let level = levels.len();
        let mut hashes = Vec::new();
        for index in 0..count.div_ceil(256) {
            let width = (count - index * 256).min(256);
            let tile = fetch(&spec_path(&level.to_string(), index, width));
            assert_eq!(tile.len() as u64, 32 * width, "tile {level}/{index}");
            hashes.extend(tile.chunks(32).map(|c| Hash::try_from(c).unwrap()));
        }
        levels.push(hashes);
        span *= 256;
    }
    let read = Read {
        size,
        root,
        entries: Vec::new(),
        levels,
    };
    // Each hash of level L ≥ 1 is the root of a full tile below it.
    for level in 1..read.levels.len() {
        for (j, hash) in read.levels[level].iter().enumerate() {
            let below = &read.levels[level - 1][j * 256..(j + 1) * 256];
            assert_eq!(*hash, mth(below), "level {level} hash {j}");
        }
    }
    assert_eq!(
        read.subtree(0, size),
        root,
        "the tiles make the signed root"
    );
    assert_eq!(
        mth(&read.levels[0]),
        root,
        "the leaves make the signed root"
    );
    let mut entries = Vec::new();
    for index in 0..size.div_ceil(256) {
        let width = (size - index * 256).min(256);
        let bundle = fetch(&spec_path("entries", index, width));
        let mut rest = &bundle[..];
        while !rest.is_empty() {
            let len = usize::from(u16::from_be_bytes([rest[0], rest[1]]));
            entries.push(rest[2..2 + len].to_vec());
            rest = &rest[2 + len..];
        }
        assert_eq!(entries.len() as u64, index * 256 + width, "bundle {index}");
    }
    for (i, entry) in entries.iter().enumerate() {
        assert_eq!(leaf(entry), read.levels[0][i], "entry {i}");
    }
    Read { entries, ..read }
}

/// The redemption entry of `unit_id` proven included from the tiles alone.
fn prove_redemption(read: &Read, unit_id: &str) {
    let m = read
        .entries
        .iter()
        .position(|e| {
            let line = String::from_utf8_lossy(e);
            line.starts_with("ledger/v1|") && line.contains(&format!("|{unit_id}|"))
        })
        .expect("the redemption is in the log") as u64;
    let mut proof = Vec::new();
    read.inclusion(m, 0, read.size, &mut proof);
    let entry = leaf(&read.entries[m as usize]);
    assert!(verify_inclusion(m, read.size, entry, &proof, &read.root));
    let mut forged = proof.clone();
    forged[0][0] ^= 1;
    assert!(!verify_inclusion(m, read.size, entry, &forged, &read.root));
}

// ---------------------------------------------------------------------------
// Fetching: over HTTP, and from a folder
// ---------------------------------------------------------------------------

/// A GET of `url` (with `token`): status, headers asked for, body.
fn http_get(
    agent: &ureq::Agent,
    url: &str,
    token: Option<&str>,
) -> (u16, BTreeMap<&'static str, String>, Vec<u8>) {
    let mut request = agent.get(url);
    if let Some(t) = token {
        request = request.header("Authorization", &format!("Bearer {t}"));
    }
    let mut response = request.call().unwrap();
    let mut headers = BTreeMap::new();
    for name in ["content-type", "cache-control"] {
        if let Some(v) = response.headers().get(name) {
            headers.insert(name, v.to_str().unwrap().to_string());
        }
    }
    let status = response.status().as_u16();
    (status, headers, response.body_mut().read_to_vec().unwrap())
}

/// Reads the log of `server` over HTTP, each answer's headers checked.
fn read_served(server: &Server, token: Option<&str>, key: &VerifyingKey) -> Read {
    let a = agent();
    read_log(
        &mut |path| {
            let (status, headers, body) =
                http_get(&a, &server.url(&format!("/v1/log/{path}")), token);
            assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
            let (content_type, cache) = if path == "checkpoint" {
                ("text/plain; charset=utf-8", "no-cache")
            } else {
                (
                    "application/octet-stream",
                    "public, max-age=31536000, immutable",
                )
            };
            assert_eq!(headers["content-type"], content_type, "{path}");
            assert_eq!(headers["cache-control"], cache, "{path}");
            body
        },
        key,
    )
}

/// Reads the log from the static files under `dir`.
fn read_dir(dir: &Path, key: &VerifyingKey) -> Read {
    read_log(
        &mut |path| std::fs::read(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}")),
        key,
    )
}

/// Every file under `dir` with its bytes and modification time.
fn files(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let modified = e.metadata().unwrap().modified().unwrap();
                let rel = path.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, (std::fs::read(&path).unwrap(), modified));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The log to read
// ---------------------------------------------------------------------------

/// Units in the test block: its sales fill more than one level-0 tile.
const UNITS: u32 = 300;

fn te_id(store: &Path, index: u32) -> String {
    valid_id_of(store, Game::TRESORS_ENSABLES, 1, 1, index)
}

/// Every unit of the block marked sold on `ledger` (the store's when
/// `None`), then unit `index` played to its end and redeemed: 302 entries.
fn fill(store: &Path, ledger: Option<&str>) {
    let mut args = vec![
        "mark-sold",
        "--all",
        "--emission",
        "1",
        "--game",
        "tresors-ensables",
        "--json",
    ];
    if let Some(url) = ledger {
        args.extend(["--ledger", url]);
    }
    let marked = issuer(store, &args).expect_code(0).json();
    assert_eq!(marked["marked"], UNITS, "{marked}");
    redeem(store, ledger, 7);
}

/// Unit `index` played to its end and redeemed.
fn redeem(store: &Path, ledger: Option<&str>, index: u32) {
    let id = te_id(store, index);
    played(store, ledger, &id, None);
    let mut args = vec!["redeem", id.as_str(), "--json"];
    if let Some(url) = ledger {
        args.extend(["--ledger", url]);
    }
    issuer(store, &args).expect_code(0);
}

fn ledger_key(store: &Path) -> VerifyingKey {
    ticket_issuer::seal::read_public(&Store::new(store).ledger_public_key_path()).unwrap()
}

fn tiles_out(store: &Path, ledger: Option<&str>, out: &Path) -> serde_json::Value {
    let out = out.to_str().unwrap();
    let mut args = vec!["ledger", "tiles", "--out", out, "--json"];
    if let Some(url) = ledger {
        args.extend(["--ledger", url]);
    }
    issuer(store, &args).expect_code(0).json()
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn the_served_log_reads_as_c2sp_tlog_tiles_and_proves_a_redemption() {
    let (_dir, store) = te_store(UNITS);
    fill(&store, None);
    let key = ledger_key(&store);
    let open = Server::start_with(&store, &["--public-log"]);
    let read = read_served(&open, None, &key);
    assert_eq!(read.size, u64::from(UNITS) + 2);
    assert_eq!(
        read.levels[0].len(),
        302,
        "one full level-0 tile and a partial"
    );
    assert_eq!(read.levels[1].len(), 1, "a level-1 tile of width 1");
    prove_redemption(&read, &te_id(&store, 7));

    // Beyond the head: 404; a malformed path: 400, saying what is wrong.
    let a = agent();
    let get = |path: &str| http_get(&a, &open.url(&format!("/v1/log/{path}")), None);
    for beyond in [
        "tile/0/001.p/47",
        "tile/0/001",
        "tile/0/002.p/1",
        "tile/1/000.p/2",
        "tile/1/000",
        "tile/2/000.p/1",
        "tile/entries/001",
        "tile/entries/001.p/47",
    ] {
        let (status, _, body) = get(beyond);
        assert_eq!(status, 404, "{beyond}: {}", String::from_utf8_lossy(&body));
        assert!(String::from_utf8_lossy(&body).contains("not_in_ledger"));
    }
    // A narrower partial tile, as an earlier head needed, is served.
    let (status, _, narrower) = get("tile/0/001.p/10");
    assert_eq!(status, 200);
    assert_eq!(narrower, read.levels[0][256..266].concat());
    for malformed in [
        "tile/0/1",
        "tile/0/x000/001",
        "tile/00/000",
        "tile/0/001.p/0",
        "tile/0/001.p/256",
        "tile/0/001.p/046",
        "tile/64/000",
        "tile/entries",
        "tile/0/000/",
    ] {
        let (status, _, body) = get(malformed);
        let body = String::from_utf8_lossy(&body);
        assert_eq!(status, 400, "{malformed}: {body}");
        assert!(body.contains("invalid_request"), "{malformed}: {body}");
    }
    drop(open);

    // Without --public-log, a token (of any role) is needed.
    let closed = Server::start_with_tokens(
        &store,
        &format!("{TOKEN}\noperator ops:operator-token-0123456789\n"),
        &[] as &[&str],
    );
    for path in ["checkpoint", "tile/0/000"] {
        let (status, _, _) = http_get(&a, &closed.url(&format!("/v1/log/{path}")), None);
        assert_eq!(status, 401, "{path}");
    }
    let by_token = read_served(&closed, Some(TOKEN), &key);
    assert_eq!(by_token.root, read.root);
    let (status, _, _) = http_get(
        &a,
        &closed.url("/v1/log/checkpoint"),
        Some("operator-token-0123456789"),
    );
    assert_eq!(status, 200, "an operator's token reads the log too");
}

#[test]
fn ledger_tiles_writes_the_same_files_and_a_rerun_only_adds() {
    let (dir, store) = te_store(UNITS);
    fill(&store, None);
    let key = ledger_key(&store);
    let out = dir.path().join("mirror");
    let first = tiles_out(&store, None, &out);
    assert_eq!(first["kind"], "ledger_tiles", "{first}");
    assert_eq!(
        (first["size"].as_u64(), first["kept"].as_u64()),
        (Some(302), Some(0))
    );
    let read = read_dir(&out, &key);
    prove_redemption(&read, &te_id(&store, 7));
    // The same bytes as served.
    let server = Server::start_with(&store, &["--public-log"]);
    let a = agent();
    for (path, (bytes, _)) in files(&out) {
        let path = path.to_str().unwrap();
        let (status, _, served) = http_get(&a, &server.url(&format!("/v1/log/{path}")), None);
        assert_eq!((status, served), (200, bytes), "{path}");
    }
    drop(server);

    // Rerun at once: nothing new, every file kept as it was.
    let mut before = files(&out);
    let again = tiles_out(&store, None, &out);
    assert_eq!(
        (again["written"].as_u64(), again["kept"].as_u64()),
        (Some(0), first["written"].as_u64())
    );
    let mut after = files(&out);
    // The checkpoint is rewritten (last), the same note.
    let checkpoint = Path::new("checkpoint");
    let old_note = after.remove(checkpoint).unwrap().0;
    assert_eq!(old_note, before.remove(checkpoint).unwrap().0);
    assert_eq!(before, after);

    // More entries: the immutable files stay, the new ones are added.
    redeem(&store, None, 8);
    let grown = tiles_out(&store, None, &out);
    assert_eq!(grown["size"].as_u64(), Some(304), "{grown}");
    let now = files(&out);
    for (path, was) in &before {
        assert_eq!(&now[path], was, "{path:?} unchanged");
    }
    for new in ["tile/0/001.p/48", "tile/entries/001.p/48"] {
        assert!(
            now.contains_key(Path::new(new)) && !before.contains_key(Path::new(new)),
            "{new}"
        );
    }
    assert_ne!(now[checkpoint].0, old_note);
    let read = read_dir(&out, &key);
    assert_eq!(read.size, 304);
    prove_redemption(&read, &te_id(&store, 8));

    // Tiles behind the head (a ledger not tiled yet): the same files, made
    // from the entries.
    let conn = rusqlite::Connection::open(Store::new(&store).ledger_path()).unwrap();
    conn.execute_batch("DELETE FROM log_tiles").unwrap();
    drop(conn);
    let untiled = dir.path().join("untiled");
    tiles_out(&store, None, &untiled);
    let (made, kept): (BTreeMap<_, _>, BTreeMap<_, _>) = (files(&untiled), files(&out));
    for (path, (bytes, _)) in &made {
        assert_eq!(&kept[path].0, bytes, "{path:?}");
    }
}

/// The same reader on a PostgreSQL ledger, served by a node and written
/// by `ledger tiles`, with its tiles deleted (a ledger the sequencer has
/// not tiled yet): the same bytes, made from the entries.
#[test]
fn pg_the_log_reads_as_tiles_served_and_written_even_before_it_is_tiled() {
    let Some(pg) = crate::pg::Cluster::start("pg_the_log_reads_as_tiles…") else {
        return;
    };
    let (dir, store) = te_store(UNITS);
    pg.migrate(&store);
    let url = pg.url();
    fill(&store, Some(&url));
    let key = ledger_key(&store);
    let server = Server::start_with(&store, &["--public-log", "--ledger", url.as_str()]);
    let served = read_served(&server, None, &key);
    assert_eq!(served.size, 302);
    prove_redemption(&served, &te_id(&store, 7));
    drop(server);
    let mut sql = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    sql.batch_execute("DELETE FROM log_tiles").unwrap();
    let out = dir.path().join("mirror");
    tiles_out(&store, Some(&url), &out);
    let read = read_dir(&out, &key);
    assert_eq!((read.size, read.root), (served.size, served.root));
    assert_eq!(read.levels, served.levels);
    assert_eq!(read.entries, served.entries);
}
