//! Issue 34: what players are shown of the prizes (`GET /v1/remaining`)
//! and what the top-lots watch does follow what was revealed, never a
//! sale as such (docs/REDEMPTION.md §Prizes remaining).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ticket_issuer::game::Game;
use ticket_issuer::ledger::ops::PlayAction;
use ticket_issuer::redeemer::{Asker, RevealedPrizes};
use ticket_issuer::unit_id::UnitId;

use crate::common::{
    agent, call, call_keyed, issuer, store_redeemer, te_store, valid_id_of, Server,
};

/// An amount in euros ("0", "0.1", "12.5") in cents.
fn cents(euros: &str) -> u32 {
    use rust_decimal::prelude::ToPrimitive;
    let value: rust_decimal::Decimal = euros.parse().unwrap();
    (value * rust_decimal::Decimal::ONE_HUNDRED)
        .to_u32()
        .unwrap()
}

/// Each line's (prize, revealed, remaining).
fn lines(p: &RevealedPrizes) -> Vec<(String, u64, Option<u64>)> {
    p.prizes
        .iter()
        .map(|l| (l.prize.clone(), l.revealed, l.remaining))
        .collect()
}

#[test]
fn a_fixed_table_game_shows_its_table_less_the_outcomes_shown() {
    let (_dir, store, _block) = crate::common::shared_block(100).copy_store();
    issuer(&store, &["close", "--emission", "1"]).expect_code(0);
    let r = store_redeemer(&store, true);
    let game = Game::ILE_AU_TRESOR;
    let before = r.revealed_prizes(game, 100).unwrap();
    assert_eq!(
        (
            before.counted_by,
            before.units,
            before.sold,
            before.revealed
        ),
        ("lots", 450_000, 0, 0)
    );
    let table = game.lot_table_for(100, 450_000).unwrap();
    assert_eq!(before.prizes.len(), table.tiers.len());
    for (line, tier) in before.prizes.iter().zip(&table.tiers) {
        assert_eq!(line.in_table, Some(u64::from(tier.count)), "{line:?}");
        assert_eq!(
            (line.revealed, line.remaining),
            (0, Some(u64::from(tier.count)))
        );
    }
    // Each sale shows its unit whole: its lot is revealed with it, by
    // whichever platform sold it.
    let mut shown: BTreeMap<String, u64> = BTreeMap::new();
    for n in 0..60 {
        let platform = if n % 2 == 0 { "a" } else { "b" };
        let sale = r
            .window(Asker::Platform(platform.into()))
            .sell(game, 100, None)
            .unwrap();
        let check = r.check(&sale.id.parse().unwrap(), None).unwrap();
        let check = serde_json::to_value(check).unwrap();
        if let Some(lot) = check["lot"].as_str() {
            *shown.entry(lot.to_string()).or_default() += 1;
        }
    }
    let after = r.revealed_prizes(game, 100).unwrap();
    assert_eq!((after.sold, after.revealed), (60, 60));
    for (line, tier) in after.prizes.iter().zip(&table.tiers) {
        let revealed = shown.get(&line.prize).copied().unwrap_or(0);
        assert_eq!(
            (line.revealed, line.remaining),
            (revealed, Some(u64::from(tier.count) - revealed)),
            "{line:?}"
        );
    }
    assert!(after.as_of.is_some());
}

#[test]
fn a_drawn_game_shows_the_prizes_revealed_and_nothing_a_sale_holds() {
    let (_dir, store) = te_store(60);
    let r = store_redeemer(&store, true);
    let game = Game::TRESORS_ENSABLES;
    let before = r.revealed_prizes(game, 100).unwrap();
    assert_eq!(
        (before.counted_by, before.units, before.revealed),
        ("bands", 60, 0)
    );
    assert!(before
        .prizes
        .iter()
        .all(|l| l.in_table.is_none() && l.remaining.is_none()));
    // Sales and rolls change nothing players are shown but the count sold.
    let platform = r.window(Asker::Platform("a".into()));
    let ids: Vec<UnitId> = (0..6)
        .map(|_| platform.sell(game, 100, None).unwrap().id.parse().unwrap())
        .collect();
    let first = platform.play(&ids[0], PlayAction::Step(1), None).unwrap();
    let sold = r.revealed_prizes(game, 100).unwrap();
    if first.over {
        // A unit whose first roll took its three lives (a -3 trap): its
        // play ended, and only that is shown (a random store made one).
        assert_eq!((sold.sold, sold.revealed), (6, 1));
        return;
    }
    assert_eq!((sold.sold, sold.revealed), (6, 0));
    assert_eq!(lines(&sold), lines(&before));
    // Each play that ends shows what it pays, in its band.
    let mut paid = Vec::new();
    for id in ids.iter().take(4) {
        let view = crate::common::played_in(&r, id, None);
        paid.push(cents(view.prize.as_deref().unwrap()));
    }
    let after = r.revealed_prizes(game, 100).unwrap();
    assert_eq!(after.revealed, 4);
    let band = |line: &ticket_issuer::redeemer::RevealedLine, amount: u32| {
        let from = cents(line.from.as_deref().unwrap());
        let to = line.to.as_deref().map(cents);
        amount >= from && to.is_none_or(|t| amount < t)
    };
    for line in &after.prizes {
        let expected = paid.iter().filter(|&&c| band(line, c)).count() as u64;
        assert_eq!(line.revealed, expected, "{line:?} {paid:?}");
    }
    // The operator's own view counts what the unsold hold, as before.
    let operator = r.remaining(game, 100).unwrap();
    assert_eq!(operator.unsold, 54);
}

/// The watch's figures as the operator reads them in `/metrics`.
struct Gauges {
    checks: u64,
    remaining: Option<u64>,
    suspended: u64,
}

fn gauges(server: &Server, token: &str) -> Gauges {
    let (status, text) = call(&agent(), "GET", &server.url("/metrics"), Some(token), None).unwrap();
    assert_eq!(status, 200, "{text}");
    let value = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    Gauges {
        checks: value("issuer_top_lots_checks_total ").unwrap(),
        remaining: value("issuer_top_lots_remaining{game=\"tresors-ensables\",price=\"1\"} "),
        suspended: value("issuer_top_lots_suspensions_total ").unwrap(),
    }
}

#[test]
fn the_top_lots_watch_wakes_on_reveals_never_on_sales() {
    const OPS: &str = "watch-operator-token-0123456789";
    const TOKEN: &str = "watch-platform-token-0123456789";
    let (_dir, store) = te_store(300);
    let game = Game::TRESORS_ENSABLES;
    let r = store_redeemer(&store, true);
    // The unit holding the top band (played to its end), found by the
    // operator's replay with the keys.
    let top = r.top_lots(1).unwrap();
    let band = top[0].top[0].clone();
    let holder = (0..300u32)
        .find(|&i| {
            let id: UnitId = valid_id_of(&store, game, 1, 1, i).parse().unwrap();
            let whole = r.replay(&id, None).unwrap();
            top[0].holds(&ticket_issuer::record::RecordPrefix {
                index: i,
                check_code: id.check_code,
                lot: 0,
                prize_cents: cents(&whole.prize),
            })
        })
        .expect("a unit of the top band");
    drop(r);
    let server = Server::start_with_tokens(
        &store,
        &format!("platform:{TOKEN}\noperator ops:{OPS}\n"),
        &[
            "--alert-top-lots",
            "1",
            "--top-lots-every",
            "3600",
            "--stop-selling-when-top-lots-gone",
        ],
    );
    let wait = |what: &dyn Fn(&Gauges) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let g = gauges(&server, OPS);
            if what(&g) {
                return g;
            }
            assert!(Instant::now() < deadline, "the watch never computed");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let first = wait(&|g| g.checks >= 1);
    let left = first.remaining.unwrap();
    assert!(left >= 1, "{band}");
    // Sales up to and past the holder (each under a key, one sent twice):
    // nothing is revealed, nothing is computed again.
    let sale = json!({"game": "tresors-ensables"});
    let mut ids = Vec::new();
    for n in 0..=holder + 1 {
        let (status, text) = call_keyed(
            &agent(),
            &server.url("/v1/sales"),
            TOKEN,
            &format!("k{n}"),
            sale.clone(),
        );
        assert_eq!(status, 200, "{text}");
        ids.push(
            serde_json::from_str::<Value>(&text).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let (status, _) = call_keyed(
        &agent(),
        &server.url("/v1/sales"),
        TOKEN,
        &format!("k{holder}"),
        sale.clone(),
    );
    assert_eq!(status, 200);
    std::thread::sleep(Duration::from_millis(500));
    let after_sales = gauges(&server, OPS);
    assert_eq!(
        (after_sales.checks, after_sales.remaining),
        (first.checks, Some(left))
    );
    // The holder's play ends: its outcome is shown, the watch computes at
    // once and counts it out.
    let holder_id = &ids[holder as usize];
    let mut rolls = 0;
    loop {
        rolls += 1;
        let (status, text) = call(
            &agent(),
            "POST",
            &server.url(&format!("/v1/plays/{holder_id}/roll")),
            Some(TOKEN),
            Some(json!({ "roll": rolls })),
        )
        .unwrap();
        assert_eq!(status, 200, "{text}");
        if text.contains("\"over\":true") {
            break;
        }
    }
    let woken = wait(&|g| g.checks > first.checks);
    assert_eq!(woken.remaining, Some(left - 1));
    // A drawn game's blocks are never suspended by the watch (whether
    // its unrevealed units hold a top band is not a public fact): sales go
    // on even once the gauge reads none.
    assert_eq!(woken.suspended, 0);
    let (status, text) = call(
        &agent(),
        "POST",
        &server.url("/v1/sales"),
        Some(TOKEN),
        Some(sale),
    )
    .unwrap();
    assert_eq!(status, 200, "{text}");
}
