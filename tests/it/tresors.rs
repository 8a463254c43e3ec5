//! « Trésors Ensablés » through the shared machinery (issue 9): redeem at
//! every stop against a plain replay of the export, the regulation's draws
//! (chi-square), determinism, tampering, block bounds, the ledger and the
//! golden vector. The replay and the expected distributions are written
//! here from docs/GAMES.md, not taken from crates/core/src/game/tresors.rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::{
    copy_tree, failure_kind_names, issuer, played, process_dir, sold, StoreKeys, GENERATE_ONE_BLOCK,
};
use ed25519_dalek::SigningKey;
use rust_decimal::Decimal;
use serde_json::Value;
use sha2::{Digest, Sha256};
use ticket_issuer::block::build::{self, BlockSpec};
use ticket_issuer::block::reader::BlockFile;
use ticket_issuer::block::writer;
use ticket_issuer::derive;
use ticket_issuer::game::tresors;
use ticket_issuer::record::PREFIX_SIZE;
use ticket_issuer::test_support::{seal_chunk, ChunkPlace};
use ticket_issuer::{
    redeem, BlockChoice, Emission, Error, Game, Ledger, RedeemKeys, Store, UnitId,
};

const GAME: Game = Game::TRESORS_ENSABLES;
/// Units of the shared TE block: five chunks, the last one partial.
const UNITS: u32 = 20_000;
/// Units whose every stop is redeemed.
const REPLAYED_UNITS: usize = 300;

/// A store with block 1 of TE emission 1 (1 €, `UNITS` units) and its export.
struct TeBlock {
    store_dir: PathBuf,
    path: PathBuf,
    keys: StoreKeys,
    lines: Vec<Value>,
}

fn te_block() -> &'static TeBlock {
    static BLOCK: OnceLock<TeBlock> = OnceLock::new();
    BLOCK.get_or_init(|| {
        let store_dir = process_dir("tresors-");
        let store = Store::new(&store_dir);
        store.keygen().unwrap();
        let keys = StoreKeys::of(&store);
        let path = generate_block_1(&store, &keys.secrets);
        let mut out = Vec::new();
        ticket_issuer::export::export_jsonl(&keys.authentic(&path).unwrap(), &mut out, &|_| {})
            .unwrap();
        let lines: Vec<Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(lines.len(), UNITS as usize);
        TeBlock {
            store_dir,
            path,
            keys,
            lines,
        }
    })
}

/// Generates block 1 of TE emission 1 (1 €, `UNITS` units) in `store`.
fn generate_block_1(store: &Store, secrets: &ticket_issuer::Secrets) -> PathBuf {
    let made = Emission::new(store, GAME, 1)
        .with_units(UNITS)
        .unwrap()
        .generate(secrets, 100, BlockChoice::Number(1), &|_| {})
        .unwrap();
    PathBuf::from(&made[0].summary.path)
}

impl TeBlock {
    fn redeem_keys(&self) -> RedeemKeys<'_> {
        RedeemKeys {
            public_key: &self.keys.trusted,
            access: self.keys.access(true),
        }
    }
}

fn euros(v: &Value) -> Decimal {
    v.as_str().unwrap().parse().unwrap()
}

/// Why a replay refuses a stop (the test's own names).
#[derive(Debug, PartialEq)]
enum Refused {
    BeforeFirstChest,
    AfterDeath,
    AtEnd,
    BeyondTape,
}

/// Plays an exported unit (board tokens, chest values, dice) by the rules of
/// docs/GAMES.md §Play, to the end (`None`) or stopping after `stop` rolls.
fn replay(line: &Value, stop: Option<usize>) -> Result<Decimal, Refused> {
    let board: Vec<&str> = line["board"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let chests: Vec<Decimal> = line["chests"]
        .as_array()
        .unwrap()
        .iter()
        .map(euros)
        .collect();
    let dice: Vec<u64> = line["dice"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect();
    assert_eq!((board.len(), chests.len()), (61, 10));
    if stop.is_some_and(|k| k > dice.len()) {
        return Err(Refused::BeyondTape);
    }
    let (mut square, mut life, mut found, mut opened) = (0u64, 3i64, Decimal::ZERO, 0);
    for (played, &die) in dice.iter().enumerate() {
        if stop == Some(played) {
            return if opened == 0 {
                Err(Refused::BeforeFirstChest)
            } else {
                Ok(found)
            };
        }
        assert!((1..=6).contains(&die), "die {die}");
        square = (square + die).min(60);
        match board[square as usize] {
            "life+1" => life = (life + 1).min(3),
            "life+2" => life = (life + 2).min(3),
            "trap-1" => life -= 1,
            "trap-2" => life -= 2,
            "trap-3" => life -= 3,
            "bronze" | "silver" | "gold" => {
                found += chests[square as usize / 6 - 1];
                opened += 1;
            }
            "blank" => {}
            other => panic!("square {square} holds {other}"),
        }
        if life <= 0 {
            return match stop {
                Some(_) => Err(Refused::AfterDeath),
                None => Ok(Decimal::ZERO),
            };
        }
        if square == 60 {
            return match stop {
                Some(_) => Err(Refused::AtEnd),
                None => Ok(found),
            };
        }
    }
    panic!("the tape of {} ends before square 60", line["id"]);
}

/// Issue 9: redeem's prize at every stop of the first units equals the
/// replay; every stop the replay refuses is refused with `BadStop`; played
/// to the end it is the prefix's prize and lot.
#[test]
fn redeem_at_every_stop_matches_a_plain_replay_of_the_export() {
    let te = te_block();
    let store = Store::new(&te.store_dir);
    let keys = te.redeem_keys();
    let (mut allowed, mut refused) = (0, 0);
    for line in &te.lines[..REPLAYED_UNITS] {
        let id: UnitId = line["id"].as_str().unwrap().parse().unwrap();
        let to_end = replay(line, None).unwrap();
        assert_eq!(euros(&line["prize"]), to_end, "{}", line["id"]);
        // Alive at the gold chest is a prize of at least 1 €; a death is 0.
        let lot = (to_end > Decimal::ZERO).then_some("coffre-or");
        assert_eq!(line["lot"].as_str(), lot, "{}", line["id"]);
        let r = redeem(&store, &keys, &id, None, true).unwrap();
        assert_eq!(
            (r.prize.parse::<Decimal>().unwrap(), r.stopped_after_steps),
            (to_end, None)
        );
        let tape = line["dice"].as_array().unwrap().len();
        for k in 0..=tape + 1 {
            let got = redeem(&store, &keys, &id, Some(k as u32), true);
            match (replay(line, Some(k)), got) {
                (Ok(prize), Ok(r)) => {
                    assert_eq!(r.prize.parse::<Decimal>().unwrap(), prize, "{id} stop {k}");
                    assert_eq!(r.stopped_after_steps, Some(k as u32));
                    assert_eq!(r.lot, Some("arret"), "{id} stop {k}");
                    assert!(r.redeemed_at.is_none());
                    allowed += 1;
                }
                (Err(_), Err(Error::BadStop { .. })) => refused += 1,
                (want, got) => panic!("{id} stop {k}: replay {want:?}, redeem {got:?}"),
            }
        }
    }
    assert!(
        allowed > 1000 && refused > 1000,
        "{allowed} allowed, {refused} refused"
    );
    // Check only: nothing was recorded.
    assert!(
        !store.ledger_path().exists()
            || Ledger::open(&store.ledger_path())
                .unwrap()
                .summary()
                .unwrap()
                .units
                == 0
    );
}

/// The first exported unit after `from` that may stop after some roll,
/// with that roll and the prize there.
fn stoppable(lines: &[Value], from: usize) -> (usize, usize, Decimal) {
    lines
        .iter()
        .enumerate()
        .skip(from)
        .find_map(|(i, line)| {
            let tape = line["dice"].as_array().unwrap().len();
            (1..tape).find_map(|k| replay(line, Some(k)).ok().map(|p| (i, k, p)))
        })
        .unwrap()
}

/// Recorded redemptions with and without a stop reconcile in `issuer
/// ledger`; a second one is refused; a row whose prize or stop is changed
/// behind the ledger's back no longer reconciles.
#[test]
fn te_redemptions_are_recorded_once_replayed_by_the_ledger_and_tampering_is_seen() {
    let te = te_block();
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("store");
    copy_tree(&te.store_dir, &store_dir);
    let (i, k, prize) = stoppable(&te.lines, 0);
    let stopped_id = te.lines[i]["id"].as_str().unwrap();
    let to_end_id = te.lines[i + 1]["id"].as_str().unwrap();
    sold(&store_dir, &[stopped_id, to_end_id]);
    // The player stops after `k` rolls; the unit is paid as played.
    let play = played(&store_dir, None, stopped_id, Some(k as u32));
    assert_eq!(
        play["prize"].as_str().unwrap().parse::<Decimal>().unwrap(),
        prize
    );
    let run = issuer(&store_dir, &["redeem", stopped_id, "--json"]).expect_code(0);
    let json = run.json();
    assert_eq!(
        json["prize"].as_str().unwrap().parse::<Decimal>().unwrap(),
        prize
    );
    assert_eq!(json["stopped_after_rolls"], k as u64);
    issuer(&store_dir, &["redeem", stopped_id, "--json"]).expect_code(1);
    played(&store_dir, None, to_end_id, None);
    let json = issuer(&store_dir, &["redeem", to_end_id, "--json"])
        .expect_code(0)
        .json();
    assert_eq!(json["prize"], te.lines[i + 1]["prize"]);
    assert_eq!(json["stopped_after_rolls"], Value::Null);
    let ledger = issuer(&store_dir, &["ledger", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(ledger["reconciled"], true, "{ledger}");
    assert_eq!(ledger["units"], 2);

    let ledger_path = Store::new(&store_dir).ledger_path();
    let tape = te.lines[i]["dice"].as_array().unwrap().len();
    // A stop moved to another allowed stop of the same prize pays the same
    // and stays consistent; these change what the row pays or allow.
    for (name, set) in [
        ("prize", "prize_cents = prize_cents + 1".to_string()),
        (
            "stop-before-first-chest",
            "stopped_after_rolls = 0".to_string(),
        ),
        ("stop-at-end", format!("stopped_after_rolls = {tape}")),
    ] {
        let copy = dir.path().join(format!("{name}.sqlite"));
        std::fs::copy(&ledger_path, &copy).unwrap();
        let conn = rusqlite::Connection::open(&copy).unwrap();
        let changed = conn
            .execute(
                &format!("UPDATE redemptions SET {set} WHERE unit_index = ?1"),
                [i as i64],
            )
            .unwrap();
        assert_eq!(changed, 1);
        if name == "prize" {
            // Keep the block totals consistent: only the replay can tell.
            conn.execute("UPDATE block_totals SET paid_cents = paid_cents + 1", [])
                .unwrap();
        }
        drop(conn);
        let summary = Ledger::open(&copy).unwrap().summary().unwrap();
        assert!(!summary.reconciled, "{name}: still reconciled");
    }
}

/// Issue 9: the same keys write the same TE block, byte for byte.
#[test]
fn two_generations_of_a_te_block_are_byte_identical() {
    let te = te_block();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(dir.path().join("store"));
    copy_tree(&te.store_dir.join("keys"), &store.root().join("keys"));
    let path = generate_block_1(&store, &store.secrets().unwrap());
    assert_eq!(
        std::fs::read(&te.path).unwrap(),
        std::fs::read(path).unwrap()
    );
}

/// A bit flipped in a TE chunk is caught by its digest and its tag.
#[test]
fn a_bit_flip_in_a_te_chunk_is_caught() {
    let te = te_block();
    assert!(te.keys.verify(&te.path, true).ok);
    let block = BlockFile::open(&te.path).unwrap();
    let mut bytes = std::fs::read(&te.path).unwrap();
    bytes[block.index[2].offset as usize + 100] ^= 0x10;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flipped.tkb");
    std::fs::write(&path, &bytes).unwrap();
    for with_secrets in [true, false] {
        let report = te.keys.verify(&path, with_secrets);
        assert!(!report.ok);
        assert!(failure_kind_names(&report).contains(&"chunk_digest".to_string()));
    }
    let report = te.keys.verify(&path, true);
    assert_eq!(failure_kind_names(&report), ["chunk_digest", "decrypt"]);
}

/// A TE record whose prefix prize is changed, re-encrypted and re-sealed
/// (index, roots and seal consistent) fails only the unit's lot check.
#[test]
fn a_te_prize_changed_and_resealed_fails_unit_lot() {
    let k = |label: &str| derive::sha256(format!("ticket-issuer tresors {label}").as_bytes());
    let (seed, records_key) = (k("block seed"), k("records key"));
    let signing = SigningKey::from_bytes(&k("signing key"));
    let spec = BlockSpec {
        game: GAME,
        emission: 1,
        block: 1,
        price_cents: 100,
        units: 600,
    };
    let table = GAME.lot_table_for(100, 600).unwrap();
    let lots = build::lot_order(&seed, &table, 600);
    let mut recs = build::records(GAME, &seed, &table, &lots, 0, 600);
    let size = recs.len() / 600;
    // Unit 7's prize, one cent more.
    let prize = &mut recs[7 * size + 10..7 * size + 14];
    let cents = u32::from_le_bytes(prize.try_into().unwrap()) + 1;
    prize.copy_from_slice(&cents.to_le_bytes());
    let mut built = build::build(spec, &seed, Some(&records_key), &|_| {}).unwrap();
    let place = ChunkPlace {
        game: GAME.id(),
        emission: 1,
        block: 1,
        chunk: 0,
        units: 600,
        price_cents: 100,
        rules_version: GAME.rules_version(),
    };
    built.chunks[0].ciphertext = seal_chunk(&records_key, &place, &recs);
    built.chunks[0].subtree_root = build::records_root(&recs, size);
    built.merkle_root = built.chunks[0].subtree_root;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.tkb");
    writer::write(&built, &records_key, &signing, &path).unwrap();
    let key_file = ticket_issuer::RecordsKeyFile {
        kind: ticket_issuer::records_key::KIND.into(),
        game: GAME.slug().into(),
        emission: 1,
        block: Some(1),
        key: records_key,
    };
    let trusted = signing.verifying_key();
    let report = ticket_issuer::verify_block(
        &path,
        &ticket_issuer::VerifyOptions::new(
            &trusted,
            ticket_issuer::KeyAccess {
                secrets: None,
                files: &[(key_file.clone(), "test-records-key.json".into())],
            },
        ),
    )
    .unwrap();
    assert_eq!(
        failure_kind_names(&report),
        ["unit_lot"],
        "{:#?}",
        report.failures
    );
}

/// `generate --units` is for a drawn game only; a fixed-table game's unit
/// refuses a stop.
#[test]
fn fixed_table_refusals_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    issuer(&store, &["keygen"]).expect_code(0);
    let generate = |game: &'static str, units: &str| {
        let mut args = GENERATE_ONE_BLOCK.to_vec();
        args[2] = game;
        args.extend(["--units", units]);
        issuer(&store, &args)
    };
    let run = generate("ile-au-tresor", "5").expect_code(2);
    assert!(run.stdout.contains("fixed_block_size"), "{}", run.stdout);
    for units in ["0", "10000001"] {
        let run = generate("tresors-ensables", units).expect_code(2);
        assert!(
            run.stdout.contains("block_units"),
            "{units}: {}",
            run.stdout
        );
    }
    // A small TE block through the binary: made, verified, and a stop
    // before the first chest refused by `show`.
    let made = generate("tresors-ensables", "50").expect_code(0).json();
    let path = made["blocks"][0]["path"]
        .as_str()
        .unwrap_or_else(|| panic!("{made}"));
    issuer(&store, &["verify", path]).expect_code(0);
    let id = crate::common::valid_id_of(&store, GAME, 1, 1, 0);
    issuer(&store, &["show", &id]).expect_code(0);
    let run = issuer(
        &store,
        &[
            "show",
            &id,
            "--reveal-all",
            "--stopped-after-rolls",
            "0",
            "--json",
        ],
    )
    .expect_code(1);
    assert!(run.stdout.contains("bad_stop"), "{}", run.stdout);
    let shared = crate::common::shared_block(100);
    let (_dir, iat_store, _) = shared.copy_store();
    let id = crate::common::valid_id(&iat_store, 1, 1, 3);
    let run = issuer(
        &iat_store,
        &[
            "redeem",
            &id,
            "--check",
            "--stopped-after-rolls",
            "2",
            "--json",
        ],
    )
    .expect_code(1);
    assert!(run.stdout.contains("bad_stop"), "{}", run.stdout);
    assert!(
        !Store::new(&iat_store).ledger_path().exists() || {
            let s = Ledger::open(&Store::new(&iat_store).ledger_path())
                .unwrap()
                .summary()
                .unwrap();
            s.units == 0
        }
    );
}

/// Issue 13 through the binary: a Trésors Ensablés unit is paid only once
/// sold and played to its end or its stop, and as played; a stop given to
/// a redemption is an auditor's replay (`--check`) only; claims end only
/// on a closed emission.
#[test]
fn a_te_unit_is_paid_only_sold_and_played_and_as_played() {
    let te = te_block();
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("store");
    copy_tree(&te.store_dir, &s);
    let (i, k, stop_prize) = stoppable(&te.lines, 10);
    let line = &te.lines[i];
    let id = line["id"].as_str().unwrap();
    let error = |args: &[&str], code: i32| {
        let run = issuer(&s, &[args, &["--json"]].concat()).expect_code(code);
        run.json()["error"].as_str().unwrap().to_string()
    };
    // The end of claims needs the emission closed.
    let e = error(&["end-claims", "--emission", "1"], 1);
    assert_eq!(e, "emission_not_closed");
    // Never sold: refused, and a forged code is named as forged first.
    assert_eq!(error(&["redeem", id], 1), "not_sold");
    let (head, code) = id.rsplit_once('-').unwrap();
    let other_char = if code.starts_with('0') { '1' } else { '0' };
    let forged = format!("{head}-{other_char}{}", &code[1..]);
    assert_eq!(error(&["redeem", &forged], 1), "wrong_check_code");
    // A stop on a redemption is a usage error; a check with a stop of a
    // unit whose play is not over is refused whatever the stop (issue 19);
    // the auditor's replay is `show --reveal-all`, which records nothing.
    let stop = k.to_string();
    let usage = issuer(&s, &["redeem", id, "--stopped-after-rolls", &stop]).expect_code(2);
    assert!(usage.stderr.contains("--check"), "{}", usage.stderr);
    assert_eq!(
        error(
            &["redeem", id, "--check", "--stopped-after-rolls", &stop],
            1
        ),
        "not_sold"
    );
    let replay_check = issuer(
        &s,
        &[
            "show",
            id,
            "--reveal-all",
            "--stopped-after-rolls",
            &stop,
            "--json",
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(euros(&replay_check["prize"]), stop_prize);
    // The neutral name answers the same as today's, kept as an alias.
    let neutral = issuer(
        &s,
        &[
            "show",
            id,
            "--reveal-all",
            "--stopped-after-steps",
            &stop,
            "--json",
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(neutral, replay_check);
    // Sold, not played, then played part of the way: the play goes on.
    sold(&s, &[id]);
    assert_eq!(error(&["redeem", id], 1), "play_unfinished");
    issuer(&s, &["play", id, "--roll", "1", "--json"]).expect_code(0);
    assert_eq!(error(&["redeem", id], 1), "play_unfinished");
    // Stopped after k rolls: paid the replay's prize at that stop, and a
    // stop other than the recorded one is refused.
    let play = played(&s, None, id, Some(k as u32));
    assert_eq!(euros(&play["prize"]), stop_prize);
    let unit: UnitId = id.parse().unwrap();
    let keys = te.redeem_keys();
    let moved = redeem(&Store::new(&s), &keys, &unit, Some(k as u32 + 1), false);
    assert!(matches!(moved, Err(Error::BadStop { .. })), "{moved:?}");
    let paid = issuer(&s, &["redeem", id, "--json"]).expect_code(0).json();
    assert_eq!(euros(&paid["prize"]), stop_prize);
    assert_eq!(paid["stopped_after_rolls"], k as u64);
    // Played to its end: the replay's prize to the end.
    let next = te.lines[i + 1]["id"].as_str().unwrap();
    sold(&s, &[next]);
    played(&s, None, next, None);
    let paid = issuer(&s, &["redeem", next, "--json"])
        .expect_code(0)
        .json();
    assert_eq!(
        euros(&paid["prize"]),
        replay(&te.lines[i + 1], None).unwrap()
    );
    assert_eq!(paid["stopped_after_rolls"], Value::Null);
    let ledger = issuer(&s, &["ledger", "--json"]).expect_code(0).json();
    assert_eq!(
        (&ledger["units"], &ledger["reconciled"]),
        (&2.into(), &true.into())
    );
}

fn golden_master() -> [u8; 32] {
    derive::sha256(b"ticket-issuer test master secret")
}

/// The TE golden vector: a fixed secret gives a fixed root and file.
#[test]
fn a_te_block_matches_its_golden_vector() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/golden/tresors-ensables.txt");
    let golden = std::fs::read_to_string(&path).unwrap();
    let value = |key: &str| {
        golden
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("{} has no {key}", path.display()))
            .to_string()
    };
    let master = golden_master();
    let seed = derive::block_seed(&master, GAME, 1, 1);
    let records_key = derive::block_records_key(&derive::emission_records_key(&master, GAME, 1), 1);
    let signing = SigningKey::from_bytes(&derive::sha256(b"ticket-issuer test signing key"));
    let spec = BlockSpec {
        game: GAME,
        emission: 1,
        block: 1,
        price_cents: 100,
        units: 5000,
    };
    let dir = tempfile::tempdir().unwrap();
    let written = writer::make_block(
        spec,
        &seed,
        &records_key,
        &signing,
        &dir.path().join("b.tkb"),
    )
    .unwrap();
    let got = [
        ("master", hex::encode(master)),
        ("seed", hex::encode(seed)),
        ("merkle_root", hex::encode(written.header.merkle_root)),
        ("file_sha256", hex::encode(written.file_sha256)),
    ];
    let report: Vec<String> = got.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    for (key, v) in &got {
        assert_eq!(&value(key), v, "{key}; now:\n{}", report.join("\n"));
    }
    assert_eq!(
        hex::encode(Sha256::digest(std::fs::read(&written.path).unwrap())),
        value("file_sha256")
    );
}

/// Pearson's chi-square of `observed` against `probs` (the shared test
/// helper: cells expected fewer than 5 times are merged); prints and
/// returns the p-value.
fn chi_square(name: &str, observed: &[u64], probs: &[f64]) -> f64 {
    assert_eq!(observed.len(), probs.len(), "{name}");
    for (&o, &p) in observed.iter().zip(probs) {
        assert!(
            p > 0.0 || o == 0,
            "{name}: {o} draws of an impossible outcome"
        );
    }
    let c = ticket_issuer::test_support::chi_square(observed, probs);
    println!(
        "{name}: chi-square {:.2}, df {}, p = {:.4}",
        c.stat, c.dof, c.p
    );
    c.p
}

/// Square codes of docs/FORMAT.md: blank 1, life +1 2, life +2 3, traps 4–6.
const KINDS: [u8; 6] = [1, 2, 3, 4, 5, 6];
/// The rules of 3.2.2 (docs/GAMES.md): (square code, probability).
const RULE_TABLE: [[(u8, f64); 3]; 3] = [
    [(1, 0.3), (2, 0.4), (3, 0.3)],
    [(4, 0.3), (5, 0.4), (6, 0.3)],
    [(4, 0.3), (1, 0.4), (2, 0.3)],
];

/// Every series a generator can draw, with its probability: rule 1 on one
/// of 5 offsets, rule 2 on one of the 4 left, rule 3 on one of the 3 left,
/// each rule's outcome by its table, the rest blank.
fn series_law() -> BTreeMap<[u8; 5], f64> {
    let mut law = BTreeMap::new();
    for a in 0..5 {
        for b in (0..5).filter(|&b| b != a) {
            for c in (0..5).filter(|&c| c != a && c != b) {
                for o1 in RULE_TABLE[0] {
                    for o2 in RULE_TABLE[1] {
                        for o3 in RULE_TABLE[2] {
                            let mut series = [1u8; 5];
                            (series[a], series[b], series[c]) = (o1.0, o2.0, o3.0);
                            *law.entry(series).or_insert(0.0) += o1.1 * o2.1 * o3.1 / 60.0;
                        }
                    }
                }
            }
        }
    }
    law
}

/// Issue 9: a 100,000-unit block's draws fit the regulation. p-values are
/// printed (`--nocapture`); only one no honest generator reaches fails.
#[test]
fn a_100000_unit_block_fits_the_regulation() {
    const N: u32 = 100_000;
    let seed = derive::sha256(b"ticket-issuer tresors chi-square seed");
    let table = GAME.lot_table_for(100, N).unwrap();
    let lots = build::lot_order(&seed, &table, N);
    let recs = build::records(GAME, &seed, &table, &lots, 0, N);
    let size = recs.len() / N as usize;
    let law = series_law();
    let mut series_seen: BTreeMap<[u8; 5], u64> = BTreeMap::new();
    let mut by_offset = [[0u64; 6]; 5];
    let mut first_dice = [0u64; 6];
    let mut chests = vec![vec![0u64; 6]; 10];
    for rec in recs.chunks(size) {
        let unit = tresors::Unit::decode(&rec[PREFIX_SIZE..]).unwrap();
        for s in 0..10 {
            let mut series = [0u8; 5];
            for (o, q) in series.iter_mut().enumerate() {
                *q = unit.board()[6 * s + 1 + o] as u8;
                by_offset[o][usize::from(*q - 1)] += 1;
            }
            *series_seen.entry(series).or_insert(0) += 1;
        }
        // Every tape has at least ten rolls: those are always drawn.
        for &die in &unit.dice()[..10] {
            first_dice[usize::from(die - 1)] += 1;
        }
        for (k, counts) in chests.iter_mut().enumerate() {
            counts[usize::from(unit.chest_index(k))] += 1;
        }
    }
    let mut p = Vec::new();
    p.push(chi_square(
        "dice faces (first ten rolls)",
        &first_dice,
        &[1.0 / 6.0; 6],
    ));
    for (o, counts) in by_offset.iter().enumerate() {
        let probs = KINDS.map(|kind| {
            let ruled: f64 = RULE_TABLE
                .iter()
                .flatten()
                .filter(|(q, _)| *q == kind)
                .map(|(_, w)| w / 5.0)
                .sum();
            ruled + if kind == 1 { 0.4 } else { 0.0 }
        });
        p.push(chi_square(
            &format!("square kinds at series offset {o}"),
            counts,
            &probs,
        ));
    }
    for (r, rule) in RULE_TABLE.iter().enumerate() {
        // Outcomes only rule r can give (life +2 for rule 1, traps −2 and −3
        // for rule 2): how often a series holds them.
        let own: Vec<u8> = rule
            .iter()
            .map(|o| o.0)
            .filter(|q| {
                RULE_TABLE
                    .iter()
                    .enumerate()
                    .all(|(r2, t)| r2 == r || t.iter().all(|o| o.0 != *q))
            })
            .collect();
        for q in own {
            let with: u64 = series_seen
                .iter()
                .filter(|(s, _)| s.contains(&q))
                .map(|(_, n)| n)
                .sum();
            let total: u64 = series_seen.values().sum();
            let w = rule.iter().find(|o| o.0 == q).unwrap().1;
            p.push(chi_square(
                &format!("rule {} outcome code {q}", r + 1),
                &[with, total - with],
                &[w, 1.0 - w],
            ));
        }
    }
    let impossible: Vec<_> = series_seen
        .keys()
        .filter(|s| !law.contains_key(*s))
        .collect();
    assert!(
        impossible.is_empty(),
        "series no draw gives: {impossible:?}"
    );
    let (observed, probs): (Vec<u64>, Vec<f64>) = law
        .iter()
        .map(|(s, &pr)| (series_seen.get(s).copied().unwrap_or(0), pr))
        .unzip();
    p.push(chi_square(
        "whole series (placement and outcomes)",
        &observed,
        &probs,
    ));
    let mut multisets: BTreeMap<[u8; 5], (u64, f64)> = BTreeMap::new();
    for (s, &pr) in &law {
        let mut m = *s;
        m.sort();
        let cell = multisets.entry(m).or_insert((0, 0.0));
        cell.0 += series_seen.get(s).copied().unwrap_or(0);
        cell.1 += pr;
    }
    let (observed, probs): (Vec<u64>, Vec<f64>) = multisets.values().copied().unzip();
    p.push(chi_square(
        "series contents (the rules' outcomes)",
        &observed,
        &probs,
    ));
    let bronze = [0.60, 0.23, 0.17];
    let gold = [69_999, 15_000, 10_000, 4_900, 100, 1].map(|w| f64::from(w) / 100_000.0);
    for (k, counts) in chests.iter().enumerate() {
        let probs: &[f64] = if k == 9 { &gold } else { &bronze };
        assert!(
            counts[probs.len()..].iter().all(|&c| c == 0),
            "chest {k}: {counts:?}"
        );
        p.push(chi_square(
            &format!("chest on square {} values", 6 * (k + 1)),
            &counts[..probs.len()],
            probs,
        ));
    }
    let worst = p.iter().copied().fold(1.0, f64::min);
    assert!(worst >= 1e-6, "a p-value of {worst}: the draws do not fit");
}
