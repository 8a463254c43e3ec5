//! Who a request is answered for ([`Asker`]): its lane, and whether it
//! sees only its own units.

use super::keyed::{self, KeyedRequest};
use crate::ledger::ops::{Laned, Op};

/// Who a request is answered for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Asker {
    /// The operator's own command, run with the store (`issuer redeem`,
    /// `sell`, …): every unit; its sales are in no platform's lane.
    Operator,
    /// A token with the operator role (named): every unit; the sales it
    /// makes are in its lane.
    OperatorToken(String),
    /// A sales platform's token (its name is its lane): its own units
    /// only. Two tokens of one name share a lane (a rotation).
    Platform(String),
}

impl Asker {
    /// The lane its sales and keys are recorded in (`None`: the
    /// operator's own commands).
    #[must_use]
    pub fn lane(&self) -> Option<&str> {
        match self {
            Asker::Operator => None,
            Asker::OperatorToken(name) | Asker::Platform(name) => Some(name),
        }
    }

    /// Whether it sees only the units of its lane.
    #[must_use]
    pub fn own_units_only(&self) -> bool {
        matches!(self, Asker::Platform(_))
    }

    /// Whether it is a platform (answered [platform
    /// reports](crate::error::Error::platform_report)).
    #[must_use]
    pub fn is_platform(&self) -> bool {
        self.own_units_only()
    }

    /// `op` done for it: in its lane, under `key` when given.
    pub(super) fn op(&self, key: Option<KeyedRequest>, op: Op) -> Op {
        let op = match self.lane() {
            Some(lane) => Op::Laned(Laned {
                lane: lane.to_string(),
                own_units_only: self.own_units_only(),
                op: Box::new(op),
            }),
            None => op,
        };
        keyed::op(key, op)
    }
}
