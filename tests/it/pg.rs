//! The shared PostgreSQL ledger (issue 12) against a real PostgreSQL: each
//! test starts a throwaway cluster of its own (a temp folder, a free
//! loopback port, run as the `postgres` user when we are root) and stops
//! it afterwards. Without PostgreSQL the tests say loudly they were
//! skipped; under CI (`CI=true`) a skip is a failure.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use serde_json::json;
use tempfile::TempDir;
use ticket_issuer::error::{Error, ErrorKind};
use ticket_issuer::game::Game;
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::redeem::{OwnedKeys, Redeemer};
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

use crate::common::{
    agent, call, copy_tree, get, issuer, issuer_env, played_in, post, valid_id_of, Server, TOKEN,
};
use crate::redeem::Hash;
use crate::service::{mth, open_note};

/// A PostgreSQL cluster of this test's own.
pub(crate) struct Cluster {
    pub(crate) dir: TempDir,
    pub(crate) bin: PathBuf,
    pub(crate) port: u16,
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
    pub(crate) fn start(test: &str) -> Option<Cluster> {
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
        let port = Cluster::free_port();
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

    /// A free port below the ephemeral range (32768 and up on Linux): a
    /// client retrying a stopped database on an ephemeral port can be
    /// given that very port as its own and connect to itself.
    pub(crate) fn free_port() -> u16 {
        let start = 20_000 + (std::process::id() % 500) as u16 * 20;
        (0..10_000u16)
            .map(|n| 20_000 + (start - 20_000 + n) % 12_000)
            .find(|port| {
                std::net::TcpListener::bind(("127.0.0.1", *port)).is_ok()
                    && PORTS_TAKEN.lock().unwrap().insert(*port)
            })
            .expect("a free port below 32768")
    }

    /// Every process id of the cluster: the postmaster and its children.
    pub(crate) fn pids(&self) -> Vec<String> {
        let pid_file =
            std::fs::read_to_string(self.dir.path().join("data/postmaster.pid")).unwrap();
        let postmaster = pid_file.lines().next().unwrap().trim().to_string();
        let children = Command::new("pgrep")
            .args(["-P", &postmaster])
            .output()
            .unwrap();
        let mut pids = vec![postmaster];
        pids.extend(
            String::from_utf8_lossy(&children.stdout)
                .split_whitespace()
                .map(str::to_string),
        );
        pids
    }

    /// Sends `signal` (STOP, CONT) to every process of the cluster.
    fn signal_all(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .args(self.pids())
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub(crate) fn as_root() -> bool {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() == 0 }
    }

    pub(crate) fn data(&self) -> String {
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
    pub(crate) fn run(&self, program: &str, args: &[&str]) {
        let out = self.command(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts the server (fsync off: these tests check logic, not disks).
    pub(crate) fn up(&self) {
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

    pub(crate) fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Creates the ledger schema.
    pub(crate) fn migrate(&self, store: &Path) {
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

/// A store with keys (the ledger key too) and Trésors Ensablés emission
/// 2, block 1 (3,000 units), and a second node's store: a copy of it.
pub(crate) fn two_nodes() -> (TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("node-a");
    issuer(&a, &["keygen"]).expect_code(0);
    crate::common::generate_te(&a, 2, 3000);
    // One log, one key: every node of a ledger signs its heads with it.
    Store::new(&a).ledger_signing_key().unwrap();
    let b = dir.path().join("node-b");
    copy_tree(&a, &b);
    (dir, a, b)
}

/// A started cluster with the ledger schema, and two nodes' stores:
/// (cluster, temp dir, node a, node b, ledger URL).
/// Ports handed to clusters by this process (two tests never race for one).
static PORTS_TAKEN: Mutex<std::collections::BTreeSet<u16>> =
    Mutex::new(std::collections::BTreeSet::new());

fn migrated(test: &str) -> Option<(Cluster, TempDir, PathBuf, PathBuf, String)> {
    let pg = Cluster::start(test)?;
    let (dir, a, b) = two_nodes();
    pg.migrate(&a);
    let url = pg.url();
    Some((pg, dir, a, b, url))
}

pub(crate) fn id(store: &Path, index: u32) -> String {
    valid_id_of(store, Game::TRESORS_ENSABLES, 2, 1, index)
}

/// Makes `ids` redeemable on the ledger `url` (the store's own when
/// `None`), as a platform does: the emission closed, the units marked sold,
/// and each Trésors Ensablés unit played to its end (issue 13).
pub(crate) fn sellable(store: &Path, url: Option<&str>, ids: &[String]) {
    issuer(store, &["close", "--emission", "2"]).expect_code(0);
    let s = Store::new(store);
    let r = Redeemer::new(
        s.clone(),
        OwnedKeys {
            public_key: s.public_key().unwrap(),
            secrets: Some(s.secrets().unwrap()),
            records_keys: Vec::new(),
        },
    )
    .with_ledger(LedgerTarget::new(&s, url).unwrap());
    let ids: Vec<UnitId> = ids.iter().map(|i| i.parse().unwrap()).collect();
    r.mark_sold(&ids, Some(crate::common::TOKEN_NAME)).unwrap();
    for id in &ids {
        played_in(&r, id, None);
    }
}

/// A long-lived redeemer of `store` on the PostgreSQL ledger `url` (a node).
pub(crate) fn node(store: &Path, url: &str) -> Redeemer {
    let s = Store::new(store);
    let keys = OwnedKeys {
        public_key: s.public_key().unwrap(),
        secrets: Some(s.secrets().unwrap()),
        records_keys: Vec::new(),
    };
    let ledger = LedgerTarget::new(&s, Some(url)).unwrap();
    Redeemer::new(s, keys).with_ledger(ledger)
}

/// `ledger verify` of the PostgreSQL ledger with both nodes' keys.
pub(crate) fn verify(url: &str, a: &Path, b: &Path) -> serde_json::Value {
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
    // What is committed is in a signed head within the sequencing bound
    // (a running node sequences every 100 ms; a stopped one drained).
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let log = issuer(a, &args).expect_code(0).json();
        if log["log"]["pending"] == 0 || Instant::now() > deadline {
            assert_eq!(log["log"]["pending"], 0, "sequenced within 2 s: {log}");
            return log;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
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
    assert_eq!(again.json()["from_version"], 10);
    sellable(&a, Some(&url), &[4, 5, 6, 7].map(|i| id(&a, i)));

    // One unit, two nodes: paid once.
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
    issuer(&b, &["redeem", &id(&b, 5), "--ledger", &url]).expect_code(0);

    let ended = issuer(
        &a,
        &[
            "end-claims",
            "--emission",
            "2",
            "--force",
            "--reason",
            "no claim deadline set",
            "--ledger",
            &url,
            "--json",
        ],
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
    // Four units sold and played to their end, two of them paid, the early
    // end (the emission had no claim deadline), the end of claims and the
    // closing statement.
    assert_eq!(log["log"]["size"], 4 * 2 + 2 + 3);
    assert_eq!(leaf_hashes(&url).len(), 4 * 2 + 2 + 3);

    // Issue 21: deleting the end of claims (which would reopen payments)
    // is found by `ledger verify`.
    sql(&url).batch_execute("DELETE FROM claims_ended").unwrap();
    let key = |s: &Path| s.join("keys/ledger.pub.pem").display().to_string();
    let run = issuer(
        &a,
        &[
            "ledger",
            "verify",
            "--ledger",
            &url,
            "--json",
            "--ledger-key",
            &key(&a),
            "--ledger-key",
            &key(&b),
        ],
    );
    let v = run.expect_code(1).json();
    assert!(v["log"]["findings"].to_string().contains("deleted"), "{v}");
}

#[test]
fn pg_concurrent_redemptions_across_two_nodes_pay_each_unit_once() {
    let Some((_pg, _dir, a, b, url)) = migrated("pg_concurrent_redemptions…") else {
        return;
    };
    let nodes = [node(&a, &url), node(&b, &url)];
    const UNITS: u32 = 300;
    const CLIENTS: u32 = 8;
    let ids: Vec<String> = (0..UNITS).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &ids);
    let ids: Vec<UnitId> = ids.iter().map(|i| i.parse().unwrap()).collect();
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
    // Per unit: its sale, the end of its play, its redemption.
    assert_eq!(log["log"]["size"], 3 * UNITS);
}

#[test]
fn pg_a_database_restart_gives_a_retryable_error_then_the_node_carries_on() {
    let Some((pg, _dir, a, b, url)) = migrated("pg_a_database_restart…") else {
        return;
    };
    let n = node(&a, &url);
    let unit = |i: u32| -> UnitId { id(&a, i).parse().unwrap() };
    sellable(&a, Some(&url), &[1, 2].map(|i| id(&a, i)));
    n.redeem(&unit(1), None).unwrap();
    // A node's readiness follows the database; its liveness does not; with
    // --public-health neither needs a token (metrics still do).
    let server = Server::start_with(&a, &["--ledger", url.as_str(), "--public-health"]);
    let http = agent();
    let probe = |path: &str| call(&http, "GET", &server.url(path), None, None).unwrap();
    assert_eq!(probe("/readyz").0, 200);
    assert_eq!(probe("/healthz").0, 200);
    assert_eq!(probe("/metrics").0, 401);
    pg.down();
    let (status, body) = probe("/readyz");
    assert_eq!(status, 503, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["status"], "not_ready", "{body}");
    assert_eq!(probe("/healthz").0, 200);
    let e = n.redeem(&unit(2), None).map(drop).unwrap_err();
    assert_eq!(
        (e.kind(), e.code()),
        (ErrorKind::Unavailable, "ledger_unavailable"),
        "{e}"
    );
    pg.up();
    // The pool drops the dead connections; a retry goes through.
    n.redeem(&unit(2), None).unwrap();
    let ready = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        probe("/readyz").0 == 200
    });
    assert!(ready, "the node is ready again once the database is up");
    drop(server);
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
        (&true.into(), &(3 * 2).into()),
        "{log}"
    );
}

#[test]
fn reveal_waits_for_the_end_of_claims_in_the_store_ledger_too() {
    let (_dir, a, _b) = two_nodes();
    sellable(&a, None, &[1, 2].map(|i| id(&a, i)));
    issuer(&a, &["redeem", &id(&a, 1)]).expect_code(0);
    issuer(&a, &["close", "--emission", "2"]).expect_code(0);
    let refused = issuer(&a, &["reveal", "--emission", "2"]).expect_code(1);
    assert!(refused.stderr.contains("end-claims"), "{}", refused.stderr);
    issuer(
        &a,
        &[
            "end-claims",
            "--emission",
            "2",
            "--force",
            "--reason",
            "no claim deadline set",
        ],
    )
    .expect_code(0);
    let run = issuer(&a, &["redeem", &id(&a, 2), "--json"]).expect_code(1);
    assert_eq!(run.json()["error"], "emission_closed");
    issuer(&a, &["reveal", "--emission", "2", "-o", "-"]).expect_code(0);
}

#[test]
fn pg_kill_9_of_a_node_under_load_loses_nothing_acknowledged_and_the_other_carries_on() {
    let Some((_pg, dir, a, b, url)) = migrated("pg_kill_9_of_a_node…") else {
        return;
    };
    let ids: Vec<String> = (0..3000).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &ids);
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
    assert_eq!(
        (&log["ok"], &log["log"]["size"]),
        (&true.into(), &(3 * 3000).into()),
        "{log}"
    );
}

// ---------------------------------------------------------------------------
// Two `issuer serve` nodes on one database, over 127.0.0.1
// ---------------------------------------------------------------------------

/// `issuer serve --ledger url` of `store`.
pub(crate) fn serve(store: &Path, url: &str) -> Server {
    Server::start_with(store, &["--ledger", url])
}

/// A new connection to the test's database.
pub(crate) fn sql(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap()
}

/// The log's leaf hashes as the database holds them, in `seq` order.
fn leaf_hashes(url: &str) -> Vec<Hash> {
    sql(url)
        .query(
            "SELECT leaf_hash FROM (SELECT seq, leaf_hash FROM redemptions
                 UNION ALL SELECT seq, leaf_hash FROM sales
                 UNION ALL SELECT seq, leaf_hash FROM plays WHERE seq IS NOT NULL
                 UNION ALL SELECT seq, leaf_hash FROM claims_ended WHERE seq IS NOT NULL
                 UNION ALL SELECT seq, leaf_hash FROM operator_actions WHERE seq IS NOT NULL) AS log
             ORDER BY seq",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get::<_, Vec<u8>>(0).try_into().unwrap())
        .collect()
}

/// The unit IDs the database holds.
pub(crate) fn recorded(url: &str) -> HashSet<String> {
    sql(url)
        .query("SELECT unit_id FROM redemptions", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// Each node's `GET /v1/ledger/head`: a checkpoint signed by that node's
/// ledger key whose root is the RFC 9162 root of the database's first
/// `size` leaf hashes. Returns the sizes.
pub(crate) fn assert_heads_verify(url: &str, nodes: &[(&Path, &Server)]) -> Vec<u64> {
    let leaves = leaf_hashes(url);
    nodes
        .iter()
        .map(|(_, server)| {
            let (status, head) = get(&agent(), server, "/v1/ledger/head");
            assert_eq!(status, 200, "{head}");
            let head: serde_json::Value = serde_json::from_str(&head).unwrap();
            // The latest head, signed by whichever node made it: its
            // verifier key names which.
            let keys: Vec<_> = nodes
                .iter()
                .map(|(s, _)| {
                    ticket_issuer::seal::read_public(&s.join("keys/ledger.pub.pem")).unwrap()
                })
                .collect();
            let key = keys
                .into_iter()
                .find(|k| head["verifier_key"] == ticket_issuer::ledger::log::verifier_key(k))
                .expect("the head is signed by one of the nodes");
            let (_, size, root) = open_note(head["checkpoint"].as_str().unwrap(), &key);
            assert!(
                size > 0 && size as usize <= leaves.len(),
                "head size {size}"
            );
            assert_eq!(root, mth(&leaves[..size as usize]), "head of size {size}");
            size
        })
        .collect()
}

pub(crate) fn decimal(v: &serde_json::Value) -> Decimal {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn pg_two_serve_nodes_sixteen_clients_pay_each_id_once_and_a_thousand_reconcile() {
    let Some((_pg, _dir, a, b, url)) = migrated("pg_two_serve_nodes…") else {
        return;
    };
    let servers = [serve(&a, &url), serve(&b, &url)];
    const CLIENTS: usize = 16;

    // Each of 50 IDs redeemed by all 16 clients, 8 on each node.
    let contested: Vec<String> = (0..50).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &contested);
    let start = Barrier::new(CLIENTS);
    let answers: Vec<Vec<(u16, serde_json::Value)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (server, ids, start) = (&servers[c % 2], &contested, &start);
                s.spawn(move || {
                    let agent = agent();
                    start.wait();
                    // Each client in its own order, all of them in the end.
                    (0..ids.len())
                        .map(|k| {
                            let unit = &ids[(k + c * 3) % ids.len()];
                            post(&agent, server, "/v1/redemptions", json!({ "id": unit }))
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut paid_contested = Decimal::ZERO;
    for unit in &contested {
        let of_unit: Vec<&(u16, serde_json::Value)> = answers
            .iter()
            .flatten()
            .filter(|(_, body)| body["id"] == unit.as_str())
            .collect();
        assert_eq!(of_unit.len(), CLIENTS, "{unit}: every client answered");
        let ok: Vec<_> = of_unit.iter().filter(|(s, _)| *s == 200).collect();
        assert_eq!(ok.len(), 1, "{unit}: exactly one success");
        let (prize, at) = (decimal(&ok[0].1["prize"]), &ok[0].1["redeemed_at"]);
        assert!(at.is_string(), "{}", ok[0].1);
        for (status, body) in of_unit.iter().filter(|(s, _)| *s != 200) {
            assert_eq!(
                (*status, &body["error"]),
                (409, &json!("already_redeemed")),
                "{body}"
            );
            assert_eq!(decimal(&body["prize"]), prize, "{body}");
            assert_eq!(&body["redeemed_at"], at, "{body}");
        }
        paid_contested += prize;
    }

    // 1,000 distinct IDs spread over the 16 clients and both nodes.
    let distinct: Vec<String> = (100..1100).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &distinct);
    let prizes: Vec<Decimal> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (server, ids) = (&servers[c % 2], &distinct);
                s.spawn(move || {
                    let agent = agent();
                    ids.iter()
                        .skip(c)
                        .step_by(CLIENTS)
                        .map(|unit| {
                            let (status, r) =
                                post(&agent, server, "/v1/redemptions", json!({ "id": unit }));
                            assert_eq!(status, 200, "{r}");
                            decimal(&r["prize"])
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(prizes.len(), distinct.len());
    let in_db = recorded(&url);
    assert_eq!(in_db.len(), contested.len() + distinct.len());
    assert!(distinct.iter().chain(&contested).all(|u| in_db.contains(u)));

    // Totals: what the clients were paid is what the rows and the block
    // totals say.
    let paid = paid_contested + prizes.iter().sum::<Decimal>();
    let mut db = sql(&url);
    let mut cents = |q: &str| -> Decimal { Decimal::new(db.query_one(q, &[]).unwrap().get(0), 2) };
    assert_eq!(
        cents("SELECT SUM(prize_cents)::BIGINT FROM redemptions"),
        paid
    );
    // The sequencer keeps the totals: once everything is sequenced.
    let log = verify(&url, &a, &b);
    assert_eq!(log["ok"], true, "{log}");
    assert_eq!(
        cents("SELECT SUM(paid_cents)::BIGINT FROM block_totals"),
        paid
    );
    assert_eq!(log["log"]["size"], 3 * 1050);
    let sizes = assert_heads_verify(&url, &[(&a, &servers[0]), (&b, &servers[1])]);
    assert!(
        sizes.contains(&(3 * 1050)),
        "the last head is served: {sizes:?}"
    );
    // SIGTERM drains and exits cleanly (closing the pool had aborted).
    for mut server in servers {
        assert_eq!(server.terminate(), Some(0));
    }
}

#[test]
fn pg_kill_9_of_a_serve_node_under_http_load_loses_nothing_acknowledged_and_the_other_carries_on() {
    let Some((_pg, _dir, a, b, url)) = migrated("pg_kill_9_of_a_serve_node…") else {
        return;
    };
    let mut victim = serve(&a, &url);
    let survivor = serve(&b, &url);
    // 4 chunks of 250 IDs; each chunk sent by one client of each node.
    // Chunks 0 and 2 go in the same order from both nodes, so the two race
    // for every unit; chunks 1 and 3 go in opposite orders, so node a wins
    // the units before the meeting point however the races fall (in the
    // same order, node b once won all but 2 of 1,000 races on a loaded
    // machine, and node a was never killed with 20 acknowledged).
    let chunks: Vec<Vec<String>> = (0..4)
        .map(|k| (0..250).map(|i| id(&a, k * 250 + i)).collect())
        .collect();
    sellable(&a, Some(&url), &chunks.concat());
    let acked: [Mutex<Vec<String>>; 2] = Default::default();
    // Answers node a gave (200 or 409): the two nodes race for every unit,
    // so how many node a wins depends on scheduling, not on the code.
    let victim_answers = std::sync::atomic::AtomicUsize::new(0);
    // A bound for a machine far too slow, not a timing check: the survivor
    // must answer all 1,000 units before it.
    let deadline = Instant::now() + Duration::from_secs(300);
    let answered_by_survivor = std::thread::scope(|s| {
        let clients: Vec<_> = (0..8)
            .map(|c| {
                let (acked, chunk) = (&acked[c % 2], &chunks[c / 2]);
                let reversed = c % 2 == 1 && (c / 2) % 2 == 1;
                let ids: Vec<&String> = if reversed {
                    chunk.iter().rev().collect()
                } else {
                    chunk.iter().collect()
                };
                let url = [&victim, &survivor][c % 2].url("/v1/redemptions");
                let victim_answers = &victim_answers;
                s.spawn(move || {
                    let agent = agent();
                    let mut answered = 0;
                    for unit in ids {
                        if Instant::now() > deadline {
                            break;
                        }
                        let body = json!({ "id": unit });
                        match call(&agent, "POST", &url, Some(TOKEN), Some(body)) {
                            Ok((200, _)) => acked.lock().unwrap().push(unit.clone()),
                            Ok((409, e)) if e.contains("\"already_redeemed\"") => {}
                            Ok((status, e)) => panic!("{unit}: {status} {e}"),
                            Err(_) => break, // the node died
                        }
                        answered += 1;
                        if c % 2 == 0 {
                            victim_answers.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                    }
                    answered
                })
            })
            .collect();
        // SIGKILL node a once it has acknowledged some units and answered a
        // fifth of them, with more in flight. (It waited for 150 wins of
        // node a: on a loaded machine node b won most races, node a's
        // clients finished below 150 and the test waited out its deadline.)
        let answers = || victim_answers.load(std::sync::atomic::Ordering::SeqCst);
        while (acked[0].lock().unwrap().len() < 20 || answers() < 200)
            && answers() < 1000
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        victim.child.kill().unwrap();
        victim.child.wait().unwrap();
        let answered: Vec<usize> = clients.into_iter().map(|h| h.join().unwrap()).collect();
        answered.iter().skip(1).step_by(2).sum::<usize>()
    });
    let [by_a, by_b] = acked.map(|m| m.into_inner().unwrap());
    assert!(by_a.len() >= 20 && by_a.len() < 1000, "{} by a", by_a.len());
    // The other node carried on: it answered every unit, 200 or 409.
    assert_eq!(answered_by_survivor, 1000);
    let a_set: HashSet<&String> = by_a.iter().collect();
    assert!(
        by_b.iter().all(|u| !a_set.contains(u)),
        "no unit paid twice"
    );
    // Everything acknowledged is in the ledger, and every unit is in it once.
    let in_db = recorded(&url);
    assert!(by_a.iter().chain(&by_b).all(|u| in_db.contains(u)));
    assert_eq!(in_db.len(), 1000);
    let log = verify(&url, &a, &b);
    assert_eq!(
        (&log["ok"], &log["log"]["size"]),
        (&true.into(), &(3 * 1000).into()),
        "{log}"
    );
    // Node a restarted: what it acknowledged is refused, not paid again.
    drop(victim);
    let again = serve(&a, &url);
    let (status, e) = post(
        &agent(),
        &again,
        "/v1/redemptions",
        json!({ "id": by_a[0] }),
    );
    assert_eq!(
        (status, &e["error"]),
        (409, &json!("already_redeemed")),
        "{e}"
    );
    assert_heads_verify(&url, &[(&a, &again), (&b, &survivor)]);
}

#[test]
fn pg_sixteen_buyers_on_two_serve_nodes_get_a_thousand_distinct_units_in_order() {
    let Some((_pg, _dir, a, b, url)) =
        migrated("pg_sixteen_buyers_on_two_serve_nodes_get_a_thousand_distinct_units…")
    else {
        return;
    };
    // Each node holds the closed emission's files.
    for store in [&a, &b] {
        issuer(store, &["close", "--emission", "2"]).expect_code(0);
    }
    let servers = [serve(&a, &url), serve(&b, &url)];
    const CLIENTS: usize = 16;
    const SALES: usize = 1000;
    let left = std::sync::atomic::AtomicUsize::new(SALES);
    let sold: Vec<serde_json::Value> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (server, left) = (&servers[c % 2], &left);
                s.spawn(move || {
                    let agent = agent();
                    let mut mine = Vec::new();
                    while left
                        .fetch_update(
                            std::sync::atomic::Ordering::SeqCst,
                            std::sync::atomic::Ordering::SeqCst,
                            |n| n.checked_sub(1),
                        )
                        .is_ok()
                    {
                        let (status, sale) = post(
                            &agent,
                            server,
                            "/v1/sales",
                            json!({"game": "tresors-ensables", "price": "1"}),
                        );
                        assert_eq!(status, 200, "{sale}");
                        // The board only: no dice, no chest values.
                        let unit = sale["unit"].as_object().unwrap();
                        assert!(unit.keys().eq(["board", "life"]), "{sale}");
                        mine.push(sale);
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(sold.len(), SALES);
    let indices: HashSet<u64> = sold.iter().map(|v| v["index"].as_u64().unwrap()).collect();
    assert_eq!(
        indices,
        (0..SALES as u64).collect(),
        "none skipped, none twice"
    );
    let ids: HashSet<&str> = sold.iter().map(|v| v["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), SALES);
    for (i, v) in sold.iter().enumerate().take(20) {
        assert_eq!(
            v["id"],
            id(&a, v["index"].as_u64().unwrap() as u32),
            "sale {i}"
        );
    }
    let in_db: i64 = sql(&url)
        .query_one("SELECT COUNT(*) FROM sales", &[])
        .unwrap()
        .get(0);
    assert_eq!(in_db, SALES as i64);
    let log = verify(&url, &a, &b);
    assert_eq!(log["ok"], true, "{log}");
    assert_eq!(log["log"]["size"], SALES);
    for mut server in servers {
        assert_eq!(server.terminate(), Some(0));
    }
}

/// A POST to `server` under an idempotency key; (status, body).
fn post_keyed(server: &Server, path: &str, key: &str, body: serde_json::Value) -> (u16, String) {
    let mut response = agent()
        .post(server.url(path))
        .header("Authorization", format!("Bearer {TOKEN}"))
        .header("Idempotency-Key", key)
        .send(body.to_string())
        .unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

/// Issue 19: sixteen clients retrying four keys over two nodes make four
/// sales, each answered the same to every client and found by its key on
/// either node; a version 2 ledger is refused until `ledger migrate`
/// upgrades it, and its log still verifies.
#[test]
fn pg_keys_sell_once_across_two_nodes_and_a_version_2_ledger_migrates() {
    let Some((_pg, _dir, a, b, url)) =
        migrated("pg_keys_sell_once_across_two_nodes_and_a_version_2_ledger_migrates")
    else {
        return;
    };
    for store in [&a, &b] {
        issuer(store, &["close", "--emission", "2"]).expect_code(0);
    }
    // A version 2 ledger with a sale in it (as before issue 19).
    issuer(
        &a,
        &["sell", "--game", "tresors-ensables", "--ledger", &url],
    )
    .expect_code(0);
    // A ledger of version 2 had no identity, and its emissions no binding.
    for node in [&a, &b] {
        let _ = std::fs::remove_file(node.join("emissions/tresors-ensables/e000002/ledger.json"));
    }
    sql(&url)
        .batch_execute(
            "DROP TABLE idempotency;
             DROP TABLE ledger_identity;
             DROP TABLE operator_actions;
             DROP SEQUENCE log_pending CASCADE;
             DROP TABLE log_tiles;
             ALTER TABLE redemptions DROP COLUMN pending;
             ALTER TABLE sales DROP COLUMN pending, DROP COLUMN lane;
             ALTER TABLE plays DROP COLUMN pending;
             ALTER TABLE claims_ended DROP COLUMN seq, DROP COLUMN leaf_hash, DROP COLUMN pending;
             INSERT INTO claims_ended (game, emission, statement, ended_at)
                 VALUES ('tresors-ensables', 9, 'an older end of claims', '2026-01-01T00:00:00Z');
             UPDATE ledger_schema SET version = 2",
        )
        .unwrap();
    let refused = issuer(
        &a,
        &["sell", "--game", "tresors-ensables", "--ledger", &url],
    );
    assert_eq!(refused.code, 3, "{}", refused.stdout);
    assert!(
        refused.stderr.contains("ledger migrate"),
        "{}",
        refused.stderr
    );
    let migrated = issuer(&a, &["ledger", "migrate", "--ledger", &url, "--json"])
        .expect_code(0)
        .json();
    assert_eq!(
        (
            migrated["from_version"].as_i64(),
            migrated["to_version"].as_i64()
        ),
        (Some(2), Some(10)),
        "{migrated}"
    );

    let servers = [serve(&a, &url), serve(&b, &url)];
    let answers: Vec<(usize, (u16, String))> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..16)
            .map(|c| {
                let server = &servers[c % 2];
                s.spawn(move || {
                    let key = format!("sale-{}", c % 4);
                    (
                        c % 4,
                        post_keyed(
                            server,
                            "/v1/sales",
                            &key,
                            json!({"game": "tresors-ensables"}),
                        ),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (key, (status, body)) in &answers {
        assert_eq!(*status, 200, "{body}");
        let first = &answers.iter().find(|(k, _)| k == key).unwrap().1 .1;
        assert_eq!(body, first, "key {key}: every client gets the first answer");
    }
    let in_db: i64 = sql(&url)
        .query_one("SELECT COUNT(*) FROM sales", &[])
        .unwrap()
        .get(0);
    assert_eq!(
        in_db,
        1 + 4,
        "the sale before the migration and one per key"
    );
    // Found by its key on the other node, the same sale.
    let (status, found) = get(&agent(), &servers[1], "/v1/sales/sale-0");
    assert_eq!(status, 200, "{found}");
    let found: serde_json::Value = serde_json::from_str(&found).unwrap();
    let first: serde_json::Value =
        serde_json::from_str(&answers.iter().find(|(k, _)| *k == 0).unwrap().1 .1).unwrap();
    assert_eq!(found["id"], first["id"]);
    assert_eq!(found["sold_at"], first["sold_at"]);
    // Milliseconds, as on SQLite: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    let at = first["sold_at"].as_str().unwrap();
    assert_eq!((at.len(), &at[19..20], &at[23..]), (24, ".", "Z"), "{at}");
    // A roll under a key on one node, retried on the other: one step.
    let id = first["id"].as_str().unwrap();
    let path = format!("/v1/plays/{id}/roll");
    let one = post_keyed(&servers[0], &path, "roll-a", json!({"roll": 1}));
    assert_eq!(one.0, 200, "{}", one.1);
    assert_eq!(
        post_keyed(&servers[1], &path, "roll-a", json!({"roll": 1})),
        one
    );
    let reused = post_keyed(&servers[1], &path, "roll-a", json!({"roll": 2}));
    assert_eq!(reused.0, 422, "{}", reused.1);
    let log = verify(&url, &a, &b);
    assert_eq!(log["ok"], true, "{log}");
    // The end of claims published before issue 21 was queued by the
    // migration and sequenced first (at entry 1, after the older sale).
    let adopted: Option<i64> = sql(&url)
        .query_one("SELECT seq FROM claims_ended WHERE emission = 9", &[])
        .unwrap()
        .get(0);
    assert_eq!(adopted, Some(1));
    for mut server in servers {
        assert_eq!(server.terminate(), Some(0));
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`: the ledger's time format (docs/REDEMPTION.md
/// §Tamper-evident log).
fn is_millisecond_time(t: &str) -> bool {
    t.len() == 24
        && t.bytes().enumerate().all(|(i, c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'.',
            23 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// Contract 19: a PostgreSQL ledger writes its times as the SQLite one
/// does, to the millisecond (`…:SS.mmmZ`, UTC; before, to the microsecond),
/// in every log line and head. A ledger holding an entry written before,
/// with a microsecond time, still verifies: each leaf is recomputed from
/// the time string as stored (the same row whose stored leaf was made
/// from its time rounded to milliseconds is caught as edited).
#[test]
fn pg_times_have_milliseconds_and_an_old_microsecond_entry_still_verifies() {
    use ticket_issuer::ledger::log::{verifier_key, LedgerKey, LogEntry, Place};

    let Some((_pg, _dir, a, b, url)) =
        migrated("pg_times_have_milliseconds_and_an_old_microsecond_entry_still_verifies")
    else {
        return;
    };
    let ids = [id(&a, 0), id(&a, 1)];
    sellable(&a, Some(&url), &ids);
    issuer(&a, &["redeem", &ids[0], "--ledger", &url]).expect_code(0);
    issuer(
        &a,
        &["sell", "--game", "tresors-ensables", "--ledger", &url],
    )
    .expect_code(0);
    let times: Vec<String> = sql(&url)
        .query(
            "SELECT redeemed_at FROM redemptions UNION ALL SELECT sold_at FROM sales
             UNION ALL SELECT updated_at FROM plays UNION ALL SELECT ended_at FROM plays
             UNION ALL SELECT signed_at FROM ledger_heads",
            &[],
        )
        .unwrap()
        .iter()
        .filter_map(|r| r.get::<_, Option<String>>(0))
        .collect();
    assert!(times.len() >= 8, "{times:?}");
    for t in &times {
        assert!(
            is_millisecond_time(t),
            "{t:?} is not YYYY-MM-DDTHH:MM:SS.mmmZ"
        );
    }

    // An entry as the ledger wrote it before: a sale at a microsecond time,
    // under a head signed over it.
    let old = "2026-11-30T20:15:05.584123Z";
    let seq = leaf_hashes(&url).len() as i64;
    let place = Place {
        game: "tresors-ensables",
        emission: 2,
        block: 1,
        index: 2999,
    };
    let leaf = LogEntry::Sale {
        unit: place,
        sold_at: old,
    }
    .leaf(seq as u64);
    let mut db = sql(&url);
    db.execute(
        "INSERT INTO sales (game, emission, block, unit_index, sold_at, seq, leaf_hash)
         VALUES ('tresors-ensables', 2, 1, 2999, $1, $2, $3)",
        &[&old, &seq, &&leaf[..]],
    )
    .unwrap();
    let root = mth(&leaf_hashes(&url));
    let key = LedgerKey::from_signing(Store::new(&a).ledger_signing_key().unwrap());
    db.execute(
        "INSERT INTO ledger_heads (size, root, signed_at, checkpoint, signer)
         VALUES ($1, $2, $3, $4, $5)",
        &[
            &(seq + 1),
            &&root[..],
            &old,
            &key.sign_checkpoint(seq as u64 + 1, &root),
            &verifier_key(&key.public()),
        ],
    )
    .unwrap();
    let log = verify(&url, &a, &b);
    assert_eq!(log["ok"], true, "{log}");
    assert_eq!(log["log"]["size"], seq + 1, "{log}");
    assert_eq!(log["log"]["last_head_size"], seq + 1, "{log}");

    // The same row holding its time rounded to milliseconds no longer
    // hashes to its leaf.
    db.execute(
        "UPDATE sales SET sold_at = '2026-11-30T20:15:05.584Z' WHERE seq = $1",
        &[&seq],
    )
    .unwrap();
    let ka = a.join("keys/ledger.pub.pem").display().to_string();
    let run = issuer(
        &a,
        &[
            "ledger",
            "verify",
            "--ledger",
            &url,
            "--json",
            "--ledger-key",
            &ka,
        ],
    )
    .expect_code(1);
    let report = run.json();
    assert_eq!(report["ok"], false, "{report}");
    assert!(
        report["log"]["findings"][0]["problem"]
            .as_str()
            .unwrap()
            .contains(&format!("entry {seq} (")),
        "{report}"
    );
}

/// Issue 21: on PostgreSQL an operation is answered once durable, queued
/// for the sequencer (`sequenced: false`); the unit's check shows its log
/// index once the sequencer placed it, within the bound, and the index is
/// the one its inclusion proof names.
#[test]
fn pg_an_answer_is_durable_then_sequenced_and_the_unit_shows_its_log_index() {
    let Some((_pg, _dir, a, b, url)) = migrated("pg_an_answer_is_durable_then_sequenced…") else {
        return;
    };
    let unit = id(&a, 10);
    sellable(&a, Some(&url), std::slice::from_ref(&unit));
    let server = serve(&a, &url);
    let (status, paid) = post(&agent(), &server, "/v1/redemptions", json!({"id": unit}));
    assert_eq!(status, 200, "{paid}");
    assert_eq!(paid["ledger_entry"], json!({"sequenced": false}), "{paid}");
    let in_db: Option<i64> = sql(&url)
        .query_one("SELECT seq FROM redemptions", &[])
        .unwrap()
        .get(0);
    let started = Instant::now();
    let entry = loop {
        let (status, body) = get(&agent(), &server, &format!("/v1/units/{unit}"));
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        if v["ledger_entry"]["sequenced"] == true {
            break v["ledger_entry"].clone();
        }
        assert_eq!(v["ledger_entry"], json!({"sequenced": false}), "{v}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "not sequenced within 2 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Answered before it was sequenced (the row had no seq then, or the
    // sequencer was quicker than this read: either way durable first).
    assert!(in_db.is_none() || in_db == entry["seq"].as_i64());
    // Its sale, the end of its play, then the redemption.
    assert_eq!(entry["seq"], 2, "{entry}");
    let proof = issuer(
        &b,
        &[
            "ledger", "prove", "--unit", &unit, "--ledger", &url, "--json",
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(proof["leaf_index"], entry["seq"], "{proof}");
    drop(server);
    let log = verify(&url, &a, &b);
    assert_eq!((&log["ok"], &log["log"]["size"]), (&json!(true), &json!(3)));
}

/// Issue 21: with no lock shared by every operation, an end of claims
/// published while two nodes redeem still stops every later payment and
/// follows every earlier one in the log: no redemption entry of the
/// emission comes after its end of claims.
#[test]
fn pg_an_end_of_claims_during_redemptions_follows_every_payment_in_the_log() {
    let Some((_pg, _dir, a, b, url)) = migrated("pg_an_end_of_claims_during_redemptions…") else {
        return;
    };
    const UNITS: u32 = 300;
    let ids: Vec<String> = (0..UNITS).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &ids);
    let ids: Vec<UnitId> = ids.iter().map(|i| i.parse().unwrap()).collect();
    let nodes = [node(&a, &url), node(&b, &url)];
    let (paid, closed) = (Mutex::new(0u32), Mutex::new(0u32));
    // Once the end of claims is under way, the clients pace themselves so
    // that the command (a process of its own) lands among the payments on
    // any machine, however fast the redemptions are.
    let ending = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for client in 0..4usize {
            let (node, ids, paid, closed, ending) =
                (&nodes[client % 2], &ids, &paid, &closed, &ending);
            scope.spawn(move || {
                for id in ids.iter().skip(client).step_by(4) {
                    if ending.load(std::sync::atomic::Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(40));
                    }
                    match node.redeem(id, None) {
                        Ok(_) => *paid.lock().unwrap() += 1,
                        Err(e) if e.code() == "emission_closed" => {
                            *closed.lock().unwrap() += 1;
                        }
                        Err(e) => panic!("{id}: {e}"),
                    }
                }
            });
        }
        // Mid-way: once some are paid.
        let deadline = Instant::now() + Duration::from_secs(60);
        while *paid.lock().unwrap() < 20 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        ending.store(true, std::sync::atomic::Ordering::Relaxed);
        issuer(
            &a,
            &[
                "end-claims",
                "--emission",
                "2",
                "--force",
                "--reason",
                "no claim deadline set",
                "--ledger",
                &url,
            ],
        )
        .expect_code(0);
    });
    let (paid, closed) = (paid.into_inner().unwrap(), closed.into_inner().unwrap());
    assert_eq!(paid + closed, UNITS);
    assert!(
        closed > 0,
        "the end of claims came after every payment: {paid} paid"
    );
    drop(nodes);
    let log = verify(&url, &a, &b);
    assert_eq!(log["ok"], true, "{log}");
    let mut db = sql(&url);
    let claims: i64 = db
        .query_one("SELECT seq FROM claims_ended WHERE emission = 2", &[])
        .unwrap()
        .get(0);
    let row = db
        .query_one(
            "SELECT COUNT(*), MAX(seq) FROM redemptions WHERE emission = 2",
            &[],
        )
        .unwrap();
    assert_eq!(
        row.get::<_, i64>(0),
        i64::from(paid),
        "every payment answered is recorded"
    );
    let last: Option<i64> = row.get(1);
    assert!(
        last.is_none_or(|last| last < claims),
        "a redemption at {last:?} after the end of claims at {claims}"
    );
}

/// Issue 22: a ledger locked elsewhere (an operator's psql holding a table
/// lock) answers 503 `ledger_unavailable` within about a second, naming
/// the lock, instead of hanging; once the lock is gone the same request
/// is paid.
#[test]
fn pg_a_locked_ledger_answers_503_within_two_seconds_then_pays() {
    let Some((_pg, _dir, a, _b, url)) = migrated("pg_a_locked_ledger…") else {
        return;
    };
    let unit = id(&a, 11);
    sellable(&a, Some(&url), std::slice::from_ref(&unit));
    let server = serve(&a, &url);
    let mut psql = sql(&url);
    let mut locked = psql.transaction().unwrap();
    locked
        .batch_execute("LOCK TABLE redemptions IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let started = Instant::now();
    let (status, body) = post(&agent(), &server, "/v1/redemptions", json!({"id": unit}));
    let took = started.elapsed();
    assert_eq!(status, 503, "{body}");
    assert!(took < Duration::from_secs(2), "answered after {took:?}");
    assert_eq!(body["error"], "ledger_unavailable", "{body}");
    // The platform is told to retry; the database's words are the
    // operator's (issue 34).
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("retry"), "{body}");
    assert!(
        !message.contains("lock") && !message.contains("postgres"),
        "{body}"
    );
    locked.rollback().unwrap();
    let (status, body) = post(&agent(), &server, "/v1/redemptions", json!({"id": unit}));
    assert_eq!(status, 200, "{body}");
}

/// The fenced ```sql blocks of docs/DEPLOY.md, in order.
fn deploy_md_sql() -> Vec<String> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/DEPLOY.md")).unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        let text = line.trim_start();
        match (&mut current, text) {
            (None, "```sql") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(text);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

impl Cluster {
    /// Runs `script` with `psql -U postgres -d DB`, as an operator does
    /// (each statement on its own, stopping at the first error).
    pub(crate) fn psql(&self, db: &str, script: &str) {
        use std::io::Write as _;
        let port = self.port.to_string();
        let mut child = self
            .command("psql")
            .args([
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-p",
                &port,
            ])
            .args(["-U", "postgres", "-d", db])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "psql -d {db}:\n{script}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Password logins over TCP for every role but `postgres`
    /// (scram-sha-256), as a production server has; returns once the
    /// server applies it.
    fn require_passwords(&self) {
        let hba = self.dir.path().join("data/pg_hba.conf");
        std::fs::write(
            &hba,
            "local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n",
        )
        .unwrap();
        sql(&self.url())
            .execute("SELECT pg_reload_conf()", &[])
            .unwrap();
        let probe = format!("postgres://redeem@127.0.0.1:{}/ledger", self.port);
        let deadline = Instant::now() + Duration::from_secs(5);
        while postgres::Client::connect(&probe, postgres::NoTls).is_ok() {
            assert!(Instant::now() < deadline, "pg_hba.conf not applied");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Issue 22: DEPLOY.md's roles and GRANTs, run as written: `ledger
/// migrate` as the owner, the money path as `redeem` (which cannot delete
/// a row or change a table); passwords from PGPASSWORD and a password file;
/// a refused login is `ledger_login_refused` (exit 2, at once, the
/// server's words), and no password is ever printed.
#[test]
fn pg_deploy_md_roles_run_verbatim_migrate_as_the_owner_pay_as_redeem_and_a_refused_login_says_why()
{
    let Some(pg) = Cluster::start("pg_deploy_md_roles_run_verbatim…") else {
        return;
    };
    let blocks = deploy_md_sql();
    assert_eq!(blocks.len(), 2, "DEPLOY.md's two SQL blocks: {blocks:?}");
    pg.psql("postgres", &blocks[0]);
    pg.psql("ledger", &blocks[1]);
    pg.require_passwords();
    let owner = format!("postgres://ledger_owner@127.0.0.1:{}/ledger", pg.port);
    let redeem = format!("postgres://redeem@127.0.0.1:{}/ledger", pg.port);
    let (dir, a, _b) = two_nodes();
    let migrate = ["ledger", "migrate", "--ledger", &owner, "--json"];

    // No password, then a wrong one: refused at once, named, not retried.
    for (env, says) in [
        (&[][..], "password"),
        (
            &[("PGPASSWORD", "not-the-password")][..],
            "password authentication failed for user \"ledger_owner\"",
        ),
    ] {
        let started = Instant::now();
        let run = issuer_env(&a, &migrate, env).expect_code(2);
        assert!(started.elapsed() < Duration::from_secs(3), "said at once");
        let error = run.json();
        assert_eq!(error["error"], "ledger_login_refused", "{error}");
        assert_eq!(error["category"], "invalid_input", "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
        assert!(
            !run.stdout.contains("not-the-password") && !run.stderr.contains("not-the-password")
        );
    }

    // The owner migrates (PGPASSWORD).
    let run = issuer_env(&a, &migrate, &[("PGPASSWORD", "change-me-owner")]).expect_code(0);
    assert_eq!(run.json()["from_version"], 0);
    assert_eq!(run.json()["to_version"], 10);

    // The nodes pay as `redeem` (its password in a URL, in process) ...
    let port = pg.port;
    let with_password = format!("postgres://redeem:change-me-redeem@127.0.0.1:{port}/ledger");
    let ids = [4, 5, 6].map(|i| id(&a, i));
    sellable(&a, Some(&with_password), &ids);
    node(&a, &with_password)
        .redeem(&ids[0].parse().unwrap(), None)
        .unwrap();
    // ... and from the CLI with a password file, never printed.
    let passfile = dir.path().join("pgpass");
    std::fs::write(&passfile, "127.0.0.1:*:ledger:redeem:change-me-redeem\n").unwrap();
    std::fs::set_permissions(
        &passfile,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let file = passfile.display().to_string();
    let env = [("PGPASSFILE", file.as_str())];
    let run = issuer_env(
        &a,
        &["redeem", &ids[1], "--ledger", &redeem, "--json"],
        &env,
    );
    assert_eq!(run.expect_code(0).json()["kind"], "redemption");
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let key = a.join("keys/ledger.pub.pem").display().to_string();
        let args = [
            "ledger",
            "verify",
            "--ledger",
            &redeem,
            "--ledger-key",
            &key,
            "--json",
        ];
        let run = issuer_env(&a, &args, &env).expect_code(0);
        assert!(!run.stdout.contains("change-me"), "{}", run.stdout);
        let log = run.json();
        if log["log"]["pending"] == 0 {
            assert_eq!(log["log"]["ok"], true, "{log}");
            break;
        }
        assert!(Instant::now() < deadline, "sequenced within 2 s: {log}");
        std::thread::sleep(Duration::from_millis(50));
    }

    // `status` reads the shared ledger: sold, played, redeemed per block.
    let status = issuer_env(&a, &["status", "--ledger", &redeem, "--json"], &env);
    let status = status.expect_code(0).json();
    let e = &status["emissions"][0];
    assert_eq!(status["ledger"], redeem, "{status}");
    assert_eq!(
        (e["sold"].as_u64(), e["unsold"].as_u64()),
        (Some(3), Some(2997)),
        "{e}"
    );
    assert_eq!(
        (e["played"].as_u64(), e["redeemed_units"].as_u64()),
        (Some(3), Some(2)),
        "{e}"
    );
    assert_eq!(e["block_status"][0]["redeemed_units"], 2, "{e}");

    // `redeem` can neither delete a row nor change a table.
    let mut db = sql(&with_password);
    for statement in [
        "DELETE FROM redemptions",
        "DELETE FROM claims_ended",
        "DROP TABLE sales",
        "ALTER TABLE plays ADD COLUMN x INT",
        "TRUNCATE ledger_heads",
    ] {
        let e = db.batch_execute(statement).unwrap_err();
        assert_eq!(
            e.code(),
            Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE),
            "{statement}: {e}"
        );
    }
}

/// Issue 22: an emission is sold through one ledger. The first write
/// about it records which (`ledger.json` in its folder); a sale, a play,
/// a redemption or an end of claims through another ledger is refused
/// (`emission_of_another_ledger`, exit 2, nothing recorded), whichever way
/// round; a store from before bindings whose own ledger holds the
/// emission's sales is refused on a shared ledger too.
#[test]
fn pg_an_emission_sold_through_one_ledger_is_refused_through_another() {
    let Some((_pg, _dir, a, b, url)) = migrated("pg_an_emission_sold_through_one_ledger…") else {
        return;
    };
    let sell = |store: &Path, ledger: Option<&str>| {
        let mut args = vec![
            "sell",
            "--game",
            "tresors-ensables",
            "--price",
            "1",
            "--json",
        ];
        if let Some(url) = ledger {
            args.extend(["--ledger", url]);
        }
        issuer(store, &args)
    };
    let refused = |run: crate::common::Run, names: &str| {
        let run = run.expect_code(2);
        let e = run.json();
        assert_eq!(e["error"], "emission_of_another_ledger", "{e}");
        assert!(e["message"].as_str().unwrap().contains(names), "{e}");
    };
    let binding = |store: &Path| store.join("emissions/tresors-ensables/e000002/ledger.json");

    // Node a sells through its store's SQLite ledger: bound to it.
    issuer(&a, &["close", "--emission", "2"]).expect_code(0);
    sell(&a, None).expect_code(0);
    let bound: serde_json::Value =
        serde_json::from_slice(&std::fs::read(binding(&a)).unwrap()).unwrap();
    assert_eq!(bound["kind"], "ticket-issuer emission ledger", "{bound}");
    assert!(
        bound["ledger"].as_str().unwrap().ends_with("ledger.sqlite"),
        "{bound}"
    );
    refused(sell(&a, Some(&url)), "ledger.sqlite");
    let end = ["end-claims", "--emission", "2", "--ledger", &url, "--json"];
    refused(issuer(&a, &end), "ledger.sqlite");
    // A store from before bindings: its own ledger's sales refuse it too.
    std::fs::remove_file(binding(&a)).unwrap();
    refused(sell(&a, Some(&url)), "sales or payments");
    assert!(!binding(&a).exists(), "nothing bound");

    // Node b sells through PostgreSQL: bound to it; its SQLite ledger is
    // refused, and a copy of its emission folder sells through PostgreSQL.
    issuer(&b, &["close", "--emission", "2"]).expect_code(0);
    let first = sell(&b, Some(&url)).expect_code(0).json();
    refused(sell(&b, None), "postgres://");
    assert!(!b.join("ledger.sqlite").exists(), "nothing recorded there");
    let c = b.parent().unwrap().join("node-c");
    copy_tree(&b, &c);
    let next = sell(&c, Some(&url)).expect_code(0).json();
    assert_ne!(
        first["id"], next["id"],
        "one ledger: never the same unit twice"
    );
}

/// Issue 22: a password given in the ledger URL, in any of libpq's forms,
/// is never printed: not in words, not in JSON (`ledger` fields), not in
/// an error, reachable database or not.
#[test]
fn pg_no_password_in_any_output() {
    let Some((pg, _dir, a, _b, _url)) = migrated("pg_no_password_in_any_output") else {
        return;
    };
    let port = pg.port;
    let urls = [
        format!("postgres://postgres:s3cretA@127.0.0.1:{port}/postgres"),
        format!("postgres://postgres@127.0.0.1:{port}/postgres?password=s3cretB"),
        format!("host=127.0.0.1 port={port} user=postgres password=s3cretC dbname=postgres"),
        // Unreachable: the error names the ledger, not its password.
        "postgres://postgres:s3cretD@127.0.0.1:1/postgres".to_string(),
        "host=127.0.0.1 port=1 user=postgres password='s3cret E' dbname=postgres".to_string(),
    ];
    for url in &urls {
        for args in [
            &["ledger", "--json"][..],
            &["ledger"],
            &["status", "--json"],
            &["status"],
            &["ledger", "verify", "--json"],
            &["ledger", "head"],
            &["ledger", "migrate", "--json"],
        ] {
            let run = issuer(&a, &[args, &["--ledger", url]].concat());
            for text in [&run.stdout, &run.stderr] {
                assert!(!text.contains("s3cret"), "{args:?} {url}: {text}");
            }
        }
    }
}

/// Issue 21: a PostgreSQL ledger whose tiles are missing (written before
/// tiles, or deleted) gets them back from its leaves: the next sequencer
/// turn back-fills every tile, which then match the log, and proofs read
/// them.
#[test]
fn pg_the_sequencer_back_fills_missing_tiles_from_the_leaves() {
    let Some((_pg, _dir, a, b, url)) = migrated("pg_the_sequencer_back_fills_missing_tiles…")
    else {
        return;
    };
    let units: Vec<String> = (20..26).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &units);
    let first = node(&a, &url);
    for unit in &units[..3] {
        first.redeem(&unit.parse().unwrap(), None).unwrap();
    }
    drop(first);
    verify(&url, &a, &b);
    let tiles = |url: &str| -> i64 {
        sql(url)
            .query_one("SELECT COUNT(*) FROM log_tiles", &[])
            .unwrap()
            .get(0)
    };
    assert!(tiles(&url) > 0);
    // Gone, as on a ledger from before tiles.
    sql(&url).batch_execute("DELETE FROM log_tiles").unwrap();
    let later = node(&a, &url);
    for unit in &units[3..] {
        later.redeem(&unit.parse().unwrap(), None).unwrap();
    }
    drop(later);
    let log = verify(&url, &a, &b);
    assert_eq!(log["ok"], true, "{log}");
    // Every leaf is in a level-0 tile again, as the database holds them.
    let leaves = leaf_hashes(&url);
    let stored: Vec<u8> = sql(&url)
        .query(
            "SELECT hashes FROM log_tiles WHERE level = 0 ORDER BY idx",
            &[],
        )
        .unwrap()
        .iter()
        .flat_map(|r| r.get::<_, Vec<u8>>(0))
        .collect();
    assert_eq!(stored, leaves.concat(), "level-0 tiles are the leaves");
    let proof = issuer(
        &b,
        &[
            "ledger", "prove", "--unit", &units[0], "--ledger", &url, "--json",
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(
        proof["tree_size"].as_u64(),
        Some(leaves.len() as u64),
        "{proof}"
    );
}

/// Two serve nodes on one PostgreSQL ledger, each collecting the
/// cosignatures of one witness that follows both nodes' logs (each node
/// signs the heads it makes with the log's one key), under 8 clients' load:
/// every checkpoint either node publishes meanwhile carries the witness's
/// cosignature and the root of the database's leaves at its size; once
/// the load ends both publish the latest head, and `ledger verify
/// --witness-key` holds (docs/REDEMPTION.md §Cosigned checkpoints).
#[test]
fn pg_two_nodes_publish_checkpoints_their_witness_cosigned_under_load() {
    let Some((_pg, dir, a, b, url)) = migrated("pg_two_nodes_publish_checkpoints…") else {
        return;
    };
    let ledger_key = |s: &Path| Store::new(s).ledger_signing_key().unwrap().verifying_key();
    // One log, one key: the witness is told one log.
    let keys = [ledger_key(&a)];
    assert_eq!(ledger_key(&b), keys[0]);
    let logs: Vec<(String, String)> = keys
        .iter()
        .map(|k| {
            (
                ticket_issuer::ledger::log::origin(k),
                ticket_issuer::ledger::log::verifier_key(k),
            )
        })
        .collect();
    let wdir = dir.path().join("witness");
    std::fs::create_dir_all(&wdir).unwrap();
    let (wkey, wvkey) = crate::witness::keygen(&wdir);
    let witness = crate::witness::Served::start_for(&wkey, &wdir.join("state"), &logs);
    let ids: Vec<String> = (0..400).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &ids);
    let node = |s: &Path| {
        Server::start_with(
            s,
            &[
                "--ledger",
                &url,
                "--witness",
                &witness.url,
                &wvkey,
                "--witness-every",
                "1",
            ],
        )
    };
    let servers = [node(&a), node(&b)];

    // 8 clients redeem 400 IDs while a poller reads both nodes' checkpoints.
    const CLIENTS: usize = 8;
    let done = std::sync::atomic::AtomicBool::new(false);
    let (seen, paid) = std::thread::scope(|s| {
        let poller = s.spawn(|| {
            let agent = agent();
            let mut seen = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                for server in &servers {
                    let (status, note) = get(&agent, server, "/v1/log/checkpoint");
                    if status == 200 {
                        seen.push(note);
                    }
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            seen
        });
        let clients: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (server, ids) = (&servers[c % 2], &ids);
                s.spawn(move || {
                    let agent = agent();
                    ids.iter()
                        .skip(c)
                        .step_by(CLIENTS)
                        .filter(|unit| {
                            let (status, r) =
                                post(&agent, server, "/v1/redemptions", json!({ "id": unit }));
                            assert_eq!(status, 200, "{r}");
                            true
                        })
                        .count()
                })
            })
            .collect();
        let paid: usize = clients.into_iter().map(|h| h.join().unwrap()).sum();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        (poller.join().unwrap(), paid)
    });
    assert_eq!(paid, ids.len());

    // Both nodes end up publishing the latest head, cosigned.
    let latest = || -> u64 {
        sql(&url)
            .query_one("SELECT MAX(size) FROM ledger_heads", &[])
            .unwrap()
            .get::<_, i64>(0) as u64
    };
    let witness_vkey = ticket_issuer::witness::note::Vkey::parse(&wvkey).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let last: Vec<String> = loop {
        let notes: Vec<String> = servers
            .iter()
            .map(|s| get(&agent(), s, "/v1/log/checkpoint").1)
            .collect();
        let size = latest();
        let caught_up = notes.iter().all(|n| {
            keys.iter()
                .find_map(|k| ticket_issuer::ledger::log::open_checkpoint(n, k).ok())
                .is_some_and(|c| c.size == size)
        });
        if caught_up {
            break notes;
        }
        assert!(
            Instant::now() < deadline,
            "never caught up with {size}: {notes:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    // Every checkpoint published, during the load and after: cosigned,
    // signed by a node, and the root of the database's leaves.
    let leaves = leaf_hashes(&url);
    assert!(
        seen.len() > 10,
        "the poller read {} checkpoints",
        seen.len()
    );
    for note in seen.iter().chain(&last) {
        ticket_issuer::witness::cosignature::verify_cosignature(note, &witness_vkey)
            .unwrap_or_else(|e| panic!("{e}: {note}"));
        let key = keys
            .iter()
            .find(|k| ticket_issuer::ledger::log::open_checkpoint(note, k).is_ok())
            .expect("signed by a node");
        let (_, size, root) = open_note(note, key);
        assert_eq!(root, mth(&leaves[..size as usize]), "size {size}");
    }
    let pem = b.join("keys/ledger.pub.pem").display().to_string();
    let verified = issuer(
        &a,
        &[
            "ledger",
            "verify",
            "--ledger",
            &url,
            "--ledger-key",
            &pem,
            "--witness-key",
            &wvkey,
            "--json",
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(verified["witnesses"]["ok"], true, "{verified}");
    drop(witness);
}

/// Issue 35: a dump restored under two running nodes (`pg_dump -Fc`, then
/// `pg_restore --clean`) is found by both within a sequencer turn or two,
/// then `ledger recover` from the published tiles brings it back:
/// every write is refused `ledger_rolled_back`, nothing recorded, and
/// `ledger verify` from either store names the missing entries.
#[test]
fn pg_a_dump_restored_under_two_running_nodes_is_refused_by_both() {
    let Some((pg, dir, a, b, url)) = migrated("pg_a_dump_restored_under_two_running_nodes…")
    else {
        return;
    };
    let ids: Vec<String> = (0..30).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &ids);
    let units: Vec<UnitId> = ids.iter().map(|i| i.parse().unwrap()).collect();
    let nodes = [node(&a, &url), node(&b, &url)];
    for (n, unit) in units[..10].iter().enumerate() {
        nodes[n % 2].redeem(unit, None).unwrap();
    }
    verify(&url, &a, &b);
    let dump = dir.path().join("ledger.dump");
    std::fs::write(&dump, b"").unwrap();
    std::fs::set_permissions(&dump, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    pg.run(
        "pg_dump",
        &["-Fc", "-f", dump.to_str().unwrap(), "-d", &url],
    );
    for (n, unit) in units[10..20].iter().enumerate() {
        nodes[n % 2].redeem(unit, None).unwrap();
    }
    let signed = verify(&url, &a, &b)["log"]["size"].as_u64().unwrap();
    // The log as published (what a mirror keeps).
    let published = dir.path().join("published");
    let out = published.to_str().unwrap();
    issuer(&a, &["ledger", "tiles", "--out", out, "--ledger", &url]).expect_code(0);
    // Both nodes see the latest head within a turn.
    std::thread::sleep(Duration::from_millis(500));
    pg.run(
        "pg_restore",
        &["--clean", "--if-exists", "-d", &url, dump.to_str().unwrap()],
    );
    let restored_at = Instant::now();
    let mut found = [None, None];
    while found.iter().any(Option::is_none) && restored_at.elapsed() < Duration::from_secs(10) {
        for (n, node) in nodes.iter().enumerate() {
            if found[n].is_none() {
                if let Err(e) = node.check_rollback() {
                    assert_eq!(e.code(), "ledger_rolled_back", "{e}");
                    found[n] = Some(restored_at.elapsed());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("pg restore found by the nodes after {found:?}");
    assert!(found.iter().all(Option::is_some), "{found:?}");
    // Every write refused, nothing recorded: the units paid after the dump
    // are not paid again, those never paid are not paid now.
    std::thread::sleep(Duration::from_millis(300));
    for node in &nodes {
        for unit in [&units[15], &units[25]] {
            let e = node.redeem(unit, None).unwrap_err();
            assert_eq!(e.code(), "ledger_rolled_back", "{unit}: {e}");
        }
    }
    for store in [&a, &b] {
        let v = issuer(store, &["ledger", "verify", "--ledger", &url, "--json"])
            .expect_code(1)
            .json();
        let findings = v["log"]["findings"].to_string();
        assert!(findings.contains("are missing"), "{signed}: {v}");
    }
    let mut db = sql(&url);
    let paid: i64 = db
        .query_one("SELECT COUNT(*) FROM redemptions", &[])
        .unwrap()
        .get(0);
    assert_eq!(paid, 10, "nothing was recorded on the restored database");

    // Recovered from the published log while both nodes run: they serve
    // again within a turn, every unit as it was, nothing paid twice.
    let run = issuer(
        &b,
        &[
            "ledger", "recover", "--from", out, "--ledger", &url, "--json",
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(run["ledger_size"], signed, "{run}");
    assert_eq!(run["restored"]["redemptions"], 10, "{run}");
    assert_eq!(run["complete"], true, "{run}");
    let recovered_at = Instant::now();
    while nodes.iter().any(|n| n.check_rollback().is_err()) {
        assert!(
            recovered_at.elapsed() < Duration::from_secs(5),
            "still refused"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "pg recover: both nodes serve {:?} after `ledger recover` returned",
        recovered_at.elapsed()
    );
    for node in &nodes {
        let e = node.redeem(&units[15], None).unwrap_err();
        assert_eq!(e.code(), "already_redeemed", "{e}");
    }
    nodes[0].redeem(&units[25], None).unwrap();
    let e = nodes[1].redeem(&units[25], None).unwrap_err();
    assert_eq!(e.code(), "already_redeemed", "{e}");
    let log = verify(&url, &a, &b);
    assert_eq!(
        (&log["ok"], &log["log"]["size"]),
        (&true.into(), &(signed + 1).into()),
        "{log}"
    );
    let paid: i64 = sql(&url)
        .query_one("SELECT COUNT(*) FROM redemptions", &[])
        .unwrap()
        .get(0);
    assert_eq!(paid, 21);
}

/// Issue 35: every PostgreSQL process stopped (SIGSTOP): a node that has
/// found its ledger silent refuses new requests at once (503
/// `ledger_unavailable`, nothing recorded), answers a write caught in the
/// stall `ledger_outcome_unknown` within its bound, and stops on SIGTERM
/// within the drain whatever the database does; once the database runs
/// again, the node carries on and nothing was paid twice.
#[test]
fn pg_a_stopped_database_is_refused_at_once_and_sigterm_is_honoured() {
    let Some((pg, _dir, a, b, url)) = migrated("pg_a_stopped_database…") else {
        return;
    };
    let ids: Vec<String> = (0..6).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &ids);
    let mut server = serve(&a, &url);
    let http = agent();
    let redeem = |unit: &str| {
        let started = Instant::now();
        let (status, body) = call(
            &http,
            "POST",
            &server.url("/v1/redemptions"),
            Some(TOKEN),
            Some(json!({ "id": unit })),
        )
        .unwrap();
        (status, body, started.elapsed())
    };
    assert_eq!(redeem(&ids[0]).0, 200);
    /// Lets the cluster run again however the test ends.
    struct Stopped<'c>(&'c Cluster);
    impl Drop for Stopped<'_> {
        fn drop(&mut self) {
            self.0.signal_all("CONT");
        }
    }
    pg.signal_all("STOP");
    let stopped_cluster = Stopped(&pg);
    let stopped = Instant::now();
    std::thread::scope(|scope| {
        // A write caught in the stall: answered within the node's bound.
        let caught = scope.spawn(|| redeem(&ids[1]));
        // Within 2 s the node knows: a new request is refused at once.
        std::thread::sleep(Duration::from_secs(2));
        let (status, body, took) = redeem(&ids[2]);
        eprintln!("pg stopped: a request 2 s after the stop took {took:?}");
        assert_eq!(status, 503, "{body}");
        assert!(body.contains("ledger_unavailable"), "{body}");
        assert!(took < Duration::from_millis(500), "{took:?}");
        let (status, body, took) = caught.join().unwrap();
        eprintln!("pg stopped: the write caught in the stall took {took:?}: {body}");
        assert_eq!(status, 503, "{body}");
        assert!(took < Duration::from_secs(12), "{took:?}: {body}");
    });
    assert!(stopped.elapsed() < Duration::from_secs(15));
    // SIGTERM is honoured within the drain (10 s) and the bounded waits.
    let term = Instant::now();
    server.terminate();
    let stop_took = term.elapsed();
    eprintln!("pg stopped: SIGTERM took {stop_took:?}");
    assert!(stop_took < Duration::from_secs(20), "{stop_took:?}");
    drop(stopped_cluster);
    // The database runs again: nothing of the stall was paid, each unit
    // pays once.
    let n = node(&a, &url);
    for unit in &ids[..3] {
        let unit: UnitId = unit.parse().unwrap();
        match n.redeem(&unit, None) {
            Ok(_) | Err(Error::AlreadyRedeemed { .. }) => {}
            Err(e) => panic!("{unit}: {e}"),
        }
        assert!(matches!(
            n.redeem(&unit, None),
            Err(Error::AlreadyRedeemed { .. })
        ));
    }
    drop(n);
    assert_eq!(verify(&url, &a, &b)["ok"], true);
}

/// Issue 35, one log, one identity: the first node to write claims the
/// ledger's log key; every head is signed by it whichever node sequences;
/// a node holding another ledger key is refused at start (`bad_key`, exit
/// 2), naming the remedy, and signs nothing.
#[test]
fn pg_one_ledger_has_one_log_key_and_a_node_with_another_is_refused() {
    let Some((_pg, dir, a, b, url)) = migrated("pg_one_ledger_has_one_log_key…") else {
        return;
    };
    let ids: Vec<String> = (0..40).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &ids);
    let (na, nb) = (node(&a, &url), node(&b, &url));
    for (n, unit) in ids.iter().enumerate() {
        let r = if n % 2 == 0 { &na } else { &nb };
        r.redeem(&unit.parse().unwrap(), None).unwrap();
    }
    verify(&url, &a, &b);
    drop((na, nb));
    let signers: Vec<String> = sql(&url)
        .query("SELECT DISTINCT signer FROM ledger_heads", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let key = Store::new(&a).ledger_signing_key().unwrap().verifying_key();
    assert_eq!(signers, [ticket_issuer::ledger::log::verifier_key(&key)]);
    // A third node whose ledger key was made on its own.
    let c = dir.path().join("node-c");
    copy_tree(&a, &c);
    for f in ["keys/ledger.key.pem", "keys/ledger.pub.pem"] {
        std::fs::remove_file(c.join(f)).unwrap();
    }
    let heads = |url: &str| -> i64 {
        sql(url)
            .query_one("SELECT count(*) FROM ledger_heads", &[])
            .unwrap()
            .get(0)
    };
    let before = heads(&url);
    let tokens = c.join("tokens");
    std::fs::write(
        &tokens,
        format!("sales {}:{TOKEN}\n", crate::common::TOKEN_NAME),
    )
    .unwrap();
    std::fs::set_permissions(&tokens, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let t = tokens.display().to_string();
    let serve = [
        "serve",
        "--ledger",
        &url,
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        &t,
    ];
    let said = issuer(&c, &serve).expect_code(2).stderr;
    assert!(
        said.contains("ledger.key.pem")
            && said.contains("not the key of the log")
            && said.contains("DEPLOY.md"),
        "{said}"
    );
    let unit = id(&a, 100);
    let out = issuer(&c, &["redeem", &unit, "--ledger", &url, "--json"]).expect_code(2);
    assert!(out.stdout.contains("bad_key"), "{}", out.stdout);
    assert_eq!(heads(&url), before, "the refused node signed nothing");
}
