//! The node's own counters and latency histogram, rendered for
//! `GET /metrics` in the Prometheus text exposition format 0.0.4. The
//! names, labels and values are a contract (docs/API.md §Metrics,
//! docs/OPERATIONS.md), so the registry is written out here rather than
//! taken from a metrics crate: every line is the one documented.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use axum::http::StatusCode;
use ticket_issuer_core::money::Cents;

/// Upper bounds (seconds) of the latency histogram's buckets.
const BUCKETS: [f64; 11] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Counters for `/metrics`.
#[derive(Default)]
pub(crate) struct Metrics {
    pub(crate) redemptions: AtomicU64,
    pub(crate) sales: AtomicU64,
    pub(crate) play_steps: AtomicU64,
    pub(crate) unauthorized: AtomicU64,
    refusals: Mutex<BTreeMap<&'static str, u64>>,
    /// Answers by (route as matched, method, status).
    answers: Mutex<BTreeMap<(String, String, u16), u64>>,
    /// Cents paid by this node's redemptions.
    paid_cents: AtomicU64,
    buckets: [AtomicU64; BUCKETS.len()],
    latency_count: AtomicU64,
    latency_micros: AtomicU64,
}

impl Metrics {
    /// A redemption paid `prize` euros.
    pub(crate) fn paid(&self, prize: &str) {
        let cents = Cents::parse_price(prize).unwrap_or(0);
        self.paid_cents
            .fetch_add(u64::from(cents), Ordering::Relaxed);
    }

    /// A unit's work answered as `kind`: a redemption, a sale or a play
    /// step is counted.
    pub(crate) fn done(&self, kind: &str) {
        let counter = match kind {
            "redemption" => &self.redemptions,
            "sale" => &self.sales,
            "play" => &self.play_steps,
            _ => return,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// An answer, by its route as matched, method and status.
    pub(crate) fn answered(&self, route: &str, method: &str, status: StatusCode) {
        *self
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((route.to_string(), method.to_string(), status.as_u16()))
            .or_default() += 1;
    }

    /// A refusal, by its error code.
    pub(crate) fn refused(&self, code: &'static str) {
        *self
            .refusals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(code)
            .or_default() += 1;
    }

    /// A request answered in `took`.
    pub(crate) fn observe(&self, took: Duration) {
        let secs = took.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        self.latency_micros
            .fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// Prometheus text exposition format 0.0.4.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        out += "# HELP issuer_redemptions_total Units redeemed (durable).\n";
        out += "# TYPE issuer_redemptions_total counter\n";
        out += &format!(
            "issuer_redemptions_total {}\n",
            self.redemptions.load(Ordering::Relaxed)
        );
        out += "# HELP issuer_sales_total Units sold (durable).\n";
        out += "# TYPE issuer_sales_total counter\n";
        out += &format!(
            "issuer_sales_total {}\n",
            self.sales.load(Ordering::Relaxed)
        );
        out += "# HELP issuer_play_steps_total Play steps (rolls, stops) answered.\n";
        out += "# TYPE issuer_play_steps_total counter\n";
        out += &format!(
            "issuer_play_steps_total {}\n",
            self.play_steps.load(Ordering::Relaxed)
        );
        out += "# HELP issuer_refusals_total Requests refused, by error kind.\n";
        out += "# TYPE issuer_refusals_total counter\n";
        for (code, n) in self
            .refusals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            out += &format!("issuer_refusals_total{{error=\"{code}\"}} {n}\n");
        }
        out += "# HELP issuer_unauthorized_total Requests refused for a missing or wrong token.\n";
        out += "# TYPE issuer_unauthorized_total counter\n";
        out += &format!(
            "issuer_unauthorized_total {}\n",
            self.unauthorized.load(Ordering::Relaxed)
        );
        out +=
            "# HELP issuer_request_duration_seconds Time to answer a request (sale, play step, redemption, batch, check, sale under a key).\n";
        out += "# TYPE issuer_request_duration_seconds histogram\n";
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            out += &format!(
                "issuer_request_duration_seconds_bucket{{le=\"{bound}\"}} {}\n",
                bucket.load(Ordering::Relaxed)
            );
        }
        let count = self.latency_count.load(Ordering::Relaxed);
        out += &format!("issuer_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}\n");
        out += &format!(
            "issuer_request_duration_seconds_sum {}\n",
            self.latency_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        out += &format!("issuer_request_duration_seconds_count {count}\n");
        out += "# HELP issuer_http_requests_total Requests answered, by route (as matched; `unmatched` for none), method and status.\n";
        out += "# TYPE issuer_http_requests_total counter\n";
        for ((route, method, status), n) in self
            .answers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            out += &format!(
                "issuer_http_requests_total{{route=\"{route}\",method=\"{method}\",status=\"{status}\"}} {n}\n"
            );
        }
        out += "# HELP issuer_paid_euros_total Amount this node's redemptions paid (durable), euros.\n";
        out += "# TYPE issuer_paid_euros_total counter\n";
        out += &format!(
            "issuer_paid_euros_total {}\n",
            Cents::from(self.paid_cents.load(Ordering::Relaxed))
        );
        out += "# HELP issuer_build_info The issuer's version (always 1).\n";
        out += "# TYPE issuer_build_info gauge\n";
        out += &format!(
            "issuer_build_info{{version=\"{}\"}} 1\n",
            env!("CARGO_PKG_VERSION")
        );
        out
    }

    /// The rollback gauge (docs/API.md §Metrics): 1 when the ledger's log
    /// does not extend the head this node signed or saw.
    pub(crate) fn render_rolled_back(out: &mut String, rolled_back: bool) {
        out.push_str("# HELP issuer_ledger_rolled_back 1 when the ledger's log does not extend the head this node signed or saw (nothing is sold, played or paid).\n");
        out.push_str("# TYPE issuer_ledger_rolled_back gauge\n");
        out.push_str(&format!(
            "issuer_ledger_rolled_back {}\n",
            u8::from(rolled_back)
        ));
    }
}
