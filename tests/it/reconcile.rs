//! `issuer audit --emission N` against the ledger (`reconcile`): an honest
//! emission of each game, sold (`sell`, `mark-sold`), played (stopped, to
//! the end, part of the way) and paid through the command line, audited
//! with every ledger check holding and each block's figures equal to what
//! was done, counted here from the units' own replays (the keys, no
//! ledger); rows edited behind the ledger's back, each flagged by the
//! check that should catch it (exit 1); the same on PostgreSQL.

use std::collections::BTreeMap;
use std::path::Path;

use rust_decimal::prelude::ToPrimitive as _;
use rust_decimal::Decimal;
use serde_json::Value;
use ticket_issuer::game::Game;
use ticket_issuer::redeem::Redeemer;
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

use crate::common::{
    copy_tree, issuer, played, shared_block, sold_on, store_redeemer, te_store, valid_id_of,
};
use crate::pg::Cluster;

const TE: Game = Game::TRESORS_ENSABLES;
const ILE: Game = Game::ILE_AU_TRESOR;
/// Units of the Trésors Ensablés block.
const TE_UNITS: u64 = 2000;
/// Every unit of both games costs 1 € here.
const PRICE: u64 = 100;

/// Euros as an answer writes them, in cents.
fn cents(euros: &str) -> u64 {
    (euros.parse::<Decimal>().unwrap() * Decimal::from(100))
        .to_u64()
        .unwrap()
}

/// What unit `id` pays played with `stop` (`None`: to its end), in cents,
/// replayed with the keys (no ledger read); `None` for a stop the rules
/// refuse.
fn prize(r: &Redeemer, id: &UnitId, stop: Option<u32>) -> Option<u64> {
    r.replay(id, stop).ok().map(|p| cents(&p.prize))
}

/// The most a Trésors Ensablés unit may still pay after `rolls` rolls: at
/// its end, or at any stop still allowed (a tape has at most 60 rolls).
fn most(r: &Redeemer, id: &UnitId, rolls: u32) -> u64 {
    (rolls..=60)
        .filter_map(|s| prize(r, id, Some(s)))
        .chain(prize(r, id, None))
        .max()
        .unwrap()
}

/// The first stop of `id` that pays something.
fn paying_stop(r: &Redeemer, id: &UnitId) -> Option<u32> {
    (1..60).find(|&s| prize(r, id, Some(s)).is_some_and(|p| p > 0))
}

fn with_ledger<'a>(args: &[&'a str], ledger: Option<&'a str>) -> Vec<&'a str> {
    let mut args = args.to_vec();
    if let Some(url) = ledger {
        args.extend(["--ledger", url]);
    }
    args
}

/// A unit sold, as the test left it.
struct Unit {
    id: UnitId,
    /// Rolls revealed, and how the play ended (`Some(Some(k))`: stopped
    /// after k, `Some(None)`: at its end); `None` rolls: never played.
    rolls: Option<u32>,
    ended: Option<Option<u32>>,
    redeemed: bool,
}

impl Unit {
    /// A unit sold, never played nor paid.
    fn sold(id: UnitId) -> Unit {
        Unit {
            id,
            rolls: None,
            ended: None,
            redeemed: false,
        }
    }
}

/// The unit `issuer sell` (`args`) sells on `ledger`.
fn sale(store: &Path, args: &[&str], ledger: Option<&str>) -> Unit {
    let sale = issuer(store, &with_ledger(args, ledger))
        .expect_code(0)
        .json();
    Unit::sold(sale["id"].as_str().unwrap().parse().unwrap())
}

/// A block's figures as the test counts them, and the returns' units.
#[derive(Debug, Default, PartialEq)]
struct Figures {
    units: u64,
    sold: u64,
    unsold: u64,
    played: u64,
    redeemed: u64,
    paid_cents: u64,
    unclaimed: u64,
    liability_cents: u64,
    stakes_cents: u64,
}

impl Figures {
    fn of(block: &Value) -> Figures {
        let n = |k: &str| block[k].as_u64().unwrap_or_else(|| panic!("{k}: {block}"));
        Figures {
            units: n("units"),
            sold: n("sold"),
            unsold: n("unsold"),
            played: n("played"),
            redeemed: n("redeemed"),
            paid_cents: n("paid_cents"),
            unclaimed: n("unclaimed"),
            liability_cents: n("liability_cents"),
            stakes_cents: n("stakes_cents"),
        }
    }
}

/// What the audit must find: the block's figures, and per unit whose play
/// is over (prize as recorded, paid).
struct Expected {
    figures: Figures,
    over: Vec<(u64, u64)>,
    stopped: bool,
}

/// Counts what was done to `units` (of a block of `block_units`), from
/// each unit's replay.
fn expected(r: &Redeemer, block_units: u64, units: &[Unit], step_by_step: bool) -> Expected {
    let mut f = Figures {
        units: block_units,
        sold: units.len() as u64,
        unsold: block_units - units.len() as u64,
        stakes_cents: units.len() as u64 * PRICE,
        ..Figures::default()
    };
    let mut over = Vec::new();
    let mut stopped = false;
    for u in units {
        let recorded = u.ended.map(|stop| prize(r, &u.id, stop).unwrap());
        f.played += u64::from(u.ended.is_some());
        stopped |= matches!(u.ended, Some(Some(_)));
        let paid = match u.redeemed {
            true => recorded.or_else(|| prize(r, &u.id, None)).unwrap(),
            false => 0,
        };
        if u.redeemed {
            f.redeemed += 1;
            f.paid_cents += paid;
        } else {
            let owed = match (step_by_step, recorded) {
                (false, _) => prize(r, &u.id, None).unwrap(),
                (true, Some(p)) => p,
                (true, None) => most(r, &u.id, u.rolls.unwrap_or(0)),
            };
            f.unclaimed += u64::from(owed > 0);
            f.liability_cents += owed;
        }
        // Over: paid (a game revealed whole), or its play ended.
        match (step_by_step, recorded) {
            (true, Some(p)) => over.push((p, paid)),
            (false, _) if u.redeemed => over.push((paid, paid)),
            _ => {}
        }
    }
    Expected {
        figures: f,
        over,
        stopped,
    }
}

/// `issuer audit --emission 1 --out DIR --json` with `extra`: the exit
/// code and the report.
fn audit(store: &Path, extra: &[&str]) -> (i32, Value, String) {
    let out = store.with_extension(format!("audit-{}", extra.len()));
    let _ = std::fs::remove_dir_all(&out);
    let args = [
        &["audit", "--emission", "1", "--out", out.to_str().unwrap()][..],
        &["--json", "--quiet"],
        extra,
    ]
    .concat();
    let run = issuer(store, &args);
    let report = run.json();
    assert_eq!(report["kind"], "audit", "{}", run.stderr);
    let _ = std::fs::remove_dir_all(&out);
    (run.code, report, run.stderr)
}

/// The ledger checks of a report: id → (holds, detail).
fn checks(report: &Value) -> BTreeMap<String, (bool, String)> {
    report["ledger"]["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("no ledger checks: {}", report["ledger"]))
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                (
                    c["ok"].as_bool().unwrap(),
                    c["detail"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

/// The ledger checks every audit runs, and those of a game played step by
/// step.
const CHECKS: [&str; 10] = [
    "ledger/bound",
    "ledger/rows-name-units",
    "ledger/sold-once",
    "ledger/paid-once",
    "ledger/paid-units-sold",
    "ledger/voided-never-paid",
    "ledger/payments-match-units",
    "ledger/summary-reconciles",
    "ledger/integrity",
    "ledger/log-verifies",
];
const STEP_CHECKS: [&str; 4] = [
    "ledger/played-once",
    "ledger/played-units-sold",
    "ledger/plays-allowed",
    "ledger/paid-as-played",
];

/// Asserts the audit passed, every ledger check holds, and the block's
/// figures and the returns are `want`'s.
fn assert_reconciled(code: i32, report: &Value, stderr: &str, want: &Expected, game: Game) {
    let checks = checks(report);
    let failing: Vec<_> = checks.iter().filter(|(_, (ok, _))| !ok).collect();
    assert!(failing.is_empty(), "failing ledger checks: {failing:?}");
    // Every hard check holds. The statistical tests of an honest emission
    // drawn from a random store fail after Holm's correction at 1 % once
    // in a hundred runs at most (CI saw it once): then the audit exits 1
    // for that test alone, which is not this test's concern.
    let summary = &report["summary"];
    assert_eq!(summary["checks_failed"], 0, "{stderr}\n{summary}");
    let statistical_only = code == 1 && summary["failed_adjusted"].as_u64().unwrap_or(0) > 0;
    assert!(
        (code, &report["ok"]) == (0, &Value::Bool(true)) || statistical_only,
        "{stderr}\n{summary}"
    );
    let step: &[&str] = match game.step_by_step() {
        true => &STEP_CHECKS,
        false => &[],
    };
    // Voids can be chosen only where the outcome is shown at the sale.
    let whole: &[&str] = match game.step_by_step() {
        true => &[],
        false => &["ledger/voids-not-selective"],
    };
    let expected_ids: Vec<&str> = CHECKS.iter().chain(step).chain(whole).copied().collect();
    for id in &expected_ids {
        assert!(checks.contains_key(*id), "{id} missing: {checks:?}");
    }
    assert_eq!(checks.len(), expected_ids.len(), "{checks:?}");
    let blocks = report["ledger"]["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0]["block"], 1);
    assert_eq!(Figures::of(&blocks[0]), want.figures);

    // The returns over the units whose play is over.
    let n = want.over.len() as f64;
    let price = PRICE as f64;
    let realised = want.over.iter().map(|o| o.1).sum::<u64>() as f64 / (n * price);
    let mean = want.over.iter().map(|o| o.0).sum::<u64>() as f64 / (n * price);
    // A drawn game whose units never stopped: its never-stop figure.
    let expected = match game == TE && !want.stopped {
        true => TE
            .return_figures(100)
            .into_iter()
            .find(|f| f.binding)
            .unwrap()
            .rate
            .to_f64(),
        false => mean,
    };
    let var = want
        .over
        .iter()
        .map(|o| (o.0 as f64 / price - mean).powi(2))
        .sum::<f64>()
        / (n - 1.0);
    let half = 2.576 * (var / n).sqrt();
    let l = &report["ledger"];
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-9;
    assert!(close(&l["realised_return"], realised), "{l} vs {realised}");
    assert!(close(&l["expected_return"], expected), "{l} vs {expected}");
    assert!(
        close(&l["band_99"][0], (expected - half).max(0.0))
            && close(&l["band_99"][1], expected + half),
        "{l} vs {expected} ± {half}"
    );
}

/// Trésors Ensablés emission 1 (a block of [`TE_UNITS`] units) sold,
/// played and paid through the command line on `ledger` (the store's
/// when `None`): four units sold by `sell`, six by `mark-sold`; with
/// `stops`, one unit stopped and paid, one stopped and not paid; one
/// played to its end and paid, one not paid; one rolled once; the rest
/// never played.
fn te_emission(store: &Path, ledger: Option<&str>, stops: bool) -> (Vec<Unit>, Redeemer) {
    let r = store_redeemer(store, true);
    let id = |i: u32| -> UnitId { valid_id_of(store, TE, 1, 1, i).parse().unwrap() };
    let sell = ["sell", "--game", "tresors-ensables", "--json"];
    let mut units: Vec<Unit> = (0..4).map(|_| sale(store, &sell, ledger)).collect();
    // Two units with a stop that pays, and four others.
    let mut stoppable = (100..).filter_map(|i| {
        let id = id(i);
        paying_stop(&r, &id).map(|k| (id, k))
    });
    let (a, c) = (stoppable.next().unwrap(), stoppable.next().unwrap());
    let others: Vec<UnitId> = (1000..1004).map(id).collect();
    let marked: Vec<String> = [a.0, c.0]
        .iter()
        .chain(&others)
        .map(UnitId::to_string)
        .collect();
    sold_on(
        store,
        ledger,
        &marked.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let play = |id: &UnitId, stop: Option<u32>, redeem: bool| -> Unit {
        let text = id.to_string();
        let view = played(store, ledger, &text, stop);
        if redeem {
            issuer(store, &with_ledger(&["redeem", &text], ledger)).expect_code(0);
        }
        Unit {
            id: *id,
            rolls: Some(view["rolls"].as_u64().unwrap() as u32),
            ended: Some(stop),
            redeemed: redeem,
        }
    };
    let (a_stop, c_stop) = match stops {
        true => (Some(a.1), Some(c.1)),
        false => (None, None),
    };
    units.push(play(&a.0, a_stop, true));
    units.push(play(&c.0, c_stop, false));
    units.push(play(&others[0], None, true));
    units.push(play(&others[1], None, false));
    units.extend(others[2..].iter().map(|&id| Unit::sold(id)));
    // A sold unit rolled once (which may end it: a trap of -3).
    let once = &mut units[0];
    let text = once.id.to_string();
    let view = issuer(
        store,
        &with_ledger(&["play", &text, "--roll", "1", "--json"], ledger),
    )
    .expect_code(0)
    .json();
    once.rolls = Some(1);
    if view["over"] == true {
        once.ended = Some(None);
    }
    (units, r)
}

#[test]
fn an_honest_tresors_ensables_emission_reconciles_and_an_edited_row_is_named() {
    let (dir, store) = te_store(TE_UNITS as u32);
    let (units, r) = te_emission(&store, None, true);
    let want = expected(&r, TE_UNITS, &units, true);
    assert_eq!(
        (
            want.figures.sold,
            want.figures.redeemed,
            want.figures.played
        ),
        (10, 2, 4 + u64::from(units[0].ended.is_some()))
    );
    assert!(want.figures.paid_cents > 0 && want.figures.liability_cents > 0);
    let (code, report, stderr) = audit(&store, &[]);
    assert_reconciled(code, &report, &stderr, &want, TE);

    // Rows edited behind the ledger's back, each named by its check.
    let paid_stopped = units[4].id.index;
    let paid_to_end = units[6].id.index;
    let cases = [
        (
            "prize",
            format!("UPDATE redemptions SET prize_cents = prize_cents + 100 WHERE unit_index = {paid_stopped}"),
            "ledger/payments-match-units",
        ),
        (
            "sale",
            format!("DELETE FROM sales WHERE unit_index = {paid_to_end}"),
            "ledger/paid-units-sold",
        ),
        (
            "stop",
            format!("UPDATE plays SET ended = 'end' WHERE unit_index = {paid_stopped}"),
            "ledger/plays-allowed",
        ),
        (
            // Its constraints lost, then the payment written twice.
            "twice",
            format!(
                "PRAGMA legacy_alter_table = ON;
                 CREATE TABLE copied AS SELECT * FROM redemptions;
                 DROP TABLE redemptions;
                 ALTER TABLE copied RENAME TO redemptions;
                 INSERT INTO redemptions SELECT * FROM redemptions WHERE unit_index = {paid_to_end};"
            ),
            "ledger/paid-once",
        ),
    ];
    for (name, sql, check) in cases {
        let copy = dir.path().join(name);
        copy_tree(&store, &copy);
        let conn = rusqlite::Connection::open(Store::new(&copy).ledger_path()).unwrap();
        conn.execute_batch(&sql).unwrap();
        drop(conn);
        let (code, report, stderr) = audit(&copy, &[]);
        assert_eq!(code, 1, "{name}: {stderr}");
        assert_eq!(report["ok"], false, "{name}");
        let checks = checks(&report);
        let (ok, detail) = &checks[check];
        assert!(!ok, "{name}: {check} holds: {detail}");
        let unit = match name {
            "sale" | "twice" => paid_to_end,
            _ => paid_stopped,
        };
        assert!(
            detail.contains(&format!("block 1 unit {unit}")),
            "{name}: {check} does not name the unit: {detail}"
        );
        // The rows still sold once each.
        assert!(checks["ledger/sold-once"].0, "{name}: {checks:?}");
        if name != "prize" {
            continue;
        }
        // The text report names the check.
        let out = copy.with_extension("text");
        let text = issuer(
            &copy,
            &[
                "audit",
                "--emission",
                "1",
                "--out",
                out.to_str().unwrap(),
                "--quiet",
            ],
        )
        .expect_code(1);
        assert!(
            text.stdout.contains(&format!("FAIL check {check}:")),
            "{name}: {}",
            text.stdout
        );
    }
}

#[test]
fn an_honest_ile_au_tresor_emission_reconciles() {
    let (_dir, store, _block) = shared_block(100).copy_store();
    let r = store_redeemer(&store, true);
    let id = |i: u32| -> UnitId { valid_id_of(&store, ILE, 1, 1, i).parse().unwrap() };
    // Nothing sold yet: no ledger at all, every unit unsold, nothing made.
    let (code, report, stderr) = audit(&store, &[]);
    assert_eq!(code, 0, "{stderr}");
    let blocks = &report["ledger"]["blocks"];
    assert_eq!(
        (&blocks[0]["sold"], &blocks[0]["unsold"]),
        (&0.into(), &450_000.into())
    );
    assert!(checks(&report).values().all(|(ok, _)| *ok), "{report}");
    assert!(!Store::new(&store).ledger_path().exists());

    issuer(&store, &["close", "--emission", "1"]).expect_code(0);
    let sell = ["sell", "--game", "ile-au-tresor", "--price", "1", "--json"];
    let mut units: Vec<Unit> = (0..3).map(|_| sale(&store, &sell, None)).collect();
    let wins = |i: &u32| prize(&r, &id(*i), None).unwrap() > 0;
    let winners: Vec<u32> = (1000..).filter(wins).take(2).collect();
    let loser = (1000..).find(|i| !wins(i)).unwrap();
    let marked: Vec<String> = [winners[0], winners[1], loser]
        .iter()
        .map(|&i| id(i).to_string())
        .collect();
    sold_on(
        &store,
        None,
        &marked.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    for (i, redeem) in [(winners[0], true), (winners[1], false), (loser, true)] {
        if redeem {
            issuer(&store, &["redeem", &id(i).to_string()]).expect_code(0);
        }
        units.push(Unit {
            redeemed: redeem,
            ..Unit::sold(id(i))
        });
    }
    let want = expected(&r, 450_000, &units, false);
    assert_eq!(
        (
            want.figures.sold,
            want.figures.redeemed,
            want.figures.played
        ),
        (6, 2, 0)
    );
    assert!(want.figures.paid_cents > 0 && want.figures.liability_cents > 0);
    let (code, report, stderr) = audit(&store, &[]);
    assert_reconciled(code, &report, &stderr, &want, ILE);
    // --no-ledger: the blocks only.
    let (code, report, _) = audit(&store, &["--no-ledger"]);
    assert_eq!((code, &report["ledger"]), (0, &Value::Null));
}

#[test]
fn pg_an_emission_sold_through_postgresql_reconciles_there_and_not_elsewhere() {
    let Some(pg) = Cluster::start("pg_an_emission_sold_through_postgresql_reconciles…") else {
        return;
    };
    let (_dir, store) = te_store(TE_UNITS as u32);
    pg.migrate(&store);
    let url = pg.url();
    // No stop: the expected return is the game's never-stop figure.
    let (units, r) = te_emission(&store, Some(&url), false);
    let want = expected(&r, TE_UNITS, &units, true);
    assert!(!want.stopped);
    let (code, report, stderr) = audit(&store, &["--ledger", &url]);
    assert_reconciled(code, &report, &stderr, &want, TE);
    assert!(report["ledger"]["ledger"]
        .as_str()
        .unwrap()
        .starts_with("postgres://"));
    // The store's own ledger (there is none) is not the one the emission
    // was sold through: the audit says so instead of "nothing sold".
    let (code, report, _) = audit(&store, &[]);
    assert_eq!(code, 1);
    let (ok, detail) = &checks(&report)["ledger/bound"];
    assert!(!ok && detail.contains("pass --ledger"), "{detail}");
}
