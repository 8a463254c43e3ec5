//! Selling and playing (issue 13): each unit handed out once in block then
//! index order; a Trésors Ensablés unit revealed one roll at a time, each
//! answer checked against an independent replay of the unit's record;
//! redemption only of sold units, paying the recorded play.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;

use serde_json::{json, Value};
use ticket_issuer::ledger::ops::PlayAction;
use ticket_issuer::redeem::Redeemer;
use ticket_issuer::unit_id::UnitId;

use crate::common::{issuer, shared_block, te_store};

fn redeemer(store: &Path) -> Redeemer {
    crate::common::store_redeemer(store, true)
}

/// Every unit of block 1 of emission 1, as `export` writes it.
fn exported(store: &Path, game: &str) -> Vec<Value> {
    let block = store.join(format!("emissions/{game}/e000001/b000001.tkb"));
    let run = issuer(store, &["export", block.to_str().unwrap(), "-q"]).expect_code(0);
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Euros as written ("0.5") to cents.
fn cents(euros: &str) -> u64 {
    let (whole, frac) = euros.split_once('.').unwrap_or((euros, ""));
    let frac = format!("{frac:0<2}");
    whole.parse::<u64>().unwrap() * 100 + frac[..2].parse::<u64>().unwrap()
}

/// One roll of the test's own replay.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Roll {
    die: u64,
    to: u64,
    life: u64,
    chest_cents: Option<u64>,
    found_cents: u64,
    end: Option<&'static str>,
}

/// Replays a unit from its exported board, chests and dice by the
/// regulation's text (3.2, 3.3): move by the die (at most to 60), a life
/// square adds, a trap takes (life within 0..=3), a chest opens (the k-th
/// chest sits on square 6k); life 0 is a death, the gold chest the end.
pub(crate) fn replay(unit: &Value) -> Vec<Roll> {
    let board: Vec<&str> = unit["board"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let chests: Vec<u64> = unit["chests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| cents(v.as_str().unwrap()))
        .collect();
    let (mut at, mut life, mut found) = (0u64, 3i64, 0u64);
    let mut rolls = Vec::new();
    for die in unit["dice"].as_array().unwrap() {
        let die = die.as_u64().unwrap();
        at = (at + die).min(60);
        let square = board[at as usize];
        let mut chest_cents = None;
        let mut end = None;
        match square {
            "bronze" | "silver" | "gold" => {
                let c = chests[(at / 6 - 1) as usize];
                found += c;
                chest_cents = Some(c);
                if square == "gold" {
                    end = Some("gold");
                }
            }
            other => {
                let change: i64 = match other {
                    "life+1" => 1,
                    "life+2" => 2,
                    "trap-1" => -1,
                    "trap-2" => -2,
                    "trap-3" => -3,
                    _ => 0,
                };
                life = (life + change).clamp(0, 3);
                if life == 0 {
                    end = Some("death");
                }
            }
        }
        rolls.push(Roll {
            die,
            to: at,
            life: life as u64,
            chest_cents,
            found_cents: found,
            end,
        });
        if end.is_some() {
            break;
        }
    }
    rolls
}

fn first_chest(rolls: &[Roll]) -> Option<usize> {
    rolls
        .iter()
        .position(|r| r.chest_cents.is_some())
        .map(|i| i + 1)
}

/// Sells every unit of the block through `r`; the sold IDs in sale order.
fn sell_all(r: &Redeemer, units: u32) -> Vec<UnitId> {
    (0..units)
        .map(|_| {
            let sale = r
                .sell(ticket_issuer::game::Game::TRESORS_ENSABLES, 100)
                .unwrap();
            sale.id.parse().unwrap()
        })
        .collect()
}

/// Asserts a play answer reveals nothing beyond roll `upto`: no dice or
/// chest table, steps only up to it, each exactly the replay's.
fn reveals_only_up_to(answer: &Value, replay: &[Roll], upto: u64) {
    let text = answer.to_string();
    assert!(
        !text.contains("\"dice\"") && !text.contains("\"chests\""),
        "{text}"
    );
    for step in answer["steps"].as_array().unwrap() {
        let n = step["roll"].as_u64().unwrap();
        assert!(n >= 1 && n <= upto, "roll {n} shown at roll {upto}: {text}");
        let want = &replay[n as usize - 1];
        assert_eq!(step["die"].as_u64(), Some(want.die), "{text}");
        assert_eq!(step["to"].as_u64(), Some(want.to), "{text}");
        assert_eq!(step["life"].as_u64(), Some(want.life), "{text}");
        assert_eq!(
            step["chest"].as_str().map(cents),
            want.chest_cents,
            "{text}"
        );
        assert_eq!(cents(step["found"].as_str().unwrap()), want.found_cents);
    }
}

#[test]
fn sixteen_cli_buyers_get_every_unit_once_in_index_order() {
    const UNITS: u32 = 400;
    let (_dir, store) = te_store(UNITS);
    let sold = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..16 {
            s.spawn(|| loop {
                let run = issuer(&store, &["sell", "--game", "tresors-ensables", "--json"]);
                let v = run.json();
                if run.code != 0 {
                    assert_eq!(v["error"], "sold_out", "{}", run.stderr);
                    assert_eq!(run.code, 1);
                    break;
                }
                sold.lock().unwrap().push(v);
            });
        }
    });
    let sold = sold.into_inner().unwrap();
    assert_eq!(sold.len(), UNITS as usize);
    let indices: BTreeSet<u64> = sold.iter().map(|v| v["index"].as_u64().unwrap()).collect();
    assert_eq!(
        indices,
        (0..u64::from(UNITS)).collect(),
        "none skipped, none twice"
    );
    let ids: BTreeSet<&str> = sold.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), UNITS as usize);
    // Sales are entries 0..UNITS-1 of the log, in index order.
    let mut by_entry: Vec<(u64, u64)> = sold
        .iter()
        .map(|v| {
            (
                v["ledger_entry"].as_u64().unwrap(),
                v["index"].as_u64().unwrap(),
            )
        })
        .collect();
    by_entry.sort_unstable();
    assert!(by_entry.iter().all(|(e, i)| e == i), "{by_entry:?}");
    let out: Vec<&Value> = sold
        .iter()
        .filter(|v| v["block_sold_out"] == true)
        .collect();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["index"].as_u64(), Some(u64::from(UNITS) - 1));
    let verify = issuer(&store, &["ledger", "verify", "--json"]).expect_code(0);
    assert_eq!(
        verify.json()["log"]["size"].as_u64(),
        Some(u64::from(UNITS))
    );
}

#[test]
fn a_play_reveals_one_roll_at_a_time_as_an_independent_replay_says() {
    const UNITS: u32 = 300;
    let (_dir, store) = te_store(UNITS);
    let units = exported(&store, "tresors-ensables");
    let r = redeemer(&store);
    // A sale answer is the board only.
    let sale = r
        .sell(ticket_issuer::game::Game::TRESORS_ENSABLES, 100)
        .unwrap();
    let sale_json = serde_json::to_value(&sale).unwrap();
    let keys: Vec<&str> = sale_json["unit"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["board", "life"]);
    assert_eq!(sale_json["unit"]["board"], units[0]["board"]);
    let mut ids = vec![sale.id.parse::<UnitId>().unwrap()];
    ids.extend(sell_all(&r, UNITS - 1));
    let replays: Vec<Vec<Roll>> = units.iter().map(replay).collect();
    // The kinds of play the rules make: a stop, a death, the gold chest.
    let stoppable = (0..UNITS as usize)
        .find(|&i| first_chest(&replays[i]).is_some_and(|f| f < replays[i].len()))
        .unwrap();
    let death = (0..UNITS as usize)
        .find(|&i| {
            i != stoppable
                && replays[i].last().unwrap().end == Some("death")
                && first_chest(&replays[i]).is_some()
        })
        .unwrap();
    let gold = (0..UNITS as usize)
        .find(|&i| i != stoppable && replays[i].last().unwrap().end == Some("gold"))
        .unwrap();
    for (i, stop_at) in [
        (stoppable, first_chest(&replays[stoppable])),
        (death, None),
        (gold, None),
    ] {
        let (id, rolls) = (&ids[i], &replays[i]);
        assert_eq!(id.index as usize, i);
        let last = stop_at.unwrap_or(rolls.len());
        // Redeeming before the play is over is refused.
        let e = r.redeem(id, None).unwrap_err();
        assert_eq!(e.code(), "play_unfinished");
        // No stop before the first chest.
        let e = r.play(id, PlayAction::Stop).unwrap_err();
        assert_eq!(e.code(), "bad_stop", "{e}");
        for n in 1..=last as u32 {
            let answer = serde_json::to_value(r.play(id, PlayAction::Step(n)).unwrap()).unwrap();
            reveals_only_up_to(&answer, rolls, u64::from(n));
            assert_eq!(answer["steps"].as_array().unwrap().len(), 1);
            assert_eq!(answer["rolls"].as_u64(), Some(u64::from(n)));
            assert_eq!(answer["replayed"], false);
            let over = n as usize == rolls.len();
            assert_eq!(answer["over"], over, "{answer}");
            let may_stop = !over && first_chest(rolls).is_some_and(|f| n as usize >= f);
            assert_eq!(answer["may_stop"], may_stop, "{answer}");
            // A retried roll is answered the same and does not advance.
            let again = serde_json::to_value(r.play(id, PlayAction::Step(n)).unwrap()).unwrap();
            assert_eq!(again["replayed"], true);
            assert_eq!(again["steps"], answer["steps"]);
            assert_eq!(again["rolls"], answer["rolls"]);
            let state = serde_json::to_value(r.play_state(id).unwrap()).unwrap();
            assert_eq!(state["rolls"].as_u64(), Some(u64::from(n)));
            reveals_only_up_to(&state, rolls, u64::from(n));
            // A roll ahead of the next one is refused.
            if !over {
                let e = r.play(id, PlayAction::Step(n + 2)).unwrap_err();
                assert_eq!(e.code(), "roll_out_of_order");
            }
        }
        let expected_prize = match stop_at {
            Some(f) => {
                let stopped = serde_json::to_value(r.play(id, PlayAction::Stop).unwrap()).unwrap();
                assert_eq!(stopped["end"], "stopped");
                assert!(stopped["ledger_entry"].is_u64());
                rolls[f - 1].found_cents
            }
            None => match rolls.last().unwrap().end {
                Some("gold") => rolls.last().unwrap().found_cents,
                _ => 0,
            },
        };
        // Over: nothing more is played.
        match r.play(id, PlayAction::Stop) {
            // A retried stop is answered again.
            Ok(again) => assert!(stop_at.is_some() && again.replayed),
            Err(e) => assert!(stop_at.is_none() && e.code() == "play_over", "{e}"),
        }
        let e = r.play(id, PlayAction::Step(last as u32 + 1)).unwrap_err();
        assert_eq!(e.code(), "play_over", "{e}");
        // A step retried once the play is over answers the play as it is
        // now: over, with its end and prize (issue 39: a client that
        // trusts `over` must not go on).
        for n in 1..=last as u32 {
            let again = serde_json::to_value(r.play(id, PlayAction::Step(n)).unwrap()).unwrap();
            assert_eq!(
                (&again["replayed"], &again["over"]),
                (&json!(true), &json!(true)),
                "step {n} retried: {again}"
            );
            assert_eq!(cents(again["prize"].as_str().unwrap()), expected_prize);
            assert_eq!(again["end"] == "stopped", stop_at.is_some(), "{again}");
        }
        let state = serde_json::to_value(r.play_state(id).unwrap()).unwrap();
        assert_eq!(cents(state["prize"].as_str().unwrap()), expected_prize);
        // Redemption pays exactly the replayed prize, and only as played.
        let e = r.redeem(id, Some(last as u32 + 7)).unwrap_err();
        assert_eq!(e.code(), "bad_stop");
        let paid = r.redeem(id, None).unwrap();
        assert_eq!(cents(&paid.prize), expected_prize, "unit {i}");
        assert_eq!(paid.stopped_after_steps, stop_at.map(|f| f as u32));
        if stop_at.is_none() {
            assert_eq!(cents(units[i]["prize"].as_str().unwrap()), expected_prize);
        }
    }
    drop(r);
    issuer(&store, &["ledger", "verify"]).expect_code(0);
}

#[test]
fn redemption_needs_a_sale_and_sales_follow_block_then_index_order() {
    let (_dir, store, _block) = shared_block(100).copy_store();
    let id = |i: u32| crate::common::valid_id(&store, 1, 1, i);
    // Not sold: refused, whatever the unit.
    let run = issuer(&store, &["redeem", &id(0), "--json"]).expect_code(1);
    assert_eq!(run.json()["error"], "not_sold");
    // Nothing sells from an open emission; mark-sold refuses it too.
    let run = issuer(
        &store,
        &["sell", "--game", "ile-au-tresor", "--price", "1", "--json"],
    )
    .expect_code(1);
    assert_eq!(run.json()["error"], "sold_out");
    let run = issuer(
        &store,
        &["mark-sold", "--emission", "1", "--ids", "-", "--json"],
    );
    assert_eq!(run.json()["error"], "emission_not_closed");
    issuer(&store, &["close", "--emission", "1"]).expect_code(0);
    // A price the game has not: refused as such.
    issuer(&store, &["sell", "--game", "ile-au-tresor", "--price", "3"]).expect_code(2);
    let first = issuer(
        &store,
        &["sell", "--game", "ile-au-tresor", "--price", "1", "--json"],
    )
    .expect_code(0)
    .json();
    assert_eq!(first["index"], 0);
    assert_eq!(first["id"], id(0));
    // L'île au trésor: the whole unit for the player's animation.
    for key in ["map", "start", "chests", "throws"] {
        assert!(first["unit"].get(key).is_some(), "{first}");
    }
    assert_eq!(first["unit"]["chests"].as_array().unwrap().len(), 9);
    assert_eq!(first["unit"]["throws"].as_array().unwrap().len(), 4);
    // mark-sold units are skipped by later sales; marking twice counts.
    let ids_file = store.join("ids.txt");
    std::fs::write(&ids_file, format!("{}\n{}\n", id(2), id(3))).unwrap();
    let ids_arg = ids_file.to_str().unwrap();
    let marked = issuer(
        &store,
        &["mark-sold", "--emission", "1", "--ids", ids_arg, "--json"],
    )
    .expect_code(0)
    .json();
    assert_eq!(
        (marked["marked"].as_u64(), marked["already_sold"].as_u64()),
        (Some(2), Some(0))
    );
    let marked = issuer(
        &store,
        &["mark-sold", "--emission", "1", "--ids", ids_arg, "--json"],
    )
    .expect_code(0)
    .json();
    assert_eq!(
        (marked["marked"].as_u64(), marked["already_sold"].as_u64()),
        (Some(0), Some(2))
    );
    let sold: Vec<u64> = (0..2)
        .map(|_| {
            issuer(
                &store,
                &["sell", "--game", "ile-au-tresor", "--price", "1", "--json"],
            )
            .expect_code(0)
            .json()["index"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(sold, [1, 4]);
    // A wrong check code is refused before anything is marked.
    let mut bad = id(9);
    bad.pop();
    bad.push(if id(9).ends_with('A') { 'B' } else { 'A' });
    std::fs::write(&ids_file, format!("{bad}\n")).unwrap();
    issuer(&store, &["mark-sold", "--emission", "1", "--ids", ids_arg]).expect_code(1);
    issuer(&store, &["redeem", &id(9)]).expect_code(1);
    // Sold units redeem; an L'île au trésor unit has no play.
    issuer(&store, &["redeem", &id(0)]).expect_code(0);
    issuer(&store, &["redeem", &id(3)]).expect_code(0);
    let run = issuer(&store, &["play", &id(1), "--roll", "1", "--json"]).expect_code(2);
    assert_eq!(run.json()["error"], "not_playable");
    // Once the claims ended nothing sells, and the log verifies.
    issuer(
        &store,
        &[
            "end-claims",
            "--emission",
            "1",
            "--force",
            "--reason",
            "no claim deadline set",
        ],
    )
    .expect_code(0);
    let run = issuer(
        &store,
        &["sell", "--game", "ile-au-tresor", "--price", "1", "--json"],
    )
    .expect_code(1);
    assert_eq!(run.json()["error"], "sold_out");
    // The cause is named (issue 22: it said only "sold out").
    let message = run.json()["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("the claims of emission 1 have ended"),
        "{message}"
    );
    let verify = issuer(&store, &["ledger", "verify", "--json"])
        .expect_code(0)
        .json();
    // 1 sale, 2 marked, 2 sales, 2 redemptions, the early end (no claim
    // deadline was set), the end of claims and the closing statement.
    assert_eq!(verify["log"]["size"].as_u64(), Some(10));
}

/// Issue 21: an end of claims is a log entry. Deleting its row (which would
/// reopen payments) is found by `ledger verify`; a row from before the log
/// held ends of claims verifies as a pre-log row, and the next writer
/// adopts it into the log, after which its deletion is found too.
#[test]
fn deleting_the_end_of_claims_is_found_and_an_older_one_is_adopted_into_the_log() {
    let (_dir, store, _block) = shared_block(100).copy_store();
    let id = |i: u32| crate::common::valid_id(&store, 1, 1, i);
    // A deadline passed: the claims end without an early end before them,
    // so the end of claims is the log's second entry.
    issuer(
        &store,
        &[
            "close",
            "--emission",
            "1",
            "--claims-until",
            "2001-01-01T00:00:00Z",
        ],
    )
    .expect_code(0);
    issuer(&store, &["sell", "--game", "ile-au-tresor", "--price", "1"]).expect_code(0);
    issuer(&store, &["end-claims", "--emission", "1"]).expect_code(0);
    let verify = |code: i32| {
        issuer(&store, &["ledger", "verify", "--json"])
            .expect_code(code)
            .json()
    };
    let v = verify(0);
    // The sale, the end of claims, the closing statement.
    assert_eq!(v["log"]["size"].as_u64(), Some(3), "{v}");
    let db = || rusqlite::Connection::open(store.join("ledger.sqlite")).unwrap();
    let (seq, leaf): (u64, Vec<u8>) = db()
        .query_row("SELECT seq, leaf_hash FROM claims_ended", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(seq, 1);
    let (statement, ended_at): (String, String) = db()
        .query_row("SELECT statement, ended_at FROM claims_ended", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let line = format!(
        "claims/v1|1|ile-au-tresor|1|{ended_at}|{}\n",
        hex::encode(crate::redeem::sha256(&[statement.as_bytes()]))
    );
    assert_eq!(
        leaf,
        crate::redeem::sha256(&[&[0u8], line.as_bytes()]).to_vec()
    );

    // Deleted by hand: payments would reopen, and verify says so.
    let saved = store.join("ledger.saved");
    std::fs::copy(store.join("ledger.sqlite"), &saved).unwrap();
    db().execute_batch("DELETE FROM claims_ended").unwrap();
    let v = verify(1);
    let findings = v["log"]["findings"].to_string();
    assert!(findings.contains("deleted"), "{v}");

    // A ledger from before issue 21 (and before schema versions): its
    // claims row has no seq, its table and view no log columns. It
    // verifies (a pre-log row) ...
    std::fs::copy(&saved, store.join("ledger.sqlite")).unwrap();
    // Such a store never remembered a head (issue 35): none here either.
    std::fs::remove_dir_all(store.join("ledger-heads")).unwrap();
    db().execute_batch(
        "DROP INDEX claims_ended_seq;
         DROP VIEW log_leaves;
         CREATE VIEW log_leaves AS
             SELECT seq, leaf_hash FROM redemptions WHERE seq IS NOT NULL
             UNION ALL SELECT seq, leaf_hash FROM sales
             UNION ALL SELECT seq, leaf_hash FROM plays WHERE seq IS NOT NULL;
         ALTER TABLE claims_ended DROP COLUMN seq;
         ALTER TABLE claims_ended DROP COLUMN leaf_hash;
         DELETE FROM ledger_heads WHERE size >= 2;
         DROP TABLE operator_actions;
         DROP TABLE log_tiles;
         PRAGMA user_version = 0;",
    )
    .unwrap();
    let v = verify(0);
    assert_eq!(v["log"]["size"].as_u64(), Some(1), "{v}");
    // ... and still stops payments; the next writer adopts the row.
    let run = issuer(&store, &["redeem", &id(0), "--json"]).expect_code(1);
    assert_eq!(run.json()["error"], "emission_closed");
    let v = verify(0);
    assert_eq!(v["log"]["size"].as_u64(), Some(2), "{v}");
    let adopted: Vec<u8> = db()
        .query_row(
            "SELECT leaf_hash FROM claims_ended WHERE seq = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(adopted, leaf, "adopted as stored");
    db().execute_batch("DELETE FROM claims_ended").unwrap();
    verify(1);
}

/// Issue 21: the store's SQLite ledger carries a schema version
/// (`PRAGMA user_version`): `ledger migrate` reports it, a ledger written
/// before versions is brought up to it and still verifies, and a newer one
/// is refused by every command, nothing written.
#[test]
fn the_sqlite_ledger_has_a_schema_version_and_refuses_a_newer_one() {
    let (_dir, store, _block) = shared_block(100).copy_store();
    let migrate = || {
        issuer(&store, &["ledger", "migrate", "--json"])
            .expect_code(0)
            .json()
    };
    // No ledger yet: migrate creates it.
    let m = migrate();
    assert_eq!(
        (m["from_version"].as_i64(), m["to_version"].as_i64()),
        (Some(0), Some(6)),
        "{m}"
    );
    issuer(&store, &["close", "--emission", "1"]).expect_code(0);
    issuer(&store, &["sell", "--game", "ile-au-tresor", "--price", "1"]).expect_code(0);
    let m = migrate();
    assert_eq!(
        (m["from_version"].as_i64(), m["to_version"].as_i64()),
        (Some(6), Some(6)),
        "{m}"
    );
    let db = || rusqlite::Connection::open(store.join("ledger.sqlite")).unwrap();
    let version = || -> i64 {
        db().query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    };

    // Written before versions were kept: brought up when next opened.
    db().execute_batch("PRAGMA user_version = 0").unwrap();
    issuer(&store, &["sell", "--game", "ile-au-tresor", "--price", "1"]).expect_code(0);
    assert_eq!(version(), 6);
    issuer(&store, &["ledger", "verify"]).expect_code(0);

    // A newer issuer's ledger: refused, named, nothing written.
    db().execute_batch("PRAGMA user_version = 7").unwrap();
    let before = std::fs::read(store.join("ledger.sqlite")).unwrap();
    for args in [
        &["ledger", "verify"][..],
        &["sell", "--game", "ile-au-tresor", "--price", "1"],
        &["ledger", "migrate"],
    ] {
        let run = issuer(&store, args).expect_code(3);
        assert!(
            run.stderr
                .contains("version 7, newer than this issuer's 6; upgrade the issuer"),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert_eq!(version(), 7);
    assert_eq!(std::fs::read(store.join("ledger.sqlite")).unwrap(), before);
}

#[test]
fn ledger_verify_names_an_edited_sale_and_an_edited_play() {
    let (_dir, store) = te_store(50);
    let r = redeemer(&store);
    let ids = sell_all(&r, 50);
    let replays: Vec<Vec<Roll>> = exported(&store, "tresors-ensables")
        .iter()
        .map(replay)
        .collect();
    // Play unit 0 to its end: its play is in the log.
    for n in 1..=replays[0].len() as u32 {
        r.play(&ids[0], PlayAction::Step(n)).unwrap();
    }
    drop(r);
    issuer(&store, &["ledger", "verify"]).expect_code(0);
    let db = store.join("ledger.sqlite");
    let edit = |sql: &str| {
        let out = std::process::Command::new("sqlite3")
            .arg(&db)
            .arg(sql)
            .output()
            .expect("sqlite3 runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    edit("UPDATE sales SET sold_at = '2020-01-01T00:00:00.000Z' WHERE unit_index = 7");
    edit("UPDATE plays SET rolls = rolls + 1 WHERE unit_index = 0");
    let run = issuer(&store, &["ledger", "verify", "--json"]).expect_code(1);
    let text = run.stdout;
    assert!(
        text.contains("the sale of tresors-ensables emission 1 block 1 unit 7"),
        "{text}"
    );
    assert!(
        text.contains("the play of tresors-ensables emission 1 block 1 unit 0"),
        "{text}"
    );
}

/// Issue 19: both ledgers write times with milliseconds; a row written
/// with microseconds (a PostgreSQL ledger before issue 19) still verifies,
/// its leaf recomputed from the time as stored.
#[test]
fn times_have_milliseconds_and_an_older_microsecond_row_still_verifies() {
    let (_dir, store) = te_store(20);
    let first = issuer(&store, &["sell", "--game", "tresors-ensables", "--json"])
        .expect_code(0)
        .json();
    let at = first["sold_at"].as_str().unwrap();
    assert_eq!(at.len(), "2026-12-01T09:50:11.921Z".len(), "{at}");
    assert!(at.ends_with('Z') && at.as_bytes()[19] == b'.', "{at}");
    // Unit 1 sold at entry 1 with a microsecond time, its leaf as the log
    // line says (docs/REDEMPTION.md §Tamper-evident log).
    let micro = "2026-11-30T07:24:55.533123Z";
    let line = format!("sale/v1|1|tresors-ensables|1|1|1|{micro}\n");
    let leaf = crate::redeem::sha256(&[&[0u8], line.as_bytes()]);
    let db = rusqlite::Connection::open(store.join("ledger.sqlite")).unwrap();
    db.execute(
        "INSERT INTO sales (game, emission, block, unit_index, sold_at, seq, leaf_hash)
         VALUES ('tresors-ensables', 1, 1, 1, ?1, 1, ?2)",
        rusqlite::params![micro, &leaf[..]],
    )
    .unwrap();
    drop(db);
    let next = issuer(&store, &["sell", "--game", "tresors-ensables", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(
        (next["index"].as_u64(), next["ledger_entry"].as_u64()),
        (Some(2), Some(2))
    );
    let verified = issuer(&store, &["ledger", "verify", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(verified["ok"], true, "{verified}");
    assert_eq!(verified["log"]["size"], 3);
}

/// `sell` without `--json` speaks to a person: the sale and the next
/// step, never the raw JSON of the player's screen (that is `--json`'s).
#[test]
fn sell_without_json_prints_the_sale_and_the_next_step() {
    let (_dir, store) = te_store(10);
    let text = issuer(&store, &["sell", "--game", "tresors-ensables"])
        .expect_code(0)
        .stdout;
    assert!(text.starts_with("sold TE-1-1-0-"), "{text}");
    assert!(
        text.contains("next: the player plays it step by step: issuer play TE-1-1-0-"),
        "{text}"
    );
    assert!(!text.contains('{') && !text.contains("\"board\""), "{text}");
    let json = issuer(&store, &["sell", "--game", "tresors-ensables", "--json"])
        .expect_code(0)
        .json();
    assert!(json["unit"]["board"].is_array(), "{json}");
}
