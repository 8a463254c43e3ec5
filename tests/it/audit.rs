//! `issuer audit` (docs/AUDIT.md): honest blocks pass, and blocks biased
//! on purpose (winners packed into one region, a loaded die, a chest table
//! off by three points) are each flagged by the test that should catch
//! it, at the default level after Holm's correction, in report.json and
//! report.html alike. Blocks are drawn from fixed seeds, so every run
//! audits the same units. The auditor holds the public key and the
//! records key only (a store of their own, no secret).

use std::path::{Path, PathBuf};

use serde_json::Value;
use ticket_issuer::block::build::{self, BlockSpec, BuiltBlock, BuiltChunk};
use ticket_issuer::block::{writer, CHUNK_UNITS};
use ticket_issuer::game::tresors::Unit;
use ticket_issuer::game::Game;
use ticket_issuer::merkle;
use ticket_issuer::record::PREFIX_SIZE;
use ticket_issuer::records_key::RecordsKeyFile;
use ticket_issuer::rng::Stream;
use ticket_issuer::test_support::{seal_chunk, ChunkPlace};

use crate::common::{issuer, Fixture};

/// Units of a Trésors Ensablés test block (a drawn game's block may hold
/// any number).
const TE_UNITS: u32 = 100_000;

/// Writes block `block` of emission 1 of `game`, its units drawn from
/// `seed` in the lot order `lots` (a fixed-table game; `None`: the
/// honest shuffle), each record then passed to `edit` (given its index and
/// the whole record; it must leave a unit the rules accept, with the
/// prefix's lot and prize what the payload pays), sealed with the
/// fixture's key.
fn block_with(
    fx: &Fixture,
    game: Game,
    block: u32,
    units: u32,
    seed: &[u8; 32],
    lots: Option<Vec<u8>>,
    edit: &dyn Fn(u32, &mut [u8]),
) -> PathBuf {
    let price = 100;
    let table = game.lot_table_for(price, units).unwrap();
    let lots = lots.unwrap_or_else(|| build::lot_order(seed, &table, units));
    let key = fx.secrets.block_records_key(game, 1, block);
    let size = ticket_issuer::record::record_size(game);
    let mut chunks = Vec::new();
    let mut roots = Vec::new();
    for (chunk, first) in (0..units).step_by(CHUNK_UNITS as usize).enumerate() {
        let count = CHUNK_UNITS.min(units - first);
        let mut records = build::records(game, seed, &table, &lots, first, count);
        for (i, record) in records.chunks_exact_mut(size).enumerate() {
            edit(first + i as u32, record);
        }
        let subtree_root = build::records_root(&records, size);
        roots.push(subtree_root);
        let place = ChunkPlace {
            game: game.id(),
            emission: 1,
            block,
            chunk: chunk as u32,
            units: count,
            price_cents: price,
            rules_version: game.rules_version(),
        };
        chunks.push(BuiltChunk {
            ciphertext: seal_chunk(&key, &place, &records),
            subtree_root,
            units: count,
        });
    }
    let built = BuiltBlock {
        spec: BlockSpec {
            game,
            emission: 1,
            block,
            price_cents: price,
            units,
        },
        lot_table: table,
        unit_count: units,
        seed_commitment: ticket_issuer::derive::seed_commitment(seed),
        merkle_root: merkle::root_from_hashes(&roots),
        chunks,
    };
    let path = fx.dir.path().join(format!("{}-{block}.tkb", game.slug()));
    writer::write(&built, &key, &fx.secrets.signing, &path).unwrap();
    path
}

/// An auditor's view: their own empty store, the issuer's public key and
/// the emission's records key file.
struct Auditor {
    store: PathBuf,
    public_key: PathBuf,
    records_key: PathBuf,
}

impl Auditor {
    fn of(fx: &Fixture, game: Game) -> Auditor {
        let dir = fx.dir.path().join(format!("auditor-{}", game.slug()));
        std::fs::create_dir_all(&dir).unwrap();
        let public_key = dir.join("issuer.pub");
        let store = ticket_issuer::store::Store::new(fx.dir.path().join("store"));
        std::fs::copy(store.public_key_path(), &public_key).unwrap();
        let records_key = dir.join("records-key.json");
        let file = RecordsKeyFile::export(&fx.secrets, game, 1, None);
        std::fs::write(&records_key, serde_json::to_vec(&file).unwrap()).unwrap();
        Auditor {
            store: dir.join("store"),
            public_key,
            records_key,
        }
    }

    /// Audits `blocks` into a new folder; returns the exit code, the
    /// report and the page.
    fn audit(&self, blocks: &[&Path], name: &str) -> (i32, Value, String) {
        let out = self.store.parent().unwrap().join(name);
        let mut args: Vec<String> = vec!["audit".into()];
        args.extend(blocks.iter().map(|p| p.display().to_string()));
        for a in [
            "--public-key",
            &self.public_key.display().to_string(),
            "--records-key",
            &self.records_key.display().to_string(),
            "--out",
            &out.display().to_string(),
            "--json",
            "--quiet",
        ] {
            args.push(a.to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = issuer(&self.store, &args);
        let code = run.code;
        let report = run.json();
        let page = std::fs::read_to_string(out.join("report.html")).unwrap();
        // The folder's digests list every file in it.
        let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
        for entry in std::fs::read_dir(&out).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name != "SHA256SUMS" {
                assert!(
                    sums.contains(&format!("  {name}\n")),
                    "{name} not in SHA256SUMS"
                );
            }
        }
        (code, report, page)
    }
}

/// The tests failing at 0.01 after the correction.
fn failing(report: &Value) -> Vec<String> {
    report["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["p_adjusted"].as_f64().is_some_and(|p| p < 0.01))
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// The test `id` of `report`.
fn test<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no test {id}"))
}

#[test]
fn honest_blocks_of_both_games_pass_with_every_figure_shown() {
    let fx = Fixture::new();
    let ile = block_with(
        &fx,
        Game::ILE_AU_TRESOR,
        1,
        450_000,
        &[0x21; 32],
        None,
        &|_, _| {},
    );
    let (code, report, page) = Auditor::of(&fx, Game::ILE_AU_TRESOR).audit(&[&ile], "honest-ile");
    assert_eq!(code, 0, "{:#}", report["summary"]);
    assert_eq!(report["kind"], "audit");
    assert_eq!(report["ok"], true);
    assert!(failing(&report).is_empty());
    // The lot table is met exactly, and says so.
    let lots = report["blocks"][0]["lots"].as_array().unwrap();
    assert!(lots.iter().all(|l| l["found"] == l["expected"]));
    assert_eq!(report["blocks"][0]["winners"], 119_604);
    assert_eq!(report["blocks"][0]["paid_cents"], 31_500_000);
    // Every test gives its statistic, p-value and verdicts at 0.01 and
    // 0.05, raw and adjusted; a test that cannot run says why.
    let t = test(&report, "block-1/winners-per-bin");
    assert!(t["statistic"].is_number() && t["dof"] == 99.0 && t["p"].is_number());
    assert_eq!(t["verdicts"].as_array().unwrap().len(), 2);
    let top = test(&report, "block-1/lot-1-per-bin");
    assert!(top["p"].is_null());
    assert!(top["note"].as_str().unwrap().contains("too few"), "{top}");
    assert_eq!(top["verdicts"][0]["raw"], "not_run");
    // The payout rule: 70 % meets the scratch band.
    let binding: Vec<&Value> = report["payout"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["binding"] == true)
        .collect();
    assert_eq!(binding.len(), 2, "{binding:?}");
    assert!(binding.iter().all(|b| b["met"] == true));
    assert!(page.contains("block-1/winners-per-bin") && page.contains("PASS"));

    let te = block_with(
        &fx,
        Game::TRESORS_ENSABLES,
        2,
        TE_UNITS,
        &[0x22; 32],
        None,
        &|_, _| {},
    );
    let (code, report, _) = Auditor::of(&fx, Game::TRESORS_ENSABLES).audit(&[&te], "honest-te");
    assert_eq!(code, 0, "{:#}", report["summary"]);
    assert!(failing(&report).is_empty());
    for id in [
        "dice",
        "series",
        "chest-bronze",
        "chest-silver",
        "chest-gold",
        "prizes",
    ] {
        let t = test(&report, &format!("block-2/{id}"));
        assert!(t["p"].as_f64().unwrap() > 0.0, "{t}");
    }
    // The return of every strategy is judged without the 10,000 € lot,
    // and the lot by its count.
    for s in [
        "never-stop",
        "first-chest",
        "reach-0.5",
        "reach-1",
        "reach-2",
        "reach-5",
    ] {
        test(&report, &format!("block-2/rtp-{s}"));
        test(&report, &format!("block-2/jackpots-{s}"));
    }
    // Never stopping is the binding figure (65.16 %: within 65 % to 75 %);
    // a player who stops at the first chest gets 28 %, reported as missing.
    let payout = report["payout"].as_array().unwrap();
    let never = payout
        .iter()
        .find(|b| b["binding"] == true && b["article"] == "D.322-10 II 2°")
        .unwrap();
    assert_eq!(never["met"], true, "{never}");
    assert!(never["rate"].as_str().unwrap().starts_with("0.6515"));
    let first = payout
        .iter()
        .find(|b| {
            b["figure"].as_str().unwrap().contains("first-chest")
                && b["article"] == "D.322-10 II 2°"
        })
        .unwrap();
    assert_eq!(
        (first["met"].clone(), first["binding"].clone()),
        (false.into(), false.into())
    );
    assert!(first["why"].as_str().unwrap().contains("below the floor"));
}

#[test]
fn winners_packed_into_one_region_are_flagged_by_the_position_test() {
    let fx = Fixture::new();
    let game = Game::ILE_AU_TRESOR;
    let seed = [0x31; 32];
    let table = game.lot_table_for(100, 450_000).unwrap();
    let mut lots = build::lot_order(&seed, &table, 450_000);
    // 1,500 more winners in the first 5 % of the block (11,960 expected
    // there): losers there swapped with winners from further on. The lot
    // table is still met exactly.
    let mut moved = 0;
    let mut from = 22_500;
    for i in 0..22_500 {
        if moved == 1_500 {
            break;
        }
        if lots[i] == 0 {
            while lots[from] == 0 {
                from += 1;
            }
            lots.swap(i, from);
            moved += 1;
        }
    }
    let path = block_with(&fx, game, 1, 450_000, &seed, Some(lots), &|_, _| {});
    let (code, report, page) = Auditor::of(&fx, game).audit(&[&path], "packed");
    assert_eq!(code, 1);
    assert_eq!(report["ok"], false);
    let failed = failing(&report);
    assert!(
        failed.contains(&"block-1/winners-per-bin".to_string()),
        "{failed:?}"
    );
    // The lot table is met: only the statistics can see it.
    assert!(report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["ok"] == true));
    assert!(page.contains("FAIL"));
}

/// Re-encodes a Trésors Ensablés record with `change` applied to its
/// unit's parts (board, chest value indices, dice), and the prefix's lot
/// and prize set to what the new unit pays.
fn rebuild_te(record: &mut [u8], mut change: impl FnMut(&mut Vec<u8>, &mut [u8; 10])) {
    let unit = Unit::decode(&record[PREFIX_SIZE..]).unwrap();
    let mut dice = unit.dice().to_vec();
    let mut chests = [0u8; 10];
    for (k, c) in chests.iter_mut().enumerate() {
        *c = unit.chest_index(k);
    }
    change(&mut dice, &mut chests);
    let unit = Unit::from_parts(*unit.board(), chests, &dice).unwrap();
    let mut payload = Vec::new();
    unit.encode(&mut payload);
    let played = Game::TRESORS_ENSABLES.play_to_end(&payload).unwrap();
    record[PREFIX_SIZE..].copy_from_slice(&payload);
    record[9] = played.lot;
    record[10..14].copy_from_slice(&played.prize.amount().unwrap_or(0).to_le_bytes());
}

#[test]
fn a_loaded_die_is_flagged_by_the_dice_test() {
    let fx = Fixture::new();
    // A die that shows 6 one time in five instead of one in six.
    let loaded = |record: &mut [u8]| {
        let index = u32::from_le_bytes(record[..4].try_into().unwrap());
        let mut stream = Stream::new(&[0x44; 32], u64::from(index));
        rebuild_te(record, |dice, _| {
            dice.clear();
            let mut at = 0u32;
            while at < 60 {
                let face = match stream.below(30) {
                    0..=5 => 6,
                    n => (n - 6) / 5 + 1,
                };
                dice.push(face as u8);
                at += face;
            }
        });
    };
    let path = block_with(
        &fx,
        Game::TRESORS_ENSABLES,
        1,
        TE_UNITS,
        &[0x41; 32],
        None,
        &|_, r| loaded(r),
    );
    let (code, report, page) = Auditor::of(&fx, Game::TRESORS_ENSABLES).audit(&[&path], "loaded");
    assert_eq!(code, 1);
    let failed = failing(&report);
    assert!(failed.contains(&"block-1/dice".to_string()), "{failed:?}");
    // The chests were not touched (the plays were: a strategy's return
    // may be flagged too).
    assert!(!failed.iter().any(|f| f.contains("/chest-")), "{failed:?}");
    assert!(page.contains("block-1/dice"));
}

#[test]
fn a_chest_table_off_by_three_points_is_flagged_by_its_chest_test() {
    let fx = Fixture::new();
    // Bronze chests drawn 0.57 / 0.26 / 0.17 instead of 0.60 / 0.23 / 0.17.
    let off = |record: &mut [u8]| {
        let index = u32::from_le_bytes(record[..4].try_into().unwrap());
        let mut stream = Stream::new(&[0x55; 32], u64::from(index));
        rebuild_te(record, |_, chests| {
            for k in (0..10).step_by(2).take(5) {
                chests[k] = match stream.below(100) {
                    0..=56 => 0,
                    57..=82 => 1,
                    _ => 2,
                };
            }
        });
    };
    let path = block_with(
        &fx,
        Game::TRESORS_ENSABLES,
        1,
        TE_UNITS,
        &[0x51; 32],
        None,
        &|_, r| off(r),
    );
    let (code, report, _) = Auditor::of(&fx, Game::TRESORS_ENSABLES).audit(&[&path], "chests");
    assert_eq!(code, 1);
    let failed = failing(&report);
    assert!(
        failed.contains(&"block-1/chest-bronze".to_string()),
        "{failed:?}"
    );
    assert!(!failed.contains(&"block-1/dice".to_string()), "{failed:?}");
}

#[test]
fn an_existing_output_folder_is_refused_and_nothing_is_left_half_written() {
    let fx = Fixture::new();
    let path = block_with(
        &fx,
        Game::TRESORS_ENSABLES,
        1,
        2_000,
        &[0x61; 32],
        None,
        &|_, _| {},
    );
    let auditor = Auditor::of(&fx, Game::TRESORS_ENSABLES);
    let out = fx.dir.path().join("taken");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let run = issuer(
        &auditor.store,
        &[
            "audit",
            &path.display().to_string(),
            "--public-key",
            &auditor.public_key.display().to_string(),
            "--records-key",
            &auditor.records_key.display().to_string(),
            "--out",
            &out.display().to_string(),
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("already exists"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    // No partial folder is left beside it.
    let partials: Vec<_> = std::fs::read_dir(fx.dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        .collect();
    assert!(partials.is_empty());
}

#[test]
fn after_the_reveal_the_kit_still_proves_a_unit_and_regenerates_every_block() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let s = |args: &[&str]| issuer(&store, args).expect_code(0);
    s(&["keygen"]);
    s(&[
        "generate",
        "--game",
        "tresors-ensables",
        "--emission",
        "1",
        "--units",
        "5000",
        "--quiet",
    ]);
    s(&["close", "--emission", "1"]);
    s(&[
        "end-claims",
        "--emission",
        "1",
        "--force",
        "--reason",
        "no claim deadline set",
    ]);
    let seeds = dir.path().join("reveal.json");
    s(&[
        "reveal",
        "--emission",
        "1",
        "--out",
        seeds.to_str().unwrap(),
    ]);
    let store_ = ticket_issuer::store::Store::new(&store);
    let id = crate::common::valid_id_of(&store, Game::TRESORS_ENSABLES, 1, 1, 4242);
    // Redemption is closed: a check is refused.
    let refused = issuer(&store, &["redeem", &id, "--check", "--json"]);
    assert_eq!(refused.code, 1);
    assert_eq!(refused.json()["error"], "emission_revealed");
    // The kit proves it, read-only, and checks every seed.
    let out = dir.path().join("evidence");
    let run = issuer(
        &store,
        &[
            "audit",
            "--emission",
            "1",
            "--seeds",
            seeds.to_str().unwrap(),
            "--prove",
            &id,
            "--out",
            out.to_str().unwrap(),
            "--json",
            "--quiet",
        ],
    );
    let report = run.json();
    let seeds_check = report["provenance"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "manifest/seeds")
        .unwrap();
    assert_eq!(seeds_check["ok"], true, "{seeds_check}");
    assert!(seeds_check["detail"]
        .as_str()
        .unwrap()
        .contains("byte for byte"));
    let proof: Value =
        serde_json::from_slice(&std::fs::read(out.join(format!("proofs/{id}.json"))).unwrap())
            .unwrap();
    assert_eq!(proof["kind"], "unit_proof");
    assert_eq!(proof["leaf_index"], 4242);
    assert_eq!(proof["tree_size"], 5000);
    let record = hex::decode(proof["record"].as_str().unwrap()).unwrap();
    let path: Vec<merkle::Hash> = proof["inclusion_proof"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            hex::decode(h.as_str().unwrap())
                .unwrap()
                .try_into()
                .unwrap()
        })
        .collect();
    let root: merkle::Hash = hex::decode(proof["merkle_root"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    assert!(merkle::verify_inclusion(
        &merkle::leaf_hash(&record),
        4242,
        5000,
        &path,
        &root
    ));
    // The root is the one the signed manifest lists.
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(
            store_
                .root()
                .join("emissions/tresors-ensables/e000001/manifest.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["blocks"][0]["merkle_root"], proof["merkle_root"]);
    // The outcome file lists the unit with the prize the proof gives.
    let outcomes = std::fs::read_to_string(out.join("outcomes-e1-b1.tsv")).unwrap();
    let line = outcomes.lines().find(|l| l.starts_with(&id)).unwrap();
    assert!(
        line.ends_with(&format!("\t{}", proof["prize"].as_str().unwrap())),
        "{line}"
    );
}

#[test]
fn a_proof_is_refused_for_a_unit_outside_the_blocks_audited_or_with_another_check_code() {
    let fx = Fixture::new();
    let seed = [0x71; 32];
    let path = block_with(
        &fx,
        Game::TRESORS_ENSABLES,
        1,
        2_000,
        &seed,
        None,
        &|_, _| {},
    );
    let auditor = Auditor::of(&fx, Game::TRESORS_ENSABLES);
    let id = |block: u32, check_code| {
        ticket_issuer::unit_id::UnitId {
            game: Game::TRESORS_ENSABLES,
            emission: 1,
            block,
            index: 5,
            check_code,
        }
        .to_string()
    };
    let code = ticket_issuer::derive::check_code(&seed, 5);
    let mut other = code;
    other[0] ^= 1;
    for (n, (unit, error)) in [
        (id(2, code), "unknown_block"),
        (id(1, other), "wrong_check_code"),
    ]
    .into_iter()
    .enumerate()
    {
        let out = fx.dir.path().join(format!("refused-{n}"));
        let run = issuer(
            &auditor.store,
            &[
                "audit",
                &path.display().to_string(),
                "--public-key",
                &auditor.public_key.display().to_string(),
                "--records-key",
                &auditor.records_key.display().to_string(),
                "--prove",
                &unit,
                "--out",
                &out.display().to_string(),
                "--json",
            ],
        );
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert_eq!(run.json()["error"], error, "{}", run.stdout);
        // No evidence folder is left, whole or partial.
        assert!(!out.exists());
    }
}
