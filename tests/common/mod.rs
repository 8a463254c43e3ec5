//! Shared test helpers: a temporary store with one generated block, and an
//! independent reading of article 4.5.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use ed25519_dalek::VerifyingKey;
use tempfile::TempDir;
use ticket_issuer::emission::{BlockChoice, Emission};
use ticket_issuer::game::Game;
use ticket_issuer::records_key::KeyAccess;
use ticket_issuer::store::{Secrets, Store};
use ticket_issuer::verify::{verify_block, BlockReport, VerifyOptions};

/// A temporary store holding generated blocks of emission 1.
pub struct Fixture {
    pub dir: TempDir,
    pub store: Store,
    pub secrets: Secrets,
    pub trusted: VerifyingKey,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("store"));
        store.keygen().unwrap();
        let secrets = store.secrets().unwrap();
        let trusted = store.public_key().unwrap();
        Fixture {
            dir,
            store,
            secrets,
            trusted,
        }
    }

    /// Generates block `block` of emission 1 at `price_cents`.
    pub fn block(&self, block: u32, price_cents: u32) -> PathBuf {
        let made = Emission::new(&self.store, Game::IleAuTresor, 1)
            .generate(
                &self.secrets,
                price_cents,
                BlockChoice::Number(block),
                &|_| {},
            )
            .unwrap();
        PathBuf::from(&made[0].summary.path)
    }

    /// A copy of `path` under the temp dir, for tampering.
    pub fn copy(&self, path: &Path, name: &str) -> PathBuf {
        let to = self.dir.path().join(name);
        std::fs::copy(path, &to).unwrap();
        to
    }

    pub fn verify(&self, path: &Path, with_secrets: bool) -> BlockReport {
        self.try_verify(path, with_secrets).unwrap()
    }

    pub fn try_verify(
        &self,
        path: &Path,
        with_secrets: bool,
    ) -> Result<BlockReport, ticket_issuer::Error> {
        let opts = VerifyOptions::new(
            &self.trusted,
            KeyAccess {
                secrets: with_secrets.then_some(&self.secrets),
                file: None,
            },
        );
        verify_block(path, &opts)
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
    let out = Command::new(ISSUER)
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("the issuer binary runs");
    Run {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A fresh folder under the target's temp dir for a test binary's shared
/// fixture, named `<prefix>-<pid>`; folders of finished runs are removed,
/// so concurrent runs never share one.
pub fn fixture_dir(prefix: &str) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let stale = format!("{prefix}-");
    for entry in std::fs::read_dir(base).expect("target tmp dir").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix(&stale) {
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = base.join(format!("{prefix}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Copies the folder `from` to `to`, recursively.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create folder");
    for entry in std::fs::read_dir(from).expect("read folder").flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// A valid ID of the unit at `index` of any emission and block of `store`'s
/// issuer, made with its master secret (also for blocks it does not hold).
pub fn valid_id(store: &Path, emission: u32, block: u32, index: u32) -> String {
    let seed = Store::new(store)
        .secrets()
        .expect("store secrets")
        .block_seed(Game::IleAuTresor, emission, block);
    ticket_issuer::unit_id::UnitId {
        game: Game::IleAuTresor,
        emission,
        block,
        index,
        check_code: ticket_issuer::derive::check_code(&seed, index),
    }
    .to_string()
}
