//! A node's ledgers (docs/REDEMPTION.md §Several ledgers): one, or
//! several with the operator's routing table, each with its own redeemer
//! (its writer, its bindings, its remembered head) and its own health
//! probe. A request about a unit or an emission goes to the ledger its
//! emission is routed to; a sale tries the ledgers in the table's order.

use std::sync::Arc;

use ticket_issuer_core::error::Error;
use ticket_issuer_core::game::Game;
use ticket_issuer_core::unit_id::UnitId;
use ticket_issuer_ledger::redeemer::Redeemer;
use ticket_issuer_ledger::routing::Routes;

use crate::health::LedgerHealth;

/// The ledgers a node is given.
pub struct NodeLedgers {
    each: Vec<(String, Redeemer)>,
    routes: Option<Arc<Routes>>,
}

impl NodeLedgers {
    /// One ledger: every emission goes through it.
    #[must_use]
    pub fn one(redeemer: Redeemer) -> NodeLedgers {
        NodeLedgers {
            each: vec![(String::new(), redeemer)],
            routes: None,
        }
    }

    /// `routes`'s ledgers, `open` making each one's redeemer (routed to
    /// it) from its name and URL.
    pub fn routed(
        routes: Arc<Routes>,
        mut open: impl FnMut(&str, &str) -> Result<Redeemer, Error>,
    ) -> Result<NodeLedgers, Error> {
        let each = routes
            .ledgers()
            .iter()
            .map(|(name, url)| {
                let r = open(name, url)?.with_route(Arc::clone(&routes), name);
                Ok((name.clone(), r))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(NodeLedgers {
            each,
            routes: Some(routes),
        })
    }

    /// Each redeemer changed by `f`.
    #[must_use]
    pub fn map(self, mut f: impl FnMut(Redeemer) -> Redeemer) -> NodeLedgers {
        NodeLedgers {
            each: self.each.into_iter().map(|(n, r)| (n, f(r))).collect(),
            routes: self.routes,
        }
    }

    /// The redeemers, in order.
    pub fn redeemers(&self) -> impl Iterator<Item = &Redeemer> {
        self.each.iter().map(|(_, r)| r)
    }

    /// Whether the node has several ledgers.
    #[must_use]
    pub fn several(&self) -> bool {
        self.routes.is_some()
    }

    pub(crate) fn into_running(self) -> Ledgers {
        Ledgers {
            each: self
                .each
                .into_iter()
                .map(|(name, redeemer)| NodeLedger {
                    name,
                    redeemer,
                    health: Arc::default(),
                })
                .collect(),
            routes: self.routes,
        }
    }
}

/// One of a running node's ledgers.
pub(crate) struct NodeLedger {
    /// Its name in the routing table (empty with one ledger).
    pub(crate) name: String,
    pub(crate) redeemer: Redeemer,
    /// Whether it answers, as last probed.
    pub(crate) health: Arc<LedgerHealth>,
}

/// A running node's ledgers.
pub(crate) struct Ledgers {
    each: Vec<NodeLedger>,
    routes: Option<Arc<Routes>>,
}

/// Which of a node's ledgers a request goes to.
#[derive(Clone)]
pub(crate) enum Route {
    /// The first (a node with one ledger: it).
    First,
    /// The one a unit's emission is routed to (an ID that does not parse:
    /// the first, whose answer refuses it).
    Unit(String),
    /// The one an emission is routed to.
    Emission(Game, u32),
    /// Each in turn, until one answers other than "none here". `keyed`: the
    /// request carries an idempotency key, which any ledger may hold (a
    /// retry of a sale made in another): every ledger must answer.
    Each { keyed: bool },
}

impl Ledgers {
    /// The first ledger.
    pub(crate) fn first(&self) -> &NodeLedger {
        &self.each[0]
    }

    /// Every ledger, in order.
    pub(crate) fn all(&self) -> &[NodeLedger] {
        &self.each
    }

    /// The indices of the ledgers `route` goes to, in order.
    pub(crate) fn route(&self, route: &Route) -> Result<Vec<usize>, Error> {
        let Some(routes) = &self.routes else {
            return Ok(vec![0]);
        };
        let emission = match route {
            Route::First => return Ok(vec![0]),
            Route::Each { .. } => return Ok((0..self.each.len()).collect()),
            Route::Unit(id) => match id.parse::<UnitId>() {
                Ok(id) => (id.game, id.emission),
                Err(_) => return Ok(vec![0]),
            },
            Route::Emission(game, emission) => (*game, *emission),
        };
        let name = routes.route(emission.0, emission.1)?;
        let n = self
            .each
            .iter()
            .position(|l| l.name == name)
            .ok_or_else(|| Error::Internal {
                what: format!("the routing table's ledger {name:?} is not one of the node's"),
            })?;
        Ok(vec![n])
    }
}
