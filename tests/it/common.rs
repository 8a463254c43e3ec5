//! Shared test helpers: the full-size blocks made once per run and shared,
//! temporary stores and test-size blocks, the binary runner, and an
//! independent reading of article 4.5.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use ed25519_dalek::VerifyingKey;
use serde_json::Value;
use tempfile::TempDir;
use ticket_issuer::block::authentic::AuthenticBlock;
use ticket_issuer::block::build::BlockSpec;
use ticket_issuer::block::writer;
use ticket_issuer::emission::{BlockChoice, Emission};
use ticket_issuer::game::Game;
use ticket_issuer::ledger::ops::PlayAction;
use ticket_issuer::records_key::KeyAccess;
use ticket_issuer::redeemer::PlayView;
use ticket_issuer::store::{Secrets, Store};
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::verify::{verify_block, BlockReport, VerifyOptions};
use ticket_issuer::Redeemer;

/// A store's keys, and what tests do with them.
pub struct StoreKeys {
    pub secrets: Secrets,
    pub trusted: VerifyingKey,
}

impl StoreKeys {
    pub fn of(store: &Store) -> StoreKeys {
        StoreKeys {
            secrets: store.secrets().unwrap(),
            trusted: store.public_key().unwrap(),
        }
    }

    /// Verifies `path` with the public key, and the secrets if
    /// `with_secrets`; test sizes are allowed.
    pub fn try_verify(
        &self,
        path: &Path,
        with_secrets: bool,
    ) -> Result<BlockReport, ticket_issuer::Error> {
        verify_block(
            path,
            &VerifyOptions {
                allow_test_sizes: true,
                ..VerifyOptions::new(&self.trusted, self.access(with_secrets))
            },
        )
    }

    /// `try_verify`, which must read the file.
    pub fn verify(&self, path: &Path, with_secrets: bool) -> BlockReport {
        self.try_verify(path, with_secrets).unwrap()
    }

    /// The secrets as key access, if `with_secrets`.
    pub fn access(&self, with_secrets: bool) -> KeyAccess<'_> {
        KeyAccess {
            secrets: with_secrets.then_some(&self.secrets),
            files: &[],
        }
    }

    /// Opens `path` for export with these keys.
    pub fn authentic(&self, path: &Path) -> Result<AuthenticBlock, ticket_issuer::Error> {
        AuthenticBlock::open(path, &self.trusted, self.access(true), "export")
    }
}

/// A temporary store's keys, for test-size blocks (`test_block`) and
/// files made in its temp dir.
pub struct Fixture {
    pub dir: TempDir,
    keys: StoreKeys,
}

impl std::ops::Deref for Fixture {
    type Target = StoreKeys;
    fn deref(&self) -> &StoreKeys {
        &self.keys
    }
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        store.keygen().unwrap();
        Fixture {
            keys: StoreKeys::of(&store),
            dir,
        }
    }

    /// Writes a test-size block (`TEST_UNITS` units) of emission 1 with this
    /// store's keys, outside any emission folder.
    pub fn test_block(&self, block: u32, price_cents: u32) -> PathBuf {
        self.test_block_of(block, price_cents, TEST_UNITS)
    }

    /// `test_block` with `units` units.
    pub fn test_block_of(&self, block: u32, price_cents: u32, units: u32) -> PathBuf {
        self.test_block_game(Game::ILE_AU_TRESOR, block, price_cents, units)
    }

    /// `test_block_of` for any game.
    pub fn test_block_game(&self, game: Game, block: u32, price_cents: u32, units: u32) -> PathBuf {
        let seed = self.secrets.block_seed(game, 1, block).unwrap().unwrap();
        self.test_block_seeded(game, block, price_cents, units, &seed)
    }

    /// `test_block_game` with its units drawn from `seed` (a fixed seed:
    /// the same units on every run, for a statistical check that must not
    /// depend on the store's fresh keys).
    pub fn test_block_seeded(
        &self,
        game: Game,
        block: u32,
        price_cents: u32,
        units: u32,
        seed: &[u8; 32],
    ) -> PathBuf {
        let spec = BlockSpec {
            game,
            emission: 1,
            block,
            price_cents,
            units,
        };
        let path = self.dir.path().join(format!("test-block-{block}.tkb"));
        writer::make_block(
            spec,
            seed,
            &self.secrets.block_records_key(game, 1, block),
            &self.secrets.signing,
            &path,
        )
        .unwrap();
        path
    }
}

/// Counts of each content among four uncovered chests → the lot name under
/// an independent reading of article 4.5 (`Err` for an illegal set).
pub fn article_4_5(uncovered: &[&str]) -> Result<Option<String>, String> {
    let count = |c: &str| uncovered.iter().filter(|u| **u == c).count();
    let mut wins = Vec::new();
    for symbol in ["chandelier", "singe", "saphir", "tete_de_mort"] {
        let n = count(symbol);
        let min = if symbol == "chandelier" { 1 } else { 2 };
        if n == 4 {
            return Err(format!("four {symbol}"));
        }
        if n >= min {
            wins.push(format!("{symbol}-{n}"));
        }
    }
    match wins.len() {
        0 => Ok(None),
        1 => Ok(wins.pop()),
        _ => Err(format!("several winning groups {wins:?}")),
    }
}

/// The binary under test.
pub const ISSUER: &str = env!("CARGO_BIN_EXE_issuer");

/// `generate` of block 1 of emission 1 at 1 €, quiet, with a JSON report.
pub const GENERATE_ONE_BLOCK: [&str; 11] = [
    "generate",
    "--game",
    "ile-au-tresor",
    "--emission",
    "1",
    "--block",
    "1",
    "--price",
    "1",
    "--quiet",
    "--json",
];

/// A finished run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Its stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// Asserts the exit code, showing both streams if it differs.
    pub fn expect_code(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "exit code; stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// Runs `issuer --store STORE ARGS…` to completion.
pub fn issuer(store: &Path, args: &[&str]) -> Run {
    issuer_with_input(store, args, "")
}

/// `issuer` with `input` on the command's standard input.
pub fn issuer_with_input(store: &Path, args: &[&str], input: &str) -> Run {
    issuer_in_env(store, args, input, &[])
}

/// `issuer` with these environment variables set beside the test's.
pub fn issuer_env(store: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    issuer_in_env(store, args, "", env)
}

fn issuer_in_env(store: &Path, args: &[&str], input: &str, env: &[(&str, &str)]) -> Run {
    run_binary(Path::new(ISSUER), store, args, input, env)
}

/// Runs `binary --store STORE ARGS…` (`issuer`, or the `third-game`
/// example: the same command line with one more game).
pub fn run_binary(
    binary: &Path,
    store: &Path,
    args: &[&str],
    input: &str,
    env: &[(&str, &str)],
) -> Run {
    let mut child = Command::new(binary)
        .arg("--store")
        .arg(store)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the issuer binary runs");
    let mut stdin = child.stdin.take().expect("piped stdin");
    // A command that does not read its input may exit before it is written.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    let out = child.wait_with_output().expect("the issuer binary ends");
    Run {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs the binary with a deadline, so a command that blocks fails the
/// test instead of hanging it.
pub fn issuer_within(store: &Path, args: &[&str], deadline: Duration) -> Run {
    let mut child = Command::new(ISSUER)
        .arg("--store")
        .arg(store)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("issuer {args:?} still running after {deadline:?}: it blocked");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

// ---------------------------------------------------------------------------
// The order a unit goes through before it is paid (issue 13): its emission
// closed, the unit sold, a Trésors Ensablés unit played
// ---------------------------------------------------------------------------

/// The units of `ids` by (game, emission), in first-seen order.
fn by_emission<'a>(
    ids: impl IntoIterator<Item = &'a UnitId>,
) -> Vec<((Game, u32), Vec<&'a UnitId>)> {
    let mut groups: Vec<((Game, u32), Vec<&UnitId>)> = Vec::new();
    for id in ids {
        let key = (id.game, id.emission);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, units)) => units.push(id),
            None => groups.push((key, vec![id])),
        }
    }
    groups
}

/// Closes the emission of each of `ids` (a closed one stays as it is) and
/// records the units sold with `issuer mark-sold --ids - --platform
/// tests`, in the store's ledger: what a platform does before its players
/// may redeem (the test servers' [`TOKEN`] is that platform's). Each unit
/// must then be sold exactly once (marked now or before).
pub fn sold(store: &Path, ids: &[&str]) {
    sold_on(store, None, ids)
}

/// `sold` on the ledger `ledger` (a PostgreSQL URL), or the store's.
pub fn sold_on(store: &Path, ledger: Option<&str>, ids: &[&str]) {
    let parsed: Vec<UnitId> = ids
        .iter()
        .map(|id| id.parse().unwrap_or_else(|e| panic!("{id}: {e}")))
        .collect();
    for ((game, emission), units) in by_emission(&parsed) {
        let emission = emission.to_string();
        let place = ["--emission", &emission, "--game", game.slug()];
        issuer(store, &[&["close"][..], &place].concat()).expect_code(0);
        let mut args = [
            &[
                "mark-sold",
                "--ids",
                "-",
                "--json",
                "--platform",
                TOKEN_NAME,
            ][..],
            &place,
        ]
        .concat();
        if let Some(url) = ledger {
            args.extend(["--ledger", url]);
        }
        let list: String = units.iter().map(|u| format!("{u}\n")).collect();
        let marked = issuer_with_input(store, &args, &list).expect_code(0).json();
        assert_eq!(marked["kind"], "mark_sold", "{marked}");
        let total = marked["marked"].as_u64().unwrap() + marked["already_sold"].as_u64().unwrap();
        assert_eq!(total, units.len() as u64, "{marked}");
    }
}

/// `sold` through the library, on `redeemer`'s ledger: for tests that
/// redeem in process.
pub fn sold_in(redeemer: &Redeemer, ids: &[UnitId]) {
    let secrets = redeemer.store().secrets().expect("the issuer's secrets");
    for ((game, emission), _) in by_emission(ids) {
        Emission::new(redeemer.store(), game, emission)
            .close(&secrets)
            .expect("the emission closes");
    }
    let marked = redeemer
        .mark_sold(ids, Some(TOKEN_NAME))
        .expect("the units are marked sold");
    assert_eq!(marked.marked + marked.already_sold, ids.len() as u64);
}

/// Plays the sold Trésors Ensablés unit `id` through `issuer play` on
/// `ledger` (or the store's): roll 1, 2, … until the play ends by itself,
/// or `--stop` after `stop` rolls. Returns the last answer (`play` JSON).
pub fn played(
    store: &Path,
    ledger: Option<&str>,
    id: &str,
    stop: Option<u32>,
) -> serde_json::Value {
    let with_ledger = |args: &[&str]| {
        let mut args = [&["play", id, "--json"][..], args].concat();
        if let Some(url) = ledger {
            args.extend(["--ledger", url]);
        }
        issuer(store, &args).expect_code(0).json()
    };
    let mut view = with_ledger(&[]);
    while view["over"] != true {
        let rolls = view["rolls"].as_u64().unwrap() as u32;
        if stop == Some(rolls) {
            view = with_ledger(&["--stop"]);
        } else {
            view = with_ledger(&["--roll", &(rolls + 1).to_string()]);
        }
    }
    assert_eq!(view["end"] == "stopped", stop.is_some(), "{id}: {view}");
    view
}

/// `played` through the library, on `redeemer`'s ledger.
pub fn played_in(redeemer: &Redeemer, id: &UnitId, stop: Option<u32>) -> PlayView {
    let mut view = redeemer.play_state(id).expect("the play's state");
    while !view.over {
        let action = match stop {
            Some(k) if k == view.rolls => PlayAction::Stop,
            _ => PlayAction::Step(view.rolls + 1),
        };
        view = redeemer
            .play(id, action)
            .unwrap_or_else(|e| panic!("{id}: {e}"));
    }
    assert_eq!(
        view.end == Some("stopped"),
        stop.is_some(),
        "{id}: {view:?}"
    );
    view
}

/// A folder under the target's tmp dir named after this test process, so a
/// `static` fixture (never dropped) is cleaned by the next run: folders of
/// processes that have ended are removed first.
pub fn process_dir(prefix: &str) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    for entry in std::fs::read_dir(base).expect("target tmp dir").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix(prefix) {
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = base.join(format!("{prefix}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A store with keys and block 1 of emission 1 at one price, made once per
/// test process and shared by every test: the full-size (450,000-unit)
/// blocks are the expensive part of the suite. Never change it: tests that
/// change anything work on `copy_store` or on a copy of the block file.
pub struct SharedBlock {
    /// The store folder.
    pub store_dir: PathBuf,
    /// The block file.
    pub path: PathBuf,
    keys: StoreKeys,
}

impl std::ops::Deref for SharedBlock {
    type Target = StoreKeys;
    fn deref(&self) -> &StoreKeys {
        &self.keys
    }
}

/// The shared block at `price_cents` (50, 100 or 200).
pub fn shared_block(price_cents: u32) -> &'static SharedBlock {
    static BLOCKS: [OnceLock<SharedBlock>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = match price_cents {
        50 => 0,
        100 => 1,
        200 => 2,
        other => panic!("no shared block at {other} cents"),
    };
    BLOCKS[slot].get_or_init(|| {
        let store_dir = process_dir(&format!("shared-{price_cents}-"));
        let store = Store::new(&store_dir);
        store.keygen().unwrap();
        let keys = StoreKeys::of(&store);
        let made = Emission::new(&store, Game::ILE_AU_TRESOR, 1)
            .generate(&keys.secrets, price_cents, BlockChoice::Number(1), &|_| {})
            .unwrap();
        SharedBlock {
            path: PathBuf::from(&made[0].summary.path),
            store_dir,
            keys,
        }
    })
}

impl SharedBlock {
    /// A private copy of the whole store (keys, emission, manifest) in a
    /// new temp dir; returns the dir, the store and the block in it.
    pub fn copy_store(&self) -> (TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        copy_tree(&self.store_dir, &store);
        let block = store.join(self.path.strip_prefix(&self.store_dir).unwrap());
        (dir, store, block)
    }
}

/// The failure kinds a report lists, as their JSON names, sorted, once each.
pub fn failure_kind_names(report: &BlockReport) -> Vec<String> {
    json_names(report.failures.iter().map(|f| f.kind))
}

/// Kinds (serialised as JSON strings) as names, sorted, once each.
pub fn json_names<T: serde::Serialize>(kinds: impl Iterator<Item = T>) -> Vec<String> {
    let mut names: Vec<String> = kinds
        .map(|k| serde_json::to_value(k).unwrap().as_str().unwrap().into())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Names in a folder, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Copies a folder tree (files and folders only).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Units of the test-size blocks of the structural tests: three chunks,
/// the last one partial, like a full block's.
pub const TEST_UNITS: u32 = 2 * 4096 + 1000;

/// A valid ID of the unit at `index` of any emission and block of `store`'s
/// issuer, made with its master secret (also for blocks it does not hold).
pub fn valid_id(store: &Path, emission: u32, block: u32, index: u32) -> String {
    valid_id_of(store, Game::ILE_AU_TRESOR, emission, block, index)
}

/// `valid_id` for a unit of `game`.
pub fn valid_id_of(store: &Path, game: Game, emission: u32, block: u32, index: u32) -> String {
    let seed = Store::new(store)
        .secrets()
        .expect("store secrets")
        .block_seed(game, emission, block)
        .expect("the block seed")
        .expect("seeded by the master secret");
    ticket_issuer::unit_id::UnitId {
        game,
        emission,
        block,
        index,
        check_code: ticket_issuer::derive::check_code(&seed, index),
    }
    .to_string()
}

// ---------------------------------------------------------------------------
// The real `issuer serve` over 127.0.0.1
// ---------------------------------------------------------------------------

pub const TOKEN: &str = "service-test-token-0123456789";

/// The name of [`TOKEN`] in the servers' token file: its platform's lane,
/// in which `sold` records the units it marks sold.
pub const TOKEN_NAME: &str = "tests";

/// A running `issuer serve`; killed when dropped.
pub struct Server {
    pub child: Child,
    pub base: String,
    /// What it wrote on stderr so far, each line with when it came (read
    /// as it comes: a full pipe would stop the node).
    said: std::sync::Arc<Mutex<Vec<(Instant, String)>>>,
}

impl Server {
    pub fn start(store: &Path) -> Server {
        Server::start_with::<&str>(store, &[])
    }

    /// `start` with more `serve` arguments. The token file is the
    /// store's own (`<store>.tokens`), so servers can share a folder.
    pub fn start_with<S: AsRef<OsStr>>(store: &Path, extra: &[S]) -> Server {
        Server::start_with_tokens(
            store,
            &format!("# test\nsales,metrics {TOKEN_NAME}:{TOKEN}\n"),
            extra,
        )
    }

    /// `start_with` with the token file's text.
    pub fn start_with_tokens<S: AsRef<OsStr>>(store: &Path, text: &str, extra: &[S]) -> Server {
        Server::start_binary(Path::new(ISSUER), store, text, extra)
    }

    /// `binary serve` (`issuer`, or the `third-game` example) of `store`,
    /// with the token file's text and more `serve` arguments.
    pub fn start_binary<S: AsRef<OsStr>>(
        binary: &Path,
        store: &Path,
        text: &str,
        extra: &[S],
    ) -> Server {
        let tokens = store.with_extension("tokens");
        std::fs::write(&tokens, text).unwrap();
        std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut child = Command::new(binary)
            .arg("--store")
            .arg(store)
            .args(["serve", "--listen", "127.0.0.1:0", "--token-file"])
            .arg(&tokens)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| {
                let mut err = String::new();
                child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut err)
                    .unwrap();
                panic!("serve did not start: {line:?} {err}")
            })
            .to_string();
        assert!(base.contains("://127.0.0.1:"), "{base}");
        let said = std::sync::Arc::new(Mutex::new(Vec::new()));
        if let Some(stderr) = child.stderr.take() {
            let said = std::sync::Arc::clone(&said);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let mut said = said.lock().unwrap_or_else(|p| p.into_inner());
                    said.push((Instant::now(), line));
                }
            });
        }
        Server { child, base, said }
    }

    /// What it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr_lines()
            .into_iter()
            .map(|(_, line)| line + "\n")
            .collect()
    }

    /// Its stderr lines so far, each with when it came.
    pub fn stderr_lines(&self) -> Vec<(Instant, String)> {
        self.said.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// SIGTERM, then waits (at most 20 s) for it to drain and exit; its
    /// exit code.
    pub fn terminate(&mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let started = std::time::Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code();
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "serve did not stop"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

/// A request with `token`; (status, body).
pub fn call(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Result<(u16, String), ureq::Error> {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut response = match body {
        Some(body) => {
            let mut r = agent.post(url).content_type("application/json");
            if let Some(a) = &auth {
                r = r.header("Authorization", a);
            }
            r.send(body.to_string())?
        }
        None => {
            assert_eq!(method, "GET");
            let mut r = agent.get(url);
            if let Some(a) = &auth {
                r = r.header("Authorization", a);
            }
            r.call()?
        }
    };
    let status = response.status().as_u16();
    Ok((status, response.body_mut().read_to_string()?))
}

/// A `POST` of `body` to `url` with `token`, under idempotency key `key`:
/// (status, body).
pub fn call_keyed(
    agent: &ureq::Agent,
    url: &str,
    token: &str,
    key: &str,
    body: Value,
) -> (u16, String) {
    let mut response = agent
        .post(url)
        .header("Authorization", &format!("Bearer {token}"))
        .header("Idempotency-Key", key)
        .content_type("application/json")
        .send(body.to_string())
        .unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

pub fn post(agent: &ureq::Agent, server: &Server, path: &str, body: Value) -> (u16, Value) {
    let (status, text) = call(agent, "POST", &server.url(path), Some(TOKEN), Some(body)).unwrap();
    (status, serde_json::from_str(&text).unwrap())
}

pub fn get(agent: &ureq::Agent, server: &Server, path: &str) -> (u16, String) {
    call(agent, "GET", &server.url(path), Some(TOKEN), None).unwrap()
}

/// A store with one closed Trésors Ensablés block of `units` units
/// (emission 1, block 1): (temp dir, store folder).
pub fn te_store(units: u32) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::TempDir::new().unwrap();
    let store = dir.path().join("store");
    issuer(&store, &["keygen"]).expect_code(0);
    let units = units.to_string();
    let generate = [
        "generate",
        "--game",
        "tresors-ensables",
        "--emission",
        "1",
        "--block",
        "1",
        "--units",
        &units,
        "--quiet",
    ];
    issuer(&store, &generate).expect_code(0);
    issuer(&store, &["close", "--emission", "1"]).expect_code(0);
    (dir, store)
}

/// The block file of `te_store`.
pub fn te_block_path(store: &Path) -> PathBuf {
    store.join("emissions/tresors-ensables/e000001/b000001.tkb")
}

/// A redeemer of `store` with its own keys (the master secret when
/// `with_secrets`, else none: a node that holds no key to the records).
pub fn store_redeemer(store: &Path, with_secrets: bool) -> Redeemer {
    let s = Store::new(store);
    Redeemer::new(
        s.clone(),
        ticket_issuer::OwnedKeys {
            public_key: s.public_key().unwrap(),
            secrets: with_secrets.then(|| s.secrets().unwrap()),
            records_keys: Vec::new(),
        },
    )
}

/// `issuer generate` of Trésors Ensablés `emission`, block 1 of `units`
/// units, in `store`.
pub fn generate_te(store: &Path, emission: u32, units: u32) {
    let (emission, units) = (emission.to_string(), units.to_string());
    let args = [
        "generate",
        "--game",
        "tresors-ensables",
        "--emission",
        &emission,
        "--block",
        "1",
        "--units",
        &units,
        "--quiet",
    ];
    issuer(store, &args).expect_code(0);
}

/// English words no French player should read, as whole words in any
/// case (French words English shares, "or", "on", "lot", "case", are not
/// in it).
const ENGLISH: &[&str] = &[
    "unit", "units", "outcome", "roll", "rolls", "throw", "throws", "chest", "chests", "compass",
    "win", "wins", "won", "winner", "winning", "lost", "lose", "losing", "step", "steps",
    "refused", "the", "and", "of", "play", "played", "stop", "stopped", "price", "prices", "sold",
    "verified", "signer", "leaf", "hash", "rules", "prize", "error", "buy", "cash", "check",
    "over", "next", "left", "found", "gold", "silver", "life", "trap", "none", "paid", "redeem",
    "redeemed", "emission", "block", "close", "open", "opened", "nothing", "sale", "sell",
];

/// The English words of `text` a French player would read ([`ENGLISH`]).
pub fn english_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| ENGLISH.contains(&w.to_lowercase().as_str()))
        .map(String::from)
        .collect()
}
