//! Issue 34: no answer to a platform depends on what it has not been
//! shown (docs/SECURITY.md §What each role may learn), tested as a
//! property of the whole HTTP surface.
//!
//! Two worlds agree on everything a platform was shown and differ in
//! everything it was not: the second world's blocks are made from the
//! first's records after the first ran the script, with every unit whose
//! outcome was not shown changed (L'île au trésor: the unsold units'
//! outcomes permuted among them, so both worlds hold the exact lot table;
//! Trésors Ensablés: each sold unit's board and revealed rolls kept, its
//! other rolls and unopened chests drawn again, the unsold units drawn
//! anew), sealed with the store's key (`test_support::reseal_block`). The
//! same script of requests (sales, rolls, stops, redemptions, then every
//! route of the route table as the OpenAPI document lists it, with every
//! kind of argument: own units at each point of their play, another
//! platform's, unsold ones, malformed ones, known and unknown keys, tiles,
//! remaining, metrics, repeats under one key, both platforms' tokens) is
//! sent to both, and every answer must be the same byte for byte once
//! dates and commitments (hashes, roots, proofs, signatures: they differ
//! between the worlds by construction and hide what they commit to) are
//! set aside. A route added to the table is swept without editing this
//! file; one whose arguments it cannot make fails it, naming them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tempfile::TempDir;
use ticket_issuer::game::tresors::{chest_square, Unit, MAX_ROLLS};
use ticket_issuer::game::Game;
use ticket_issuer::ledger::emission_rows::EmissionRow;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::record::PREFIX_SIZE;
use ticket_issuer::rng::Stream;
use ticket_issuer::store::Store;
use ticket_issuer_core::test_support::reseal_block;

use crate::common::{copy_tree, generate_te, issuer, shared_block, valid_id_of, Server, StoreKeys};

/// The two platforms' tokens and names.
const A: (&str, &str) = ("platform-a", "noninterference-a-0123456789abcdef");
const B: (&str, &str) = ("platform-b", "noninterference-b-0123456789abcdef");

const ILE: Game = Game::ILE_AU_TRESOR;
const TE: Game = Game::TRESORS_ENSABLES;
/// Trésors Ensablés units in its test-size block.
const TE_UNITS: u32 = 400;

/// The first world, before any sale: L'île au trésor emission 1 (one
/// full block at 1 €) and Trésors Ensablés emission 2, both closed.
fn first_world() -> (TempDir, PathBuf) {
    let (dir, store, _) = shared_block(100).copy_store();
    issuer(&store, &["close", "--emission", "1"]).expect_code(0);
    generate_te(&store, 2, TE_UNITS);
    issuer(&store, &["close", "--emission", "2"]).expect_code(0);
    (dir, store)
}

/// One request and its answer as sent.
#[derive(Clone, Debug)]
struct Exchange {
    what: String,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// A script's run against one world: every exchange, in order.
struct Run {
    agent: ureq::Agent,
    base: String,
    tokens: [(&'static str, String); 2],
    log: Vec<Exchange>,
}

impl Run {
    /// Sends `method path` with platform `who`'s token (0: A, 1: B), the
    /// JSON `body` and the idempotency `key` if given; the answer as JSON
    /// (`null` when it is not).
    fn ask(
        &mut self,
        who: usize,
        method: &str,
        path: &str,
        body: Option<&Value>,
        key: Option<&str>,
    ) -> Value {
        let url = format!("{}{path}", self.base);
        let auth = format!("Bearer {}", self.tokens[who].1);
        let sent = match body {
            Some(body) => {
                let mut r = self.agent.post(&url).header("Authorization", &auth);
                if let Some(key) = key {
                    r = r.header("Idempotency-Key", key);
                }
                r.content_type("application/json").send(body.to_string())
            }
            None if method == "POST" => {
                let mut r = self.agent.post(&url).header("Authorization", &auth);
                if let Some(key) = key {
                    r = r.header("Idempotency-Key", key);
                }
                r.send_empty()
            }
            None => self.agent.get(&url).header("Authorization", &auth).call(),
        };
        let mut response = sent.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let headers = response
            .headers()
            .iter()
            .filter(|(name, _)| !matches!(name.as_str(), "date" | "content-length"))
            .map(|(name, value)| {
                (
                    name.to_string(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect();
        let status = response.status().as_u16();
        let bytes = response.body_mut().read_to_vec().unwrap();
        let answer = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        self.log.push(Exchange {
            what: format!(
                "{} {method} {path}{}{}",
                self.tokens[who].0,
                body.map(|b| format!(" {b}")).unwrap_or_default(),
                key.map(|k| format!(" [key {k}]")).unwrap_or_default()
            ),
            status,
            headers,
            body: bytes,
        });
        answer
    }

    /// A sale of `game` by `who`.
    fn sell(&mut self, who: usize, game: Game, key: Option<&str>) -> String {
        let sale = self.ask(
            who,
            "POST",
            "/v1/sales",
            Some(&json!({"game": game.slug(), "price": "1"})),
            key,
        );
        sale["id"].as_str().unwrap_or_default().to_string()
    }

    /// Rolls `who`'s unit `id` until it is over, or `rolls` rolls, or
    /// (with `stop`) a stop is allowed, which it takes.
    fn play(&mut self, who: usize, id: &str, rolls: u32, stop: bool) {
        let mut view = self.ask(who, "GET", &format!("/v1/plays/{id}"), None, None);
        while view["over"] == false && view["rolls"].as_u64().unwrap_or(u64::MAX) < u64::from(rolls)
        {
            if stop && view["may_stop"] == true {
                self.ask(who, "POST", &format!("/v1/plays/{id}/stop"), None, None);
                return;
            }
            let next = view["rolls"].as_u64().unwrap() + 1;
            view = self.ask(
                who,
                "POST",
                &format!("/v1/plays/{id}/roll"),
                Some(&json!({ "roll": next })),
                None,
            );
        }
    }
}

/// What the script knows of the world: IDs of units sold to each
/// platform, and IDs it may not know.
struct Known {
    ids: Vec<String>,
    keys: Vec<String>,
}

/// The script: the same requests, whatever the world's answers; a step
/// that depends on an answer reads only what the platform was shown.
fn script(run: &mut Run, unsold: &[String]) {
    // Platform A sells three units of each game (the first under a key),
    // plays its Trésors Ensablés units to several points, redeems some.
    let ia: Vec<String> = (0..3)
        .map(|n| run.sell(0, ILE, (n == 0).then_some("order-1")))
        .collect();
    let ta: Vec<String> = (0..5)
        .map(|n| run.sell(0, TE, (n == 0).then_some("order-t")))
        .collect();
    run.play(0, &ta[0], u32::MAX, false);
    run.play(0, &ta[1], u32::MAX, true);
    run.play(0, &ta[2], 2, false);
    run.play(0, &ta[3], 1, false);
    for id in [&ia[0], &ta[0], &ta[1]] {
        run.ask(
            0,
            "POST",
            "/v1/redemptions",
            Some(&json!({ "id": id })),
            Some(&format!("pay-{id}")),
        );
    }
    // Platform B: its own sales under A's key, which is its own.
    let ib = run.sell(1, ILE, Some("order-1"));
    let tb = run.sell(1, TE, Some("order-t"));
    run.play(1, &tb, 1, false);
    // A sends its first sale's key again: the first sale answered.
    run.sell(0, ILE, Some("order-1"));
    let mut ids: Vec<String> = ia.iter().chain(&ta).cloned().collect();
    ids.extend([ib, tb]);
    ids.extend(unsold.iter().cloned());
    // A mistyped check code, an emission that does not exist, a malformed ID.
    let mut typo = ia[1].clone();
    let last = typo.pop().unwrap();
    typo.push(if last == '2' { '3' } else { '2' });
    ids.extend([
        typo,
        ia[1].replacen("IAT-1-", "IAT-9-", 1),
        "IAT-nope".into(),
    ]);
    let known = Known {
        ids,
        keys: ["order-1", "order-t", "never-used"]
            .map(String::from)
            .to_vec(),
    };
    sweep(run, &known, "1");
    // More play, then the whole surface again.
    run.play(0, &ta[2], u32::MAX, false);
    run.play(0, &ta[4], 3, true);
    // Units played until a stop is allowed, which is taken: a unit lost
    // before its first chest allows none, so several (the same sold units
    // in both worlds, so the same requests).
    for _ in 0..6 {
        let id = run.sell(0, TE, None);
        run.play(0, &id, u32::MAX, true);
    }
    sweep(run, &known, "2");
}

/// Every route of the table, with every kind of argument, for both
/// platforms' tokens.
fn sweep(run: &mut Run, known: &Known, round: &str) {
    let document = run.ask(0, "GET", "/v1/openapi.json", None, None);
    let paths = document["paths"]
        .as_object()
        .expect("the document's paths")
        .clone();
    assert!(paths.len() >= 20, "{paths:?}");
    // Every read first, then every write: what a write changes is read
    // in the next round.
    let operations: Vec<(&String, String, &Value)> = ["get", "post"]
        .iter()
        .flat_map(|m| {
            paths.iter().filter_map(move |(template, item)| {
                item.get(*m)
                    .map(|op| (template, m.to_ascii_uppercase(), op))
            })
        })
        .collect();
    let methods: BTreeSet<&str> = paths
        .values()
        .flat_map(|item| item.as_object().unwrap().keys().map(String::as_str))
        .collect();
    assert!(
        methods.iter().all(|m| ["get", "post"].contains(m)),
        "a route with another method: teach tests/it/noninterference.rs ({methods:?})"
    );
    for (template, method, operation) in operations {
        {
            for path in fill_path(template, operation, known) {
                for query in queries(template, operation) {
                    let url = format!("{path}{query}");
                    for body in bodies(template, operation, known) {
                        for who in [0, 1] {
                            let idempotent = operation["parameters"].as_array().is_some_and(|ps| {
                                ps.iter().any(|p| p["name"] == "Idempotency-Key")
                            });
                            let key =
                                idempotent.then(|| format!("sweep-{round}-{}", run.log.len()));
                            run.ask(who, &method, &url, body.as_ref(), key.as_deref());
                            if let Some(key) = &key {
                                // The same request again under its key.
                                run.ask(who, &method, &url, body.as_ref(), Some(key));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The paths a template is asked with: each path parameter from the
/// script's values of its name.
fn fill_path(template: &str, operation: &Value, known: &Known) -> Vec<String> {
    let mut paths = vec![template.to_string()];
    let names: Vec<String> = operation["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["in"] == "path")
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    let blocks = [
        (ILE.slug(), "1", "1"),
        (TE.slug(), "2", "1"),
        (ILE.slug(), "2", "1"),
        (ILE.slug(), "9", "9"),
        ("nope", "1", "1"),
    ];
    if names.iter().any(|n| n == "game") {
        paths = blocks
            .iter()
            .map(|(g, e, b)| {
                template
                    .replace("{game}", g)
                    .replace("{emission}", e)
                    .replace("{block}", b)
            })
            .collect();
    }
    for name in names
        .iter()
        .filter(|n| !matches!(n.as_str(), "game" | "emission" | "block"))
    {
        let values: Vec<String> = match name.as_str() {
            "id" => known.ids.clone(),
            "key" => known.keys.clone(),
            "path" => ["0/000", "0/000.p/3", "1/000", "entries/000", "entries/000.p/5", "x/y"]
                .map(String::from)
                .to_vec(),
            other => panic!(
                "{template}: no values for its path parameter {other:?}: teach tests/it/noninterference.rs what a platform may send there"
            ),
        };
        paths = paths
            .iter()
            .flat_map(|p| {
                values
                    .iter()
                    .map(move |v| p.replace(&format!("{{{name}}}"), v))
            })
            .collect();
    }
    paths
}

/// The query strings a route is asked with: none, and its parameters'.
fn queries(template: &str, operation: &Value) -> Vec<String> {
    let names: BTreeSet<&str> = operation["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["in"] == "query")
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    let mut out = vec![String::new()];
    if names.contains("game") {
        out = [
            format!("?game={}&price=1", ILE.slug()),
            format!("?game={}&price=1", TE.slug()),
            format!("?game={}", TE.slug()),
            "?game=nope".into(),
        ]
        .to_vec();
    }
    for name in names.iter().filter(|n| !matches!(**n, "game" | "price")) {
        let value = match *name {
            "stopped_after_steps" | "stopped_after_rolls" => "2",
            "receipt" => "true",
            other => panic!(
                "{template}: no value for its query parameter {other:?}: teach tests/it/noninterference.rs"
            ),
        };
        out.push(format!("?{name}={value}"));
    }
    out
}

/// The bodies a route is sent: none for a route without one; else made
/// from its schema's properties, with the script's values of each name.
fn bodies(template: &str, operation: &Value, known: &Known) -> Vec<Option<Value>> {
    let Some(schema) =
        operation["requestBody"]["content"]["application/json"]["schema"].as_object()
    else {
        return vec![None];
    };
    let properties = schema["properties"].as_object().unwrap();
    let mut out = vec![serde_json::Map::new()];
    for (name, _) in properties {
        let values: Vec<Value> = match name.as_str() {
            "id" => known.ids.iter().map(|id| json!(id)).collect(),
            "units" => vec![json!(known
                .ids
                .iter()
                .map(|id| json!({ "id": id }))
                .collect::<Vec<_>>())],
            "game" => vec![json!(ILE.slug()), json!(TE.slug())],
            "price" => vec![json!("1")],
            "step" => vec![json!(1), json!(3)],
            "emission" => vec![json!(1), json!(2)],
            "block" => vec![json!(1)],
            "reason" => vec![json!("noninterference")],
            // Today's names, aliases of `step` and `stopped_after_steps`:
            // a body with both is refused whole.
            "roll" | "stopped_after_steps" | "stopped_after_rolls" | "approvals" => continue,
            other => panic!(
                "{template}: no value for its body property {other:?}: teach tests/it/noninterference.rs"
            ),
        };
        out = out
            .into_iter()
            .flat_map(|body| {
                values.iter().map(move |v| {
                    let mut body = body.clone();
                    body.insert(name.clone(), v.clone());
                    body
                })
            })
            .collect();
    }
    out.into_iter().map(|b| Some(Value::Object(b))).collect()
}

/// An answer with its dates and commitments set aside.
fn normalised(e: &Exchange) -> String {
    let content_type = e
        .headers
        .iter()
        .find(|(n, _)| n == "content-type")
        .map(|(_, v)| v.as_str())
        .unwrap_or_default();
    let body = if content_type.starts_with("application/json") {
        let mut v: Value = serde_json::from_slice(&e.body).unwrap();
        set_aside_commitments(&mut v);
        v.to_string()
    } else if content_type.starts_with("application/octet-stream") {
        if e.what.contains("/tile/entries/") {
            entries(&e.body)
        } else {
            format!("<{} bytes of hashes>", e.body.len())
        }
    } else {
        note(&String::from_utf8_lossy(&e.body))
    };
    format!("{} {:?}\n{}", e.status, e.headers, undated(&body))
}

/// JSON members that commit to a world's records or log: set aside.
const COMMITMENTS: [&str; 8] = [
    "merkle_root",
    "inclusion_proof",
    "root",
    "root_hex",
    "leaf_hash",
    "header",
    "seal",
    "checkpoint",
];

fn set_aside_commitments(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if COMMITMENTS.contains(&k.as_str()) {
                    *v = match v {
                        Value::Array(a) => json!(format!("<{} hashes>", a.len())),
                        Value::String(s) if k == "checkpoint" => json!(note(s)),
                        Value::Null => Value::Null,
                        _ => json!("<commitment>"),
                    };
                } else {
                    set_aside_commitments(v);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(set_aside_commitments),
        _ => {}
    }
}

/// A signed note with its root and signatures set aside (its origin,
/// size and text kept).
fn note(text: &str) -> String {
    if !text.contains("\n\n— ") {
        return text.to_string();
    }
    let (body, _signatures) = text.split_once("\n\n").unwrap();
    let lines: Vec<&str> = body.lines().collect();
    let kept = lines
        .iter()
        .enumerate()
        .map(|(i, l)| if i == 2 { "<root>" } else { l })
        .collect::<Vec<_>>()
        .join("\n");
    format!("{kept}\n\n<signatures>")
}

/// An entry bundle's entries, in order.
fn entries(bundle: &[u8]) -> String {
    let mut out = String::new();
    let mut at = 0;
    while at + 2 <= bundle.len() {
        let len = usize::from(u16::from_be_bytes([bundle[at], bundle[at + 1]]));
        out += &String::from_utf8_lossy(&bundle[at + 2..at + 2 + len]);
        at += 2 + len;
    }
    out
}

/// `text` with its RFC 3339 times set aside.
fn undated(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let is_date = rest.len() >= 20
            && rest[..4].iter().all(u8::is_ascii_digit)
            && rest[4] == b'-'
            && rest[7] == b'-'
            && rest[10] == b'T'
            && rest[13] == b':';
        if is_date {
            let end = rest
                .iter()
                .position(|&b| b == b'Z')
                .filter(|&z| z <= 30)
                .map_or(19, |z| z + 1);
            out += "<time>";
            i += end;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The units of `game`'s emission `emission` block 1 the first world's
/// ledger shows were sold, and how far they were shown: index → rolls
/// revealed (`u32::MAX`: the whole unit: a game shown whole at its sale,
/// a play that is over).
fn shown(store: &Path, game: Game, emission: u32) -> BTreeMap<u32, u32> {
    let ledger = LedgerTarget::of_store(&Store::new(store));
    let mut shown = BTreeMap::new();
    ledger
        .emission_rows(game, emission, &mut |row| {
            match row {
                EmissionRow::Sale(at) => {
                    let whole = if game.step_by_step() { 0 } else { u32::MAX };
                    shown.entry(at.index).or_insert(whole);
                }
                // A play over shows its unit whole (its record and proof:
                // docs/REDEMPTION.md §What an answer shows).
                EmissionRow::Play(p) => {
                    let rolls = if p.ended.is_some() {
                        u32::MAX
                    } else {
                        p.rolls as u32
                    };
                    shown.insert(p.at.index, rolls);
                }
                _ => {}
            }
            Ok(())
        })
        .unwrap();
    shown
}

/// The records of `game`'s emission `emission` block 1, decrypted.
fn records(store: &Path, game: Game, emission: u32) -> Vec<u8> {
    let s = Store::new(store);
    let block = StoreKeys::of(&s)
        .authentic(&s.block_path(game, emission, 1))
        .unwrap();
    (0..block.file.index.len() as u32)
        .flat_map(|c| block.chunk_records(c).unwrap().records)
        .collect()
}

/// The second world: `first`'s store as it was before the script, its
/// blocks made again with every outcome the script did not show changed.
fn second_world(template: &Path, first: &Path) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    copy_tree(template, &store);
    // One log identity for both worlds' checkpoints (the ledger's key).
    let s = Store::new(&store);
    std::fs::copy(Store::new(first).ledger_key_path(), s.ledger_key_path()).unwrap();
    let _ = std::fs::copy(
        Store::new(first).ledger_public_key_path(),
        s.ledger_public_key_path(),
    );
    // L'île au trésor: the unsold units' outcomes turned one place round.
    let ile = records(first, ILE, 1);
    let size = ile.len() / ILE.block_units() as usize;
    let sold = shown(first, ILE, 1);
    let unsold: Vec<usize> = (0..ILE.block_units() as usize)
        .filter(|i| !sold.contains_key(&(*i as u32)))
        .collect();
    let mut other = ile.clone();
    for (k, &i) in unsold.iter().enumerate() {
        let from = unsold[(k + 1) % unsold.len()];
        // The index and check code stay: the ID is the same in both worlds.
        other[i * size + 9..(i + 1) * size]
            .copy_from_slice(&ile[from * size + 9..(from + 1) * size]);
    }
    assert_ne!(other, ile);
    reseal_block(&s, ILE, 1, 1, &other).unwrap();
    // Trésors Ensablés: each unit kept as far as it was shown.
    let te = records(first, TE, 2);
    let size = PREFIX_SIZE + TE.payload_size();
    let revealed = shown(first, TE, 2);
    let mut other = Vec::with_capacity(te.len());
    for i in 0..TE_UNITS as usize {
        let record = &te[i * size..(i + 1) * size];
        let rolls = revealed.get(&(i as u32)).copied();
        let unit = Unit::decode(&record[PREFIX_SIZE..]).unwrap();
        let changed = continued(&unit, rolls, i as u64);
        let mut payload = Vec::new();
        changed.encode(&mut payload);
        let played = TE.play_to_end(&payload).unwrap();
        other.extend_from_slice(&record[..9]);
        other.push(played.lot);
        other.extend_from_slice(&played.prize.amount().unwrap_or(0).to_le_bytes());
        other.extend_from_slice(&payload);
    }
    reseal_block(&s, TE, 2, 1, &other).unwrap();
    (dir, store)
}

/// `unit` as another world may hold it: not sold (`None`), a unit drawn
/// anew; sold with `rolls` rolls revealed, its board, those rolls and the
/// chests they reached kept, the rest drawn again.
fn continued(unit: &Unit, rolls: Option<u32>, index: u64) -> Unit {
    let mut stream = Stream::new(&[0x77; 32], index + 1);
    let fresh = Unit::generate(&mut stream);
    let Some(rolls) = rolls else {
        return fresh;
    };
    if rolls == u32::MAX {
        return *unit;
    }
    let kept = (rolls as usize).min(unit.dice().len());
    let mut dice: Vec<u8> = unit.dice()[..kept].to_vec();
    let reached: u32 = dice.iter().map(|&d| u32::from(d)).sum::<u32>().min(60);
    let mut position = reached;
    while position < 60 && dice.len() < MAX_ROLLS {
        let die = stream.below(6) as u8 + 1;
        dice.push(die);
        position += u32::from(die);
    }
    let chests = std::array::from_fn(|k| {
        let square = u32::from(chest_square(k));
        if square <= reached {
            unit.chest_index(k)
        } else {
            fresh.chest_index(k)
        }
    });
    Unit::from_parts(*unit.board(), chests, &dice).unwrap()
}

/// Starts `store`'s node with the platforms' tokens (`roles` before each
/// name) and runs the script: its exchanges.
fn run_world(store: &Path, roles: &str, unsold: &[String]) -> Vec<Exchange> {
    let tokens = format!("{roles}{}:{}\n{roles}{}:{}\n", A.0, A.1, B.0, B.1);
    let server = Server::start_with_tokens(store, &tokens, &[] as &[&str]);
    let mut run = Run {
        agent: crate::common::agent(),
        base: server.base.clone(),
        tokens: [(A.0, A.1.to_string()), (B.0, B.1.to_string())],
        log: Vec::new(),
    };
    script(&mut run, unsold);
    run.log
}

/// The exchanges of two runs that differ once normalised: (what, first,
/// second).
fn differences(first: &[Exchange], second: &[Exchange]) -> Vec<(String, String, String)> {
    assert_eq!(first.len(), second.len(), "the script ran otherwise");
    first
        .iter()
        .zip(second)
        .filter_map(|(a, b)| {
            assert_eq!(a.what, b.what, "the script ran otherwise");
            let (x, y) = (normalised(a), normalised(b));
            (x != y).then(|| (a.what.clone(), x, y))
        })
        .collect()
}

/// Both worlds' runs, with `roles` given to both platforms' tokens.
fn both_worlds(roles: &str) -> (Vec<Exchange>, Vec<Exchange>) {
    let (_dir, first) = first_world();
    let template = tempfile::tempdir().unwrap();
    let before = template.path().join("store");
    copy_tree(&first, &before);
    let unsold = [
        valid_id_of(&first, ILE, 1, 1, 449_999),
        valid_id_of(&first, TE, 2, 1, TE_UNITS - 1),
    ];
    let one = run_world(&first, roles, &unsold);
    let (_dir2, second) = second_world(&before, &first);
    let two = run_world(&second, roles, &unsold);
    (one, two)
}

#[test]
fn noninterference_every_route_answers_a_platform_alike_in_two_worlds() {
    let (one, two) = both_worlds("");
    // The script reached both games, every kind of unit and refusal.
    let text: String = one
        .iter()
        .map(|e| String::from_utf8_lossy(&e.body))
        .collect();
    for seen in [
        "\"game\":\"ile-au-tresor\"",
        "\"game\":\"tresors-ensables\"",
        "\"over\":true",
        "\"end\":\"stopped\"",
        "\"kind\":\"redemption\"",
        "\"error\":\"unknown_unit\"",
        "\"error\":\"no_sale_under_key\"",
        "\"error\":\"forbidden\"",
        "\"kind\":\"remaining\"",
        "\"kind\":\"receipts\"",
        "\"kind\":\"block_seal\"",
    ] {
        assert!(text.contains(seen), "the script never saw {seen}");
    }
    assert!(one.len() > 1000, "{} exchanges", one.len());
    let differ = differences(&one, &two);
    assert!(
        differ.is_empty(),
        "{} of {} answers differ between worlds that agree on what the platform was shown; the first:\n{}\nworld 1: {}\nworld 2: {}",
        differ.len(),
        one.len(),
        differ[0].0,
        differ[0].1,
        differ[0].2
    );
}

#[test]
fn noninterference_catches_a_route_that_reads_the_unsold() {
    // The same harness, the platforms' tokens given the operator role: the
    // operator's live view of prizes remaining counts what the unsold
    // Trésors Ensablés units hold, which differs between the worlds; the
    // test must see it (a route that leaked it to platforms would fail the
    // test above the same way).
    let (one, two) = both_worlds("sales,operator ");
    let differ = differences(&one, &two);
    for d in &differ {
        eprintln!("DIFF {}\n  {}\n  {}", d.0, d.1, d.2);
    }
    assert!(
        differ.iter().any(|(what, _, _)| what
            .contains("GET /v1/operator/remaining?game=tresors-ensables&price=1")),
        "the unsold's prizes went unnoticed: {:?}",
        differ.iter().map(|d| &d.0).take(20).collect::<Vec<_>>()
    );
}
