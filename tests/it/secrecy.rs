//! Issue 19: a play's future never leaves the server. For units of a
//! Trésors Ensablés block caught at every point of their play (not sold,
//! sold and not played, part-way), every route of the service and every
//! command a platform scripts is asked with every stop N, as an attacker
//! would; the answers must be the same whatever N (the future decides
//! nothing in them) and must hold nothing the unit's export shows beyond
//! the rolls already revealed.

use std::path::Path;

use serde_json::{json, Value};
use tempfile::TempDir;

use crate::common::{agent, get, issuer, issuer_with_input, post, te_block_path, te_store, Server};

/// A store with one closed Trésors Ensablés block of `units` units; its
/// export (the truth an attacker must not learn).
fn te_block(units: u32) -> (TempDir, std::path::PathBuf, Vec<Value>) {
    let (dir, store) = te_store(units);
    let block = te_block_path(&store);
    let lines = issuer(&store, &["export", block.to_str().unwrap(), "-q"])
        .expect_code(0)
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (dir, store, lines)
}

/// What the whole unit holds, from the operator's `show --reveal-all`:
/// its record, its proof's hashes.
fn whole(store: &Path, id: &str) -> Value {
    issuer(store, &["show", id, "--reveal-all", "--json"])
        .expect_code(0)
        .json()
}

/// The roll at which the unit's play ends by itself, by the test's own
/// replay of its export (tests/it/sale.rs).
fn end_roll(line: &Value) -> u32 {
    crate::sale::replay(line).len() as u32
}

/// Asserts `answer` holds nothing of unit `truth` beyond roll `rolls`: no
/// record, proof, lot, prize or tape; steps only up to `rolls`.
fn reveals_nothing_beyond(answer: &Value, truth: &Value, rolls: u32, what: &str) {
    let text = answer.to_string();
    for field in [
        "\"record\"",
        "\"inclusion_proof\"",
        "\"dice\"",
        "\"chests\"",
        "\"lot\"",
        "\"prize\"",
        "\"merkle_root\"",
    ] {
        assert!(!text.contains(field), "{what}: {field} in {text}");
    }
    let record = truth["record"].as_str().unwrap();
    assert!(!text.contains(record), "{what}: the record in {text}");
    for hash in truth["inclusion_proof"].as_array().unwrap() {
        assert!(
            !text.contains(hash.as_str().unwrap()),
            "{what}: a proof hash in {text}"
        );
    }
    let mut stack = vec![answer];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if let Some(steps) = m.get("steps").and_then(Value::as_array) {
                    for s in steps {
                        let n = s["roll"].as_u64().unwrap() as u32;
                        assert!(
                            n >= 1 && n <= rolls,
                            "{what}: roll {n} shown after {rolls}: {text}"
                        );
                    }
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
}

/// Asserts every answer of `answers` (one per stop N) is the same once
/// the stop itself is taken out.
fn same_whatever_n(answers: &[(u32, String)], what: &str) {
    let strip = |n: u32, text: &str| {
        text.replace(
            &format!("\"stopped_after_rolls\":{n}"),
            "\"stopped_after_rolls\":N",
        )
        .replace(&format!(" {n}\t"), " N\t")
    };
    let (n0, first) = &answers[0];
    let first = strip(*n0, first);
    for (n, text) in &answers[1..] {
        assert_eq!(
            strip(*n, text),
            first,
            "{what}: stop {n} answered otherwise than stop {n0}"
        );
    }
}

/// The units under test: (ID, its export line, rolls played), at every
/// kind of point: not sold, sold and not played, and part-way through,
/// never at the end.
fn units_in_play(store: &Path, lines: &[Value], server: &Server) -> Vec<(String, Value, u32)> {
    let agent = agent();
    let mut units = Vec::new();
    // Sold through the service, in index order: units 0.. .
    for k in 0..10u32 {
        let (status, sale) = post(
            &agent,
            server,
            "/v1/sales",
            json!({"game": "tresors-ensables"}),
        );
        assert_eq!(status, 200, "{sale}");
        let id = sale["id"].as_str().unwrap().to_string();
        let line = lines[sale["index"].as_u64().unwrap() as usize].clone();
        assert_eq!(line["id"].as_str(), Some(id.as_str()));
        // A sale shows the board and the life, nothing of the tape.
        reveals_nothing_beyond(&sale, &whole(store, &id), 0, "sale");
        let end = end_roll(&line);
        // Part-way: k rolls, but never the last (the play would be over).
        let rolls = k.min(end - 1);
        for n in 1..=rolls {
            let (status, step) = post(
                &agent,
                server,
                &format!("/v1/plays/{id}/roll"),
                json!({"roll": n}),
            );
            assert_eq!(status, 200, "{step}");
            assert_eq!(step["over"], false, "{step}");
        }
        units.push((id, line, rolls));
    }
    // Never sold.
    let line = lines[150].clone();
    units.push((line["id"].as_str().unwrap().to_string(), line, 0));
    units
}

#[test]
fn no_answer_to_a_platform_tells_the_future_of_a_play() {
    let (_dir, store, lines) = te_block(200);
    let server = Server::start(&store);
    let agent = agent();
    let units = units_in_play(&store, &lines, &server);
    for (i, (id, line, rolls)) in units.iter().enumerate() {
        let truth = whole(&store, id);
        let stops: Vec<u32> = (0..=end_roll(line) + 2).collect();
        let what = |route: &str| format!("{id} after {rolls} rolls: {route}");

        // The service: the check, with and without a stop. A unit the
        // platform did not sell (never sold) is unknown to it (issue 34).
        let sold = i < 10;
        let refused = if sold { 409 } else { 404 };
        let (status, text) = get(&agent, &server, &format!("/v1/units/{id}"));
        let check: Value = serde_json::from_str(&text).unwrap();
        if sold {
            assert_eq!(status, 200, "{text}");
            assert_eq!(check["in_play"], true, "{text}");
            assert_eq!(check["play"]["rolls"], *rolls, "{text}");
        } else {
            assert_eq!(
                (status, check["error"].as_str()),
                (404, Some("unknown_unit")),
                "{text}"
            );
        }
        reveals_nothing_beyond(&check, &truth, *rolls, &what("GET /v1/units"));
        let mut checks = Vec::new();
        let mut redemptions = Vec::new();
        for &n in &stops {
            let (status, text) = get(
                &agent,
                &server,
                &format!("/v1/units/{id}?stopped_after_rolls={n}"),
            );
            assert!(
                status == refused,
                "{}: {status} {text}",
                what("GET ?stopped_after_rolls")
            );
            reveals_nothing_beyond(
                &serde_json::from_str(&text).unwrap(),
                &truth,
                *rolls,
                &what("GET ?stop"),
            );
            checks.push((n, text));
            let (status, answer) = post(
                &agent,
                &server,
                "/v1/redemptions",
                json!({"id": id, "stopped_after_rolls": n}),
            );
            assert_eq!(status, refused, "{answer}");
            reveals_nothing_beyond(&answer, &truth, *rolls, &what("POST /v1/redemptions"));
            redemptions.push((n, answer.to_string()));
        }
        same_whatever_n(&checks, &what("GET /v1/units?stopped_after_rolls"));
        same_whatever_n(&redemptions, &what("POST /v1/redemptions"));
        let (status, plain) = post(&agent, &server, "/v1/redemptions", json!({"id": id}));
        assert_eq!(status, refused);
        assert_eq!(
            plain["error"],
            if sold {
                "play_unfinished"
            } else {
                "unknown_unit"
            },
            "{plain}"
        );
        // A batch of every stop: each line the same.
        let units: Vec<Value> = stops
            .iter()
            .map(|n| json!({"id": id, "stopped_after_rolls": n}))
            .collect();
        let (status, batch) = post(
            &agent,
            &server,
            "/v1/redemptions/batch",
            json!({"units": units}),
        );
        assert_eq!(status, 200, "{batch}");
        let results: Vec<(u32, String)> = stops
            .iter()
            .zip(batch["results"].as_array().unwrap())
            .map(|(n, r)| (*n, r.to_string()))
            .collect();
        same_whatever_n(&results, &what("POST /v1/redemptions/batch"));
        reveals_nothing_beyond(&batch, &truth, *rolls, &what("batch"));
        // The play: its state, a stop (refused before the first chest, and
        // only tried there, so the play goes on), a roll out of order.
        let (status, state) = get(&agent, &server, &format!("/v1/plays/{id}"));
        let state: Value = serde_json::from_str(&state).unwrap();
        if i < 10 {
            assert_eq!(status, 200, "{state}");
            reveals_nothing_beyond(&state, &truth, *rolls, &what("GET /v1/plays"));
            if state["may_stop"] == false {
                let (status, refused) =
                    post(&agent, &server, &format!("/v1/plays/{id}/stop"), json!({}));
                assert_eq!(
                    (status, refused["error"].as_str()),
                    (422, Some("bad_stop")),
                    "{refused}"
                );
                reveals_nothing_beyond(&refused, &truth, *rolls, &what("POST stop"));
            }
            let mut skips = Vec::new();
            for n in rolls + 2..rolls + 6 {
                let (status, refused) = post(
                    &agent,
                    &server,
                    &format!("/v1/plays/{id}/roll"),
                    json!({"roll": n}),
                );
                assert_eq!(status, 409, "{refused}");
                reveals_nothing_beyond(&refused, &truth, *rolls, &what("POST roll"));
                skips.push((
                    n,
                    refused
                        .to_string()
                        .replace(&format!("step {n}"), "step N")
                        .replace(&format!("\"asked\":{n}"), ""),
                ));
            }
            same_whatever_n(&skips, &what("POST roll out of order"));
        } else {
            assert_eq!(status, 404, "{state}");
            reveals_nothing_beyond(&state, &truth, 0, &what("GET /v1/plays (not sold)"));
        }

        // The commands a platform scripts, for a sample of the units.
        if i % 3 != 0 {
            continue;
        }
        let run_json = |args: &[&str]| {
            let run = issuer(&store, args);
            let text = if run.stdout.trim().is_empty() {
                run.stderr.clone()
            } else {
                run.stdout.clone()
            };
            (run.code, text)
        };
        for args in [
            vec!["redeem", id, "--check", "--json"],
            vec!["show", id, "--json"],
            vec!["show", id],
            vec!["redeem", id, "--check"],
        ] {
            let (code, text) = run_json(&args);
            assert_eq!(code, 0, "{args:?}: {text}");
            assert!(
                !text.contains(truth["record"].as_str().unwrap()),
                "{args:?}: {text}"
            );
            if args.contains(&"--json") {
                let v: Value = serde_json::from_str(&text).unwrap();
                reveals_nothing_beyond(&v, &truth, *rolls, &what(&args.join(" ")));
            } else {
                assert!(
                    !text.contains("pays") && !text.contains("outcome"),
                    "{args:?}: {text}"
                );
            }
        }
        let mut by_command: Vec<Vec<(u32, String)>> = vec![Vec::new(); 4];
        for &n in &stops {
            let n_text = n.to_string();
            for (k, args) in [
                vec![
                    "redeem",
                    id,
                    "--check",
                    "--stopped-after-rolls",
                    &n_text,
                    "--json",
                ],
                vec!["show", id, "--stopped-after-rolls", &n_text, "--json"],
                vec!["redeem", id, "--json"],
            ]
            .iter()
            .enumerate()
            {
                let (code, text) = run_json(args);
                assert_eq!(code, 1, "{args:?}: {text}");
                reveals_nothing_beyond(
                    &serde_json::from_str(&text).unwrap(),
                    &truth,
                    *rolls,
                    &what(&args.join(" ")),
                );
                by_command[k].push((n, text));
            }
            let batch =
                issuer_with_input(&store, &["redeem", "--batch", "-"], &format!("{id} {n}\n"));
            assert_eq!(batch.code, 1, "{}", batch.stdout);
            reveals_nothing_beyond(
                &serde_json::from_str(batch.stdout.trim()).unwrap(),
                &truth,
                *rolls,
                &what("redeem --batch"),
            );
            by_command[3].push((n, batch.stdout));
        }
        for answers in &by_command {
            same_whatever_n(answers, &what("a command with every stop"));
        }
        if i < 10 {
            let state = issuer(&store, &["play", id, "--json"])
                .expect_code(0)
                .json();
            reveals_nothing_beyond(&state, &truth, *rolls, &what("play --json"));
        }
    }
}

/// Once a play is over, a check says what its redemption pays: the
/// recorded stop, not the play to the end; the whole unit may then be shown.
#[test]
fn a_check_after_a_stop_reports_what_the_redemption_pays() {
    let (_dir, store, lines) = te_block(60);
    // A unit whose stop after its first chest pays otherwise than its play
    // to the end.
    let agent = agent();
    let server = Server::start(&store);
    let mut tried = 0;
    for _ in 0..40 {
        let (status, sale) = post(
            &agent,
            &server,
            "/v1/sales",
            json!({"game": "tresors-ensables"}),
        );
        assert_eq!(status, 200, "{sale}");
        let id = sale["id"].as_str().unwrap().to_string();
        let line = &lines[sale["index"].as_u64().unwrap() as usize];
        let mut n = 0;
        let state = loop {
            n += 1;
            let (status, step) = post(
                &agent,
                &server,
                &format!("/v1/plays/{id}/roll"),
                json!({"roll": n}),
            );
            assert_eq!(status, 200, "roll {n}: {step}");
            if step["may_stop"] == true || step["over"] == true {
                break step;
            }
        };
        if state["over"] == true {
            continue;
        }
        let (status, stopped) = post(&agent, &server, &format!("/v1/plays/{id}/stop"), json!({}));
        assert_eq!(status, 200, "{stopped}");
        let paid_at_stop = stopped["prize"].as_str().unwrap().to_string();
        if paid_at_stop == line["prize"].as_str().unwrap() {
            continue;
        }
        tried += 1;
        let (status, text) = get(&agent, &server, &format!("/v1/units/{id}"));
        assert_eq!(status, 200, "{text}");
        let check: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            check["prize"].as_str(),
            Some(paid_at_stop.as_str()),
            "{check}"
        );
        assert_eq!(check["stopped_after_rolls"], n, "{check}");
        assert!(
            check["record"].is_string(),
            "the play is over: the whole unit: {check}"
        );
        let cli = issuer(&store, &["redeem", &id, "--check", "--json"])
            .expect_code(0)
            .json();
        assert_eq!(cli["prize"].as_str(), Some(paid_at_stop.as_str()), "{cli}");
        // Another stop is refused now that the recorded one is known.
        let other = issuer(
            &store,
            &[
                "redeem",
                &id,
                "--check",
                "--stopped-after-rolls",
                &(n + 1).to_string(),
                "--json",
            ],
        );
        assert_eq!(other.code, 1);
        assert!(other.stdout.contains("bad_stop"), "{}", other.stdout);
        let (status, paid) = post(&agent, &server, "/v1/redemptions", json!({"id": id}));
        assert_eq!(status, 200, "{paid}");
        assert_eq!(
            paid["prize"].as_str(),
            Some(paid_at_stop.as_str()),
            "{paid}"
        );
        if tried == 3 {
            break;
        }
    }
    assert!(
        tried >= 1,
        "no unit whose stop pays otherwise than its end in 40"
    );
}
