//! Issue 35: a failover of a replicated PostgreSQL ledger under load
//! (docs/DEPLOY.md §A replicated PostgreSQL). A primary with a
//! synchronous standby, both throwaway clusters of the test's own
//! (tests/it/pg.rs), two `issuer serve` nodes on the multi-host URL; the
//! primary is killed (SIGKILL, every process of it) under 8 clients'
//! load, the standby promoted and its `synchronous_standby_names`
//! cleared, as DEPLOY.md says; the nodes follow by themselves.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{agent, call, issuer, TOKEN};
use crate::pg::{
    assert_heads_verify, decimal, id, node, recorded, sellable, serve, sql, two_nodes, verify,
    Cluster,
};
use ticket_issuer::unit_id::UnitId;

impl Cluster {
    /// A streaming standby of `primary` named `name`, made as DEPLOY.md
    /// says (`pg_basebackup -R -X stream`); when `synchronous`, the primary's
    /// `synchronous_standby_names` is `FIRST 1 (name)` (set before the
    /// copy, so the standby inherits it, as a standby cloned from a
    /// configured primary does) and `synchronous_commit` is `on`. Returns
    /// once the primary reports the standby `sync`. initdb's default
    /// `pg_hba.conf` lets `postgres` replicate over 127.0.0.1 (trust), and
    /// PostgreSQL 15's defaults have `wal_level = replica` and 10 WAL
    /// senders. Otherwise the standby streams asynchronously (`async`):
    /// the primary acknowledges commits it has not sent.
    pub(crate) fn standby_of(primary: &Cluster, name: &str, synchronous: bool) -> Cluster {
        if synchronous {
            let mut db = sql(&primary.url());
            db.batch_execute(&format!(
                "ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 ({name})'"
            ))
            .unwrap();
            db.batch_execute("ALTER SYSTEM SET synchronous_commit = on")
                .unwrap();
            db.batch_execute("SELECT pg_reload_conf()").unwrap();
        }
        let dir = tempfile::Builder::new()
            .prefix("pg-standby-")
            .tempdir_in("/tmp")
            .unwrap();
        let standby = Cluster {
            dir,
            bin: primary.bin.clone(),
            port: Cluster::free_port(),
        };
        if Cluster::as_root() {
            let chown = std::process::Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(standby.dir.path())
                .status()
                .unwrap();
            assert!(chown.success());
        }
        let port = primary.port.to_string();
        let data = standby.data();
        standby.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                &data,
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync",
            ],
        );
        // The name the standby streams under (its walreceiver's
        // application_name): the one synchronous_standby_names gives.
        let auto = standby.dir.path().join("data/postgresql.auto.conf");
        let mut conf = std::fs::read_to_string(&auto).unwrap();
        assert!(conf.contains("primary_conninfo"), "-R: {conf}");
        assert_eq!(
            conf.contains("synchronous_standby_names"),
            synchronous,
            "{conf}"
        );
        conf.push_str(&format!("cluster_name = '{name}'\n"));
        std::fs::write(&auto, conf).unwrap();
        assert!(standby.dir.path().join("data/standby.signal").exists());
        standby.up();
        let state = if synchronous { "sync" } else { "async" };
        let deadline = Instant::now() + Duration::from_secs(30);
        while primary.sync_state(name).as_deref() != Some(state) {
            assert!(
                Instant::now() < deadline,
                "{name} is not streaming {state} after 30 s: {:?}",
                primary.sync_state(name)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        standby
    }

    /// How the primary streams to the standby `name` (`sync`, `async`,
    /// ...), if it does.
    pub(crate) fn sync_state(&self, name: &str) -> Option<String> {
        sql(&self.url())
            .query_opt(
                "SELECT sync_state FROM pg_stat_replication WHERE application_name = $1",
                &[&name],
            )
            .unwrap()
            .map(|r| r.get(0))
    }

    /// SIGKILL to every process of the cluster, as a crash of its machine
    /// would end them; returns once they are gone. The postmaster is
    /// stopped first (SIGSTOP), so it forks no child between the reading
    /// of its children and the kill. Its `postmaster.pid` is removed
    /// afterwards, so that dropping the cluster does not wait for a
    /// server that is gone.
    pub(crate) fn kill_9(&self) {
        let pid_file = self.dir.path().join("data/postmaster.pid");
        let postmaster = std::fs::read_to_string(&pid_file).unwrap();
        let postmaster = postmaster.lines().next().unwrap().trim().to_string();
        let state = |pid: &str| -> Option<char> {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) S ...`: the state follows the last `)`.
            stat[stat.rfind(')')? + 1..].trim_start().chars().next()
        };
        let kill = |signal: &str, pids: &[String]| {
            let status = std::process::Command::new("kill")
                .arg(format!("-{signal}"))
                .args(pids)
                .status()
                .unwrap();
            assert!(status.success(), "kill -{signal} {pids:?}");
        };
        kill("STOP", std::slice::from_ref(&postmaster));
        let deadline = Instant::now() + Duration::from_secs(10);
        while state(&postmaster) != Some('T') {
            assert!(Instant::now() < deadline, "the postmaster did not stop");
            std::thread::sleep(Duration::from_millis(1));
        }
        let pids = self.pids();
        kill("KILL", &pids);
        // Gone, or a zombie (its parent, not this process, reaps it).
        while pids.iter().any(|p| state(p).is_some_and(|s| s != 'Z')) {
            assert!(Instant::now() < deadline, "{pids:?} still run");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::fs::remove_file(&pid_file).unwrap();
    }

    /// Promotes a standby (`pg_ctl promote`); returns once it accepts
    /// writes.
    pub(crate) fn promote(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-w", "-t", "60", "promote"]);
    }
}

/// The nodes' URL of `primary` and `standby`: `Cluster::url` with both
/// hosts, for the one that takes writes (docs/DEPLOY.md §A replicated
/// PostgreSQL).
fn multi_host(primary: &Cluster, standby: &Cluster) -> String {
    let one = primary.url();
    let host = format!("127.0.0.1:{}/", primary.port);
    assert!(one.contains(&host), "{one}");
    let both = format!("127.0.0.1:{},127.0.0.1:{}/", primary.port, standby.port);
    format!(
        "{}?target_session_attrs=read-write",
        one.replace(&host, &both)
    )
}

/// What the clients were told.
#[derive(Default)]
struct Told {
    /// 200s: when, unit, answer.
    paid: Vec<(Instant, String, Value)>,
    /// 409 `already_redeemed` after an attempt whose outcome was unknown
    /// (its commit did land): unit, answer.
    landed: Vec<(String, Value)>,
    /// Failed attempts (retried), by error code or `transport`.
    retried: BTreeMap<String, usize>,
}

/// The ms since `t0`, signed, for the report.
fn ms(t: Instant, t0: Instant) -> i128 {
    if t >= t0 {
        (t - t0).as_millis() as i128
    } else {
        -((t0 - t).as_millis() as i128)
    }
}

/// Issue 35: a primary with a synchronous standby killed -9 under 8
/// clients' load (1,000 units redeemed over two nodes), the standby
/// promoted: the nodes carry on by themselves on the multi-host URL. No
/// acknowledged payment is lost, none is paid twice (every unit answered
/// once, 200 or, on the retry of an attempt whose outcome was unknown,
/// 409 with the first payment's time and prize), the ledger verifies and
/// both nodes' heads verify. Prints the stall the clients saw.
#[test]
fn pg_failover_to_a_synchronous_standby_under_load_loses_nothing_acknowledged_and_pays_once() {
    let Some(primary) = Cluster::start("pg_failover_to_a_synchronous_standby…") else {
        return;
    };
    let standby = Cluster::standby_of(&primary, "standby1", true);
    let url = multi_host(&primary, &standby);
    let (_dir, a, b) = two_nodes();
    issuer(&a, &["ledger", "migrate", "--ledger", &url]).expect_code(0);
    const UNITS: u32 = 1000;
    const CLIENTS: usize = 8;
    // The primary is killed once this many units are paid.
    const KILL_AT: usize = 300;
    let ids: Vec<String> = (0..UNITS).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &ids);
    let mut servers = [serve(&a, &url), serve(&b, &url)];

    let told = Mutex::new(Told::default());
    let finished = AtomicUsize::new(0);
    // A bound for a machine far too slow, not a timing check.
    let deadline = Instant::now() + Duration::from_secs(240);
    let started = Instant::now();
    let (killed, dead, promoted, cleared) = std::thread::scope(|s| {
        for c in 0..CLIENTS {
            let endpoint = servers[c % 2].url("/v1/redemptions");
            let (told, finished, ids) = (&told, &finished, &ids);
            s.spawn(move || {
                // Counted however the client ends (a failed assertion
                // too): the killer does not wait for it.
                struct Finished<'f>(&'f AtomicUsize);
                impl Drop for Finished<'_> {
                    fn drop(&mut self) {
                        self.0.fetch_add(1, Ordering::SeqCst);
                    }
                }
                let _finished = Finished(finished);
                let agent = agent();
                for unit in ids.iter().skip(c).step_by(CLIENTS) {
                    // An earlier attempt may have been recorded.
                    let mut unsure = false;
                    let mut attempts = Vec::new();
                    loop {
                        assert!(
                            Instant::now() < deadline,
                            "{unit} unanswered after {attempts:?}"
                        );
                        let body = json!({ "id": unit });
                        let answer = call(&agent, "POST", &endpoint, Some(TOKEN), Some(body));
                        let (status, body) = match answer {
                            Ok((status, body)) => (status, serde_json::from_str(&body).unwrap()),
                            Err(e) => {
                                (0, json!({ "error": "transport", "message": e.to_string() }))
                            }
                        };
                        let code = body["error"].as_str().unwrap_or_default().to_string();
                        match (status, code.as_str()) {
                            (200, _) => {
                                told.lock().unwrap().paid.push((
                                    Instant::now(),
                                    unit.clone(),
                                    body,
                                ));
                                break;
                            }
                            (409, "already_redeemed") => {
                                // This client alone sends this unit: only
                                // its own earlier attempt can have paid it.
                                assert!(
                                    unsure,
                                    "{unit}: already redeemed, but no attempt of it may have \
                                     been recorded: {attempts:?} {body}"
                                );
                                told.lock().unwrap().landed.push((unit.clone(), body));
                                break;
                            }
                            (503, "ledger_unavailable" | "overloaded") | (0, _) => {}
                            (503, "ledger_outcome_unknown") => unsure = true,
                            _ => panic!("{unit}: {status} {body} after {attempts:?}"),
                        }
                        // A transport error: the request may have gone
                        // through.
                        unsure |= status == 0;
                        *told
                            .lock()
                            .unwrap()
                            .retried
                            .entry(code.clone())
                            .or_default() += 1;
                        attempts.push(code);
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
            });
        }
        // Kill the primary once a good share is paid, more in flight.
        while told.lock().unwrap().paid.len() < KILL_AT
            && finished.load(Ordering::SeqCst) < CLIENTS
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        // Synchronous to the last: what the primary acknowledged, the
        // standby has.
        assert_eq!(primary.sync_state("standby1").as_deref(), Some("sync"));
        let killed = Instant::now();
        primary.kill_9();
        let dead = Instant::now();
        standby.promote();
        let promoted = Instant::now();
        // DEPLOY.md: clear synchronous_standby_names on the new primary,
        // else every commit waits for a standby that does not exist.
        standby.psql(
            "postgres",
            "ALTER SYSTEM RESET synchronous_standby_names;\nSELECT pg_reload_conf();\n",
        );
        (killed, dead, promoted, Instant::now())
    });
    let told = told.into_inner().unwrap();

    // The stall, as the clients saw it.
    let mut times: Vec<Instant> = told.paid.iter().map(|(t, _, _)| *t).collect();
    times.sort();
    let count =
        |from: Instant, to: Instant| times.iter().filter(|t| **t >= from && **t < to).count();
    let before = count(started, killed);
    let last_before = times.iter().rev().find(|t| **t < killed).copied();
    let first_after = times.iter().find(|t| **t >= promoted).copied();
    let (gap, gap_at) = times.windows(2).map(|w| (w[1] - w[0], w[0])).max().unwrap();
    eprintln!(
        "pg failover: {} paid: {before} before the kill, {} while it was under way (the \
         postmaster stopped, then every process killed, in {} ms), {} between the kill and the \
         promotion, the rest after; {} recorded by an attempt whose outcome was unknown (409 on \
         its retry); attempts retried: {:?}",
        told.paid.len(),
        count(killed, dead),
        ms(dead, killed),
        count(dead, promoted),
        told.landed.len(),
        told.retried
    );
    eprintln!(
        "pg failover: kill at {} ms from the start of the load; the standby promoted (pg_ctl \
         promote -w) {} ms after the kill, its synchronous_standby_names cleared {} ms after",
        ms(killed, started),
        ms(promoted, killed),
        ms(cleared, killed)
    );
    eprintln!(
        "pg failover: last payment before the kill {:?} ms, first after the promotion {:?} ms \
         after the kill ({:?} ms after the clearing); longest gap between two payments {gap:?}, \
         from {} ms after the kill; the last unit answered {} ms after the kill",
        last_before.map(|t| ms(t, killed)),
        first_after.map(|t| ms(t, killed)),
        first_after.map(|t| ms(t, cleared)),
        ms(gap_at, killed),
        ms(*times.last().unwrap(), killed),
    );

    // Every unit answered, paid (200) or found recorded by its retry.
    let answered: HashSet<&String> = told
        .paid
        .iter()
        .map(|(_, u, _)| u)
        .chain(told.landed.iter().map(|(u, _)| u))
        .collect();
    assert_eq!(told.paid.len() + told.landed.len(), ids.len());
    assert_eq!(answered.len(), ids.len(), "each unit answered once");
    assert!(before >= KILL_AT, "killed after {before} payments");
    let after = first_after.expect("the nodes carried on after the promotion");
    assert!(
        after - cleared < Duration::from_secs(30),
        "first payment {:?} after the clearing",
        after - cleared
    );

    // The promoted standby holds every unit once, each as the client
    // was told: the same time and prize (a retry paid again would have
    // been told another time than the row's).
    let rows: HashMap<String, (String, i64)> = sql(&standby.url())
        .query(
            "SELECT unit_id, redeemed_at, prize_cents FROM redemptions",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2))))
        .collect();
    assert_eq!(rows.len(), ids.len(), "1,000 rows, no unit twice");
    let expected: HashSet<String> = ids.iter().cloned().collect();
    assert_eq!(recorded(&standby.url()), expected);
    for (unit, body) in told
        .paid
        .iter()
        .map(|(_, u, b)| (u, b))
        .chain(told.landed.iter().map(|(u, b)| (u, b)))
    {
        let (at, cents) = rows
            .get(unit)
            .unwrap_or_else(|| panic!("{unit} acknowledged but lost: {body}"));
        assert_eq!(body["redeemed_at"], json!(at), "{unit}: {body}");
        assert_eq!(
            decimal(&body["prize"]),
            rust_decimal::Decimal::new(*cents, 2),
            "{unit}: {body}"
        );
    }
    let log = verify(&url, &a, &b);
    assert_eq!(
        (&log["ok"], &log["log"]["size"]),
        (&json!(true), &json!(3 * UNITS)),
        "{log}"
    );
    let sizes = assert_heads_verify(&url, &[(&a, &servers[0]), (&b, &servers[1])]);
    eprintln!("pg failover: the nodes' heads after the load: {sizes:?}");

    // Both nodes stop cleanly; what they said meanwhile.
    for server in &mut servers {
        assert_eq!(server.terminate(), Some(0));
    }
    for (node, server) in ["a", "b"].iter().zip(&servers) {
        let lines = server.stderr_lines();
        let mut said: BTreeMap<String, (usize, i128)> = BTreeMap::new();
        for (t, line) in &lines {
            said.entry(line.clone()).or_insert((0, ms(*t, killed))).0 += 1;
        }
        for (line, (n, first)) in said {
            eprintln!(
                "pg failover: node {node} said {n}x (first {first} ms after the kill): {line}"
            );
        }
    }
}

impl Cluster {
    /// The WAL this primary has written (`pg_current_wal_lsn()`), as text.
    fn wal_lsn(&self) -> String {
        sql(&self.url())
            .query_one("SELECT pg_current_wal_lsn()::text", &[])
            .unwrap()
            .get(0)
    }

    /// Returns once this standby has replayed the WAL up to `lsn`.
    fn replayed(&self, lsn: &str) {
        let mut db = sql(&self.url());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let done: bool = db
                .query_one(
                    "SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), $1::text::pg_lsn) >= 0",
                    &[&lsn],
                )
                .unwrap()
                .get(0);
            if done {
                return;
            }
            assert!(Instant::now() < deadline, "{lsn} not replayed after 30 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The number of rows of `redemptions` in the database of `url`.
fn redemptions(url: &str) -> i64 {
    sql(url)
        .query_one("SELECT COUNT(*) FROM redemptions", &[])
        .unwrap()
        .get(0)
}

/// Issue 35 (4): a primary with an asynchronous standby; the standby's
/// replication cut (it lags), 20 more units paid on the primary alone and
/// the log published; the primary killed -9 and the standby promoted: it
/// lacks those payments. Both nodes, on the multi-host URL, find the log
/// they follow went back and refuse every write (`ledger_rolled_back`,
/// nothing recorded) until `ledger recover` from the published log puts
/// the lost entries back; then they serve again and nothing is paid twice.
#[test]
fn pg_failover_to_an_asynchronous_standby_that_lost_payments_is_refused_until_recovered() {
    let Some(primary) = Cluster::start("pg_failover_to_an_asynchronous_standby…") else {
        return;
    };
    let standby = Cluster::standby_of(&primary, "standby1", false);
    let url = multi_host(&primary, &standby);
    let (dir, a, b) = two_nodes();
    issuer(&a, &["ledger", "migrate", "--ledger", &url]).expect_code(0);
    let ids: Vec<String> = (0..60).map(|i| id(&a, i)).collect();
    sellable(&a, Some(&url), &ids);
    let units: Vec<UnitId> = ids.iter().map(|i| i.parse().unwrap()).collect();
    let nodes = [node(&a, &url), node(&b, &url)];
    for (n, unit) in units[..20].iter().enumerate() {
        nodes[n % 2].redeem(unit, None).unwrap();
    }
    verify(&url, &a, &b);
    standby.replayed(&primary.wal_lsn());
    assert_eq!(redemptions(&standby.url()), 20);

    // The standby cut off: it streams from nowhere.
    let mut db = sql(&standby.url());
    db.batch_execute("ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port=1'")
        .unwrap();
    db.batch_execute("SELECT pg_reload_conf()").unwrap();
    drop(db);
    let deadline = Instant::now() + Duration::from_secs(30);
    while primary.sync_state("standby1").is_some() {
        assert!(Instant::now() < deadline, "the standby still streams");
        std::thread::sleep(Duration::from_millis(20));
    }

    // Acknowledged by the primary alone, sequenced and published.
    for (n, unit) in units[20..40].iter().enumerate() {
        nodes[n % 2].redeem(unit, None).unwrap();
    }
    let signed = verify(&url, &a, &b)["log"]["size"].as_u64().unwrap();
    let published = dir.path().join("published");
    let out = published.to_str().unwrap();
    issuer(&a, &["ledger", "tiles", "--out", out, "--ledger", &url]).expect_code(0);
    // Both nodes remember the latest head within a turn.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(redemptions(&standby.url()), 20, "the standby lags");

    let killed = Instant::now();
    primary.kill_9();
    standby.promote();
    let promoted = killed.elapsed();
    let mut found = [None, None];
    let mut seen: [BTreeMap<String, usize>; 2] = Default::default();
    while found.iter().any(Option::is_none) && killed.elapsed() < Duration::from_secs(30) {
        for (n, node) in nodes.iter().enumerate() {
            if found[n].is_none() {
                match node.check_rollback() {
                    Err(e) if e.code() == "ledger_rolled_back" => found[n] = Some(killed.elapsed()),
                    Err(e) => *seen[n].entry(e.code().to_string()).or_default() += 1,
                    Ok(()) => *seen[n].entry("ok".into()).or_default() += 1,
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "pg async failover: the standby promoted {promoted:?} after the kill; the nodes \
         refused (ledger_rolled_back) {found:?} after the kill; before that: {seen:?}"
    );
    assert!(found.iter().all(Option::is_some), "{found:?} {seen:?}");
    // Every write refused, nothing recorded: the lost units are not paid
    // again, those never paid are not paid now.
    for node in &nodes {
        for unit in [&units[25], &units[50]] {
            let e = node.redeem(unit, None).unwrap_err();
            assert_eq!(e.code(), "ledger_rolled_back", "{unit}: {e}");
        }
    }
    assert_eq!(redemptions(&standby.url()), 20, "nothing recorded");

    // Recovered from the published log while both nodes run.
    let started = Instant::now();
    let run = issuer(
        &b,
        &[
            "ledger", "recover", "--from", out, "--ledger", &url, "--json",
        ],
    )
    .expect_code(0)
    .json();
    let recover_took = started.elapsed();
    assert_eq!(run["ledger_size"], signed, "{run}");
    assert_eq!(run["restored"]["redemptions"], 20, "{run}");
    assert_eq!(run["complete"], true, "{run}");
    let recovered_at = Instant::now();
    while nodes.iter().any(|n| n.check_rollback().is_err()) {
        assert!(
            recovered_at.elapsed() < Duration::from_secs(5),
            "still refused: {:?}",
            nodes.iter().map(|n| n.check_rollback()).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "pg async failover: ledger recover took {recover_took:?}, both nodes served again {:?} \
         after it ended; {}",
        recovered_at.elapsed(),
        run
    );
    for unit in &units[20..40] {
        for node in &nodes {
            let e = node.redeem(unit, None).unwrap_err();
            assert_eq!(e.code(), "already_redeemed", "{unit}: {e}");
        }
    }
    nodes[0].redeem(&units[50], None).unwrap();
    let e = nodes[1].redeem(&units[50], None).unwrap_err();
    assert_eq!(e.code(), "already_redeemed", "{e}");
    let log = verify(&url, &a, &b);
    assert_eq!(
        (&log["ok"], &log["log"]["size"]),
        (&json!(true), &json!(signed + 1)),
        "{log}"
    );
    assert_eq!(redemptions(&standby.url()), 41);
    let expected: HashSet<String> = ids[..40].iter().chain([&ids[50]]).cloned().collect();
    assert_eq!(recorded(&standby.url()), expected);
}
