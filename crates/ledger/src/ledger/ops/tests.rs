use std::collections::{BTreeSet, HashMap};

use std::sync::Arc;

use super::*;
use crate::error::Error;
use crate::game::Game;
use crate::ledger::claims::EndOfClaims;
use crate::ledger::log::{self, Place};
use crate::ledger::operator::{Action, Gate, OperatorAction, Why};
use crate::ledger::Entry;
use crate::merkle::Frontier;

/// A ledger in memory that counts the reads of unit rows.
#[derive(Default)]
struct Memory {
    sold: BTreeSet<u32>,
    cursor: u32,
    unit_reads: usize,
    kept: HashMap<String, KeptRow>,
    claims: Option<(EndOfClaims, Option<u64>)>,
    actions: Vec<OperatorAction>,
    rolls: HashMap<u32, u32>,
    cursors: HashMap<u32, u32>,
    /// The log's right edge: entries are appended as they commit.
    log: Frontier,
}

/// Units a block of [`Memory`] spans: block b's unit i is kept as
/// (b − 1) × `BLOCK_SPAN` + i (block 1's as its index).
const BLOCK_SPAN: u32 = 10_000_000;

fn at(p: Place) -> u32 {
    (p.block - 1) * BLOCK_SPAN + p.index
}

impl LedgerTx for Memory {
    fn log_edge(&mut self) -> Option<&mut Frontier> {
        Some(&mut self.log)
    }
    fn gate(&mut self, _: &str, _: u32) -> Result<Gate, Error> {
        let mut gate = Gate {
            claims_ended: self.claims.as_ref().map(|(s, _)| s.ended_at.clone()),
            ..Gate::default()
        };
        for a in &self.actions {
            let why = Why {
                at: a.at.clone(),
                reason: a.reason.clone(),
            };
            gate.apply(a.action, a.block, why);
        }
        Ok(gate)
    }
    fn insert_action(&mut self, a: &OperatorAction, _: Logged) -> Result<(), Error> {
        self.actions.push(a.clone());
        Ok(())
    }
    fn voided(&mut self, p: Place) -> Result<Option<String>, Error> {
        Ok(self
            .actions
            .iter()
            .find(|a| {
                a.action == Action::Void && a.index == Some(p.index) && a.block == Some(p.block)
            })
            .map(|a| a.at.clone()))
    }
    fn claims_row(&mut self, _: &str, _: u32) -> Result<Option<(EndOfClaims, Option<u64>)>, Error> {
        Ok(self.claims.clone())
    }
    fn log_claims_end(&mut self, s: &EndOfClaims, logged: Logged) -> Result<(), Error> {
        assert!(self.claims.as_ref().is_none_or(|(_, seq)| seq.is_none()));
        self.claims = Some((s.clone(), logged.map(|(seq, _)| seq)));
        Ok(())
    }
    fn redemption(&mut self, _: Place) -> Result<Option<(String, u32)>, Error> {
        Ok(None)
    }
    fn insert_redemption(&mut self, _: &Entry, _: &str, _: Logged) -> Result<bool, Error> {
        Ok(true)
    }
    fn sale(&mut self, p: Place) -> Result<Option<SaleRow>, Error> {
        self.unit_reads += 1;
        Ok(self.sold.contains(&at(p)).then(|| SaleRow {
            sold_at: "then".into(),
            lane: None,
        }))
    }
    fn insert_sale(&mut self, p: Place, _: &str, _: Option<&str>, _: Logged) -> Result<(), Error> {
        assert!(self.sold.insert(at(p)), "unit {} sold twice", p.index);
        Ok(())
    }
    fn sale_cursor(&mut self, _: &str, _: u32, block: u32) -> Result<u32, Error> {
        Ok(match block {
            1 => self.cursor,
            _ => self.cursors.get(&block).copied().unwrap_or(0),
        })
    }
    fn first_unsold(&mut self, _: &str, _: u32, block: u32, from: u32) -> Result<u32, Error> {
        self.unit_reads += 1;
        let base = (block - 1) * BLOCK_SPAN;
        Ok((from..BLOCK_SPAN)
            .find(|i| !self.sold.contains(&(base + i)))
            .unwrap_or(u32::MAX))
    }
    fn set_sale_cursor(&mut self, _: &str, _: u32, block: u32, next: u32) -> Result<(), Error> {
        match block {
            1 => self.cursor = next,
            _ => drop(self.cursors.insert(block, next)),
        }
        Ok(())
    }
    fn play(&mut self, p: Place) -> Result<Option<PlayRow>, Error> {
        Ok(self
            .rolls
            .get(&at(p))
            .map(|&steps| PlayRow { steps, ended: None }))
    }
    fn kept(&mut self, key: &str) -> Result<Option<KeptRow>, Error> {
        Ok(self.kept.get(key).cloned())
    }
    fn keep(&mut self, key: &str, row: &KeptRow, _: &str) -> Result<(), Error> {
        assert!(self.kept.insert(key.into(), row.clone()).is_none());
        Ok(())
    }
    fn kept_batch(&mut self, _: &str) -> Result<Option<String>, Error> {
        Ok(None)
    }
    fn put_play(&mut self, p: Place, row: &PlayRow, _: &str, _: Logged) -> Result<(), Error> {
        self.rolls.insert(at(p), row.steps);
        Ok(())
    }
}

/// `ops` applied to `tx`, appending to its log (as SQLite does).
fn applied(tx: &mut Memory, at: &str, ops: &[Op]) -> Vec<Result<Done, Error>> {
    apply(tx, at, ops).unwrap()
}

fn sell(vet: Vetter) -> Op {
    Op::Sell {
        game: Game::TRESORS_ENSABLES,
        price_cents: 100,
        blocks: vec![ForSale {
            emission: 1,
            block: 1,
            units: 450_000,
        }],
        vet,
    }
}

fn any_unit() -> Vetter {
    Vetter(Arc::new(|u| {
        Ok(Vetted {
            id: format!("TE-1-1-{}-X", u.index),
            shown: serde_json::Value::Null,
            prefix: None,
        })
    }))
}

fn sold_index(outcome: &Result<Done, Error>) -> u32 {
    match outcome {
        Ok(Done::Sold(s)) => s.unit.index,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_first_sale_after_a_block_was_marked_sold_reads_a_handful_of_rows_not_the_block() {
    let mut tx = Memory {
        sold: (0..449_999).filter(|i| *i != 300_000).collect(),
        ..Memory::default()
    };
    let done = applied(&mut tx, "now", &[sell(any_unit()), sell(any_unit())]);
    assert_eq!(
        (sold_index(&done[0]), sold_index(&done[1])),
        (300_000, 449_999)
    );
    assert!(
        tx.unit_reads <= 8,
        "{} unit reads under the write lock",
        tx.unit_reads
    );
}

#[test]
fn units_marked_in_order_move_the_cursor_and_out_of_order_never_past_a_gap() {
    let mut tx = Memory::default();
    let mark = |index| Op::MarkSold {
        unit: UnitRef {
            game: Game::TRESORS_ENSABLES,
            emission: 1,
            block: 1,
            index,
        },
        unit_id: format!("TE-1-1-{index}-X"),
    };
    let ops: Vec<Op> = [0, 1, 2, 5, 3].into_iter().map(mark).collect();
    applied(&mut tx, "now", &ops);
    assert_eq!(tx.cursor, 4, "past 0..=3, not past the unsold 4");
    let done = applied(&mut tx, "now", &[sell(any_unit())]);
    assert_eq!(sold_index(&done[0]), 4);
    assert_eq!(tx.cursor, 6);
}

#[test]
fn a_unit_the_vetter_refuses_is_not_sold_and_the_cursor_stays() {
    let mut tx = Memory::default();
    let refuse = Vetter(Arc::new(|u| {
        Err(Error::BlockRejected {
            path: "b.tkb".into(),
            reason: format!("unit {}: chunk 0 does not open", u.index),
        })
    }));
    for _ in 0..3 {
        let done = applied(&mut tx, "now", &[sell(refuse.clone())]);
        assert!(matches!(done[0], Err(Error::BlockRejected { .. })));
    }
    assert!(tx.sold.is_empty());
    assert_eq!(tx.log.size(), 0, "nothing was logged");
    let done = applied(&mut tx, "now", &[sell(any_unit())]);
    assert_eq!(sold_index(&done[0]), 0, "no unit was burned");
}

fn end_claims(ended_at: &str) -> Op {
    Op::EndClaims(EndOfClaims {
        game: Game::TRESORS_ENSABLES.slug().into(),
        emission: 1,
        ended_at: ended_at.into(),
        statement: format!("statement {ended_at}"),
    })
}

#[test]
fn an_end_of_claims_is_logged_once_stops_the_rest_of_its_batch_and_adopts_an_older_row() {
    let mut tx = Memory::default();
    let mark = Op::MarkSold {
        unit: UnitRef {
            game: Game::TRESORS_ENSABLES,
            emission: 1,
            block: 1,
            index: 0,
        },
        unit_id: "TE-1-1-0-X".into(),
    };
    let done = applied(&mut tx, "now", &[end_claims("T1"), mark, end_claims("T2")]);
    assert!(matches!(done[0], Ok(Done::ClaimsEnded { seq: Some(0) })));
    assert!(matches!(done[1], Err(Error::ClaimsEnded { .. })));
    assert!(
        matches!(done[2], Ok(Done::ClaimsEnded { seq: Some(0) })),
        "the first stands"
    );
    assert_eq!(tx.log.size(), 1);
    let (stored, _) = tx.claims.clone().unwrap();
    assert_eq!(stored.ended_at, "T1");
    // Its leaf is the claims/v1 line of the statement as stored.
    let mut alone = Frontier::default();
    alone.push(log::LogEntry::EndOfClaims(&stored).leaf(0));
    assert_eq!(tx.log.root(), alone.root());
    // A row stored before ends of claims were logged: logged as stored.
    tx.claims = Some((stored.clone(), None));
    let done = applied(&mut tx, "later", &[end_claims("T3")]);
    assert!(matches!(done[0], Ok(Done::ClaimsEnded { seq: Some(1) })));
    assert_eq!(tx.claims.unwrap().0.ended_at, "T1");
}

fn keyed(key: &str, request: &str, op: Op) -> Op {
    Op::Keyed(Keyed {
        key: key.into(),
        request: request_digest(&[request]),
        what: request.into(),
        op: Box::new(op),
    })
}

#[test]
fn a_key_is_applied_once_in_a_batch_and_across_batches_and_refused_for_another_request() {
    let mut tx = Memory::default();
    let ops = [
        keyed("k1", "sale", sell(any_unit())),
        keyed("k1", "sale", sell(any_unit())),
        keyed("k1", "other", sell(any_unit())),
        keyed("k2", "sale", sell(any_unit())),
    ];
    let done = applied(&mut tx, "now", &ops);
    assert_eq!((sold_index(&done[0]), sold_index(&done[1])), (0, 0));
    assert!(matches!(done[2], Err(Error::IdempotencyKeyReused { .. })));
    assert_eq!(sold_index(&done[3]), 1);
    let again = applied(&mut tx, "later", &ops[..1]);
    assert_eq!(
        KeptAnswer::of(again[0].as_ref().unwrap()),
        KeptAnswer::of(done[0].as_ref().unwrap())
    );
    assert_eq!(tx.sold.len(), 2);
    assert_eq!(tx.kept.len(), 2);
    let reused = applied(&mut tx, "later", &ops[2..3]);
    assert!(matches!(reused[0], Err(Error::IdempotencyKeyReused { .. })));
}

#[test]
fn keys_are_checked_and_kept_answers_round_trip() {
    for good in ["a", "0f8c-uuid-like:1.2_3", &"k".repeat(128)] {
        check_key(good).unwrap();
    }
    for bad in ["", "a b", "a#1", "é", &"k".repeat(129)] {
        assert!(
            matches!(check_key(bad), Err(Error::BadIdempotencyKey { .. })),
            "{bad:?}"
        );
    }
    let kept = KeptAnswer::Played {
        steps: 3,
        ended: Some("stop".into()),
        replayed: false,
        seq: Some(9),
    };
    let text = serde_json::to_string(&kept).unwrap();
    assert_eq!(
        text,
        r#"{"done":"played","rolls":3,"ended":"stop","replayed":false,"seq":9}"#
    );
    assert_eq!(serde_json::from_str::<KeptAnswer>(&text).unwrap(), kept);
    assert_eq!(KeptAnswer::of(&kept.done().unwrap()), kept);
}
fn act(action: Action, block: Option<u32>, index: Option<u32>) -> Op {
    Op::Operator(OperatorAction {
        action,
        game: Game::TRESORS_ENSABLES.slug().into(),
        emission: 1,
        block,
        index,
        unit_id: None,
        reason: "test".into(),
        by: "ops".into(),
        at: String::new(),
    })
}

fn two_blocks() -> Op {
    Op::Sell {
        game: Game::TRESORS_ENSABLES,
        price_cents: 100,
        blocks: [1, 2]
            .into_iter()
            .map(|block| ForSale {
                emission: 1,
                block,
                units: 2,
            })
            .collect(),
        vet: any_unit(),
    }
}

fn play_step(index: u32, n: u32) -> Op {
    Op::Play(PlayOrder {
        unit: UnitRef {
            game: Game::TRESORS_ENSABLES,
            emission: 1,
            block: 1,
            index,
        },
        unit_id: format!("TE-1-1-{index}-X"),
        action: PlayAction::Step(n),
        first_stop: Some(1),
        end_step: 10,
    })
}

#[test]
fn a_suspension_stops_sales_and_steps_until_resumed_and_a_withdrawal_skips_its_block_for_good() {
    let mut tx = Memory::default();
    let done = applied(&mut tx, "t0", &[two_blocks()]);
    assert_eq!(sold_index(&done[0]), 0);
    // Block 1 suspended: the sale goes to block 2; a roll of block 1's
    // unit is refused, naming the suspension.
    let done = applied(
        &mut tx,
        "t1",
        &[
            act(Action::Suspend, Some(1), None),
            two_blocks(),
            play_step(0, 1),
        ],
    );
    assert!(matches!(done[0], Ok(Done::Acted { already: false, .. })));
    match &done[1] {
        Ok(Done::Sold(s)) => assert_eq!((s.unit.block, s.unit.index), (2, 0)),
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&done[2], Err(Error::Suspended { block: Some(1), .. })),
        "{:?}",
        done[2]
    );
    // Suspending again records nothing new; resuming twice too.
    let size = tx.log.size();
    let done = applied(&mut tx, "t2", &[act(Action::Suspend, Some(1), None)]);
    assert!(matches!(&done[0], Ok(Done::Acted { already: true, at, .. }) if at == "t1"));
    assert_eq!(tx.log.size(), size);
    let done = applied(
        &mut tx,
        "t3",
        &[
            act(Action::Resume, Some(1), None),
            act(Action::Resume, Some(1), None),
            play_step(0, 1),
        ],
    );
    assert!(matches!(done[0], Ok(Done::Acted { already: false, .. })));
    assert!(
        matches!(done[1], Ok(Done::Acted { already: true, .. })),
        "{:?}",
        done[1]
    );
    assert!(matches!(done[2], Ok(Done::Played(_))), "{:?}", done[2]);
    // Block 2 withdrawn: never sold again; resume is refused; the rest
    // of block 1 sells, then the game is sold out naming block 2.
    let done = applied(
        &mut tx,
        "t4",
        &[
            act(Action::Withdraw, Some(2), None),
            act(Action::Resume, Some(2), None),
            two_blocks(),
            two_blocks(),
        ],
    );
    assert!(matches!(done[1], Err(Error::WithdrawalIsPermanent { .. })));
    match &done[2] {
        Ok(Done::Sold(s)) => assert_eq!((s.unit.block, s.unit.index), (1, 1)),
        other => panic!("{other:?}"),
    }
    match &done[3] {
        Err(Error::SoldOut { withdrawn, .. }) => {
            assert_eq!(withdrawn, &["emission 1 block 2".to_string()]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_suspended_emission_with_units_left_refuses_a_sale_as_suspended() {
    let mut tx = Memory::default();
    let done = applied(
        &mut tx,
        "t1",
        &[act(Action::Suspend, None, None), two_blocks()],
    );
    assert!(
        matches!(done[1], Err(Error::Suspended { block: None, .. })),
        "{:?}",
        done[1]
    );
}

#[test]
fn a_void_holds_before_the_first_step_only_once_and_then_refuses_play_and_payment() {
    let mut tx = Memory::default();
    applied(&mut tx, "t0", &[two_blocks(), two_blocks()]);
    let void = |index| act(Action::Void, Some(1), Some(index));
    let done = applied(
        &mut tx,
        "t1",
        &[play_step(1, 1), void(1), void(0), void(0), play_step(0, 1)],
    );
    assert!(matches!(done[0], Ok(Done::Played(_))));
    assert!(
        matches!(done[1], Err(Error::PlayStarted { steps: 1, .. })),
        "{:?}",
        done[1]
    );
    assert!(matches!(done[2], Ok(Done::Acted { already: false, .. })));
    assert!(matches!(done[3], Ok(Done::Acted { already: true, .. })));
    assert!(
        matches!(done[4], Err(Error::Voided { .. })),
        "{:?}",
        done[4]
    );
    // A unit never sold is not voided.
    let unsold = Op::Operator(OperatorAction {
        block: Some(2),
        index: Some(1),
        ..match void(0) {
            Op::Operator(a) => a,
            _ => unreachable!(),
        }
    });
    let done = applied(&mut tx, "t2", &[unsold]);
    assert!(
        matches!(done[0], Err(Error::NotSold { .. })),
        "{:?}",
        done[0]
    );
}
