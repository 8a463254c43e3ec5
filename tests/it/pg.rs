//! The shared PostgreSQL ledger (issue 12) against a real PostgreSQL: each
//! test starts a throwaway cluster of its own (a temp folder, a free
//! loopback port, run as the `postgres` user when we are root) and stops
//! it afterwards. Without PostgreSQL the tests say loudly they were
//! skipped; under CI (`CI=true`) a skip is a failure.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use tempfile::TempDir;
use ticket_issuer::error::{Error, ErrorKind};
use ticket_issuer::game::Game;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::redeem::{OwnedKeys, Redeemer};
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

use crate::common::{copy_tree, issuer, played, played_in, sold, sold_on, valid_id_of};

/// A PostgreSQL cluster of this test's own.
struct Cluster {
    dir: TempDir,
    bin: PathBuf,
    port: u16,
}

/// The newest installed PostgreSQL's programs folder.
fn postgres_bin() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").is_file())
        .collect();
    found.sort_by_key(|b| {
        b.parent()
            .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found.pop()
}

impl Cluster {
    /// A new cluster, started; `None` (said loudly) without PostgreSQL.
    fn start(test: &str) -> Option<Cluster> {
        let Some(bin) = postgres_bin() else {
            eprintln!(
                "\n*** SKIPPED {test}: PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb); `.ci/run` installs it ***\n"
            );
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "{test}: PostgreSQL is missing under CI"
            );
            return None;
        };
        let dir = tempfile::Builder::new()
            .prefix("pg-ledger-")
            .tempdir_in("/tmp")
            .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = Cluster { dir, bin, port };
        if Cluster::as_root() {
            let chown = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(cluster.dir.path())
                .status()
                .unwrap();
            assert!(chown.success());
        }
        let data = cluster.data();
        cluster.run(
            "initdb",
            &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync"],
        );
        cluster.up();
        Some(cluster)
    }

    fn as_root() -> bool {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() == 0 }
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// One of PostgreSQL's programs, run as `postgres` when we are root.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if Cluster::as_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        }
    }

    /// Runs one of PostgreSQL's programs to success.
    fn run(&self, program: &str, args: &[&str]) {
        let out = self.command(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts the server (fsync off: these tests check logic, not disks).
    fn up(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log").display().to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-o",
                &options,
                "-w",
                "start",
            ],
        );
    }

    /// Stops the server, closing every connection.
    fn down(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Creates the ledger schema.
    fn migrate(&self, store: &Path) {
        let url = self.url();
        issuer(store, &["ledger", "migrate", "--ledger", &url]).expect_code(0);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self
            .command("pg_ctl")
            .args(["-D", &data, "-m", "immediate", "-w", "stop"])
            .output();
    }
}

/// A store with keys and Trésors Ensablés emission 2, block 1 (3,000
/// units), and a second node's store: a copy of it.
fn two_nodes() -> (TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("node-a");
    issuer(&a, &["keygen"]).expect_code(0);
    issuer(
        &a,
        &[
            "generate",
            "--game",
            "tresors-ensables",
            "--emission",
            "2",
            "--block",
            "1",
            "--units",
            "3000",
            "--quiet",
        ],
    )
    .expect_code(0);
    let b = dir.path().join("node-b");
    copy_tree(&a, &b);
    (dir, a, b)
}

fn id(store: &Path, index: u32) -> String {
    valid_id_of(store, Game::TRESORS_ENSABLES, 2, 1, index)
}

/// A long-lived redeemer of `store` on the PostgreSQL ledger `url` (a node).
fn node(store: &Path, url: &str) -> Redeemer {
    let s = Store::new(store);
    let keys = OwnedKeys {
        public_key: s.public_key().unwrap(),
        secrets: Some(s.secrets().unwrap()),
        records_key: None,
    };
    let ledger = LedgerTarget::new(&s, Some(url)).unwrap();
    Redeemer::new(s, keys).with_ledger(ledger)
}

/// Plays each of `units` (sold) to its end, spread over `nodes` and threads.
fn play_all(nodes: &[Redeemer], units: &[UnitId]) {
    const THREADS: usize = 8;
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let node = &nodes[t % nodes.len()];
            scope.spawn(move || {
                for unit in units.iter().skip(t).step_by(THREADS) {
                    played_in(node, unit, None);
                }
            });
        }
    });
}

/// `ledger verify` of the PostgreSQL ledger with both nodes' keys.
fn verify(url: &str, a: &Path, b: &Path) -> serde_json::Value {
    let key = |s: &Path| s.join("keys/ledger.pub.pem").display().to_string();
    let (ka, kb) = (key(a), key(b));
    let mut args = vec![
        "ledger",
        "verify",
        "--ledger",
        url,
        "--json",
        "--ledger-key",
        &ka,
    ];
    if b.join("keys/ledger.pub.pem").exists() {
        args.extend(["--ledger-key", &kb]);
    }
    issuer(a, &args).expect_code(0).json()
}

#[test]
fn pg_two_nodes_pay_a_unit_once_and_the_end_of_claims_stops_a_stale_node() {
    let Some(pg) = Cluster::start("pg_two_nodes_pay_a_unit_once…") else {
        return;
    };
    let (_dir, a, b) = two_nodes();
    let url = pg.url();
    // Before the schema exists: a clean "unavailable" naming the remedy.
    let early = issuer(&a, &["redeem", &id(&a, 4), "--ledger", &url]).expect_code(3);
    assert!(early.stderr.contains("ledger migrate"), "{}", early.stderr);
    pg.migrate(&a);
    let again = issuer(&a, &["ledger", "migrate", "--ledger", &url, "--json"]).expect_code(0);
    // Already at the current schema (version 2: sales and plays).
    assert_eq!(again.json()["from_version"], 2);

    // One unit, two nodes: paid once (sold, then played to its end).
    sold_on(&a, Some(&url), &[&id(&a, 4), &id(&a, 5)]);
    played(&a, Some(&url), &id(&a, 4), None);
    issuer(&a, &["redeem", &id(&a, 4), "--ledger", &url]).expect_code(0);
    let twice = issuer(&b, &["redeem", &id(&b, 4), "--ledger", &url, "--json"]).expect_code(1);
    assert_eq!(twice.json()["error"], "already_redeemed");
    let check = issuer(
        &b,
        &["redeem", &id(&b, 4), "--check", "--ledger", &url, "--json"],
    );
    assert!(check.expect_code(0).json()["already_redeemed_at"].is_string());

    // The issuer (node a's store) closes; reveal waits for the end of claims.
    issuer(&a, &["close", "--emission", "2"]).expect_code(0);
    let seeds = a.join("../seeds.json").display().to_string();
    let refused = issuer(
        &a,
        &["reveal", "--emission", "2", "--ledger", &url, "-o", &seeds],
    );
    assert!(
        refused.expect_code(1).stderr.contains("end-claims"),
        "reveal before the end of claims"
    );
    assert!(!Path::new(&seeds).exists());
    played(&b, Some(&url), &id(&b, 5), None);
    issuer(&b, &["redeem", &id(&b, 5), "--ledger", &url]).expect_code(0);

    let ended = issuer(
        &a,
        &["end-claims", "--emission", "2", "--ledger", &url, "--json"],
    );
    let ended = ended.expect_code(0).json();
    assert_eq!(ended["kind"], "end_of_claims");
    assert!(ended["statement"].as_str().unwrap().contains("emission 2"));
    // Node b's files say nothing of it: the ledger does.
    assert!(!b
        .join("emissions/tresors-ensables/e000002/revealed")
        .exists());
    for (node, index) in [(&b, 6), (&a, 7)] {
        let run = issuer(
            node,
            &["redeem", &id(node, index), "--ledger", &url, "--json"],
        );
        assert_eq!(run.expect_code(1).json()["error"], "emission_closed");
    }
    issuer(
        &a,
        &["reveal", "--emission", "2", "--ledger", &url, "-o", &seeds],
    )
    .expect_code(0);
    let log = verify(&url, &a, &b);
    assert_eq!(log["ok"], true, "{log}");
    // Two units, each sold, played to its end and redeemed.
    assert_eq!(log["log"]["size"], 6);
}

#[test]
fn pg_concurrent_redemptions_across_two_nodes_pay_each_unit_once() {
    let Some(pg) = Cluster::start("pg_concurrent_redemptions…") else {
        return;
    };
    let (_dir, a, b) = two_nodes();
    pg.migrate(&a);
    let url = pg.url();
    let nodes = [node(&a, &url), node(&b, &url)];
    const UNITS: u32 = 300;
    const CLIENTS: u32 = 8;
    let ids: Vec<UnitId> = (0..UNITS).map(|i| id(&a, i).parse().unwrap()).collect();
    let listed: Vec<String> = ids.iter().map(UnitId::to_string).collect();
    sold_on(
        &a,
        Some(&url),
        &listed.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    play_all(&nodes, &ids);
    let paid: Mutex<HashMap<u32, u32>> = Mutex::new(HashMap::new());
    std::thread::scope(|scope| {
        for client in 0..CLIENTS {
            let (node, ids, paid) = (&nodes[(client % 2) as usize], &ids, &paid);
            scope.spawn(move || {
                // Every client redeems every ID, each from its own start.
                for k in 0..UNITS {
                    let i = (k + client * 37) % UNITS;
                    match node.redeem(&ids[i as usize], None) {
                        Ok(_) => *paid.lock().unwrap().entry(i).or_default() += 1,
                        Err(Error::AlreadyRedeemed { .. }) => {}
                        Err(e) => panic!("unit {i}: {e}"),
                    }
                }
            });
        }
    });
    let paid = paid.into_inner().unwrap();
    assert_eq!(paid.len(), UNITS as usize, "every unit paid");
    assert!(paid.values().all(|&n| n == 1), "no unit paid twice");
    drop(nodes);
    let log = verify(&url, &a, &b);
    assert_eq!(log["ok"], true, "{log}");
    // Each unit's sale, the end of its play and its redemption.
    assert_eq!(log["log"]["size"], 3 * UNITS);
}

#[test]
fn pg_a_database_restart_gives_a_retryable_error_then_the_node_carries_on() {
    let Some(pg) = Cluster::start("pg_a_database_restart…") else {
        return;
    };
    let (_dir, a, b) = two_nodes();
    pg.migrate(&a);
    let url = pg.url();
    let n = node(&a, &url);
    let unit = |i: u32| -> UnitId { id(&a, i).parse().unwrap() };
    sold_on(&a, Some(&url), &[&id(&a, 1), &id(&a, 2)]);
    play_all(std::slice::from_ref(&n), &[unit(1), unit(2)]);
    n.redeem(&unit(1), None).unwrap();
    pg.down();
    let e = n.redeem(&unit(2), None).map(drop).unwrap_err();
    assert_eq!(
        (e.kind(), e.code()),
        (ErrorKind::Unavailable, "ledger_unavailable"),
        "{e}"
    );
    pg.up();
    // The pool drops the dead connections; a retry goes through.
    n.redeem(&unit(2), None).unwrap();
    for i in [1, 2] {
        assert!(matches!(
            n.redeem(&unit(i), None),
            Err(Error::AlreadyRedeemed { .. })
        ));
    }
    drop(n);
    let log = verify(&url, &a, &b);
    assert_eq!(
        (&log["ok"], &log["log"]["size"]),
        (&true.into(), &6.into()),
        "{log}"
    );
}

#[test]
fn reveal_waits_for_the_end_of_claims_in_the_store_ledger_too() {
    let (_dir, a, _b) = two_nodes();
    sold(&a, &[&id(&a, 1)]);
    played(&a, None, &id(&a, 1), None);
    issuer(&a, &["redeem", &id(&a, 1)]).expect_code(0);
    issuer(&a, &["close", "--emission", "2"]).expect_code(0);
    let refused = issuer(&a, &["reveal", "--emission", "2"]).expect_code(1);
    assert!(refused.stderr.contains("end-claims"), "{}", refused.stderr);
    issuer(&a, &["end-claims", "--emission", "2"]).expect_code(0);
    let run = issuer(&a, &["redeem", &id(&a, 2), "--json"]).expect_code(1);
    assert_eq!(run.json()["error"], "emission_closed");
    issuer(&a, &["reveal", "--emission", "2", "-o", "-"]).expect_code(0);
}

#[test]
fn pg_kill_9_of_a_node_under_load_loses_nothing_acknowledged_and_the_other_carries_on() {
    let Some(pg) = Cluster::start("pg_kill_9_of_a_node…") else {
        return;
    };
    let (dir, a, b) = two_nodes();
    pg.migrate(&a);
    let url = pg.url();
    let ids: Vec<String> = (0..3000).map(|i| id(&a, i)).collect();
    sold_on(
        &a,
        Some(&url),
        &ids.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let units: Vec<UnitId> = ids.iter().map(|i| i.parse().unwrap()).collect();
    play_all(&[node(&a, &url), node(&b, &url)], &units);
    let list = dir.path().join("ids.txt");
    std::fs::write(&list, ids.join("\n") + "\n").unwrap();
    // Both nodes redeem the whole list at once; node a's process is killed
    // (SIGKILL) once it has acknowledged its first units.
    let batch = |store: &Path| {
        Command::new(crate::common::ISSUER)
            .arg("--store")
            .arg(store)
            .args(["redeem", "--ledger", &url, "--batch"])
            .arg(&list)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (mut victim, survivor) = (batch(&a), batch(&b));
    let mut out = victim.stdout.take().unwrap();
    let mut first = [0u8; 1];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    victim.kill().unwrap();
    victim.wait().unwrap();
    let mut acknowledged = String::from_utf8_lossy(&first).into_owned();
    std::io::Read::read_to_string(&mut out, &mut acknowledged).unwrap();
    // A cut last line was never acknowledged.
    acknowledged.truncate(acknowledged.rfind('\n').map_or(0, |n| n + 1));
    let survivor = survivor.wait_with_output().unwrap();
    let survivor = String::from_utf8(survivor.stdout).unwrap();
    let paid = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|v| v["kind"] == "redemption")
            .map(|v| v["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (by_a, by_b) = (paid(&acknowledged), paid(&survivor));
    let answered = acknowledged.lines().count();
    assert!(
        answered > 0 && answered < ids.len(),
        "killed mid-run: {answered} answered"
    );
    assert!(by_a.iter().all(|u| !by_b.contains(u)), "no unit paid twice");
    // Node b's other lines are units node a recorded (acknowledged or not).
    for line in survivor.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(
            v["kind"] == "redemption" || v["error"] == "already_redeemed",
            "{line}"
        );
    }
    // What node a acknowledged is in the ledger, as node b sees it.
    for unit in by_a.iter().take(20) {
        let check = issuer(&b, &["redeem", unit, "--check", "--ledger", &url, "--json"]);
        assert!(check.expect_code(0).json()["already_redeemed_at"].is_string());
    }
    let log = verify(&url, &a, &b);
    // Each unit's sale, the end of its play and its redemption.
    assert_eq!(
        (&log["ok"], &log["log"]["size"]),
        (&true.into(), &9000.into()),
        "{log}"
    );
}
