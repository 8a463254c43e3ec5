//! The ledger conformance suite: the same scenarios, written once against
//! the backend-neutral interface (`LedgerTarget`, the `Redeemer` and the
//! functions of `ledger::log`), run on every ledger backend: the store's
//! SQLite file and a PostgreSQL database. Both must give the same
//! outcomes. Each scenario is a function of a fresh [`Backend`]; each
//! (backend, scenario) pair is a test of its own,
//! `conformance::<backend>::<scenario>`, whose failure message starts with
//! `[backend] scenario:`.
//!
//! Adding a backend: write its fixture function, `fn name(test: &str) ->
//! Option<Backend>` (a store from [`issuer_store`], the ledger URL given to
//! `LedgerTarget::new`, a closure that runs raw SQL on its database behind
//! the ledger's back, and whatever must stay alive meanwhile; `None`, said
//! loudly, where the backend cannot run here), then add `on_backend!(name);`
//! at the end of this file.
//!
//! PostgreSQL places entries in the log after their commit (a sequencer
//! thread, every 100 ms), SQLite at the commit: log facts are checked once
//! the log holds the entries expected, waited for at most 2 s
//! ([`Backend::sequenced`]).

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ed25519_dalek::VerifyingKey;
use rust_decimal::Decimal;
use tempfile::TempDir;
use ticket_issuer::emission::{BlockChoice, Emission};
use ticket_issuer::error::{Error, ErrorKind};
use ticket_issuer::game::Game;
use ticket_issuer::ledger::claims::{self, EndOfClaims};
use ticket_issuer::ledger::emission_rows::{At, EmissionRow, PlayRead};
use ticket_issuer::ledger::log::{self, LogReport};
use ticket_issuer::ledger::operator::Action;
use ticket_issuer::ledger::ops::{LedgerTx, PlayAction, PlayRow, UnitRef, PLAY_ENDED};
use ticket_issuer::ledger::published::{PublishedLog, Resource};
use ticket_issuer::ledger::target::LedgerTarget;
use ticket_issuer::ledger::writer::panic_message;
use ticket_issuer::merkle::{self, Hash};
use ticket_issuer::money::Cents;
use ticket_issuer::redeemer::{Check, PlayView};
use ticket_issuer::store::Store;
use ticket_issuer::unit_id::UnitId;
use ticket_issuer::{closing, seal, Redeemer, Redemption};

use crate::common::{played_in, shared_block, store_redeemer, valid_id_of};
use crate::pg::Cluster;

/// L'île au trésor: emission 1, block 1 of the shared block at 1 €.
const ILE: Game = Game::ILE_AU_TRESOR;
const ILE_EMISSION: u32 = 1;
const ILE_PRICE: u32 = 100;
/// Trésors Ensablés: emission 2, block 1 of `TE_UNITS` units at 1 €.
const TE: Game = Game::TRESORS_ENSABLES;
const TE_EMISSION: u32 = 2;
const TE_UNITS: u32 = 20;
const TE_PRICE: u32 = 100;
/// How long a read waits for a writer's lock.
const BUSY: Duration = Duration::from_secs(5);
/// The sequencing bound the scenarios allow (docs/REDEMPTION.md §Sequencing).
const SEQUENCING: Duration = Duration::from_secs(2);

// ---------------------------------------------------------------------------
// The backends
// ---------------------------------------------------------------------------

/// One ledger backend under test, fresh for each scenario.
pub(crate) struct Backend {
    /// Its name in messages.
    name: &'static str,
    /// The ledger, made by `LedgerTarget::new`.
    target: LedgerTarget,
    /// The issuer's store (keys, emissions): see [`issuer_store`].
    store: PathBuf,
    /// Runs SQL on the ledger's database behind the ledger's back.
    sql: Box<dyn Fn(&str)>,
    /// SQL that marks the schema as a newer issuer's (version 99).
    newer_schema: &'static str,
    /// What must outlive the ledger (temp dirs, a database server);
    /// dropped after `target`.
    _alive: Vec<Box<dyn Any>>,
}

/// The store's SQLite ledger.
fn sqlite(_test: &str) -> Option<Backend> {
    let (dir, store) = issuer_store();
    let file = Store::new(&store).ledger_path();
    let sql = move |q: &str| {
        rusqlite::Connection::open(&file)
            .and_then(|c| c.execute_batch(q))
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    };
    Some(Backend::new(
        "sqlite",
        store,
        None,
        sql,
        "PRAGMA user_version = 99",
        vec![Box::new(dir)],
    ))
}

/// A PostgreSQL ledger in a throwaway cluster of the test's own (skipped,
/// loudly, where PostgreSQL is not installed; a failure under CI).
fn postgres(test: &str) -> Option<Backend> {
    let cluster = Cluster::start(test)?;
    let (dir, store) = issuer_store();
    cluster.migrate(&store);
    let url = cluster.url();
    let db = url.clone();
    let sql = move |q: &str| {
        ::postgres::Client::connect(&db, ::postgres::NoTls)
            .and_then(|mut c| c.batch_execute(q))
            .unwrap_or_else(|e| panic!("{q}: {e}"));
    };
    let alive: Vec<Box<dyn Any>> = vec![Box::new(dir), Box::new(cluster)];
    Some(Backend::new(
        "postgres",
        store,
        Some(&url),
        sql,
        "UPDATE ledger_schema SET version = 99",
        alive,
    ))
}

/// The issuer's store every backend starts from, in a new temp dir: keys,
/// L'île au trésor emission 1 block 1 (a copy of the shared block) and
/// Trésors Ensablés emission 2 block 1 of `TE_UNITS` units, both closed
/// (their units may be sold). Nothing is in any ledger yet.
pub(crate) fn issuer_store() -> (TempDir, PathBuf) {
    let (dir, store, _block) = shared_block(ILE_PRICE).copy_store();
    let s = Store::new(&store);
    let secrets = s.secrets().unwrap();
    Emission::new(&s, TE, TE_EMISSION)
        .with_units(TE_UNITS)
        .unwrap()
        .generate(&secrets, TE_PRICE, BlockChoice::Number(1), &|_| {})
        .unwrap();
    for (game, emission) in [(ILE, ILE_EMISSION), (TE, TE_EMISSION)] {
        Emission::new(&s, game, emission).close(&secrets).unwrap();
    }
    (dir, store)
}

impl Backend {
    fn new(
        name: &'static str,
        store: PathBuf,
        url: Option<&str>,
        sql: impl Fn(&str) + 'static,
        newer_schema: &'static str,
        alive: Vec<Box<dyn Any>>,
    ) -> Backend {
        let target = LedgerTarget::new(&Store::new(&store), url)
            .unwrap_or_else(|e| panic!("{name}: the ledger target: {e}"));
        Backend {
            name,
            target,
            store,
            sql: Box::new(sql),
            newer_schema,
            _alive: alive,
        }
    }

    fn store(&self) -> Store {
        Store::new(&self.store)
    }

    /// A redeemer of the store, with the issuer's keys, on this ledger.
    fn redeemer(&self) -> Redeemer {
        store_redeemer(&self.store, true).with_ledger(self.target.clone())
    }

    /// Runs `q` on the ledger's database behind the ledger's back.
    fn sql(&self, q: &str) {
        (self.sql)(q);
    }

    /// The key that signs the ledger's heads (made on the first write).
    fn ledger_key(&self) -> VerifyingKey {
        seal::read_public(&self.store().ledger_public_key_path()).unwrap()
    }

    /// The issuer's key (it signs ends of claims).
    fn issuer_key(&self) -> VerifyingKey {
        self.store().public_key().unwrap()
    }

    /// `log::verify` of the ledger with its key.
    fn verify(&self) -> LogReport {
        let keys = [self.ledger_key()];
        self.target
            .with_log(|src| log::verify(src, &keys, None))
            .unwrap()
            .unwrap_or_else(|| panic!("{self}: no ledger to verify"))
    }

    /// Waits (at most [`SEQUENCING`]) until the log holds `entries` entries,
    /// none pending, under a signed head of that size; the log's report.
    fn sequenced(&self, entries: u64) -> LogReport {
        let started = Instant::now();
        loop {
            let report = self.verify();
            let head = self.target.head().unwrap().map(|h| h.size);
            if report.pending == 0 && report.size == entries && head == Some(entries) {
                return report;
            }
            assert!(
                started.elapsed() < SEQUENCING,
                "{self}: {entries} entries not sequenced within {SEQUENCING:?}: head {head:?}, {report:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn lookup(&self, id: &UnitId) -> Option<ticket_issuer::ledger::Recorded> {
        self.target
            .lookup(id.game, id.emission, id.block, id.index, BUSY)
            .unwrap()
    }

    fn sale(&self, id: &UnitId) -> Option<String> {
        self.target
            .sale(UnitRef::of(id), BUSY)
            .unwrap()
            .map(|s| s.sold_at)
    }

    fn play(&self, id: &UnitId) -> Option<PlayRow> {
        self.target.play(UnitRef::of(id), BUSY).unwrap()
    }

    /// The unit's sale and play read in one snapshot (nothing when there
    /// is no ledger yet).
    fn sale_and_play(&self, id: &UnitId) -> (Option<String>, Option<PlayRow>) {
        let p = UnitRef::of(id).place();
        self.target
            .read(BUSY, |tx| Ok((tx.sale(p)?.map(|s| s.sold_at), tx.play(p)?)))
            .unwrap()
            .unwrap_or_default()
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Runs `scenario` on a fresh backend made by `fixture`; a failure names
/// both.
fn run(fixture: fn(&str) -> Option<Backend>, test: &str, scenario: fn(&Backend)) {
    let Some(backend) = fixture(test) else {
        return;
    };
    let name = test.rsplit("::").next().unwrap_or(test);
    let started = Instant::now();
    if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| scenario(&backend))) {
        panic!("[{backend}] {name}: {}", panic_message(&*panic));
    }
    eprintln!("[{backend}] {name}: passed in {:.1?}", started.elapsed());
}

// ---------------------------------------------------------------------------
// Units, and what the scenarios record
// ---------------------------------------------------------------------------

fn te(b: &Backend, index: u32) -> UnitId {
    valid_id_of(&b.store, TE, TE_EMISSION, 1, index)
        .parse()
        .unwrap()
}

fn ile(b: &Backend, index: u32) -> UnitId {
    valid_id_of(&b.store, ILE, ILE_EMISSION, 1, index)
        .parse()
        .unwrap()
}

/// A prize in euros as an answer gives it, in cents.
/// Every entry's leaf data, as the ledger's log holds them.
fn log_lines(b: &Backend) -> Vec<String> {
    b.target
        .with_log(|src| {
            Ok(src
                .snapshot()?
                .entries
                .into_iter()
                .map(|e| e.line)
                .collect())
        })
        .unwrap()
        .unwrap()
}

fn cents_of(prize: &str) -> u64 {
    use rust_decimal::prelude::ToPrimitive;
    (euros(prize) * Decimal::ONE_HUNDRED).to_u64().unwrap()
}

/// A prize in euros as an answer gives it.
fn euros(prize: &str) -> Decimal {
    prize.parse().unwrap()
}

/// The first L'île au trésor units from `from` on that win (`true`) or
/// not, replayed with the keys (no ledger read).
fn ile_unit(b: &Backend, r: &Redeemer, from: u32, wins: bool) -> UnitId {
    (from..from + 2000)
        .map(|i| ile(b, i))
        .find(|id| (euros(&r.replay(id, None).unwrap().prize) > Decimal::ZERO) == wins)
        .expect("such a unit among 2,000")
}

fn hash(hex_text: &str) -> Hash {
    hex::decode(hex_text).unwrap().try_into().unwrap()
}

/// Units sold, played to their end (Trésors Ensablés) and paid.
struct PaidOut {
    redeemer: Redeemer,
    /// Trésors Ensablés units 0 (sold by `sell`), 1 and 2 (marked sold),
    /// with their plays as the player saw them last.
    plays: Vec<(UnitId, PlayView)>,
    /// The L'île au trésor units, marked sold: a winner and a loser.
    ile: [UnitId; 2],
    /// Every unit above with its (first) redemption.
    paid: Vec<(UnitId, Redemption)>,
}

/// Log entries after [`paid_out`]: five sales, three play ends, five
/// redemptions.
const PAID_ENTRIES: u64 = 5 + 3 + 5;

/// Sells, plays and redeems units of both games, as a platform does.
fn paid_out(b: &Backend) -> PaidOut {
    let r = b.redeemer();
    let sale = r.sell(TE, TE_PRICE).unwrap();
    assert_eq!(
        (sale.index, sale.id.as_str()),
        (0, te(b, 0).to_string().as_str()),
        "sales go in index order"
    );
    let winner = ile_unit(b, &r, 0, true);
    let loser = ile_unit(b, &r, 0, false);
    let marked = r
        .mark_sold(&[te(b, 1), te(b, 2), winner, loser], None)
        .unwrap();
    assert_eq!((marked.marked, marked.already_sold), (4, 0));
    let plays: Vec<(UnitId, PlayView)> = (0..3)
        .map(|i| {
            let id = te(b, i);
            let view = played_in(&r, &id, None);
            (id, view)
        })
        .collect();
    let paid = plays
        .iter()
        .map(|(id, _)| *id)
        .chain([winner, loser])
        .map(|id| (id, r.redeem(&id, None).unwrap()))
        .collect();
    PaidOut {
        redeemer: r,
        plays,
        ile: [winner, loser],
        paid,
    }
}

/// Publishes the end of claims of Trésors Ensablés emission 2, signed as
/// `issuer end-claims` signs it.
fn end_claims(b: &Backend) -> EndOfClaims {
    let secrets = b.store().secrets().unwrap();
    let statement = EndOfClaims::sign(&secrets.signing, TE, TE_EMISSION);
    let published = b
        .target
        .publish_end_of_claims(&b.store(), TE, &statement)
        .unwrap();
    assert_eq!(
        (&published.statement, &published.ended_at),
        (&statement.statement, &statement.ended_at)
    );
    assert_eq!(
        (published.game.as_str(), published.emission),
        (TE.slug(), TE_EMISSION)
    );
    published
}

// ---------------------------------------------------------------------------
// The scenarios
// ---------------------------------------------------------------------------

/// Before anything is recorded the ledger is empty, whichever the reads,
/// and stays so when a writer starts and stops.
fn empty_ledger(b: &Backend) {
    assert!(!b.target.describe().is_empty());
    let empty = |when: &str| {
        for id in [te(b, 0), ile(b, 0)] {
            assert!(b.lookup(&id).is_none(), "{when}: lookup {id}");
            assert!(b.sale(&id).is_none(), "{when}: sale {id}");
            assert!(b.play(&id).is_none(), "{when}: play {id}");
            assert_eq!(b.sale_and_play(&id), (None, None), "{when}: read {id}");
        }
        for (game, emission) in [(TE, TE_EMISSION), (ILE, ILE_EMISSION)] {
            let ended = b.target.end_of_claims(game, emission).unwrap();
            assert!(ended.is_none(), "{when}: end of claims {game:?}");
        }
        assert!(b.target.head().unwrap().is_none(), "{when}: head");
        let s = b.target.summary().unwrap();
        assert_eq!(
            (s.units, s.paid, s.blocks.len()),
            (0, Cents::ZERO, 0),
            "{when}"
        );
        assert!(s.reconciled && s.integrity_ok, "{when}: {s:?}");
        // No ledger (SQLite, not made yet) or an empty log that verifies.
        let report = b
            .target
            .with_log(|src| log::verify(src, &[], None))
            .unwrap();
        if let Some(r) = report {
            assert!(r.ok && r.size == 0 && r.pending == 0, "{when}: {r:?}");
            assert_eq!(r.last_head_size, None, "{when}");
        }
        let proof = b
            .target
            .with_log(|src| log::prove_consistency(src, 1, None))
            .unwrap()
            .flatten();
        assert!(proof.is_none(), "{when}: a proof from an empty log");
    };
    empty("at first");
    // A check answers, records nothing.
    match b.redeemer().check(&ile(b, 0), None).unwrap() {
        Check::Whole(r) => assert_eq!(r.already_redeemed_at, None),
        Check::InPlay(p) => panic!("a L'île au trésor unit in play: {p:?}"),
    }
    empty("after a check");
    let writer = b.target.writer(&b.store(), BUSY).unwrap();
    assert!(writer.apply(Vec::new()).is_empty());
    drop(writer);
    empty("after a writer started and stopped");
}

/// Units of both games sold, played to their end, paid once; what each
/// read says of them, and the summary's totals.
fn sale_play_redemption(b: &Backend) {
    let out = paid_out(b);
    let r = &out.redeemer;
    for (id, view) in &out.plays {
        assert!(view.over && view.end != Some("stopped"), "{id}: {view:?}");
        assert_eq!(
            b.play(id),
            Some(PlayRow {
                steps: view.rolls,
                ended: Some(PLAY_ENDED.into()),
            }),
            "{id}"
        );
    }
    for id in &out.ile {
        assert_eq!(b.play(id), None, "{id}: a L'île au trésor unit has no play");
    }
    let mut total = Decimal::ZERO;
    for (id, first) in &out.paid {
        assert!(b.sale(id).is_some_and(|at| !at.is_empty()), "{id}: sold");
        let at = first.redeemed_at.clone().expect("a redemption's time");
        let recorded = b.lookup(id).expect("recorded");
        assert_eq!(recorded.redeemed_at, at, "{id}");
        assert_eq!(
            Cents::from(recorded.prize_cents).euros(),
            euros(&first.prize),
            "{id}"
        );
        total += euros(&first.prize);
        // Paid once: the second asks get the first answer's time and prize.
        let again = r.redeem(id, None).map(drop).unwrap_err();
        assert_eq!(
            (again.kind(), again.code()),
            (ErrorKind::Conflict, "already_redeemed"),
            "{id}: {again}"
        );
        match again {
            Error::AlreadyRedeemed {
                at: when, prize, ..
            } => {
                assert_eq!((when, prize.euros()), (at.clone(), euros(&first.prize)));
            }
            other => panic!("{id}: {other}"),
        }
        match r.check(id, None).unwrap() {
            Check::Whole(c) => assert_eq!(c.already_redeemed_at, Some(at), "{id}"),
            Check::InPlay(p) => panic!("{id} in play: {p:?}"),
        }
    }
    assert!(total > Decimal::ZERO, "a winner was paid");
    let s = b.target.summary().unwrap();
    assert_eq!(s.units, out.paid.len() as u64, "{s:?}");
    assert_eq!(s.paid.euros(), total, "{s:?}");
    assert!(s.reconciled && s.integrity_ok, "{s:?}");
    assert_eq!(s.blocks.len(), 2, "one line per block: {s:?}");
    assert_eq!(s.blocks.iter().map(|l| l.units).sum::<u64>(), s.units);

    // A unit sold but not played is not paid; one never sold neither.
    let unplayed = te(b, 5);
    r.mark_sold(&[unplayed], None).unwrap();
    assert_eq!(b.play(&unplayed), None);
    let never = te(b, 6);
    for (id, code) in [(unplayed, "play_unfinished"), (never, "not_sold")] {
        let e = r.redeem(&id, None).map(drop).unwrap_err();
        assert_eq!(
            (e.kind(), e.code()),
            (ErrorKind::Conflict, code),
            "{id}: {e}"
        );
        assert!(b.lookup(&id).is_none(), "{id}");
    }
    assert!(b.sale(&never).is_none() && b.play(&never).is_none());
    assert_eq!(b.target.summary().unwrap().units, out.paid.len() as u64);
}

/// The log: every sale, play end and redemption is an entry under a signed
/// head; a redemption's inclusion proof and a consistency proof verify.
fn the_log(b: &Backend) {
    let out = paid_out(b);
    let report = b.sequenced(PAID_ENTRIES);
    assert!(report.ok, "{:?}", report.findings);
    assert_eq!(report.last_head_size, Some(PAID_ENTRIES));
    assert!(report.heads_checked >= 1);

    let key = b.ledger_key();
    let head = b.target.head().unwrap().expect("a head");
    let checkpoint = log::open_checkpoint(&head.checkpoint, &key).expect("signed");
    assert_eq!(checkpoint.size, PAID_ENTRIES);
    assert_eq!(hex::encode(checkpoint.root), head.root_hex);
    assert_eq!(head.root_hex, report.root, "the head signs the log's root");
    assert_eq!(head.origin, log::origin(&key));
    assert_eq!(head.verifier_key, Some(log::verifier_key(&key)));
    let logged = b.target.with_log(log::head).unwrap().flatten().unwrap();
    assert_eq!(logged.checkpoint, head.checkpoint);

    let mut places = Vec::new();
    for (id, _) in &out.paid {
        let seq = b.lookup(id).and_then(|r| r.seq).expect("sequenced");
        places.push(seq);
        let proof = b
            .target
            .with_log(|src| log::prove_unit(src, UnitRef::of(id).place()))
            .unwrap()
            .flatten()
            .unwrap_or_else(|| panic!("{id}: no proof"));
        assert_eq!((proof.leaf_index, proof.tree_size), (seq, PAID_ENTRIES));
        assert_eq!(
            (&proof.root, &proof.checkpoint),
            (&head.root_hex, &head.checkpoint)
        );
        assert!(proof.entry.contains(&id.to_string()), "{}", proof.entry);
        let path: Vec<Hash> = proof.inclusion_proof.iter().map(|h| hash(h)).collect();
        assert!(
            merkle::verify_inclusion(
                &merkle::leaf_hash(proof.entry.as_bytes()),
                seq,
                PAID_ENTRIES,
                &path,
                &hash(&proof.root)
            ),
            "{id}: the inclusion proof verifies"
        );
        match out.redeemer.check(id, None).unwrap() {
            Check::Whole(c) => {
                assert_eq!(c.ledger_entry.and_then(|e| e.seq), Some(seq), "{id}");
            }
            Check::InPlay(p) => panic!("{id} in play: {p:?}"),
        }
    }
    places.sort_unstable();
    places.dedup();
    assert_eq!(places.len(), out.paid.len(), "one entry per redemption");
    assert!(places.iter().all(|&s| s < PAID_ENTRIES));
    let unpaid = te(b, 7);
    let none = b
        .target
        .with_log(|src| log::prove_unit(src, UnitRef::of(&unpaid).place()))
        .unwrap()
        .flatten();
    assert!(none.is_none(), "a proof of a unit not paid");

    let c = b
        .target
        .with_log(|src| log::prove_consistency(src, 1, None))
        .unwrap()
        .flatten()
        .expect("a consistency proof from 1");
    assert_eq!(
        (c.from, c.to, &c.to_root),
        (1, PAID_ENTRIES, &head.root_hex)
    );
    let path: Vec<Hash> = c.consistency_proof.iter().map(|h| hash(h)).collect();
    assert!(merkle::verify_consistency(
        1,
        PAID_ENTRIES,
        &path,
        &hash(&c.from_root),
        &hash(&c.to_root)
    ));
    let beyond = b
        .target
        .with_log(|src| log::prove_consistency(src, PAID_ENTRIES + 1, None))
        .unwrap()
        .flatten();
    assert!(beyond.is_none(), "a proof from beyond the head");
}

/// Entries by position (`LogSource::entries`) are the log's, in order, cut
/// at its end; the published level-0 tile and entry bundle of the head
/// are their leaf hashes and their bytes (docs/REDEMPTION.md §Tiles anyone
/// can mirror).
fn entries_by_position(b: &Backend) {
    paid_out(b);
    let report = b.sequenced(PAID_ENTRIES);
    assert!(report.ok, "{:?}", report.findings);
    let n = PAID_ENTRIES;
    b.target
        .with_log(|src| {
            let lines: Vec<String> = src
                .snapshot()?
                .sorted()
                .entries
                .into_iter()
                .filter(|e| e.seq.is_some())
                .map(|e| e.line)
                .collect();
            assert_eq!(lines.len() as u64, n);
            assert_eq!(src.entries(0, n)?, lines);
            assert_eq!(src.entries(3, 7)?, lines[3..7]);
            assert_eq!(src.entries(n - 2, n + 10)?, lines[n as usize - 2..]);
            assert!(src.entries(n, n + 5)?.is_empty());
            let log = PublishedLog::latest(src)?.expect("a head");
            assert_eq!(log.size(), n);
            let width = u16::try_from(n).unwrap();
            let tile = log
                .read(Resource::Tile {
                    level: 0,
                    index: 0,
                    width,
                })?
                .expect("under the head");
            let leaves: Vec<u8> = lines
                .iter()
                .flat_map(|l| merkle::leaf_hash(l.as_bytes()))
                .collect();
            assert_eq!(tile, leaves);
            let bundle = log
                .read(Resource::Entries { index: 0, width })?
                .expect("under the head");
            let expected: Vec<u8> = lines
                .iter()
                .flat_map(|l| {
                    let mut e = u16::try_from(l.len()).unwrap().to_be_bytes().to_vec();
                    e.extend_from_slice(l.as_bytes());
                    e
                })
                .collect();
            assert_eq!(bundle, expected);
            let beyond = Resource::Entries {
                index: 0,
                width: width + 1,
            };
            assert!(log.read(beyond)?.is_none(), "beyond the head");
            Ok(())
        })
        .unwrap()
        .unwrap();
}

/// The issuer's end of claims: published once, read back, a log entry;
/// every later redemption of the emission is refused, other emissions pay.
fn end_of_claims(b: &Backend) {
    let out = paid_out(b);
    let r = &out.redeemer;
    // Left unpaid: a Trésors Ensablés unit sold and played, a L'île au
    // trésor unit sold.
    let sale = r.sell(TE, TE_PRICE).unwrap();
    assert_eq!(sale.index, 3, "the next unsold unit");
    let open_te: UnitId = sale.id.parse().unwrap();
    played_in(r, &open_te, None);
    let open_ile = ile_unit(b, r, out.ile[0].index.max(out.ile[1].index) + 1, false);
    r.mark_sold(&[open_ile], None).unwrap();
    let before = b.sequenced(PAID_ENTRIES + 3);
    assert!(before.ok, "{:?}", before.findings);
    assert!(b.target.end_of_claims(TE, TE_EMISSION).unwrap().is_none());

    let published = end_claims(b);
    let stored = b.target.end_of_claims(TE, TE_EMISSION).unwrap().unwrap();
    assert_eq!(
        (&stored.statement, &stored.ended_at),
        (&published.statement, &published.ended_at)
    );
    EndOfClaims::open(&stored.statement, &b.issuer_key(), TE, TE_EMISSION)
        .expect("signed by the issuer, about this emission");
    assert!(b.target.end_of_claims(ILE, ILE_EMISSION).unwrap().is_none());
    // A log entry: the log grows by one.
    let after = b.sequenced(before.size + 1);
    assert!(after.ok, "{:?}", after.findings);

    // Published again (another statement: a later second): the first
    // stands, and the log holds it once.
    while claims::utc_now() == published.ended_at {
        std::thread::sleep(Duration::from_millis(20));
    }
    let secrets = b.store().secrets().unwrap();
    let again = EndOfClaims::sign(&secrets.signing, TE, TE_EMISSION);
    assert_ne!(again.statement, published.statement);
    let kept = b
        .target
        .publish_end_of_claims(&b.store(), TE, &again)
        .unwrap();
    assert_eq!(kept.statement, published.statement);
    assert_eq!(b.sequenced(after.size).size, before.size + 1);

    let e = r.redeem(&open_te, None).map(drop).unwrap_err();
    assert_eq!(
        (e.kind(), e.code()),
        (ErrorKind::Conflict, "emission_closed"),
        "{e}"
    );
    match e {
        Error::ClaimsEnded { game, emission, at } => {
            assert_eq!(
                (game, emission, at),
                (TE.slug(), TE_EMISSION, published.ended_at)
            );
        }
        other => panic!("{other}"),
    }
    assert!(b.lookup(&open_te).is_none(), "nothing paid");
    // Paid units stay paid; another emission still pays.
    for (id, first) in &out.paid {
        assert_eq!(
            b.lookup(id).map(|l| l.redeemed_at),
            first.redeemed_at.clone()
        );
    }
    r.redeem(&open_ile, None).unwrap();
    let last = b.sequenced(after.size + 1);
    assert!(last.ok, "{:?}", last.findings);
}

/// Rows changed behind the ledger's back are found: a deleted end of
/// claims by the log's verification, an edited prize by the summary and
/// the log.
fn tampering_is_seen(b: &Backend) {
    let PaidOut { redeemer, ile, .. } = paid_out(b);
    drop(redeemer);
    end_claims(b);
    let report = b.sequenced(PAID_ENTRIES + 1);
    assert!(report.ok, "{:?}", report.findings);
    assert!(b.target.summary().unwrap().reconciled);

    b.sql("DELETE FROM claims_ended");
    assert!(
        b.target.end_of_claims(TE, TE_EMISSION).unwrap().is_none(),
        "deleted"
    );
    let report = b.verify();
    assert!(!report.ok, "{report:?}");
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.problem.contains("deleted")),
        "{report:?}"
    );

    let winner = ile[0];
    let before = b.lookup(&winner).unwrap();
    let seq = before.seq.expect("sequenced");
    b.sql(&format!(
        "UPDATE redemptions SET prize_cents = prize_cents + 100
         WHERE game = '{}' AND emission = {} AND block = {} AND unit_index = {}",
        winner.game.slug(),
        winner.emission,
        winner.block,
        winner.index
    ));
    assert_eq!(
        b.lookup(&winner).unwrap().prize_cents,
        before.prize_cents + 100
    );
    let s = b.target.summary().unwrap();
    assert!(!s.reconciled, "an edited prize reconciles: {s:?}");
    assert!(s.integrity_ok, "the database itself is sound: {s:?}");
    let report = b.verify();
    assert!(
        report.findings.iter().any(|f| f.entry == Some(seq)),
        "entry {seq} edited: {report:?}"
    );
}

/// `read` sees a unit's sale and play together, as the single reads do,
/// at each step of its life; the same read twice gives the same answer.
fn reads_in_one_snapshot(b: &Backend) {
    let id = te(b, 0);
    let never = te(b, 9);
    let both = |when: &str| {
        let p = UnitRef::of(&id).place();
        let q = UnitRef::of(&never).place();
        let read = || {
            b.target
                .read(BUSY, |tx| {
                    let sold = |tx: &mut dyn LedgerTx, p| Ok(tx.sale(p)?.map(|s| s.sold_at));
                    Ok(((sold(tx, p)?, tx.play(p)?), (sold(tx, q)?, tx.play(q)?)))
                })
                .unwrap()
                .unwrap_or_default()
        };
        let (first, second) = (read(), read());
        assert_eq!(first, second, "{when}: the same read twice");
        assert_eq!(first.0, (b.sale(&id), b.play(&id)), "{when}");
        assert_eq!(first.1, (None, None), "{when}: a unit never sold");
        first.0
    };
    assert_eq!(both("before the sale"), (None, None));
    let r = b.redeemer();
    let sale = r.sell(TE, TE_PRICE).unwrap();
    assert_eq!(sale.id, id.to_string());
    assert_eq!(both("sold"), (Some(sale.sold_at.clone()), None));
    let view = r.play(&id, PlayAction::Step(1)).unwrap();
    let (sold, play) = both("after one roll");
    assert_eq!(sold.as_deref(), Some(sale.sold_at.as_str()));
    let play = play.expect("a play");
    assert_eq!(play.steps, 1);
    assert_eq!(play.ended.is_some(), view.over, "{view:?}");
    let view = played_in(&r, &id, None);
    let (sold, play) = both("played to its end");
    assert_eq!(sold, Some(sale.sold_at));
    assert_eq!(
        play,
        Some(PlayRow {
            steps: view.rolls,
            ended: Some(PLAY_ENDED.into()),
        })
    );
}

/// Batch-mates (issue 38's group commit: PostgreSQL inserts a batch's
/// redemptions by one statement): in one commit, a unit redeemed before
/// and a unit asked twice are refused, each alone, with the first
/// redemption's time and prize; every other unit of the batch is paid
/// once, in the batch's order in the log, and the ledger reconciles.
fn batch_mates(b: &Backend) {
    let r = b.redeemer();
    let units: Vec<UnitId> = (0..5).map(|i| ile(b, 20 + i)).collect();
    r.mark_sold(&units, None).unwrap();
    let before = r.redeem(&units[1], None).unwrap();
    let asked: Vec<(UnitId, Option<u32>)> = [0, 1, 2, 0, 3, 4, 2]
        .iter()
        .map(|&i| (units[i], None))
        .collect();
    let answers = r.redeem_many(&asked);
    let paid: Vec<_> = answers.iter().filter_map(|a| a.as_ref().ok()).collect();
    assert_eq!(
        paid.iter().map(|p| p.id.clone()).collect::<Vec<_>>(),
        [0, 2, 3, 4].map(|i| units[i].to_string()),
        "{answers:?}"
    );
    for (n, answer) in answers.iter().enumerate() {
        let first = match asked[n].0 {
            id if id == units[1] => before.redeemed_at.clone(),
            id if [3, 6].contains(&n) => paid
                .iter()
                .find(|p| p.id == id.to_string())
                .and_then(|p| p.redeemed_at.clone()),
            _ => continue,
        };
        match answer {
            Err(Error::AlreadyRedeemed { at, .. }) => assert_eq!(Some(at.clone()), first, "{n}"),
            other => panic!("answer {n}: {other:?}"),
        }
    }
    for id in &units {
        assert!(b.lookup(id).is_some(), "{id} recorded");
    }
    let report = b.sequenced(units.len() as u64 * 2);
    assert!(report.ok, "{report:?}");
    // The redemptions in log order (a snapshot lists entries by table).
    let mut redeemed: Vec<(u64, String)> = log_lines(b)
        .iter()
        .filter(|l| l.starts_with("ledger/v1|"))
        .filter_map(|l| {
            let seq = l.split('|').nth(1)?.parse().ok()?;
            let unit = units.iter().find(|u| l.contains(&format!("|{u}|")))?;
            Some((seq, unit.to_string()))
        })
        .collect();
    redeemed.sort();
    assert_eq!(
        redeemed.into_iter().map(|(_, u)| u).collect::<Vec<_>>(),
        [1, 0, 2, 3, 4].map(|i| units[i].to_string())
    );
    let s = b.target.summary().unwrap();
    assert_eq!(s.units, 5, "{s:?}");
    assert!(s.reconciled && s.integrity_ok, "{s:?}");
}

/// An emission's rows, each kind read once in one snapshot
/// (`emission_rows`, what an audit reconciles): what [`paid_out`] recorded,
/// in (block, index) order; nothing of another emission.
fn emission_rows(b: &Backend) {
    use rust_decimal::prelude::ToPrimitive as _;
    let rows = |game: Game, emission: u32| {
        let mut rows = Vec::new();
        let exists = b
            .target
            .emission_rows(game, emission, &mut |row| {
                rows.push(row);
                Ok(())
            })
            .unwrap();
        (exists, rows)
    };
    let (_, before) = rows(TE, TE_EMISSION);
    assert!(before.is_empty(), "{before:?}");
    let out = paid_out(b);
    let (exists, te_rows) = rows(TE, TE_EMISSION);
    assert!(exists);
    let at = |id: &UnitId| At {
        block: id.block,
        index: id.index,
    };
    let want_plays = out.plays.iter().map(|(id, view)| {
        EmissionRow::Play(PlayRead {
            at: at(id),
            rolls: i64::from(view.rolls),
            ended: Some(PLAY_ENDED.into()),
        })
    });
    let sales = out.plays.iter().map(|(id, _)| EmissionRow::Sale(at(id)));
    let (read_sales, rest) = te_rows.split_at(3);
    assert_eq!(read_sales, sales.collect::<Vec<_>>(), "sales first");
    assert_eq!(&rest[..3], want_plays.collect::<Vec<_>>(), "then plays");
    for (row, (id, paid)) in rest[3..].iter().zip(&out.paid) {
        let EmissionRow::Redemption(row) = row else {
            panic!("a payment: {row:?}");
        };
        assert_eq!(
            (row.at, row.unit_id.as_str(), row.prize_cents),
            (
                at(id),
                paid.id.as_str(),
                (euros(&paid.prize) * Decimal::ONE_HUNDRED)
                    .to_i64()
                    .unwrap()
            )
        );
        assert_eq!(
            row.record.as_deref().map(hex::encode),
            Some(paid.record.clone())
        );
    }
    assert_eq!(rest.len(), 3 + 3);
    let (_, ile_rows) = rows(ILE, ILE_EMISSION);
    let mut ile = out.ile.to_vec();
    ile.sort_by_key(|id| id.index);
    let kinds: Vec<(At, bool)> = ile_rows
        .iter()
        .map(|r| match r {
            EmissionRow::Sale(a) => (*a, true),
            EmissionRow::Redemption(p) => (p.at, false),
            EmissionRow::Play(p) => panic!("a play of a game revealed whole: {p:?}"),
            EmissionRow::Void(a) => panic!("no sale was voided: {a:?}"),
        })
        .collect();
    let want: Vec<(At, bool)> = [true, false]
        .into_iter()
        .flat_map(|sale| ile.iter().map(move |id| (at(id), sale)))
        .collect();
    assert_eq!(kinds, want);
    assert!(rows(TE, TE_EMISSION + 1).1.is_empty());
}

// ---------------------------------------------------------------------------
// The tests: every scenario on every backend
// ---------------------------------------------------------------------------

/// The scenarios on the backend made by the fixture function `$backend`,
/// as the tests `conformance::$backend::<scenario>`.
/// The schema: `migrate` on a ledger in use finds it current and changes
/// nothing (twice); a ledger of a newer issuer's schema is refused by every
/// read and write, naming the remedy, nothing recorded.
fn schema_versions(b: &Backend) {
    let r = b.redeemer();
    let id = te(b, 0);
    r.mark_sold(std::slice::from_ref(&id), None).unwrap();
    let (from, to) = b.target.migrate().unwrap();
    assert!(
        to > 0 && from == to,
        "current after a write: {from} to {to}"
    );
    assert_eq!(b.target.migrate().unwrap(), (to, to), "idempotent");
    assert!(b.verify().ok);
    drop(r);

    b.sql(b.newer_schema);
    let newer = |what: &str, e: Error| {
        assert_eq!(e.code(), "ledger_unavailable", "{what}: {e}");
        assert!(
            e.to_string().contains("version 99") && e.to_string().contains("upgrade the issuer"),
            "{what}: {e}"
        );
    };
    newer("summary", b.target.summary().unwrap_err());
    newer("migrate", b.target.migrate().unwrap_err());
    let read = b.target.read(BUSY, |tx| tx.sale(UnitRef::of(&id).place()));
    newer("read", read.unwrap_err());
    let r = b.redeemer();
    let sold = r.mark_sold(std::slice::from_ref(&te(b, 1)), None);
    newer("a sale", sold.unwrap_err());
}

/// The operator's controls (docs/REDEMPTION.md §Suspend, withdraw and
/// void), each seen at once by another node (a second redeemer on the
/// same ledger), each an entry of the log.
fn operator_controls(b: &Backend) {
    let (node_a, node_b) = (b.redeemer(), b.redeemer());
    let code = |e: Error| (e.kind(), e.code());
    let conflict = |c: &'static str| (ErrorKind::Conflict, c);
    let control = |r: &Redeemer, action, block| {
        r.control(action, TE, TE_EMISSION, block, "a test", "ops-1", &[])
            .unwrap()
    };
    let mut entries = 0;
    // Sold and played before: a unit mid-play and one over (a unit's
    // first roll may end its play: the draw is the store's).
    let (mut first, mut over) = (None, None);
    while first.is_none() || over.is_none() {
        let id: UnitId = node_a.sell(TE, TE_PRICE).unwrap().id.parse().unwrap();
        entries += 1;
        let view = node_a.play(&id, PlayAction::Step(1)).unwrap();
        if !view.over && first.is_none() {
            first = Some(id);
            continue;
        }
        if !view.over {
            played_in(&node_a, &id, None);
        }
        entries += 1;
        over = over.or(Some(id));
    }
    let (first, over) = (first.unwrap(), over.unwrap());

    // Suspended by node A: node B's sale, step and redemption are refused.
    let acted = control(&node_a, Action::Suspend, Some(1));
    assert!(!acted.already && acted.by == "ops-1", "{acted:?}");
    entries += 1;
    let refused = [
        node_b.sell(TE, TE_PRICE).map(drop).unwrap_err(),
        node_b
            .play(&first, PlayAction::Step(2))
            .map(drop)
            .unwrap_err(),
        node_b.redeem(&over, None).map(drop).unwrap_err(),
        node_b.mark_sold(&[te(b, 10)], None).map(drop).unwrap_err(),
    ];
    for e in refused {
        match &e {
            Error::Suspended {
                block, emission, ..
            } => {
                assert_eq!((*emission, *block), (TE_EMISSION, Some(1)));
            }
            other => panic!("{b}: not a suspension: {other}"),
        }
        assert!(
            !e.to_string().contains("a test"),
            "the reason is the operator's: {e}"
        );
    }
    // Suspending again records nothing; a block's resume is refused while
    // the emission is suspended too, then the emission's own resume.
    assert!(control(&node_b, Action::Suspend, Some(1)).already);
    control(&node_b, Action::Suspend, None);
    entries += 1;
    let e = node_a
        .control(Action::Resume, TE, TE_EMISSION, None, "x", "ops-2", &[])
        .unwrap();
    assert!(!e.already);
    entries += 1;
    assert_eq!(
        code(node_a.sell(TE, TE_PRICE).map(drop).unwrap_err()),
        conflict("suspended"),
        "block 1 stays suspended"
    );
    control(&node_a, Action::Resume, Some(1));
    entries += 1;
    // Resumed already (by node A): answered, nothing recorded.
    let again = node_b
        .control(Action::Resume, TE, TE_EMISSION, Some(1), "x", "ops-1", &[])
        .unwrap();
    assert!(again.already, "{again:?}");
    node_b.play(&first, PlayAction::Step(2)).unwrap();
    node_b.redeem(&over, None).unwrap();
    entries += 1;

    // Void: before the first roll only, once, then never played or paid.
    let fresh: UnitId = node_a.sell(TE, TE_PRICE).unwrap().id.parse().unwrap();
    entries += 1;
    let voided = node_b.void(&fresh, "payment failed", "ops-1").unwrap();
    assert!(!voided.already && voided.id.as_deref() == Some(&*fresh.to_string()));
    entries += 1;
    let again = node_a.void(&fresh, "payment failed", "ops-1").unwrap();
    assert!(again.already && again.at == voided.at, "{again:?}");
    for e in [
        node_a
            .play(&fresh, PlayAction::Step(1))
            .map(drop)
            .unwrap_err(),
        node_a.redeem(&fresh, None).map(drop).unwrap_err(),
    ] {
        assert_eq!(code(e), conflict("voided"));
    }
    assert_eq!(
        code(node_a.void(&first, "late", "ops-1").map(drop).unwrap_err()),
        conflict("play_started")
    );
    assert_eq!(
        code(
            node_a
                .void(&te(b, 15), "never sold", "ops-1")
                .map(drop)
                .unwrap_err()
        ),
        conflict("not_sold")
    );
    assert_eq!(
        code(node_a.void(&over, "paid", "ops-1").map(drop).unwrap_err()),
        conflict("already_redeemed")
    );
    // The next sale is past the voided unit: it is never sold again.
    let next = node_b.sell(TE, TE_PRICE).unwrap();
    assert_eq!(next.index, fresh.index + 1);
    entries += 1;
    // A L'île au trésor sale voided before its redemption.
    let ile_sold: UnitId = node_a.sell(ILE, ILE_PRICE).unwrap().id.parse().unwrap();
    node_a
        .void(&ile_sold, "the answer never reached the player", "ops-1")
        .unwrap();
    entries += 2;
    assert_eq!(
        code(node_b.redeem(&ile_sold, None).map(drop).unwrap_err()),
        conflict("voided")
    );

    // Withdrawn: never sold again, for good; its sold units still play
    // and redeem.
    control(&node_a, Action::Withdraw, Some(1));
    entries += 1;
    assert!(control(&node_b, Action::Withdraw, Some(1)).already);
    match node_b.sell(TE, TE_PRICE).map(drop).unwrap_err() {
        Error::SoldOut { withdrawn, .. } => {
            assert_eq!(withdrawn, [format!("emission {TE_EMISSION} block 1")]);
        }
        other => panic!("{b}: {other}"),
    }
    assert_eq!(
        code(node_b.mark_sold(&[te(b, 12)], None).map(drop).unwrap_err()),
        conflict("withdrawn")
    );
    let e = node_a
        .control(
            Action::Resume,
            TE,
            TE_EMISSION,
            Some(1),
            "undo",
            "ops-1",
            &[],
        )
        .unwrap_err();
    assert_eq!(code(e), conflict("withdrawal_is_permanent"));
    let next_id: UnitId = next.id.parse().unwrap();
    played_in(&node_b, &next_id, None);
    node_a.redeem(&next_id, None).unwrap();
    entries += 2;
    // A bad request changes nothing.
    for (reason, by) in [("", "ops-1"), ("two\nlines", "ops-1")] {
        let e = node_a
            .control(Action::Suspend, TE, TE_EMISSION, None, reason, by, &[])
            .unwrap_err();
        assert_eq!(e.code(), "invalid_request", "{e}");
    }
    let e = node_a
        .control(Action::Suspend, TE, TE_EMISSION, Some(7), "x", "ops-1", &[])
        .unwrap_err();
    assert_eq!(e.code(), "unknown_block", "{e}");

    // Every action is in the log, which verifies; the line holds the
    // reason's digest, never the reason.
    let report = b.sequenced(entries);
    assert!(report.ok, "{:?}", report.findings);
    let lines = log_lines(b);
    let operator: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("operator/v1|"))
        .collect();
    assert_eq!(operator.len(), 7, "{operator:?}");
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"payment failed"));
    assert!(
        operator.iter().any(|l| l.contains(&format!(
            "|void|{}|{TE_EMISSION}|1|{}|ops-1|{}|{digest}\n",
            TE.slug(),
            fresh.index,
            voided.at
        ))),
        "{operator:?}"
    );
    assert!(lines.iter().all(|l| !l.contains("payment failed")));
}

/// A void racing a first roll (two nodes, each unit): exactly one wins,
/// and the ledger agrees with the winner.
fn void_races_a_first_roll(b: &Backend) {
    let (node_a, node_b) = (b.redeemer(), b.redeemer());
    let ids: Vec<UnitId> = (0..8)
        .map(|_| node_a.sell(TE, TE_PRICE).unwrap().id.parse().unwrap())
        .collect();
    let outcomes: Vec<(bool, bool)> = std::thread::scope(|s| {
        let handles: Vec<_> = ids
            .iter()
            .map(|id| {
                let (a, b2) = (&node_a, &node_b);
                let void = s.spawn(move || a.void(id, "race", "ops-1"));
                let roll = s.spawn(move || b2.play(id, PlayAction::Step(1)));
                (void, roll)
            })
            .collect();
        handles
            .into_iter()
            .map(|(void, roll)| {
                let (void, roll) = (void.join().unwrap(), roll.join().unwrap());
                match (&void, &roll) {
                    (Ok(_), Err(Error::Voided { .. })) => (true, false),
                    (Err(Error::PlayStarted { .. }), Ok(_)) => (false, true),
                    other => panic!("{b}: not exactly one winner: {other:?}"),
                }
            })
            .collect()
    });
    for (id, (voided, rolled)) in ids.iter().zip(&outcomes) {
        let play = b.play(id);
        assert_eq!(play.is_some(), *rolled, "{id}: {play:?}");
        let again = node_a.void(id, "race", "ops-1");
        assert_eq!(again.is_ok_and(|a| a.already), *voided, "{id}");
    }
}

/// Prizes remaining (docs/REDEMPTION.md §Prizes remaining): the lot table
/// less the lots of the units sold, the bands of the unsold units, against
/// a recomputation from each unit replayed with the keys; a withdrawn
/// block's units are withdrawn, never unsold.
fn prizes_remaining(b: &Backend) {
    let r = b.redeemer();
    let mut sold: Vec<UnitId> = (0..5)
        .map(|_| r.sell(ILE, ILE_PRICE).unwrap().id.parse().unwrap())
        .collect();
    let marked: Vec<UnitId> = (100..103).map(|i| ile(b, i)).collect();
    r.mark_sold(&marked, None).unwrap();
    sold.extend(&marked);
    let voided = sold[1];
    r.void(&voided, "never shown", "ops-1").unwrap();
    let entries = b.sequenced(5 + 3 + 1).size;

    let got = r.remaining(ILE, ILE_PRICE).unwrap();
    assert_eq!((got.counted_by, got.as_of), ("lots", Some(entries)));
    assert_eq!(got.emissions.len(), 1, "{got:?}");
    let block = &got.emissions[0].blocks[0];
    let units = block.units;
    let table = ILE.lot_table_for(ILE_PRICE, units as u32).unwrap();
    assert_eq!(
        (block.units, block.sold, block.unsold),
        (units, 8, units - 8)
    );
    assert_eq!(block.prizes.len(), table.tiers.len());
    for (line, tier) in block.prizes.iter().zip(&table.tiers) {
        let name = ILE.lot_name(tier.code).unwrap();
        assert_eq!(line.prize, name);
        assert_eq!(
            line.in_block,
            u64::from(tier.count),
            "{name}: the block holds its table"
        );
        let gone = sold
            .iter()
            .filter(|id| r.replay(id, None).unwrap().lot == Some(name))
            .count() as u64;
        assert_eq!(line.remaining, line.in_block - gone, "{name}");
    }
    assert_eq!(
        got.prizes, block.prizes,
        "one block: the totals are its own"
    );
    assert_eq!(got.unsold, units - 8);

    // A drawn game, by band of the prize played to the end; then withdrawn.
    let te_sold: Vec<UnitId> = (0..4)
        .map(|_| r.sell(TE, TE_PRICE).unwrap().id.parse().unwrap())
        .collect();
    let te_got = r.remaining(TE, TE_PRICE).unwrap();
    assert_eq!(te_got.counted_by, "bands");
    let te_block = &te_got.emissions[0].blocks[0];
    assert_eq!(te_block.unsold, u64::from(TE_UNITS) - 4);
    assert_eq!(
        te_block.prizes.iter().map(|l| l.in_block).sum::<u64>(),
        u64::from(TE_UNITS)
    );
    let prize_of = |i: u32| euros(&r.replay(&te(b, i), None).unwrap().prize);
    for line in &te_block.prizes {
        let from = euros(line.from.as_deref().unwrap());
        let to = line.to.as_deref().map(euros);
        let within = |p: Decimal| p >= from && to.is_none_or(|t| p < t);
        let all = (0..TE_UNITS).filter(|i| within(prize_of(*i))).count() as u64;
        let unsold = (0..TE_UNITS)
            .filter(|i| !te_sold.iter().any(|s| s.index == *i) && within(prize_of(*i)))
            .count() as u64;
        assert_eq!((line.in_block, line.remaining), (all, unsold), "{line:?}");
    }
    r.control(
        Action::Withdraw,
        TE,
        TE_EMISSION,
        Some(1),
        "recall",
        "ops-1",
        &[],
    )
    .unwrap();
    let withdrawn = r.remaining(TE, TE_PRICE).unwrap();
    let w = &withdrawn.emissions[0].blocks[0];
    assert_eq!(
        (w.unsold, w.withdrawn, withdrawn.unsold),
        (0, u64::from(TE_UNITS) - 4, 0)
    );
    assert!(w.prizes.iter().all(|l| l.remaining == 0), "{w:?}");
}

/// The closing statement (docs/REDEMPTION.md §Closing statement): refused
/// before the end of claims; after it, per block what was sold, voided,
/// left unsold, paid and left unclaimed, signed by the issuer, in the log
/// once.
fn closing_statement(b: &Backend) {
    let out = paid_out(b);
    let r = &out.redeemer;
    // Left unclaimed: Trésors Ensablés units sold, one voided, one played.
    let voided: UnitId = r.sell(TE, TE_PRICE).unwrap().id.parse().unwrap();
    r.void(&voided, "payment declined", "ops-1").unwrap();
    let open: UnitId = r.sell(TE, TE_PRICE).unwrap().id.parse().unwrap();
    let view = played_in(r, &open, None);
    let entries = b.sequenced(PAID_ENTRIES + 4).size;

    let secrets = b.store().secrets().unwrap();
    let trusted = b.issuer_key();
    let issuer = closing::Issuer {
        store: &b.store(),
        trusted: &trusted,
        keys: ticket_issuer::records_key::KeyAccess {
            secrets: Some(&secrets),
            files: &[],
        },
        signing: &secrets.signing,
    };
    let early = closing::close(&issuer, &b.target, TE, TE_EMISSION).unwrap_err();
    assert_eq!(early.code(), "claims_not_ended", "{early}");
    let ended = end_claims(b);
    let s = closing::close(&issuer, &b.target, TE, TE_EMISSION).unwrap();
    assert!(closing::ClosingStatement::verifies(&s.statement, &trusted));
    assert!(s.reconciled, "{}", s.statement);
    assert_eq!(s.claims_ended_at, ended.ended_at);
    let [block] = &s.blocks[..] else {
        panic!("one block: {:?}", s.blocks)
    };
    let paid_te: Vec<&Redemption> = out
        .paid
        .iter()
        .filter(|(id, _)| id.game == TE)
        .map(|(_, r)| r)
        .collect();
    let paid_cents: u64 = paid_te.iter().map(|r| cents_of(&r.prize)).sum();
    let owed = cents_of(view.prize.as_deref().unwrap());
    assert_eq!(
        (
            block.units,
            block.sold,
            block.voided,
            block.unsold,
            block.withdrawn
        ),
        (u64::from(TE_UNITS), 5, 1, u64::from(TE_UNITS) - 5, 0)
    );
    assert_eq!((block.redeemed, block.paid_cents), (3, paid_cents));
    assert_eq!(
        (block.unclaimed, block.unclaimed_cents),
        (u64::from(owed > 0), owed),
        "the played unit's prize, never the voided one's: {}",
        s.statement
    );
    // In the log once: closing again gives the same statement.
    let report = b.sequenced(entries + 2);
    assert!(report.ok, "{:?}", report.findings);
    let again = closing::close(&issuer, &b.target, TE, TE_EMISSION).unwrap();
    assert_eq!(again.statement, s.statement);
    assert_eq!(again.blocks, s.blocks);
    assert_eq!(b.sequenced(entries + 2).size, entries + 2);
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        s.statement.as_bytes(),
    ));
    let lines = log_lines(b);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("operator/v1|")
                && l.contains("|closing|")
                && l.ends_with(&format!("|{digest}\n")))
            .count(),
        1
    );
}

macro_rules! on_backend {
    ($backend:ident) => {
        on_backend!(
            $backend:
            empty_ledger,
            sale_play_redemption,
            the_log,
            entries_by_position,
            end_of_claims,
            tampering_is_seen,
            reads_in_one_snapshot,
            schema_versions,
            emission_rows,
            operator_controls,
            void_races_a_first_roll,
            prizes_remaining,
            closing_statement,
            batch_mates
        );
    };
    ($backend:ident: $($scenario:ident),+) => {
        mod $backend {
            $(
                #[test]
                fn $scenario() {
                    super::run(
                        super::$backend,
                        concat!("conformance::", stringify!($backend), "::", stringify!($scenario)),
                        super::$scenario,
                    );
                }
            )+
        }
    };
}

on_backend!(sqlite);
on_backend!(postgres);

/// PostgreSQL's own integrity check (docs/REDEMPTION.md §`issuer ledger`):
/// a redemption that is neither in the log nor queued for it (inserted
/// behind the ledger's back) fails `integrity_ok`.
#[test]
fn postgres_integrity_sees_a_row_outside_the_log_and_its_queue() {
    run(
        postgres,
        "conformance::postgres_integrity_sees_a_row_outside_the_log_and_its_queue",
        |b| {
            let r = b.redeemer();
            let id = te(b, 0);
            r.mark_sold(std::slice::from_ref(&id), None).unwrap();
            played_in(&r, &id, None);
            r.redeem(&id, None).unwrap();
            assert!(b.target.summary().unwrap().integrity_ok);
            b.sql(
                "INSERT INTO redemptions (game, emission, block, unit_index, unit_id, price_cents,
                     lot, prize_cents, record_sha256, record, rules_version, stopped_after_rolls,
                     redeemed_at)
                 SELECT game, emission, block, unit_index + 1, unit_id, price_cents, lot,
                     prize_cents, record_sha256, record, rules_version, stopped_after_rolls,
                     redeemed_at
                 FROM redemptions",
            );
            let s = b.target.summary().unwrap();
            assert!(!s.integrity_ok, "{s:?}");
        },
    );
}
