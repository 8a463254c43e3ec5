//! The player page's modules (`crates/service/player/`, issue 37) against
//! the library:
//!
//! - `fixtures/player/units.json`: records of both games made as blocks
//!   make them (seed 00 01 … 1f), each with what the library decodes and
//!   plays from it (the sale's `unit`, the lot and prize, a step-by-step
//!   game's every step and where a stop is allowed), and records the
//!   library refuses. Written by the code; the test fails when the code's
//!   output changes, and the page's unit tests (`node --test`) hold the
//!   game modules to the same file;
//! - `node --test crates/service/player/test/`: those unit tests (decode,
//!   replay, check of each game; the Merkle proofs of
//!   fixtures/merkle/rfc9162_vectors.json; unit IDs of fixtures/derive/;
//!   seals and headers of fixtures/vectors/; euro amounts). Node is needed:
//!   without it the test fails under CI (`CI` set) and says it was skipped
//!   elsewhere.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use ticket_issuer::block::build;
use ticket_issuer::game::Game;
use ticket_issuer::record::{RecordPrefix, PREFIX_SIZE};

/// The games the vectors hold, in header-code order.
const GAMES: [Game; 2] = [Game::ILE_AU_TRESOR, Game::TRESORS_ENSABLES];

/// Units of a block read for vectors, per game and price.
const SCANNED: u32 = 3000;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn vectors_path() -> PathBuf {
    root().join("fixtures/player/units.json")
}

/// What the library makes of `record` of `game` at `price_cents`.
fn unit_vector(game: Game, price_cents: u32, record: &[u8]) -> Value {
    let prefix = RecordPrefix::parse(record).unwrap();
    let unit = game.decode(&record[PREFIX_SIZE..]).unwrap();
    let played = unit.play_to_end().unwrap();
    assert_eq!(played.lot, prefix.lot, "{game:?} {}", prefix.index);
    let mut v = json!({
        "game": game.slug(),
        "price_cents": price_cents,
        "index": prefix.index,
        "record": hex::encode(record),
        "unit": unit.sale_view(),
        "lot": prefix.lot,
        "lot_name": game.lot_name(prefix.lot),
        "prize_cents": prefix.prize_cents,
    });
    if let Some(tape) = unit.tape() {
        let end = tape.steps.last().and_then(|s| s.ends).unwrap();
        v["steps"] = tape.steps.iter().map(|s| json!(s.shown)).collect();
        v["end"] = json!(end.name);
        v["first_stop"] = json!(tape.first_stop);
        v["stops"] = (1..tape.end_step())
            .filter(|&n| tape.may_stop_after(n))
            .map(|n| json!({"after": n, "prize_cents": tape.prize_cents(n, true)}))
            .collect();
    }
    v
}

/// The records of units 0 … [`SCANNED`] − 1 of `game`'s block of seed
/// 00 01 … 1f at `price_cents`.
fn records(game: Game, price_cents: u32) -> Vec<Vec<u8>> {
    let seed: [u8; 32] = std::array::from_fn(|i| i as u8);
    let table = game.lot_table(price_cents).unwrap();
    let lots = build::lot_order(&seed, &table, game.block_units());
    let size = ticket_issuer::record::record_size(game);
    build::records(game, &seed, &table, &lots, 0, SCANNED)
        .chunks_exact(size)
        .map(<[u8]>::to_vec)
        .collect()
}

/// The units a vector file holds of `game` at `price_cents`: the first of
/// each lot; for a step-by-step game, also the first of each way a play
/// ends and the first where a stop is allowed from the first roll on.
fn chosen(game: Game, price_cents: u32) -> Vec<Vec<u8>> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for record in records(game, price_cents) {
        let v = unit_vector(game, price_cents, &record);
        let key = format!("{}/{}/{}", v["lot"], v["end"], v["first_stop"] == json!(1));
        if seen.insert(key) {
            out.push(record);
        }
    }
    out
}

/// Records the library refuses: (game, price, why, record).
fn refused() -> Vec<(Game, u32, &'static str, Vec<u8>)> {
    let ile = records(Game::ILE_AU_TRESOR, 100).remove(0);
    let te = records(Game::TRESORS_ENSABLES, 100).remove(0);
    let mut out = Vec::new();
    // L'île au trésor: chest 2 on chest 1's square; a content code 5.
    let mut r = ile.clone();
    r[21] = r[18];
    r[22] = r[19];
    out.push((Game::ILE_AU_TRESOR, 100, "two chests on one square", r));
    let mut r = ile;
    r[20] = 5;
    out.push((Game::ILE_AU_TRESOR, 100, "a chest's content code 5", r));
    // Trésors Ensablés: square 1 the start's code; the first die 0.
    let mut r = te.clone();
    r[PREFIX_SIZE] &= 0x0f;
    out.push((
        Game::TRESORS_ENSABLES,
        100,
        "square 1 coded as the start",
        r,
    ));
    let mut r = te;
    r[PREFIX_SIZE + 36] &= 0x0f;
    out.push((Game::TRESORS_ENSABLES, 100, "the first die 0", r));
    for (game, _, why, record) in &out {
        assert!(
            game.play_to_end(&record[PREFIX_SIZE..]).is_err(),
            "{game:?}: {why} is refused by the library"
        );
    }
    out
}

/// The vector file, as the code makes it.
fn player_vectors() -> Value {
    let mut units = Vec::new();
    for game in GAMES {
        for &price in game.prices_cents() {
            for record in chosen(game, price) {
                units.push(unit_vector(game, price, &record));
            }
        }
    }
    let refused: Vec<Value> = refused()
        .into_iter()
        .map(|(game, price, why, record)| {
            json!({"game": game.slug(), "price_cents": price, "why": why, "record": hex::encode(record)})
        })
        .collect();
    json!({
        "description": "Unit records of both games as blocks make them (seed 00 01 .. 1f, units 0 .. 2999 at each price, the first of each lot, ending and first stop), with what the library decodes and plays from each: the sale's unit, lot, lot name and prize, and for a game played step by step every step as the API shows it, its end and the stops allowed with what each pays; and records the library refuses. Written by `cargo test --release --test it -- --ignored player_modules::generate_player_vectors`; checked by tests/it/player_modules.rs and by the player page's unit tests (crates/service/player/test/).",
        "units": units,
        "refused": refused,
    })
}

/// Writes fixtures/player/units.json.
#[test]
#[ignore = "writes fixtures/player; run by hand to regenerate"]
fn generate_player_vectors() {
    std::fs::create_dir_all(vectors_path().parent().unwrap()).unwrap();
    let text = serde_json::to_string_pretty(&player_vectors()).unwrap();
    std::fs::write(vectors_path(), text + "\n").unwrap();
}

/// The code still gives every value of fixtures/player/units.json, and it
/// holds losing units and units of seven lots of L'île au trésor at 1 €
/// (its top two are too rare in 3,000 units), and both ends of Trésors
/// Ensablés.
#[test]
fn player_vectors_hold() {
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(vectors_path()).unwrap()).unwrap();
    assert!(
        file == player_vectors(),
        "fixtures/player/units.json is not what the code makes: regenerate it (its description says how) only with a new rules version"
    );
    let units = file["units"].as_array().unwrap();
    let lots = |slug: &str| -> std::collections::BTreeSet<u64> {
        units
            .iter()
            .filter(|u| u["game"] == slug && u["price_cents"] == 100)
            .map(|u| u["lot"].as_u64().unwrap())
            .collect()
    };
    let ile = lots("ile-au-tresor");
    assert!(ile.contains(&0) && ile.len() >= 8, "{ile:?}");
    for end in ["gold", "death"] {
        assert!(units.iter().any(|u| u["end"] == end), "{end}");
    }
}

/// The page's unit tests: `node --test crates/service/player/test/`.
#[test]
fn the_player_page_modules_pass_their_node_tests() {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
    let run = match Command::new("node")
        .arg("--test")
        .arg("crates/service/player/test/")
        .current_dir(root())
        .output()
    {
        Ok(run) => run,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !ci => {
            eprintln!(
                "SKIPPED: the player page's unit tests need node (not found; .ci/run installs it, and CI fails without it)"
            );
            return;
        }
        Err(e) => panic!("node --test: {e} (apt-get install nodejs)"),
    };
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "node --test failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("# fail 0"), "{stdout}");
}
