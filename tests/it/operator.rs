//! The operator's controls from the command line and over HTTP
//! (docs/REDEMPTION.md §Suspend, withdraw and void; docs/API.md §Tokens
//! and roles): who may act, what each answer and refusal says, and that
//! every action is in the log. The rules themselves, on both ledgers and
//! two nodes, are in `conformance.rs` (`operator_controls`,
//! `void_races_a_first_roll`, `prizes_remaining`).

use serde_json::{json, Value};

use crate::common::{agent, call, issuer, te_store, Server, TOKEN};

const OPERATOR: &str = "operator-token-0123456789abcdef";

fn tokens() -> String {
    format!("# a platform, then the operator\nplatform:{TOKEN}\noperator ops-1:{OPERATOR}\n")
}

#[test]
fn operator_routes_need_the_operator_role_and_record_who_acted() {
    let (_dir, store) = te_store(20);
    let server = Server::start_with_tokens::<&str>(&store, &tokens(), &[]);
    let a = agent();
    let send = |token: &str, path: &str, body: Option<Value>| -> (u16, Value) {
        let method = if body.is_some() { "POST" } else { "GET" };
        let (status, text) = call(&a, method, &server.url(path), Some(token), body).unwrap();
        (status, serde_json::from_str(&text).unwrap())
    };
    let suspend = json!({"game": "tresors-ensables", "emission": 1, "reason": "fraud inquiry 7"});

    // Each role only its routes: 403, naming both roles, nothing done.
    let (status, refused) = send(TOKEN, "/v1/operator/suspend", Some(suspend.clone()));
    assert_eq!(
        (status, refused["error"].as_str()),
        (403, Some("forbidden")),
        "{refused}"
    );
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("platform") && message.contains("operator"),
        "{message}"
    );
    let sale = json!({"game": "tresors-ensables"});
    let (status, refused) = send(OPERATOR, "/v1/sales", Some(sale.clone()));
    assert_eq!(
        (status, refused["error"].as_str()),
        (403, Some("forbidden"))
    );
    let (status, _) = send(TOKEN, "/v1/operator/remaining?game=tresors-ensables", None);
    assert_eq!(status, 403);

    // Suspended by the operator: the platform's sale is refused, told
    // since when but never why.
    let (status, acted) = send(OPERATOR, "/v1/operator/suspend", Some(suspend));
    assert_eq!(status, 200, "{acted}");
    assert_eq!(
        (
            acted["kind"].as_str(),
            acted["action"].as_str(),
            acted["by"].as_str(),
            acted["already"].as_bool()
        ),
        (
            Some("operator_action"),
            Some("suspend"),
            Some("ops-1"),
            Some(false)
        )
    );
    let (status, refused) = send(TOKEN, "/v1/sales", Some(sale.clone()));
    assert_eq!(
        (status, refused["error"].as_str()),
        (409, Some("suspended")),
        "{refused}"
    );
    let text = refused.to_string();
    assert!(
        text.contains(acted["at"].as_str().unwrap()) && !text.contains("fraud"),
        "{text}"
    );

    // Resumed: sold; voided before its first roll: never played.
    let resume = json!({"game": "tresors-ensables", "emission": 1, "reason": "cleared"});
    assert_eq!(
        send(OPERATOR, "/v1/operator/resume", Some(resume.clone())).0,
        200
    );
    // Resuming again is answered as suspending again is: already.
    let (status, again) = send(OPERATOR, "/v1/operator/resume", Some(resume));
    assert_eq!((status, &again["already"]), (200, &json!(true)), "{again}");
    let (status, sold) = send(TOKEN, "/v1/sales", Some(sale));
    assert_eq!(status, 200, "{sold}");
    let id = sold["id"].as_str().unwrap();
    let void = json!({"id": id, "reason": "payment declined"});
    let (status, voided) = send(OPERATOR, "/v1/operator/void", Some(void.clone()));
    assert_eq!((status, voided["id"].as_str()), (200, Some(id)), "{voided}");
    let (status, twice) = send(OPERATOR, "/v1/operator/void", Some(void));
    assert_eq!((status, twice["already"].as_bool()), (200, Some(true)));
    let (status, refused) = send(
        TOKEN,
        &format!("/v1/plays/{id}/roll"),
        Some(json!({"roll": 1})),
    );
    assert_eq!(
        (status, refused["error"].as_str()),
        (409, Some("voided")),
        "{refused}"
    );
    // A forged ID is refused as everywhere, naming nothing of the unit.
    let forged = format!("{}AAAAAAAA", &id[..id.len() - 8]);
    let (status, refused) = send(
        OPERATOR,
        "/v1/operator/void",
        Some(json!({"id": forged, "reason": "x"})),
    );
    assert_eq!(
        (status, refused["error"].as_str()),
        (422, Some("wrong_check_code"))
    );
    // A body of another shape: 400, its shape named.
    let (status, refused) = send(
        OPERATOR,
        "/v1/operator/withdraw",
        Some(json!({"game": "tresors-ensables", "emission": 1})),
    );
    assert_eq!(
        (status, refused["error"].as_str()),
        (400, Some("invalid_request"))
    );

    // Prizes remaining: one unit sold (and voided), nineteen left.
    let (status, remaining) = send(
        OPERATOR,
        "/v1/operator/remaining?game=tresors-ensables",
        None,
    );
    assert_eq!(status, 200, "{remaining}");
    assert_eq!(
        (remaining["kind"].as_str(), remaining["unsold"].as_u64()),
        (Some("remaining"), Some(19))
    );
    // What players are shown, for the platform's token (issue 34): a
    // drawn game's prizes revealed (none: no play ended; the voided sale
    // was never played), never a count of what the unsold hold; computed
    // once and answered again within 30 s.
    let (status, public) = send(TOKEN, "/v1/remaining?game=tresors-ensables", None);
    assert_eq!(status, 200, "{public}");
    assert_eq!(
        (
            public["counted_by"].as_str(),
            public["units"].as_u64(),
            public["sold"].as_u64(),
            public["revealed"].as_u64()
        ),
        (Some("bands"), Some(20), Some(1), Some(0)),
        "{public}"
    );
    let lines = public["prizes"].as_array().unwrap();
    assert_eq!(lines.len(), 7, "{public}");
    for line in lines {
        assert_eq!(line["revealed"], 0, "{public}");
        assert!(line.get("remaining").is_none() && line.get("in_table").is_none());
    }
    assert!(public.get("unsold").is_none(), "{public}");
    let sale = json!({"game": "tresors-ensables"});
    let (status, sold) = send(TOKEN, "/v1/sales", Some(sale));
    assert_eq!(status, 200, "{sold}");
    let (_, again) = send(TOKEN, "/v1/remaining?game=tresors-ensables", None);
    assert_eq!(
        (again["sold"].as_u64(), &again["as_of"]),
        (Some(1), &public["as_of"])
    );
    let (_, fresh) = send(
        OPERATOR,
        "/v1/operator/remaining?game=tresors-ensables",
        None,
    );
    assert_eq!(fresh["unsold"], 18, "{fresh}");
    let (status, refused) = send(TOKEN, "/v1/remaining?game=nope", None);
    assert_eq!(
        (status, refused["error"].as_str()),
        (400, Some("unknown_game"))
    );
    // The end of claims over HTTP: the operator's, with the issuer's key
    // this node holds; rerun, the same statement; then nothing is sold.
    // The emission was closed without a deadline: any end is early, so it
    // needs a reason, and the message says where to give it.
    let end = json!({"game": "tresors-ensables", "emission": 1});
    let (status, _) = send(TOKEN, "/v1/operator/end-claims", Some(end.clone()));
    assert_eq!(status, 403);
    let (status, refused) = send(OPERATOR, "/v1/operator/end-claims", Some(end));
    assert_eq!(
        (status, refused["error"].as_str()),
        (409, Some("claims_still_open")),
        "{refused}"
    );
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("without a claim deadline") && message.contains("\"reason\""),
        "{message}"
    );
    let end = json!({"game": "tresors-ensables", "emission": 1, "reason": "game retired"});
    let (status, ended) = send(OPERATOR, "/v1/operator/end-claims", Some(end.clone()));
    assert_eq!(status, 200, "{ended}");
    assert_eq!(ended["kind"], "end_of_claims");
    assert!(ended["closing"]["statement"]
        .as_str()
        .unwrap()
        .starts_with("ticket-issuer closing statement/v1"));
    let (_, again) = send(OPERATOR, "/v1/operator/end-claims", Some(end));
    assert_eq!(again["ended_at"], ended["ended_at"]);
    assert_eq!(again["closing"], ended["closing"]);
    let (status, refused) = send(
        TOKEN,
        "/v1/sales",
        Some(json!({"game": "tresors-ensables"})),
    );
    assert_eq!(status, 409, "{refused}");
    drop(server);

    // Every action is in the log, which verifies; the early end is the
    // token's.
    let verify = issuer(&store, &["ledger", "verify", "--json"])
        .expect_code(0)
        .json();
    assert_eq!(verify["ok"], true, "{verify}");
    let db = rusqlite::Connection::open(store.join("ledger.sqlite")).unwrap();
    let (by, reason): (String, String) = db
        .query_row(
            "SELECT by_name, reason FROM operator_actions WHERE action = 'early_end'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (by.as_str(), reason.as_str()),
        ("ops-1", "the emission had no claim deadline: game retired")
    );
}

#[test]
fn a_token_file_with_an_unknown_role_is_refused_naming_its_line() {
    let (_dir, store) = te_store(5);
    let tokens = store.with_extension("tokens");
    std::fs::write(&tokens, format!("platform:{TOKEN}\nadmin ops:{OPERATOR}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let t = tokens.to_str().unwrap();
    let run = issuer(
        &store,
        &["serve", "--listen", "127.0.0.1:0", "--token-file", t],
    )
    .expect_code(2);
    assert!(
        run.stderr.contains("line 2") && run.stderr.contains("unknown role \"admin\""),
        "{}",
        run.stderr
    );
}

#[test]
fn the_commands_answer_and_refuse_with_their_exit_codes() {
    let (_dir, store) = te_store(6);
    let run = |args: &[&str], code| issuer(&store, args).expect_code(code);
    let acted = run(
        &[
            "suspend",
            "--emission",
            "1",
            "--block",
            "1",
            "--reason",
            "check",
            "--json",
        ],
        0,
    )
    .json();
    assert_eq!(
        (acted["kind"].as_str(), acted["by"].as_str()),
        (Some("operator_action"), Some("cli"))
    );
    let again = run(
        &[
            "suspend",
            "--emission",
            "1",
            "--block",
            "1",
            "--reason",
            "check",
        ],
        0,
    );
    assert!(
        again.stdout.contains("suspended already"),
        "{}",
        again.stdout
    );
    let sold = run(&["sell", "--game", "tresors-ensables", "--json"], 1).json();
    assert_eq!(sold["error"], "suspended");
    // The emission is not suspended, its block 1 is: a resume of the
    // emission is refused, naming the block's suspension.
    let refused = run(&["resume", "--emission", "1", "--reason", "x", "--json"], 1).json();
    assert_eq!(refused["error"], "not_suspended");
    assert!(
        refused["message"].as_str().unwrap().contains("--block 1"),
        "{refused}"
    );
    let resume_block = [
        "resume",
        "--emission",
        "1",
        "--block",
        "1",
        "--reason",
        "ok",
        "--by",
        "ops.2",
    ];
    run(&resume_block, 0);
    // Resumed twice: answered as a second suspend is (exit 0, nothing
    // recorded), not refused.
    let again = run(&resume_block, 0);
    assert!(
        again.stdout.contains("is not suspended: nothing to resume"),
        "{}",
        again.stdout
    );
    for bad in [
        &["suspend", "--emission", "1", "--reason", "", "--json"][..],
        &[
            "suspend",
            "--emission",
            "1",
            "--reason",
            "x",
            "--by",
            "two words",
            "--json",
        ],
    ] {
        assert_eq!(run(bad, 2).json()["error"], "invalid_request");
    }
    let e = run(
        &[
            "suspend",
            "--emission",
            "1",
            "--block",
            "9",
            "--reason",
            "x",
            "--json",
        ],
        1,
    );
    assert_eq!(e.json()["error"], "unknown_block");
    let id = run(&["sell", "--game", "tresors-ensables", "--json"], 0).json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    run(&["play", &id, "--roll", "1"], 0);
    let late = run(&["void", &id, "--reason", "late", "--json"], 1).json();
    assert_eq!(late["error"], "play_started");
    // Sold before the withdrawal, played after it: sold units still play.
    let kept = run(&["sell", "--game", "tresors-ensables", "--json"], 0).json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    run(&["withdraw", "--emission", "1", "--reason", "recall"], 0);
    let status = run(&["status", "--blocks", "--json"], 0).json();
    let block = &status["emissions"][0]["block_status"][0];
    assert_eq!(
        (
            block["standing"].as_str(),
            block["unsold"].as_u64(),
            block["withdrawn"].as_u64()
        ),
        (Some("withdrawn"), Some(0), Some(4))
    );
    let sold_out = run(&["sell", "--game", "tresors-ensables", "--json"], 1).json();
    assert_eq!(sold_out["error"], "sold_out");
    assert!(
        sold_out["message"]
            .as_str()
            .unwrap()
            .contains("emission 1 withdrawn"),
        "{sold_out}"
    );
    run(&["play", &kept, "--roll", "1"], 0);
    let permanent = run(
        &["resume", "--emission", "1", "--reason", "undo", "--json"],
        1,
    )
    .json();
    assert_eq!(permanent["error"], "withdrawal_is_permanent");
    run(&["ledger", "verify"], 0);
}

#[test]
fn claims_end_early_only_when_forced_with_a_reason_on_the_record() {
    let (_dir, store) = te_store(5);
    let run = |args: &[&str], code| issuer(&store, args).expect_code(code);
    for (emission, until) in [("2", "2099-12-31"), ("3", "2001-01-01T00:00:00Z")] {
        let args = [
            "generate",
            "--game",
            "tresors-ensables",
            "--emission",
            emission,
            "--block",
            "1",
            "--units",
            "5",
            "--quiet",
        ];
        run(&args, 0);
        run(
            &["close", "--emission", emission, "--claims-until", until],
            0,
        );
    }
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(store.join("emissions/tresors-ensables/e000002/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["claims_until"], "2099-12-31T23:59:59Z");
    // A published deadline is not moved; a malformed one is refused.
    let moved = run(
        &["close", "--emission", "2", "--claims-until", "2030-01-01"],
        2,
    );
    assert!(
        moved.stderr.contains("claims until 2099-12-31T23:59:59Z"),
        "{}",
        moved.stderr
    );
    run(
        &["close", "--emission", "2", "--claims-until", "2099-12-31"],
        0,
    );
    run(
        &["close", "--emission", "1", "--claims-until", "31/12/2099"],
        2,
    );

    // Before the deadline: refused, naming it; --force needs a reason.
    let early = run(&["end-claims", "--emission", "2", "--json"], 1).json();
    assert_eq!(early["error"], "claims_still_open");
    assert!(early["message"]
        .as_str()
        .unwrap()
        .contains("2099-12-31T23:59:59Z"));
    run(&["end-claims", "--emission", "2", "--force"], 2);
    let forced = run(
        &[
            "end-claims",
            "--emission",
            "2",
            "--force",
            "--reason",
            "regulator order 12",
            "--json",
        ],
        0,
    )
    .json();
    assert!(forced["closing"]["statement"]
        .as_str()
        .unwrap()
        .starts_with("ticket-issuer closing statement/v1"));
    // A deadline passed needs no force.
    run(&["end-claims", "--emission", "3"], 0);
    // The early end is on the record, with its reason's digest.
    let verify = run(&["ledger", "verify", "--json"], 0).json();
    assert_eq!(verify["ok"], true, "{verify}");
    let db = rusqlite::Connection::open(store.join("ledger.sqlite")).unwrap();
    let (action, reason): (String, String) = db
        .query_row(
            "SELECT action, reason FROM operator_actions WHERE action = 'early_end'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (action.as_str(), reason.as_str()),
        (
            "early_end",
            "claims were open until 2099-12-31T23:59:59Z: regulator order 12"
        )
    );
    let closings: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM operator_actions WHERE action = 'closing'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(closings, 2, "one closing statement per emission ended");
}

/// A platform that saw each L'île au trésor unit's outcome at its sale and
/// asked to void its losers: the audit's reconciliation flags the voids
/// (`ledger/voids-not-selective`), which hold far fewer winners than the
/// block's rate gives.
#[test]
fn voids_chosen_among_losers_are_flagged_by_the_audit() {
    let (dir, store, _block) = crate::common::shared_block(100).copy_store();
    let run = |args: &[&str], code| issuer(&store, args).expect_code(code);
    run(&["close", "--emission", "1"], 0);
    let mut losers = Vec::new();
    for _ in 0..60 {
        let sale = run(
            &["sell", "--game", "ile-au-tresor", "--price", "1", "--json"],
            0,
        )
        .json();
        let id = sale["id"].as_str().unwrap().to_string();
        let check = run(&["redeem", &id, "--check", "--json"], 0).json();
        if check["prize"] == "0" {
            losers.push(id);
        }
    }
    assert!(losers.len() >= 30, "{} losers among 60", losers.len());
    for id in &losers {
        run(&["void", id, "--reason", "the player left"], 0);
    }
    let out = dir.path().join("audit");
    let o = out.to_str().unwrap();
    let report = run(&["audit", "--emission", "1", "--out", o, "--json"], 1).json();
    let checks = report["ledger"]["checks"].as_array().unwrap();
    let voids = checks
        .iter()
        .find(|c| c["id"] == "ledger/voids-not-selective")
        .expect("the check");
    assert_eq!(voids["ok"], false, "{voids}");
    let detail = voids["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(&format!("0 of {} voided sales won", losers.len())),
        "{detail}"
    );
    // Every other ledger check holds: the voids are recorded as they should.
    for c in checks
        .iter()
        .filter(|c| c["id"] != "ledger/voids-not-selective")
    {
        assert_eq!(c["ok"], true, "{c}");
    }
    assert_eq!(report["ledger"]["blocks"][0]["voided"], losers.len());
}

/// `status --alert-top-lots K` flags a game and price whose K highest lots
/// are all sold while units remain (REDEMPTION.md §Prizes remaining).
/// The ID of the one unit of emission 1 block 1 of `store` holding `lot`,
/// found by an audit (written under `dir`) in its outcomes.
fn units_holding(store: &std::path::Path, dir: &std::path::Path, lot: &str) -> String {
    let out = dir.join("audit");
    let args = [
        "audit",
        "--emission",
        "1",
        "--no-ledger",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    issuer(store, &args).expect_code(0);
    let outcomes = std::fs::read_to_string(out.join("outcomes-e1-b1.tsv")).unwrap();
    let holding: Vec<&str> = outcomes
        .lines()
        .filter(|l| l.split('\t').nth(2) == Some(lot))
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(holding.len(), 1, "{lot}");
    holding[0].to_string()
}

#[test]
fn status_flags_a_game_whose_top_lots_are_gone() {
    let (dir, store, _block) = crate::common::shared_block(100).copy_store();
    let run = |args: &[&str], code| issuer(&store, args).expect_code(code);
    run(&["close", "--emission", "1"], 0);
    let alerts =
        |k: &str| run(&["status", "--alert-top-lots", k, "--json"], 0).json()["alerts"].clone();
    let before = alerts("1");
    assert_eq!(before[0]["top"], json!(["chandelier-3"]), "{before}");
    assert_eq!(
        (before[0]["remaining"].as_u64(), before[0]["gone"].as_bool()),
        (Some(1), Some(false))
    );
    // The top lot's unit, found in the audit's outcomes, handed out.
    let top = [units_holding(&store, dir.path(), "chandelier-3")];
    let ids = dir.path().join("top.txt");
    std::fs::write(&ids, format!("{}\n", top[0])).unwrap();
    run(
        &[
            "mark-sold",
            "--emission",
            "1",
            "--ids",
            ids.to_str().unwrap(),
        ],
        0,
    );
    let after = alerts("1");
    assert_eq!(
        (after[0]["remaining"].as_u64(), after[0]["gone"].as_bool()),
        (Some(0), Some(true)),
        "{after}"
    );
    let text = run(&["status", "--alert-top-lots", "1"], 0).stdout;
    assert!(
        text.contains("ALERT: ile-au-tresor at 1 €: the top lots are gone (chandelier-3)"),
        "{text}"
    );
    // The two highest: the three singes-3 are still to win.
    let two = alerts("2");
    assert_eq!(two[0]["top"], json!(["chandelier-3", "singe-3"]));
    assert_eq!(
        (two[0]["remaining"].as_u64(), two[0]["gone"].as_bool()),
        (Some(3), Some(false))
    );
    run(&["status", "--alert-top-lots", "0"], 2);
}

/// The top-lots watch of `serve`: `/metrics` shows the top lot left, and
/// once this node sells it the node suspends the block (an operator
/// action by `top-lots-watch`, in the log), so no unit of a game that can
/// no longer pay its top lot is sold.
#[test]
fn serve_stops_selling_once_the_top_lots_are_gone() {
    let (dir, store, _block) = crate::common::shared_block(100).copy_store();
    let run = |args: &[&str], code| issuer(&store, args).expect_code(code);
    run(&["close", "--emission", "1"], 0);
    let top = units_holding(&store, dir.path(), "chandelier-3");
    let server = Server::start_with_tokens(
        &store,
        &tokens(),
        &[
            "--alert-top-lots",
            "1",
            "--stop-selling-when-top-lots-gone",
            "--top-lots-every",
            "1",
        ],
    );
    let a = agent();
    // The watch's gauges are the operator's: a platform may not read them.
    let (status, _) = call(&a, "GET", &server.url("/metrics"), Some(TOKEN), None).unwrap();
    assert_eq!(status, 403);
    let metrics = || {
        call(&a, "GET", &server.url("/metrics"), Some(OPERATOR), None)
            .unwrap()
            .1
    };
    let gauge = |text: &str, name: &str| -> Option<u64> {
        let prefix = format!("{name}{{game=\"ile-au-tresor\",price=\"1\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|v| v.parse().ok())
    };
    let wait_for = |what: &dyn Fn(&str) -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let text = metrics();
            if what(&text) {
                return text;
            }
            assert!(std::time::Instant::now() < deadline, "{text}");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    };
    let first = wait_for(&|t| gauge(t, "issuer_top_lots_remaining") == Some(1));
    assert_eq!(gauge(&first, "issuer_top_lots_gone"), Some(0), "{first}");

    // Sales in index order, up to the top lot's unit: those well before
    // it recorded at once (`mark-sold`), the last few sold over HTTP.
    let outcomes = std::fs::read_to_string(dir.path().join("audit/outcomes-e1-b1.tsv")).unwrap();
    let ids: Vec<&str> = outcomes
        .lines()
        .filter_map(|l| l.split('\t').next())
        .filter(|id| id.starts_with("IAT-"))
        .collect();
    let at = ids.iter().position(|id| *id == top).unwrap();
    let before = ids[..at.saturating_sub(3)].join("\n");
    crate::common::issuer_with_input(
        &store,
        &["mark-sold", "--emission", "1", "--ids", "-"],
        &before,
    )
    .expect_code(0);
    let sale = json!({"game": "ile-au-tresor", "price": "1"});
    loop {
        let (status, text) = call(
            &a,
            "POST",
            &server.url("/v1/sales"),
            Some(TOKEN),
            Some(sale.clone()),
        )
        .unwrap();
        assert_eq!(status, 200, "{text}");
        let sold: Value = serde_json::from_str(&text).unwrap();
        if sold["id"] == top.as_str() {
            break;
        }
    }
    let gone = wait_for(&|t| {
        gauge(t, "issuer_top_lots_gone") == Some(1)
            && t.contains("issuer_top_lots_suspensions_total 1")
    });
    assert_eq!(gauge(&gone, "issuer_top_lots_remaining"), Some(0), "{gone}");
    // Nothing more is sold: the block is suspended, on every node.
    let (status, text) = call(
        &a,
        "POST",
        &server.url("/v1/sales"),
        Some(TOKEN),
        Some(sale),
    )
    .unwrap();
    assert_eq!(status, 409, "{text}");
    let db = rusqlite::Connection::open(store.join("ledger.sqlite")).unwrap();
    let (action, block, by, reason): (String, i64, String, String) = db
        .query_row(
            "SELECT action, block, by_name, reason FROM operator_actions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        (action.as_str(), block, by.as_str()),
        ("suspend", 1, "top-lots-watch")
    );
    assert!(reason.contains("chandelier-3"), "{reason}");
    let verify = run(&["ledger", "verify", "--json"], 0).json();
    assert_eq!(verify["ok"], true, "{verify}");
}

/// Dual control: once the store requires two approvers for a withdrawal,
/// an early end of claims and the reveal, each is refused without two
/// valid approvals of exactly it (for this store, by distinct approvers,
/// unexpired), on the command line and over HTTP, and the ledger records
/// who acted and who approved. An emission closed without a claim
/// deadline ends its claims only as such an early end.
#[test]
fn dual_control_needs_two_approvers_for_each_covered_action() {
    let (dir, store) = te_store(20);
    let run = |args: &[&str], code| issuer(&store, args).expect_code(code);
    let keys: Vec<(String, String)> = ["alice", "bob", "carol"]
        .iter()
        .map(|name| {
            let key = dir.path().join(format!("{name}.pem"));
            let made = run(
                &[
                    "approver-key",
                    "--name",
                    name,
                    "--key",
                    key.to_str().unwrap(),
                    "--json",
                ],
                0,
            )
            .json();
            (
                key.display().to_string(),
                made["approver"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // A key is never replaced.
    run(&["approver-key", "--name", "alice", "--key", &keys[0].0], 1);
    let mut set = vec![
        "dual-control",
        "--require",
        "withdraw",
        "--require",
        "end-claims-force",
        "--require",
        "reveal",
    ];
    for (_, approver) in &keys[..2] {
        set.extend(["--approver", approver]);
    }
    run(&set, 0);
    let shown = run(&["dual-control", "--json"], 0).json();
    assert_eq!(
        shown["require"],
        json!(["withdraw", "end-claims-force", "reveal"])
    );
    // The store's ID, which approvers sign for, is shown to hand them.
    let store_id = shown["store_id"].as_str().unwrap().to_string();
    assert_eq!(store_id.len(), 16, "{shown}");
    let human = run(&["dual-control"], 0).stdout;
    assert!(human.contains(&store_id), "{human}");

    // Each approval is signed for a store: this one unless told.
    let approve_for = |store_id: &str, name: usize, args: &[&str]| -> String {
        let file = dir.path().join(format!(
            "{}-{}-{}.approval",
            store_id,
            name,
            args.join("_").replace(['/', ' '], "-")
        ));
        let who = ["alice", "bob", "carol"][name];
        let path = file.to_str().unwrap().to_string();
        let mut all = vec![
            "approve",
            "--store-id",
            store_id,
            "--name",
            who,
            "--key",
            &keys[name].0,
            "-o",
            &path,
        ];
        all.extend(args);
        run(&all, 0);
        path
    };
    let approve = |name: usize, args: &[&str]| approve_for(&store_id, name, args);
    let withdraw = [
        "withdraw",
        "--game",
        "tresors-ensables",
        "--emission",
        "1",
        "--block",
        "1",
        "--reason",
        "fraud ring",
    ];
    let a = approve(0, &withdraw);
    let b = approve(1, &withdraw);
    let c = approve(2, &withdraw);
    let cmd = |approvals: &[&str]| {
        let mut args = vec![
            "withdraw",
            "--emission",
            "1",
            "--block",
            "1",
            "--reason",
            "fraud ring",
            "--json",
        ];
        for f in approvals {
            args.extend(["--approval", f]);
        }
        args.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let refused = |approvals: &[&str], error: &str| {
        let args = cmd(approvals);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let e = run(&args, 1).json();
        assert_eq!(e["error"], error, "{e}");
        e
    };
    let none = refused(&[], "approvals_needed");
    assert!(
        none["message"].as_str().unwrap().contains("alice, bob"),
        "{none}"
    );
    refused(&[&a], "approvals_needed");
    refused(&[&a, &a], "approvals_needed");
    // Carol is not an approver of this store; an approval of another
    // reason is not this one's.
    refused(&[&a, &c], "bad_approval");
    let other = approve(
        1,
        &[
            "withdraw",
            "--game",
            "tresors-ensables",
            "--emission",
            "1",
            "--reason",
            "fraud ring",
        ],
    );
    refused(&[&a, &other], "bad_approval");
    // Alice's approval of exactly this withdrawal, but for another store
    // (one with the same approvers): refused, naming both stores.
    let elsewhere = approve_for("00000000000000ff", 0, &withdraw);
    let e = refused(&[&elsewhere, &b], "bad_approval");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("signed for store 00000000000000ff")
            && message.contains(&format!("this store is {store_id}")),
        "{message}"
    );
    let args = cmd(&[&a, &b]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let acted = run(&args, 0).json();
    assert_eq!(acted["by"], "cli;approved-by:alice:bob", "{acted}");

    // Over HTTP: the approvals in the body.
    let server = Server::start_with_tokens::<&str>(&store, &tokens(), &[]);
    let http = agent();
    let post = |body: Value| {
        let (status, text) = call(
            &http,
            "POST",
            &server.url("/v1/operator/withdraw"),
            Some(OPERATOR),
            Some(body),
        )
        .unwrap();
        (status, serde_json::from_str::<Value>(&text).unwrap())
    };
    let body = |approvals: Vec<String>| json!({"game": "tresors-ensables", "emission": 1, "reason": "closing the game", "approvals": approvals});
    let (status, e) = post(body(vec![]));
    assert_eq!(
        (status, e["error"].as_str()),
        (422, Some("approvals_needed")),
        "{e}"
    );
    let whole = [
        "withdraw",
        "--game",
        "tresors-ensables",
        "--emission",
        "1",
        "--reason",
        "closing the game",
    ];
    let notes: Vec<String> = [approve(0, &whole), approve(1, &whole)]
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let (status, e) = post(body(vec![notes[0].clone(), notes[0].clone()]));
    assert_eq!(
        (status, e["error"].as_str()),
        (422, Some("approvals_needed")),
        "{e}"
    );
    let mut forged = notes[1].clone();
    forged = forged.replace("emission 1", "emission 1 ");
    let (status, e) = post(body(vec![notes[0].clone(), forged]));
    assert_eq!(
        (status, e["error"].as_str()),
        (422, Some("bad_approval")),
        "{e}"
    );
    assert!(
        e["message"].as_str().unwrap().contains("approvals[1]"),
        "{e}"
    );
    let (status, acted) = post(body(notes));
    assert_eq!(status, 200, "{acted}");
    assert_eq!(acted["by"], "ops-1;approved-by:alice:bob");
    drop(server);

    // An early end of claims and the reveal, likewise.
    run(
        &[
            "generate",
            "--game",
            "tresors-ensables",
            "--emission",
            "2",
            "--block",
            "1",
            "--units",
            "5",
            "--quiet",
        ],
        0,
    );
    run(
        &["close", "--emission", "2", "--claims-until", "2099-12-31"],
        0,
    );
    let force = [
        "end-claims-force",
        "--game",
        "tresors-ensables",
        "--emission",
        "2",
        "--reason",
        "regulator order 12",
    ];
    let (fa, fb) = (approve(0, &force), approve(1, &force));
    let end = |approvals: &[&str], code| {
        let mut args = vec![
            "end-claims",
            "--emission",
            "2",
            "--force",
            "--reason",
            "regulator order 12",
            "--json",
        ];
        for f in approvals {
            args.extend(["--approval", *f]);
        }
        run(&args, code).json()
    };
    assert_eq!(end(&[&fa], 1)["error"], "approvals_needed");
    end(&[&fa, &fb], 0);
    let reveal_args = ["reveal", "--game", "tresors-ensables", "--emission", "2"];
    let (ra, rb) = (approve(0, &reveal_args), approve(1, &reveal_args));
    // A withdrawal's approval is not a reveal's.
    let out = dir.path().join("reveal.json");
    let reveal = |approvals: &[&str], code| {
        let mut args = vec![
            "reveal",
            "--emission",
            "2",
            "-o",
            out.to_str().unwrap(),
            "--json",
        ];
        for f in approvals {
            args.extend(["--approval", *f]);
        }
        run(&args, code)
    };
    assert_eq!(reveal(&[&ra, &fb], 1).json()["error"], "bad_approval");
    assert!(!out.exists(), "nothing revealed");
    reveal(&[&ra, &rb], 0);
    assert!(out.exists());
    let db = rusqlite::Connection::open(store.join("ledger.sqlite")).unwrap();
    let early_end = |emission: u32| -> (String, String) {
        db.query_row(
            "SELECT by_name, reason FROM operator_actions WHERE action = 'early_end' AND emission = ?1",
            [emission],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    assert_eq!(early_end(2).0, "issuer;approved-by:alice:bob");

    // An emission closed without a claim deadline has no "after the
    // deadline": over HTTP, its end of claims is refused without a
    // reason, then without the approvals, and goes ahead with both,
    // recorded as the token's and the approvers'.
    run(
        &[
            "generate",
            "--game",
            "tresors-ensables",
            "--emission",
            "3",
            "--block",
            "1",
            "--units",
            "5",
            "--quiet",
        ],
        0,
    );
    run(&["close", "--emission", "3"], 0);
    let server = Server::start_with_tokens::<&str>(&store, &tokens(), &[]);
    let end_claims = |body: Value| {
        let (status, text) = call(
            &http,
            "POST",
            &server.url("/v1/operator/end-claims"),
            Some(OPERATOR),
            Some(body),
        )
        .unwrap();
        (status, serde_json::from_str::<Value>(&text).unwrap())
    };
    let (status, e) = end_claims(json!({"game": "tresors-ensables", "emission": 3}));
    assert_eq!(
        (status, e["error"].as_str()),
        (409, Some("claims_still_open")),
        "{e}"
    );
    assert!(e["message"].as_str().unwrap().contains("\"reason\""), "{e}");
    let reason = "game withdrawn from sale";
    let (status, e) =
        end_claims(json!({"game": "tresors-ensables", "emission": 3, "reason": reason}));
    assert_eq!(
        (status, e["error"].as_str()),
        (422, Some("approvals_needed")),
        "{e}"
    );
    let force = [
        "end-claims-force",
        "--game",
        "tresors-ensables",
        "--emission",
        "3",
        "--reason",
        reason,
    ];
    let notes: Vec<String> = [approve(0, &force), approve(1, &force)]
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let (status, ended) = end_claims(
        json!({"game": "tresors-ensables", "emission": 3, "reason": reason, "approvals": notes}),
    );
    assert_eq!(status, 200, "{ended}");
    assert_eq!(ended["kind"], "end_of_claims");
    drop(server);
    assert_eq!(
        early_end(3),
        (
            "ops-1;approved-by:alice:bob".to_string(),
            format!("the emission had no claim deadline: {reason}")
        )
    );
    let verify = run(&["ledger", "verify", "--json"], 0).json();
    assert_eq!(verify["ok"], true, "{verify}");
}

#[test]
fn status_shows_voids_and_suspensions_with_their_reasons_and_a_voided_sale_is_not_sold() {
    let (_dir, store) = te_store(6);
    let run = |args: &[&str], code| issuer(&store, args).expect_code(code);
    let sold: Vec<String> = (0..2)
        .map(|_| {
            run(&["sell", "--game", "tresors-ensables", "--json"], 0).json()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    run(&["void", &sold[0], "--reason", "card refused"], 0);
    run(
        &["suspend", "--emission", "1", "--reason", "audit visit"],
        0,
    );
    let status = run(&["status", "--blocks", "--json"], 0).json();
    let e = &status["emissions"][0];
    assert_eq!(
        (&e["sold"], &e["voided"], &e["unsold"]),
        (&json!(1), &json!(1), &json!(4)),
        "one sale stands, one voided (never sold again), four unsold: {e}"
    );
    assert_eq!(e["suspended_reason"], "audit visit", "{e}");
    assert_eq!(e["voids"][0]["reason"], "card refused", "{e}");
    assert_eq!(e["voids"].as_array().unwrap().len(), 1, "{e}");
    let block = &e["block_status"][0];
    assert_eq!(
        (
            &block["standing"],
            &block["reason"],
            &block["sold"],
            &block["voided"]
        ),
        (
            &json!("suspended"),
            &json!("audit visit"),
            &json!(1),
            &json!(1)
        ),
        "{block}"
    );
    let words = run(&["status", "--blocks"], 0).stdout;
    for said in [
        "SUSPENDED since",
        "(audit visit)",
        "sold 1 (1 sale voided)",
        "voided: block 1 unit",
        "card refused",
        "(suspended since",
        "1 block, 6 units",
    ] {
        assert!(words.contains(said), "{said:?} in {words}");
    }
    assert!(!words.contains("(s)"), "{words}");
}
