//! What every handler shares: the redeemer, the accepted tokens, the
//! counters, the limits and the node's background watches.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ticket_issuer_core::error::Error;
use ticket_issuer_core::game::Game;
use ticket_issuer_ledger::redeemer::{Redeemer, RevealedPrizes};

use crate::access_log::AccessLog;
use crate::cosigning::Cosigning;
use crate::ledgers::Ledgers;
use crate::metrics::Metrics;
use crate::tokens::TokenSet;
use crate::top_lots::Watch;

/// What every handler shares.
pub(crate) struct Shared {
    /// The node's ledgers (one, or several with a routing table).
    pub(crate) ledgers: Ledgers,
    /// The accepted tokens (replaced whole on SIGHUP).
    pub(crate) tokens: TokenSet,
    /// The access log, if one was asked for.
    pub(crate) access_log: Option<AccessLog>,
    pub(crate) metrics: Metrics,
    /// `/healthz` and `/readyz` need no token.
    pub(crate) public_health: bool,
    /// `/v1/log/…` needs no token.
    pub(crate) public_log: bool,
    /// The player page is served (its files need no token).
    pub(crate) player_page: bool,
    /// A slot per request handled at once (`max_in_flight`).
    pub(crate) in_flight: Arc<tokio::sync::Semaphore>,
    /// How long a request's body may take to arrive.
    pub(crate) body_wait: Duration,
    /// The top-lots watch, if asked for.
    pub(crate) top_lots: Option<Arc<Watch>>,
    /// The collector of witnesses' cosignatures, if any are configured.
    pub(crate) cosigning: Option<Arc<Cosigning>>,
    /// Prizes remaining as last computed (`GET /v1/remaining`).
    pub(crate) remaining: RemainingCache,
}

/// The state every handler is given.
pub(crate) type AppState = Arc<Shared>;

/// The first ledger's redeemer: the background tasks a node with several
/// ledgers does not run (the top-lots watch, the witnesses' cosigning)
/// take it.
impl AsRef<Redeemer> for Shared {
    fn as_ref(&self) -> &Redeemer {
        &self.ledgers.first().redeemer
    }
}

/// How long a published figure of prizes remaining is answered again
/// before it is computed anew (docs/API.md: `GET /v1/remaining`).
pub(crate) const REMAINING_TTL: std::time::Duration = std::time::Duration::from_secs(30);

/// The figures of prizes remaining last computed, per game and price: a
/// platform shows them to players on every page, and each computation
/// reads the emission's rows and the revealed units' records. When they
/// are computed again depends on the requests' times only.
#[derive(Default)]
pub(crate) struct RemainingCache {
    slots: std::sync::Mutex<HashMap<(&'static str, u32), Arc<SlotLock>>>,
}

/// One game and price's figures and when they were computed, locked while
/// they are computed.
type SlotLock = std::sync::Mutex<Option<(std::time::Instant, RevealedPrizes)>>;

impl RemainingCache {
    /// `game`'s figures at `price` no older than [`REMAINING_TTL`]; one
    /// computation at a time per game and price, the others wait for it.
    pub(crate) fn get(
        &self,
        game: Game,
        price: u32,
        compute: impl FnOnce() -> Result<RevealedPrizes, Error>,
    ) -> Result<RevealedPrizes, Error> {
        game.check_price(price)?;
        let slot = Arc::clone(
            self.slots
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry((game.slug(), price))
                .or_default(),
        );
        let mut held = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, figures)) = &*held {
            if at.elapsed() < REMAINING_TTL {
                return Ok(figures.clone());
            }
        }
        let figures = compute()?;
        *held = Some((std::time::Instant::now(), figures.clone()));
        Ok(figures)
    }
}

/// The redeemer of a node's `n`th ledger, for the background tasks that
/// take one (the health probe).
pub(crate) struct NthLedger(pub(crate) AppState, pub(crate) usize);

impl AsRef<Redeemer> for NthLedger {
    fn as_ref(&self) -> &Redeemer {
        &self.0.ledgers.all()[self.1].redeemer
    }
}
