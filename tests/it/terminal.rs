//! `issuer play ID --terminal` driven under tmux (send-keys, capture-pane):
//! what the player is shown ends where the sealed unit says, the terminal
//! is given back (alternate screen left, the shell's next line printed),
//! and without a terminal the command refuses (`not_a_terminal`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{english_words, issuer};

/// What the player reads on the pane: every line but the shell's (the
/// command line and the exit status).
fn player_lines(pane: &str) -> String {
    pane.lines()
        .filter(|l| !l.contains("--terminal") && !l.contains("EXIT="))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asserts the pane shows the player no English word.
fn in_french(pane: &str) {
    let text = player_lines(pane);
    let english = english_words(&text);
    assert!(
        english.is_empty(),
        "English on the player's screen {english:?}:\n{text}"
    );
}

/// "1 lancer", "3 lancers".
fn lancers(n: u32) -> String {
    match n {
        1 => "1 lancer".into(),
        n => format!("{n} lancers"),
    }
}

/// A tmux server of its own (tests run in parallel), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `command` in a detached 160×50 session.
    fn start(name: &str, command: &str) -> Tmux {
        let found = Command::new("tmux").arg("-V").output();
        assert!(
            found.is_ok_and(|o| o.status.success()),
            "tmux is not installed: install it with `apt-get install tmux` (.ci/run does)"
        );
        let tmux = Tmux {
            socket: format!("issuer-test-{}-{name}", std::process::id()),
        };
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "160",
            "-y",
            "50",
            command,
        ]);
        tmux
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &str) {
        self.run(&["send-keys", "-t", "t", keys]);
    }

    fn pane(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", "t"])
    }

    /// Waits (at most 10 s) until the pane holds `text`; returns the pane.
    fn wait_for(&self, text: &str) -> String {
        self.wait_for_any(&[text])
    }

    /// Waits (at most 10 s) until the pane holds one of `texts`.
    fn wait_for_any(&self, texts: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let pane = self.pane();
            if texts.iter().any(|t| pane.contains(t)) {
                return pane;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "none of {texts:?} on the screen:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

/// The command line of `issuer --store STORE play ID --terminal`, then the
/// exit status and whether the alternate screen was left.
fn play_command(store: &Path, id: &str) -> String {
    format!(
        "{} --store {} play {id} --terminal; echo EXIT=$?; sleep 60",
        env!("CARGO_BIN_EXE_issuer"),
        store.display()
    )
}

/// The first unit of `block` whose export line satisfies `wanted`.
fn unit(store: &Path, block: &Path, wanted: impl Fn(&Value) -> bool) -> Value {
    let run = issuer(store, &["export", block.to_str().unwrap()]).expect_code(0);
    run.stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|u| wanted(u))
        .unwrap()
}

#[test]
fn play_in_the_terminal_ends_where_the_sealed_unit_says_and_gives_the_terminal_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let s = |args: &[&str]| issuer(&store, args).expect_code(0);
    s(&["keygen"]);
    s(&[
        "generate",
        "--game",
        "ile-au-tresor",
        "--emission",
        "1",
        "--price",
        "1",
        "--quiet",
    ]);
    s(&[
        "generate",
        "--game",
        "tresors-ensables",
        "--emission",
        "2",
        "--units",
        "2000",
        "--quiet",
    ]);
    let blocks = store.join("emissions");
    // L'île au trésor: a winning unit, one throw per key, to its end.
    let ile = unit(
        &store,
        &blocks.join("ile-au-tresor/e000001/b000001.tkb"),
        |u| u["lot"].is_string(),
    );
    let tmux = Tmux::start("ile", &play_command(&store, ile["id"].as_str().unwrap()));
    in_french(&tmux.wait_for("Entrée : lancer suivant"));
    for throw in 1..=4 {
        tmux.keys("Enter");
        if throw < 4 {
            in_french(&tmux.wait_for(&format!("lancer {throw} :")));
        }
    }
    let end = tmux.wait_for("fin de la partie");
    in_french(&end);
    // The lot in the regulation's words (article 4.5), not its code.
    let lot = ile["lot"].as_str().unwrap();
    let (symbol, count) = lot.rsplit_once('-').unwrap();
    let symbol = symbol.replace("tete_de_mort", "tête de mort");
    let found = match count {
        "1" => format!("1 symbole « {symbol} » découvert : gagnante"),
        n => format!("{n} symboles « {symbol} » découverts : gagnante"),
    };
    assert!(end.contains(&found), "{found}:\n{end}");
    assert!(!end.contains(lot), "no lot code on the screen: {end}");
    // Compass letters as a French player reads them.
    for english in [" SW,", " W,", " NW,"] {
        assert!(!end.contains(&format!("boussole{english}")), "{end}");
    }
    tmux.keys("x");
    let after = tmux.wait_for("EXIT=0");
    assert_eq!(tmux.run(&["display", "-p", "#{alternate_on}"]).trim(), "0");
    // The outcome stays on the terminal once the game is left.
    assert!(after.contains(&found), "{after}");
    drop(tmux);

    // Trésors Ensablés: a unit that reaches the gold chest, stopped right
    // after its first chest; « Arrêter » before it is refused with the
    // rule's words.
    // A unit a stop pays on (by the library's replay): a winning unit may
    // reach the gold chest with no chest opened before, and allow none.
    let replayer = crate::common::store_redeemer(&store, true);
    let te = unit(
        &store,
        &blocks.join("tresors-ensables/e000002/b000001.tkb"),
        |u| {
            let id: ticket_issuer::unit_id::UnitId = u["id"].as_str().unwrap().parse().unwrap();
            (1..60).any(|s| replayer.replay(&id, Some(s)).is_ok_and(|p| p.prize != "0"))
        },
    );
    let id = te["id"].as_str().unwrap();
    let tmux = Tmux::start("te", &play_command(&store, id));
    in_french(&tmux.wait_for("Arrêter · q : quitter"));
    let mut rolls = 0;
    let stopped = loop {
        tmux.keys("l");
        rolls += 1;
        in_french(&tmux.wait_for(&format!("après {}", lancers(rolls))));
        tmux.keys("a");
        let pane = tmux.wait_for_any(&["n'est pas possible", "« Arrêter » après"]);
        in_french(&pane);
        if pane.contains("« Arrêter » après") {
            break pane;
        }
        assert!(pane.contains("premier gain"), "{pane}");
        assert!(rolls < 60, "no chest before the end");
    };
    let replay = issuer(
        &store,
        &[
            "show",
            id,
            "--reveal-all",
            "--stopped-after-rolls",
            &rolls.to_string(),
            "--json",
        ],
    )
    .expect_code(0)
    .json();
    // The prize in French: "0,50 €", not "0.5 €".
    let prize = replay["prize"].as_str().unwrap();
    let cents = ticket_issuer::money::Cents::parse_price(prize).unwrap();
    let french = ticket_issuer::money::Cents::from(cents).french();
    assert!(
        stopped.contains(&format!("gagne {french} €")),
        "{prize} as {french}:\n{stopped}"
    );
    // Ctrl-C in raw mode is a key: the terminal is given back all the
    // same, the outcome left on it.
    tmux.keys("C-c");
    let after = tmux.wait_for("EXIT=0");
    assert_eq!(tmux.run(&["display", "-p", "#{alternate_on}"]).trim(), "0");
    assert!(after.contains(&format!("gagne {french} €")), "{after}");
}

#[test]
fn play_in_the_terminal_refuses_without_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    issuer(&store, &["keygen"]).expect_code(0);
    let run = issuer(
        &store,
        &["play", "TE-2-1-0-Z3SSX41Q", "--terminal", "--json"],
    );
    // --json and --terminal do not go together (a usage error).
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = issuer(&store, &["play", "TE-2-1-0-Z3SSX41Q", "--terminal"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("needs a terminal"), "{}", run.stderr);
    assert!(run.stderr.contains("--steps DIR"), "{}", run.stderr);
}

/// `reveal` without `-o` never prints the seeds onto a terminal: refused
/// (`secret_to_terminal`, exit 2) before anything is revealed, naming
/// `-o FILE` and `-o -`; piped, the seeds go to standard output as asked.
#[test]
fn reveal_refuses_to_print_the_seeds_onto_a_terminal() {
    let (_dir, store) = crate::common::te_store(20);
    issuer(
        &store,
        &[
            "end-claims",
            "--emission",
            "1",
            "--force",
            "--reason",
            "test",
        ],
    )
    .expect_code(0);
    let command = format!(
        "{} --store {} reveal --emission 1; echo EXIT=$?; sleep 60",
        env!("CARGO_BIN_EXE_issuer"),
        store.display()
    );
    let tmux = Tmux::start("reveal", &command);
    let pane = tmux.wait_for("EXIT=");
    assert!(pane.contains("EXIT=2"), "{pane}");
    assert!(
        pane.contains("secret until published") && pane.contains("-o -"),
        "{pane}"
    );
    assert!(!pane.contains("\"seed"), "no seed on the screen: {pane}");
    // Piped (not a terminal): the reveal file on standard output.
    let piped = issuer(&store, &["reveal", "--emission", "1"]).expect_code(0);
    assert!(piped.stdout.contains("\"blocks\""), "{}", piped.stdout);
}
