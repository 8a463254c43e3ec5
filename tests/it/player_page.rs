//! The reference player page (issue 24 (c); docs/API.md §A client that
//! checks what it shows) in headless Chromium (`browser.rs`), against a
//! real `issuer serve --player-page`, driven by clicking its buttons:
//!
//! - a Trésors Ensablés unit bought, rolled until a stop is allowed,
//!   stopped and redeemed; another played to the gold chest; and an L'île
//!   au trésor winner bought, its four throws revealed and redeemed: each
//!   time the page says `verified`, every check passed, and the prize it
//!   shows is the ledger's (`GET /v1/units/{id}`) and the library's replay
//!   of that play;
//! - a proxy written here, between the page and the service, changes one
//!   answer at a time (a byte of the redeemed record; that byte and the
//!   answer's root made to match its proof; the prize answered; a byte of
//!   the sealed header; a byte of the seal; the map or the board sold; the
//!   life a roll shows): the page refuses, its refusal naming the check
//!   that failed, and shows no win; through the same proxy left honest,
//!   the page verifies;
//! - in every run, no console error and no request but to the page's own
//!   origin on 127.0.0.1;
//! - `--player-page` is refused off loopback (exit 2,
//!   `bad_service_config`); without it `/player/` is `404 no_route`; with
//!   it the page's files need no token, carry the policy and the issuer's
//!   key, and the API still needs one; the block route answers the header
//!   and seal as stored.
//!
//! Screenshots go to `<target>/player-screenshots/` (not in git).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::TempDir;
use ticket_issuer::game::Game;
use ticket_issuer::money::Cents;
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;

use crate::browser::{screenshot_dir, Browser, Tab};
use crate::common::{
    agent, call, english_words, generate_te, get, issuer, issuer_within, shared_block, sold,
    store_redeemer, valid_id_of, Server, TOKEN,
};
use crate::redeem::{hash_of, rfc9162_inclusion_root, rfc_leaf_hash, Hash};

/// Units of the Trésors Ensablés block.
const TE_UNITS: u32 = 300;

/// A store with both games on sale: a copy of the shared L'île au trésor
/// block (emission 1, 1 €) and a Trésors Ensablés block (emission
/// [`TE_EMISSION`]: an emission number names one emission in a store),
/// both closed.
fn two_game_store() -> (TempDir, PathBuf) {
    let (dir, store, _) = shared_block(100).copy_store();
    generate_te(&store, TE_EMISSION, TE_UNITS);
    for emission in ["1", "2"] {
        issuer(&store, &["close", "--emission", emission]).expect_code(0);
    }
    (dir, store)
}

/// The Trésors Ensablés emission of [`two_game_store`].
const TE_EMISSION: u32 = 2;

/// The ID of unit `index` of block 1 of `game`'s emission in
/// [`two_game_store`].
fn unit_id(store: &Path, game: Game, index: u32) -> String {
    let emission = if game == Game::TRESORS_ENSABLES {
        TE_EMISSION
    } else {
        1
    };
    valid_id_of(store, game, emission, 1, index)
}

/// Records units 0 … `index` − 1 of `game` as sold, so the next sale is
/// unit `index`.
fn sell_up_to(store: &Path, game: Game, index: u32) {
    let ids: Vec<String> = (0..index).map(|i| unit_id(store, game, i)).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    if !ids.is_empty() {
        sold(store, &ids);
    }
}

/// The first Trésors Ensablés unit a stop is allowed in: (index, the
/// first roll after which it may stop, what it pays stopped there), by
/// the library's replay.
fn first_stoppable(store: &Path) -> (u32, u32, String) {
    let redeemer = store_redeemer(store, true);
    for index in 0..TE_UNITS {
        let id: UnitId = unit_id(store, Game::TRESORS_ENSABLES, index)
            .parse()
            .unwrap();
        for rolls in 1..=60 {
            if let Ok(r) = redeemer.replay(&id, Some(rolls)) {
                return (index, rolls, r.prize);
            }
        }
    }
    panic!("no unit of the block allows a stop")
}

/// The first Trésors Ensablés unit from `from` on that reaches the gold
/// chest alive, played to its end: (index, prize).
fn first_to_gold(store: &Path, from: u32) -> (u32, String) {
    let redeemer = store_redeemer(store, true);
    for index in from..TE_UNITS {
        let id: UnitId = unit_id(store, Game::TRESORS_ENSABLES, index)
            .parse()
            .unwrap();
        let r = redeemer.replay(&id, None).unwrap();
        if r.lot == Some("coffre-or") {
            return (index, r.prize);
        }
    }
    panic!("no unit of the block reaches the gold chest")
}

/// The first winning L'île au trésor unit: (index, lot, prize).
fn first_winner(store: &Path) -> (u32, String, String) {
    let redeemer = store_redeemer(store, true);
    for index in 0..1000 {
        let id: UnitId = unit_id(store, Game::ILE_AU_TRESOR, index).parse().unwrap();
        let r = redeemer.replay(&id, None).unwrap();
        if let Some(lot) = r.lot {
            return (index, lot.to_string(), r.prize);
        }
    }
    panic!("no winner in the first 1,000 units")
}

/// The first losing L'île au trésor unit from `from` on: its index.
fn first_loser(store: &Path, from: u32) -> u32 {
    let redeemer = store_redeemer(store, true);
    (from..from + 1000)
        .find(|&index| {
            let id: UnitId = unit_id(store, Game::ILE_AU_TRESOR, index).parse().unwrap();
            redeemer.replay(&id, None).unwrap().lot.is_none()
        })
        .expect("a loser in 1,000 units")
}

/// A lot of article 4.5 in the player's words: "singe-2" → "2 singes".
fn lot_words(lot: &str) -> String {
    let (symbol, n) = lot.rsplit_once('-').unwrap();
    let (one, many) = match symbol {
        "chandelier" => ("chandelier", "chandeliers"),
        "singe" => ("singe", "singes"),
        "saphir" => ("saphir", "saphirs"),
        _ => ("tête de mort", "têtes de mort"),
    };
    format!("{n} {}", if n == "1" { one } else { many })
}

/// What the page says, for a failure's message.
const REPORT: &str = r#"JSON.stringify({
  phase: document.body.dataset.phase,
  busy: document.body.dataset.busy,
  message: document.getElementById('message').textContent,
  verdict: document.getElementById('verdict').textContent,
  checks: [...document.querySelectorAll('#checks li')].map(li => li.textContent),
})"#;

/// The page open in a tab, driven by its buttons.
struct Page<'b> {
    browser: &'b mut Browser,
    tab: Tab,
}

impl<'b> Page<'b> {
    /// The page of the service at `origin` in a new tab, given the token
    /// in the address's fragment.
    fn open(browser: &'b mut Browser, origin: &str) -> Page<'b> {
        let tab = browser.open(&format!("{origin}/player/#token={TOKEN}"));
        // The shop is GET /v1/games's: listed once the page has asked.
        browser.wait_until(
            &tab,
            "document.body.dataset.phase !== 'loading' && document.body.dataset.busy === 'false'",
            "the games listed",
            REPORT,
        );
        Page { browser, tab }
    }

    /// Clicks button `id`, which must be enabled, and waits until the page
    /// has done what it does.
    fn click(&mut self, id: &str) {
        let clicked = self.browser.evaluate(
            &self.tab,
            &format!(
                "(() => {{ const b = document.getElementById('{id}'); \
                 if (!b || b.disabled || b.hidden) return false; b.click(); return true; }})()"
            ),
        );
        assert_eq!(
            clicked,
            json!(true),
            "#{id} is not enabled: {}",
            self.report()
        );
        self.browser.wait_until(
            &self.tab,
            "document.body.dataset.busy === 'false'",
            &format!("end of #{id}'s work"),
            REPORT,
        );
    }

    fn enabled(&mut self, id: &str) -> bool {
        self.eval(&format!("!document.getElementById('{id}').disabled")) == json!(true)
    }

    fn text(&mut self, id: &str) -> String {
        self.eval(&format!("document.getElementById('{id}').textContent"))
            .as_str()
            .unwrap()
            .to_string()
    }

    fn phase(&mut self) -> String {
        self.eval("document.body.dataset.phase")
            .as_str()
            .unwrap()
            .to_string()
    }

    fn eval(&mut self, expression: &str) -> Value {
        self.browser.evaluate(&self.tab, expression)
    }

    fn report(&mut self) -> Value {
        self.eval(REPORT)
    }

    /// The outcome shown: its text and prize in cents, once verified.
    fn verified_outcome(&mut self) -> (String, u32) {
        assert_eq!(self.phase(), "verified", "{}", self.report());
        assert_eq!(
            self.eval("document.getElementById('verdict').dataset.verdict"),
            json!("verified")
        );
        assert!(self.text("verdict").starts_with("Vérifié : "));
        let cents = self.eval("document.getElementById('outcome-text').dataset.prizeCents");
        let cents: u32 = cents.as_str().unwrap().parse().unwrap();
        // The panel shows what was checked: the signer, the sealed root
        // and the leaf's hash, and every check passed.
        let facts = self.text("facts");
        for fact in ["signataire", "racine scellée", "empreinte du ticket"] {
            assert!(facts.contains(fact), "{facts}");
        }
        let checks = self.eval(
            "[...document.querySelectorAll('#checks li')].map(li => li.className + ' ' + li.dataset.check + ':')",
        );
        let checks: Vec<&str> = checks
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        for name in [
            "seal",
            "signer",
            "header",
            "unit ID",
            "inclusion proof",
            "rules",
            "display",
            "prize",
        ] {
            assert!(
                checks.iter().any(|c| c.starts_with(&format!("ok {name}:"))),
                "check {name} passed: {checks:?}"
            );
        }
        self.in_french();
        (self.text("outcome-text"), cents)
    }

    /// Every word the page shows its player is French: no word of the
    /// English list (common.rs `english_words`) in its visible text.
    fn in_french(&mut self) {
        let shown = self.eval("document.body.innerText");
        let shown = shown.as_str().unwrap();
        let english = english_words(shown);
        assert!(
            english.is_empty(),
            "English on the page {english:?}:\n{shown}"
        );
    }

    /// Plays the Trésors Ensablés unit just bought: rolls until a stop is
    /// allowed, then stops if `stop`, or until it ends by itself; returns
    /// the rolls.
    fn play_tresors(&mut self, stop: bool) -> u32 {
        for _ in 0..=60 {
            if self.phase() != "playing" {
                break;
            }
            if stop && self.enabled("stop") {
                self.click("stop");
                break;
            }
            self.click("roll");
            self.in_french();
        }
        self.play_over();
        let rolls = self.text("rolls");
        rolls.strip_prefix("Lancers : ").unwrap().parse().unwrap()
    }

    /// Reveals the four throws of the L'île au trésor unit just bought:
    /// its « Lancers restants » count down, and it has no « Arrêter ».
    fn play_ile(&mut self) {
        for thrown in 0..4 {
            assert_eq!(self.phase(), "playing", "{}", self.report());
            let left = self.eval("document.getElementById('rolls').dataset.left");
            assert_eq!(left, json!((4 - thrown).to_string()), "{}", self.report());
            assert!(self.text("rolls").starts_with("Lancers restants"));
            assert_eq!(
                self.eval("document.getElementById('stop').hidden"),
                json!(true)
            );
            self.click("roll");
            self.in_french();
        }
        self.play_over();
        assert!(!self.enabled("roll"));
    }

    /// The play is over, in French: a win waits to be cashed (`ended`), a
    /// loss was verified at once (`verified`, or `refused` when its
    /// answers were tampered).
    fn play_over(&mut self) {
        self.in_french();
        let phase = self.phase();
        assert!(
            ["ended", "verified", "refused"].contains(&phase.as_str()),
            "{}",
            self.report()
        );
    }

    /// The page did nothing but talk to `origin`, and logged no error.
    fn assert_quiet(&mut self, origin: &str) {
        let seen = self.browser.seen(&self.tab);
        assert!(
            seen.requests.len() > 3,
            "the page's requests are seen: {:?}",
            seen.requests
        );
        let elsewhere: Vec<&String> = seen
            .requests
            .iter()
            .filter(|r| !r.starts_with(&format!("{origin}/")))
            .collect();
        assert!(elsewhere.is_empty(), "requests elsewhere: {elsewhere:?}");
        assert!(seen.errors.is_empty(), "console: {:?}", seen.errors);
    }
}

/// `GET /v1/units/{id}` on `server`: what the ledger says the unit paid.
fn ledger_prize(server: &Server, id: &str) -> String {
    let (status, text) = get(&agent(), server, &format!("/v1/units/{id}"));
    assert_eq!(status, 200, "{text}");
    let check: Value = serde_json::from_str(&text).unwrap();
    assert!(check["already_redeemed_at"].is_string(), "{check}");
    check["prize"].as_str().unwrap().to_string()
}

#[test]
fn the_player_page_plays_both_games_and_shows_the_verified_prize_the_ledger_paid() {
    let (dir, store) = two_game_store();
    let (te_index, stop, te_prize) = first_stoppable(&store);
    sell_up_to(&store, Game::TRESORS_ENSABLES, te_index);
    let (iat_index, lot, iat_prize) = first_winner(&store);
    sell_up_to(&store, Game::ILE_AU_TRESOR, iat_index);
    let server = Server::start_with(&store, &["--player-page"]);
    let shots = screenshot_dir("player-screenshots");
    let mut browser = Browser::launch(dir.path());
    let mut page = Page::open(&mut browser, &server.base);
    assert_eq!(page.phase(), "choose", "{}", page.report());
    // The token left the address bar, kept in the page only.
    let location = page.eval("window.location.href");
    assert!(!location.as_str().unwrap().contains(TOKEN), "{location}");

    // Trésors Ensablés: buy, roll until a stop is allowed, stop, redeem.
    page.click("buy-tresors-ensables-100");
    assert_eq!(page.phase(), "playing", "{}", page.report());
    let te_id = unit_id(&store, Game::TRESORS_ENSABLES, te_index);
    assert_eq!(page.text("unit-id"), te_id);
    assert_eq!(
        page.eval("document.querySelectorAll('#board .cell').length"),
        json!(61)
    );
    assert_eq!(page.play_tresors(true), stop, "stopped as soon as allowed");
    page.click("redeem");
    let (text, cents) = page.verified_outcome();
    assert_eq!(Cents::from(cents).to_string(), te_prize, "{text}");
    assert_eq!(ledger_prize(&server, &te_id), te_prize);
    assert!(
        cents > 0 && text.starts_with("Gagné : « Arrêter » après"),
        "{text}"
    );
    page.browser
        .save_screenshot(&page.tab, &shots.join("tresors-ensables-verified.png"));

    // A unit played to the gold chest, never stopped.
    let (gold_index, gold_prize) = first_to_gold(&store, te_index + 1);
    sell_up_to(&store, Game::TRESORS_ENSABLES, gold_index);
    page.click("buy-tresors-ensables-100");
    let gold_id = unit_id(&store, Game::TRESORS_ENSABLES, gold_index);
    assert_eq!(page.text("unit-id"), gold_id);
    page.play_tresors(false);
    page.click("redeem");
    let (text, cents) = page.verified_outcome();
    assert_eq!(Cents::from(cents).to_string(), gold_prize, "{text}");
    assert_eq!(ledger_prize(&server, &gold_id), gold_prize);
    assert!(text.starts_with("Gagné : coffre or atteint"), "{text}");

    // L'île au trésor: buy a winner, reveal its four throws, redeem.
    page.click("buy-ile-au-tresor-100");
    let iat_id = unit_id(&store, Game::ILE_AU_TRESOR, iat_index);
    assert_eq!(page.text("unit-id"), iat_id);
    assert_eq!(
        page.eval("document.querySelectorAll('#board .cell').length"),
        json!(64)
    );
    page.play_ile();
    assert_eq!(
        page.eval("document.querySelectorAll('#board .uncovered').length"),
        json!(4)
    );
    page.click("redeem");
    let (text, cents) = page.verified_outcome();
    assert_eq!(Cents::from(cents).to_string(), iat_prize, "{text}");
    assert_eq!(ledger_prize(&server, &iat_id), iat_prize);
    // The lot in the regulation's words, never its code.
    assert!(
        text.starts_with(&format!("Gagné : {}, ", lot_words(&lot))),
        "{text}"
    );
    assert!(!text.contains(&lot), "{text}");
    page.browser
        .save_screenshot(&page.tab, &shots.join("ile-au-tresor-verified.png"));

    // A losing unit: its result verified as soon as its four throws are
    // played, with nothing to cash (no « Encaisser »); nothing is paid.
    page.click("again");
    let loser = first_loser(&store, iat_index + 1);
    sell_up_to(&store, Game::ILE_AU_TRESOR, loser);
    page.click("buy-ile-au-tresor-100");
    let loser_id = unit_id(&store, Game::ILE_AU_TRESOR, loser);
    assert_eq!(page.text("unit-id"), loser_id);
    page.play_ile();
    let (text, cents) = page.verified_outcome();
    assert_eq!(
        (text.as_str(), cents),
        ("Perdu : aucun lot (article 4.6)", 0)
    );
    assert_eq!(
        page.eval("document.getElementById('redeem').hidden"),
        json!(true)
    );
    let (status, unit) = get(&agent(), &server, &format!("/v1/units/{loser_id}"));
    assert_eq!(status, 200, "{unit}");
    assert!(!unit.contains("already_redeemed_at"), "not cashed: {unit}");
    page.browser
        .save_screenshot(&page.tab, &shots.join("ile-au-tresor-lost-verified.png"));

    // Only the prices with units on sale are offered: the store has
    // L'île au trésor at 1 € only.
    for price in [50, 200] {
        assert_eq!(
            page.eval(&format!(
                "document.getElementById('buy-ile-au-tresor-{price}') === null"
            )),
            json!(true),
            "no {price} cents button: {}",
            page.report()
        );
    }

    let origin = server.base.clone();
    page.assert_quiet(&origin);
}

/// The third game on the page with no edit to it: the `third-game`
/// example serves « Dé d'or »'s module (its folder's `de-dor.js`), the page
/// lists it from GET /v1/games, imports it, plays it (stopping when it
/// may), and verifies its outcome against the seal, the proof and the
/// module's replay of the record.
#[test]
fn third_game_on_the_player_page_from_its_own_module() {
    let (dir, store, _) = crate::third_game::dd_store(1_000);
    let server = Server::start_binary(
        &crate::third_game::binary(),
        &store,
        &crate::third_game::tokens(),
        &["--player-page"],
    );
    let mut browser = Browser::launch(dir.path());
    let mut page = Page::open(&mut browser, &server.base);
    assert_eq!(page.phase(), "choose", "{}", page.report());
    let mut stopped = false;
    for _ in 0..6 {
        page.click("buy-de-dor-100");
        assert_eq!(page.phase(), "playing", "{}", page.report());
        let id = page.text("unit-id");
        assert!(id.starts_with("DD-1-1-"), "{id}");
        for _ in 0..4 {
            if page.phase() == "ended" {
                break;
            }
            if page.enabled("stop") && !stopped {
                page.click("stop");
                stopped = true;
                break;
            }
            page.click("roll");
        }
        assert_eq!(page.phase(), "ended", "{}", page.report());
        page.click("redeem");
        let (text, cents) = page.verified_outcome();
        assert_eq!(
            Cents::from(cents).to_string(),
            ledger_prize(&server, &id),
            "{text}"
        );
        page.click("again");
    }
    assert!(stopped, "a stop was played");
    let origin = server.base.clone();
    page.assert_quiet(&origin);
}

/// What the proxy changes in the answers it relays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tamper {
    /// Nothing: an honest relay.
    Nothing,
    /// A byte of the redemption's `record` (in the payload).
    RecordByte,
    /// A byte of the redemption's `record`, and its `merkle_root` made the
    /// root its proof then reaches: a forged tree, consistent but for the
    /// seal.
    ForgedRoot,
    /// The redemption's `prize`, the record untouched.
    Prize,
    /// A byte of the block's sealed `header` (its Merkle root), with the
    /// answer's `merkle_root` made to match.
    HeaderByte,
    /// A byte of the block's `seal`.
    SealByte,
    /// A chest of the map a L'île au trésor sale shows.
    SoldMap,
    /// A square of the board a Trésors Ensablés sale shows.
    SoldBoard,
    /// The life points the first roll's answer shows.
    FirstRollLife,
}

/// An HTTP/1.1 relay to the real service on 127.0.0.1 that changes the
/// answer its mode names: one request a connection, each answered with
/// `Connection: close`.
struct Proxy {
    base: String,
    mode: Arc<Mutex<Tamper>>,
}

impl Proxy {
    fn start(upstream: &str) -> Proxy {
        let upstream: SocketAddr = upstream.strip_prefix("http://").unwrap().parse().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let mode = Arc::new(Mutex::new(Tamper::Nothing));
        let shared = Arc::clone(&mode);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let mode = Arc::clone(&shared);
                // A connection opened and never used ends at its timeout.
                std::thread::spawn(move || relay(client, upstream, &mode));
            }
        });
        Proxy { base, mode }
    }

    fn set(&self, tamper: Tamper) {
        *self.mode.lock().unwrap() = tamper;
    }
}

/// Relays one request of `client` to `upstream` and its answer back,
/// changed as `mode` says.
fn relay(client: TcpStream, upstream: SocketAddr, mode: &Mutex<Tamper>) -> std::io::Result<()> {
    client.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(client.try_clone()?);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(());
    }
    let mut head = format!("{}\r\n", request_line.trim_end());
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let name = line
            .split(':')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if name == "content-length" {
            length = line[15..].trim().parse().unwrap_or(0);
        }
        if name != "connection" && name != "keep-alive" {
            head += &format!("{line}\r\n");
        }
    }
    head += "Connection: close\r\n\r\n";
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut server = TcpStream::connect(upstream)?;
    server.set_read_timeout(Some(Duration::from_secs(30)))?;
    server.write_all(head.as_bytes())?;
    server.write_all(&body)?;
    let mut answer = Vec::new();
    server.read_to_end(&mut answer)?;
    let mut parts = request_line.split(' ');
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let tamper = *mode.lock().unwrap();
    let answer = tampered(tamper, method, path, answer);
    let mut client = client;
    client.write_all(&answer)?;
    client.flush()
}

/// `answer` (a whole HTTP response) with its JSON body changed as
/// `tamper` says, when it is the answer `tamper` is about.
fn tampered(tamper: Tamper, method: &str, path: &str, answer: Vec<u8>) -> Vec<u8> {
    let about = match tamper {
        Tamper::Nothing => false,
        // A loss is verified from the unit's own answer, a win from its
        // redemption's: both are tampered.
        Tamper::RecordByte | Tamper::ForgedRoot | Tamper::Prize => {
            (method == "POST" && path == "/v1/redemptions")
                || (method == "GET" && path.starts_with("/v1/units/"))
        }
        Tamper::HeaderByte | Tamper::SealByte => path.starts_with("/v1/blocks/"),
        Tamper::SoldMap | Tamper::SoldBoard => method == "POST" && path == "/v1/sales",
        Tamper::FirstRollLife => method == "POST" && path.ends_with("/roll"),
    };
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n");
    let (true, Some(split)) = (about, split) else {
        return answer;
    };
    let head = String::from_utf8_lossy(&answer[..split]).to_string();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(!head.to_ascii_lowercase().contains("chunked"), "{head}");
    let mut body: Value = serde_json::from_slice(&answer[split + 4..]).unwrap();
    let flip = |v: &mut Value, at: usize| {
        let mut bytes = hex::decode(v.as_str().unwrap()).unwrap();
        bytes[at] ^= 0x01;
        *v = json!(hex::encode(bytes));
    };
    match tamper {
        Tamper::RecordByte => flip(&mut body["record"], 30),
        Tamper::ForgedRoot => {
            flip(&mut body["record"], 30);
            let record = hex::decode(body["record"].as_str().unwrap()).unwrap();
            let path: Vec<Hash> = body["inclusion_proof"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| hash_of(h.as_str().unwrap()))
                .collect();
            let root = rfc9162_inclusion_root(
                body["leaf_index"].as_u64().unwrap(),
                body["tree_size"].as_u64().unwrap(),
                &rfc_leaf_hash(&record),
                &path,
            )
            .unwrap();
            body["merkle_root"] = json!(hex::encode(root));
        }
        Tamper::Prize => {
            body["prize"] = json!(if body["prize"] == "10000" {
                "9999"
            } else {
                "10000"
            })
        }
        Tamper::HeaderByte => {
            flip(&mut body["header"], 84);
            flip(&mut body["merkle_root"], 0);
        }
        Tamper::SealByte => flip(&mut body["seal"], 0),
        Tamper::SoldMap => {
            let content = &mut body["unit"]["chests"][0]["content"];
            *content = json!(if *content == "chandelier" {
                "vide"
            } else {
                "chandelier"
            });
        }
        Tamper::SoldBoard => {
            let square = &mut body["unit"]["board"][1];
            *square = json!(if *square == "blank" {
                "trap-1"
            } else {
                "blank"
            });
        }
        Tamper::FirstRollLife if body["rolls"] == 1 => {
            let life = body["life"].as_u64().unwrap() % 3 + 1;
            body["life"] = json!(life);
            body["steps"][0]["life"] = json!(life);
        }
        Tamper::FirstRollLife | Tamper::Nothing => {}
    }
    let body = serde_json::to_vec(&body).unwrap();
    let head: Vec<String> = head
        .lines()
        .map(|l| {
            if l.to_ascii_lowercase().starts_with("content-length:") {
                format!("content-length: {}", body.len())
            } else {
                l.to_string()
            }
        })
        .collect();
    let mut out = format!("{}\r\n\r\n", head.join("\r\n")).into_bytes();
    out.extend(body);
    out
}

#[test]
fn a_tampered_answer_is_refused_by_the_page_naming_the_check_and_no_win_is_shown() {
    let (dir, store) = two_game_store();
    let server = Server::start_with(&store, &["--player-page"]);
    let proxy = Proxy::start(&server.base);
    let shots = screenshot_dir("player-screenshots");
    let mut browser = Browser::launch(dir.path());
    let mut page = Page::open(&mut browser, &proxy.base);
    let cases = [
        (
            Tamper::RecordByte,
            "buy-ile-au-tresor-100",
            "inclusion proof",
            "enregistrement",
        ),
        (
            Tamper::ForgedRoot,
            "buy-ile-au-tresor-100",
            "inclusion proof",
            "racine de Merkle scellée",
        ),
        (
            Tamper::Prize,
            "buy-ile-au-tresor-100",
            "prize",
            "la réponse annonce",
        ),
        (
            Tamper::HeaderByte,
            "buy-ile-au-tresor-100",
            "seal",
            "sceau du bloc ne se vérifie pas",
        ),
        (
            Tamper::SealByte,
            "buy-ile-au-tresor-100",
            "seal",
            "sceau du bloc ne se vérifie pas",
        ),
        (
            Tamper::SoldMap,
            "buy-ile-au-tresor-100",
            "display",
            "carte affichée",
        ),
        (
            Tamper::RecordByte,
            "buy-tresors-ensables-100",
            "inclusion proof",
            "enregistrement",
        ),
        (
            Tamper::Prize,
            "buy-tresors-ensables-100",
            "prize",
            "la réponse annonce",
        ),
        (
            Tamper::SoldBoard,
            "buy-tresors-ensables-100",
            "display",
            "plateau affiché",
        ),
        (
            Tamper::FirstRollLife,
            "buy-tresors-ensables-100",
            "display",
            "lancer 1 affiché",
        ),
    ];
    for (tamper, buy, check, words) in cases {
        proxy.set(tamper);
        page.click(buy);
        let id = page.text("unit-id");
        if buy == "buy-tresors-ensables-100" {
            page.play_tresors(true);
        } else {
            page.play_ile();
        }
        // A win is cashed, then checked; a loss was checked at once.
        let cashed = page.eval("!document.getElementById('redeem').hidden") == json!(true);
        if cashed {
            page.click("redeem");
        }
        let report = page.report();
        assert_eq!(page.phase(), "refused", "{tamper:?}: {report}");
        assert_eq!(
            page.eval("document.getElementById('verdict').dataset.verdict"),
            json!("refused")
        );
        let failed = page.eval(
            "[...document.querySelectorAll('#checks li.failed')].map(li => li.dataset.check + '|' + li.textContent)",
        );
        let failed = failed.as_array().unwrap();
        assert_eq!(failed.len(), 1, "{tamper:?}: {report}");
        let failed = failed[0].as_str().unwrap();
        assert!(
            failed.starts_with(&format!("{check}|")) && failed.contains(words),
            "{tamper:?}: the refusal names {check} ({words}): {failed}"
        );
        assert_eq!(
            page.eval("document.getElementById('verdict').dataset.check"),
            json!(check)
        );
        let verdict = page.text("verdict");
        assert!(
            verdict.starts_with("Refusé : la vérification « "),
            "{tamper:?}: {verdict}"
        );
        page.in_french();
        // No outcome is shown, and no win anywhere on the page.
        assert_eq!(
            page.eval("document.getElementById('outcome').hidden"),
            json!(true)
        );
        assert_eq!(page.text("outcome-text"), "", "{tamper:?}");
        let shown = page.eval("document.body.innerText");
        let shown = shown.as_str().unwrap();
        assert!(!shown.contains("Gagné"), "{tamper:?}: {shown}");
        assert!(
            !shown.contains("10\u{202f}000,00"),
            "{tamper:?}: the amount claimed is not shown: {shown}"
        );
        // The service did pay a win: only the page's display was refused.
        if cashed {
            ledger_prize(&server, &id);
        }
        page.browser.save_screenshot(
            &page.tab,
            &shots.join(format!("refused-{tamper:?}-{buy}.png").to_lowercase()),
        );
    }

    // The same relay, honest: the page verifies, so the refusals above
    // are the changes', not the relay's.
    proxy.set(Tamper::Nothing);
    page.click("buy-ile-au-tresor-100");
    page.play_ile();
    if page.eval("!document.getElementById('redeem').hidden") == json!(true) {
        page.click("redeem");
    }
    page.verified_outcome();

    let origin = proxy.base.clone();
    page.assert_quiet(&origin);
}

/// A GET of `url` with `token`: status, the named headers, body.
fn fetch(url: &str, token: Option<&str>, headers: &[&str]) -> (u16, Vec<String>, String) {
    let a = agent();
    let mut request = a.get(url);
    if let Some(t) = token {
        request = request.header("Authorization", &format!("Bearer {t}"));
    }
    let mut response = request.call().unwrap();
    let named = headers
        .iter()
        .map(|h| {
            response
                .headers()
                .get(*h)
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default()
        })
        .collect();
    let status = response.status().as_u16();
    (status, named, response.body_mut().read_to_string().unwrap())
}

#[test]
fn the_player_page_is_served_only_on_loopback_when_asked_and_the_block_route_gives_the_seal() {
    let (_dir, store) = crate::common::te_store(50);

    // Without the flag, there is no page.
    let server = Server::start(&store);
    let (status, _, body) = fetch(&server.url("/player/"), Some(TOKEN), &[]);
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("\"error\":\"no_route\""), "{body}");
    let (status, _, _) = fetch(&server.url("/player/main.js"), None, &[]);
    assert_eq!(status, 401);
    drop(server);

    // Off loopback, the flag is refused, whatever else is given.
    for json in [false, true] {
        let mut args = vec![
            "--listen",
            "0.0.0.0:0",
            "--allow-plain-http",
            "--player-page",
        ];
        if json {
            args.push("--json");
        }
        let tokens = store.with_extension("tokens");
        let serve = [
            &["serve", "--token-file", tokens.to_str().unwrap()][..],
            &args,
        ]
        .concat();
        let run = issuer_within(&store, &serve, Duration::from_secs(20)).expect_code(2);
        let said = if json { &run.stdout } else { &run.stderr };
        assert!(
            said.contains("--player-page") && said.contains("loopback"),
            "{said}"
        );
        if json {
            let error: Value = serde_json::from_str(run.stdout.trim()).unwrap();
            assert_eq!(error["error"], "bad_service_config", "{error}");
        }
    }

    // With it: the page's files need no token, carry the policy, and the
    // page pins the issuer's key; the API still needs a token.
    let server = Server::start_with(&store, &["--player-page"]);
    let key = Store::new(&store).public_key().unwrap().to_bytes();
    let policy = ticket_issuer::service::player::CONTENT_SECURITY_POLICY;
    for (path, kind) in [
        ("/player/", "text/html"),
        ("/player/main.js", "text/javascript"),
        ("/player/format.js", "text/javascript"),
        ("/player/merkle.js", "text/javascript"),
        ("/player/verify.js", "text/javascript"),
        ("/player/api.js", "text/javascript"),
        ("/player/ui.js", "text/javascript"),
        ("/player/games/index.js", "text/javascript"),
        ("/player/games/ile-au-tresor.js", "text/javascript"),
        ("/player/games/tresors-ensables.js", "text/javascript"),
        ("/player/player.css", "text/css"),
        ("/player", "text/html"),
    ] {
        let (status, headers, body) = fetch(
            &server.url(path),
            None,
            &[
                "content-type",
                "content-security-policy",
                "x-content-type-options",
            ],
        );
        assert_eq!(status, 200, "{path}: {body}");
        assert!(headers[0].starts_with(kind), "{path}: {headers:?}");
        assert_eq!(headers[1], policy, "{path}");
        assert_eq!(headers[2], "nosniff", "{path}");
        if kind == "text/html" {
            let pinned = format!(
                "<meta name=\"issuer-public-key\" content=\"{}\">",
                hex::encode(key)
            );
            assert!(body.contains(&pinned), "{path}: the key is pinned");
            assert!(!body.contains("<script>") && !body.contains("style="));
        }
    }
    let block = "/v1/blocks/tresors-ensables/1/1";
    let (status, _, _) = fetch(&server.url(block), None, &[]);
    assert_eq!(status, 401, "the API needs a token");

    // The block route: the header and seal exactly as stored.
    let a = agent();
    let (status, text) = call(&a, "GET", &server.url(block), Some(TOKEN), None).unwrap();
    assert_eq!(status, 200, "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    let file = std::fs::read(crate::common::te_block_path(&store)).unwrap();
    let header_len = usize::from(u16::from_le_bytes([file[10], file[11]]));
    assert_eq!(answer["kind"], "block_seal");
    assert_eq!(answer["schema"], 1);
    assert_eq!(answer["game"], "tresors-ensables");
    assert_eq!(
        (answer["emission"].as_u64(), answer["block"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(answer["header"], hex::encode(&file[..header_len]));
    assert_eq!(answer["seal"], hex::encode(&file[file.len() - 64..]));
    assert_eq!(answer["merkle_root"], hex::encode(&file[84..116]));
    assert_eq!(answer["signer"], hex::encode(key));
    assert_eq!(answer["signer"], hex::encode(&file[180..212]));

    for (path, status, code) in [
        ("/v1/blocks/tresors-ensables/1/9", 404, "unknown_block"),
        ("/v1/blocks/tresors-ensables/7/1", 404, "unknown_emission"),
        ("/v1/blocks/ile-au-tresor/1/1", 404, "unknown_emission"),
        ("/v1/blocks/nope/1/1", 400, "unknown_game"),
        ("/v1/blocks/tresors-ensables/one/1", 400, "invalid_request"),
    ] {
        let (got, text) = call(&a, "GET", &server.url(path), Some(TOKEN), None).unwrap();
        assert_eq!(got, status, "{path}: {text}");
        let error: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(error["error"], code, "{path}: {error}");
        let store_dir = store.display().to_string();
        assert!(!text.contains(&store_dir), "{path}: no server path: {text}");
    }
}
