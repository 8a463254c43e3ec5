//! The top-lots watch (`serve --alert-top-lots K`, docs/REDEMPTION.md
//! §Prizes remaining): how many units whose outcome is not revealed yet
//! hold one of each game's K highest lots (or prize bands), shown in
//! `/metrics` (the operator's: the `metrics` or `operator` role); with
//! `--stop-selling-when-top-lots-gone`, the blocks of a fixed-table game
//! and price whose top lots are all revealed are suspended, an operator
//! action in the ledger like any other (so every node stops selling them
//! at once, and the log says why and when).
//!
//! Everything it does follows what was revealed, never a sale as such:
//! the figures change only when an outcome is shown (a unit shown whole at
//! its sale, a play that ended), and they are computed again every
//! `every`, and at once after this node shows for the first time the
//! outcome of a unit that holds a top lot (a retry under the same key
//! shows nothing new and wakes nothing). A suspension, which every
//! platform sees, is made only where the lot table says the top lots are
//! all revealed: a fixed-table game's table is public, so that is public
//! too. A drawn game has no table: whether its unrevealed units hold a top
//! band is the operator's to know, and the watch suspends none of it.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ticket_issuer_core::error::Error;
use ticket_issuer_core::game::{Game, PrizeModel};
use ticket_issuer_core::money::Cents;
use ticket_issuer_ledger::ledger::operator::Action;
use ticket_issuer_ledger::redeemer::{FirstShown, Redeemer, TopLots};

/// Who the watch's suspensions are recorded as.
pub const WATCH_NAME: &str = "top-lots-watch";

/// What the operator asked of the watch.
#[derive(Clone, Copy, Debug)]
pub struct TopLotsConfig {
    /// The K highest lots (or bands) watched.
    pub k: u32,
    /// Suspend a game and price's blocks on sale once its top lots are
    /// gone.
    pub stop_selling: bool,
    /// How often the figures are computed.
    pub every: Duration,
}

/// The last computation.
#[derive(Default)]
struct Checked {
    tops: Vec<TopLots>,
    /// Unix seconds it ended.
    at: u64,
    /// Computations done (each a reading of every block on sale).
    checks: u64,
    /// Computations that failed (the error is written to standard error).
    errors: u64,
    /// Blocks the watch suspended.
    suspended: u64,
}

/// The watch, shared by the handlers and its task.
pub(crate) struct Watch {
    config: TopLotsConfig,
    last: Mutex<Checked>,
    wake: tokio::sync::Notify,
}

impl Watch {
    pub(crate) fn new(config: TopLotsConfig) -> Watch {
        Watch {
            config,
            last: Mutex::new(Checked::default()),
            wake: tokio::sync::Notify::new(),
        }
    }

    fn last(&self) -> std::sync::MutexGuard<'_, Checked> {
        self.last.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// This node showed `shown`'s outcome for the first time: computes
    /// again at once if the unit held one of the top lots.
    pub(crate) fn after_reveal(&self, shown: &FirstShown) {
        let price = Cents::from(shown.price_cents).to_string();
        let top = self
            .last()
            .tops
            .iter()
            .any(|t| t.game == shown.game.slug() && t.price == price && t.holds(&shown.held));
        if top {
            self.wake.notify_one();
        }
    }

    /// Computes the figures every period (and when woken) until the
    /// runtime stops.
    pub(crate) async fn run<S: AsRef<Redeemer> + Send + Sync + 'static>(
        self: Arc<Self>,
        state: Arc<S>,
    ) {
        loop {
            let watch = Arc::clone(&self);
            let worker = Arc::clone(&state);
            let checked =
                tokio::task::spawn_blocking(move || watch.check((*worker).as_ref())).await;
            if let Ok(Err(e)) | Err(e) = checked.map_err(|e| Error::Internal {
                what: format!("the top-lots watch failed: {e}"),
            }) {
                self.last().errors += 1;
                eprintln!("serve: the top-lots watch: {e}");
            }
            tokio::select! {
                () = tokio::time::sleep(self.config.every) => {}
                () = self.wake.notified() => {}
            }
        }
    }

    /// One computation, and the suspensions it calls for.
    fn check(&self, redeemer: &Redeemer) -> Result<(), Error> {
        let tops = redeemer.top_lots(self.config.k as usize)?;
        let mut suspended = 0;
        if self.config.stop_selling {
            for top in tops.iter().filter(|t| t.gone && fixed_table(t.game)) {
                suspended += stop_selling(redeemer, top, self.config.k)?;
            }
        }
        let mut last = self.last();
        last.tops = tops;
        last.suspended += suspended;
        last.checks += 1;
        last.at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Ok(())
    }

    /// Its gauges, Prometheus text format.
    pub(crate) fn render(&self, out: &mut String) {
        let last = self.last();
        let k = self.config.k;
        out.push_str(&format!(
            "# HELP issuer_top_lots_remaining Units whose outcome is not revealed yet holding one of a game's {k} highest lots (or prize bands), by game and price.\n"
        ));
        out.push_str("# TYPE issuer_top_lots_remaining gauge\n");
        for t in &last.tops {
            let _ = writeln!(
                out,
                "issuer_top_lots_remaining{{game=\"{}\",price=\"{}\"}} {}",
                t.game, t.price, t.remaining
            );
        }
        out.push_str("# HELP issuer_top_lots_gone 1 when a game's top lots are all revealed while units are still on sale (players would buy tickets that can no longer win them).\n");
        out.push_str("# TYPE issuer_top_lots_gone gauge\n");
        for t in &last.tops {
            let _ = writeln!(
                out,
                "issuer_top_lots_gone{{game=\"{}\",price=\"{}\"}} {}",
                t.game,
                t.price,
                u8::from(t.gone)
            );
        }
        out.push_str("# HELP issuer_top_lots_checked_timestamp_seconds When the figures were last computed (Unix time; 0: not yet).\n");
        out.push_str("# TYPE issuer_top_lots_checked_timestamp_seconds gauge\n");
        let _ = writeln!(out, "issuer_top_lots_checked_timestamp_seconds {}", last.at);
        out.push_str("# HELP issuer_top_lots_checks_total Computations of the figures (each period, and each reveal of a unit holding a top lot).\n");
        out.push_str("# TYPE issuer_top_lots_checks_total counter\n");
        let _ = writeln!(out, "issuer_top_lots_checks_total {}", last.checks);
        out.push_str(
            "# HELP issuer_top_lots_check_errors_total Computations of the figures that failed.\n",
        );
        out.push_str("# TYPE issuer_top_lots_check_errors_total counter\n");
        let _ = writeln!(out, "issuer_top_lots_check_errors_total {}", last.errors);
        out.push_str("# HELP issuer_top_lots_suspensions_total Blocks this node suspended because their game's top lots were gone.\n");
        out.push_str("# TYPE issuer_top_lots_suspensions_total counter\n");
        let _ = writeln!(out, "issuer_top_lots_suspensions_total {}", last.suspended);
    }
}

/// Whether `game` has a lot table (which makes "its top lots are all
/// revealed" a public fact).
fn fixed_table(game: &str) -> bool {
    Game::from_slug(game).is_some_and(|g| g.prize_model() == PrizeModel::FixedTable)
}

/// Suspends every block on sale of `top`'s game at its price; returns
/// how many it suspended now (a block suspended already adds nothing).
fn stop_selling(redeemer: &Redeemer, top: &TopLots, k: u32) -> Result<u64, Error> {
    let game = Game::from_slug(top.game).ok_or_else(|| Error::Internal {
        what: format!("the watch names the unknown game {}", top.game),
    })?;
    let reason = format!(
        "the top {k} lot(s) of {} at {} EUR ({}) are all revealed while {} unit(s) are on sale (serve --stop-selling-when-top-lots-gone)",
        top.game,
        top.price,
        top.top.join(", "),
        top.unsold
    );
    let mut suspended = 0;
    for &(emission, block) in &top.on_sale {
        let acted = redeemer.control(
            Action::Suspend,
            game,
            emission,
            Some(block),
            &reason,
            WATCH_NAME,
            &[],
        )?;
        if !acted.already {
            suspended += 1;
            eprintln!(
                "serve: suspended {} emission {emission} block {block}: {reason}",
                top.game
            );
        }
    }
    Ok(suspended)
}
