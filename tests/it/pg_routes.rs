//! Several PostgreSQL ledgers on one node (docs/REDEMPTION.md §Several
//! ledgers): a routing table sends each emission's units to its one
//! ledger, and a unit of an emission it routes nowhere is refused.

use std::path::Path;

use serde_json::json;
use ticket_issuer::game::Game;
use ticket_issuer::unit_id::UnitId;

use crate::common::{agent, call_keyed, get, issuer, played_in, post, valid_id_of, Server, TOKEN};
use crate::pg::{node, recorded, sql, verify, Cluster};

/// Units of Trésors Ensablés `emission` (block 1, 3,000 units).
fn unit(store: &Path, emission: u32, index: u32) -> String {
    valid_id_of(store, Game::TRESORS_ENSABLES, emission, 1, index)
}

/// Records `ids` sold and played to their end in the ledger `url`.
fn sold_and_played(store: &Path, url: &str, ids: &[String]) {
    let r = node(store, url);
    let ids: Vec<UnitId> = ids.iter().map(|i| i.parse().unwrap()).collect();
    r.mark_sold(&ids, Some(crate::common::TOKEN_NAME)).unwrap();
    for id in &ids {
        played_in(&r, id, None);
    }
}

/// The units the ledger `url` has sold: (emission, index in block 1).
fn sales_in(url: &str) -> Vec<(i64, i64)> {
    sql(url)
        .query("SELECT emission, unit_index FROM sales", &[])
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[test]
fn pg_two_ledgers_sell_and_redeem_each_emission_in_its_own_and_refuse_an_unrouted_one() {
    let Some(pg) = Cluster::start("pg_two_ledgers…") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    issuer(&store, &["keygen"]).expect_code(0);
    for emission in [2, 3, 4] {
        crate::common::generate_te(&store, emission, 3000);
        issuer(&store, &["close", "--emission", &emission.to_string()]).expect_code(0);
    }
    ticket_issuer::store::Store::new(&store)
        .ledger_signing_key()
        .unwrap();
    pg.psql("postgres", "CREATE DATABASE ledger_b;");
    let url_a = pg.url();
    let url_b = format!("{}/ledger_b", url_a.rsplit_once('/').unwrap().0);
    for url in [&url_a, &url_b] {
        issuer(&store, &["ledger", "migrate", "--ledger", url]).expect_code(0);
    }
    // Emission 2 through ledger a, 3 through b, 4 through none.
    let routes = dir.path().join("routes.json");
    std::fs::write(
        &routes,
        json!({
            "kind": "ticket-issuer ledger routes",
            "ledgers": [{"name": "a", "url": url_a}, {"name": "b", "url": url_b}],
            "emissions": [
                {"game": "tresors-ensables", "emission": 2, "ledger": "a"},
                {"game": "tresors-ensables", "emission": 3, "ledger": "b"},
            ],
        })
        .to_string(),
    )
    .unwrap();
    let in_a: Vec<String> = (0..3).map(|i| unit(&store, 2, i)).collect();
    let in_b: Vec<String> = (0..3).map(|i| unit(&store, 3, i)).collect();
    sold_and_played(&store, &url_a, &in_a);
    sold_and_played(&store, &url_b, &in_b);
    let server = Server::start_with(&store, &["--ledger-routes", routes.to_str().unwrap()]);
    let http = agent();

    // A sale goes to the first ledger with a unit to sell: emission 2, a.
    let (status, sale) = post(
        &http,
        &server,
        "/v1/sales",
        json!({"game": "tresors-ensables"}),
    );
    assert_eq!(status, 200, "{sale}");
    assert_eq!(sale["emission"], 2, "{sale}");
    let sold_a = sales_in(&url_a);
    let index = sale["index"].as_i64().unwrap();
    assert!(sold_a.contains(&(2, index)), "{sold_a:?}");
    assert!(sales_in(&url_b).iter().all(|(e, _)| *e == 3));

    // Each unit is paid in its emission's ledger, and only there.
    for id in in_a.iter().chain(&in_b).take(5) {
        let (status, paid) = post(&http, &server, "/v1/redemptions", json!({ "id": id }));
        assert_eq!(status, 200, "{id}: {paid}");
    }
    let (status, batch) = post(
        &http,
        &server,
        "/v1/redemptions/batch",
        json!({"units": [{"id": in_b[2]}, {"id": unit(&store, 4, 0)}]}),
    );
    assert_eq!(status, 200, "{batch}");
    assert_eq!(batch["results"][0]["kind"], "redemption", "{batch}");
    assert_eq!(
        batch["results"][1]["error"], "emission_not_routed",
        "{batch}"
    );
    let (paid_a, paid_b) = (recorded(&url_a), recorded(&url_b));
    assert_eq!(paid_a, in_a.iter().cloned().collect());
    assert_eq!(paid_b, in_b.iter().cloned().collect());

    // Paid once: again through the node is refused by the right ledger.
    let (status, again) = post(&http, &server, "/v1/redemptions", json!({ "id": in_b[0] }));
    assert_eq!(
        (status, &again["error"]),
        (409, &json!("already_redeemed")),
        "{again}"
    );

    // A unit of emission 4, which the table routes nowhere: refused,
    // recorded in neither ledger.
    let stray = unit(&store, 4, 1);
    let (status, refused) = post(&http, &server, "/v1/redemptions", json!({ "id": stray }));
    assert_eq!(
        (status, &refused["error"]),
        (503, &json!("emission_not_routed")),
        "{refused}"
    );
    let (status, refused) = get(&http, &server, &format!("/v1/units/{stray}"));
    assert_eq!(status, 503, "{refused}");
    assert!(refused.contains("emission_not_routed"), "{refused}");
    // A keyed batch across two ledgers is refused whole.
    let keyed = call_keyed(
        &http,
        &server.url("/v1/redemptions/batch"),
        TOKEN,
        "two-ledgers-1",
        json!({"units": [{"id": in_a[0]}, {"id": in_b[0]}]}),
    );
    assert_eq!(keyed.0, 400, "{}", keyed.1);
    assert!(keyed.1.contains("batch_spans_ledgers"), "{}", keyed.1);

    // Each ledger's log verifies alone, holding its emission only.
    for (url, emission) in [(&url_a, 2), (&url_b, 3)] {
        let log = verify(url, &store, Path::new("/nonexistent"));
        assert_eq!(log["ok"], true, "{log}");
        assert!(sales_in(url).iter().all(|(e, _)| *e == emission));
    }
    // The binding follows the table: emission 3 is refused through a.
    let r = node(&store, &url_a);
    let e = r.redeem(&in_b[1].parse().unwrap(), None).unwrap_err();
    assert_eq!(e.code(), "emission_of_another_ledger", "{e}");
}
