//! Load client for selling and playing through `issuer serve`
//! (benches/sale.sh; docs/PERFORMANCE.md §Sales and plays). N concurrent
//! keep-alive clients, for at most a count and a time:
//!   `sell`: POST /v1/sales until COUNT units are sold (or sold out);
//!   `play`: a whole Trésors Ensablés unit each time: sale, rolls one at a
//!           time until a stop is allowed (then stop) or the play ends, and
//!           the redemption, every step durable before its answer.
//! Prints the rate and latency percentiles of whole operations.
//!
//! Usage: play_load sell|play URL[,URL…] TOKEN GAME PRICE COUNT [CLIENTS=16] [MAX_SECONDS=60]
//! Several URLs (nodes on one shared ledger): client c talks to URL c mod n,
//! a whole play included. Only loopback URLs are accepted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn post(agent: &ureq::Agent, url: &str, auth: &str, body: &Value) -> (u16, Value) {
    let mut r = agent
        .post(url)
        .header("Authorization", auth)
        .content_type("application/json")
        .send(body.to_string())
        .expect("the service answers");
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (
        r.status().as_u16(),
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 7 {
        eprintln!(
            "usage: play_load sell|play URL[,URL...] TOKEN GAME PRICE COUNT [CLIENTS] [MAX_SECONDS]"
        );
        std::process::exit(2);
    }
    let (mode, urls, token, game, price) = (&args[1], &args[2], &args[3], &args[4], &args[5]);
    let urls: Vec<&str> = urls.split(',').collect();
    if !urls.iter().all(|u| u.starts_with("http://127.0.0.1:")) {
        eprintln!("play_load: only http://127.0.0.1 URLs");
        std::process::exit(2);
    }
    let count: u64 = args[6].parse().expect("COUNT is a number");
    let clients: usize = args.get(7).and_then(|c| c.parse().ok()).unwrap_or(16);
    let max = Duration::from_secs(args.get(8).and_then(|c| c.parse().ok()).unwrap_or(60));
    let auth = format!("Bearer {token}");
    let started = Instant::now();
    let deadline = started + max;
    let taken = AtomicU64::new(0);
    let steps = AtomicU64::new(0);
    let results: Vec<Vec<Duration>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                let (auth, taken, steps) = (&auth, &taken, &steps);
                let url = urls[c % urls.len()];
                s.spawn(move || {
                    let agent: ureq::Agent = ureq::Agent::config_builder()
                        .http_status_as_error(false)
                        .build()
                        .into();
                    let mut latencies = Vec::new();
                    while Instant::now() < deadline && taken.fetch_add(1, Ordering::Relaxed) < count
                    {
                        let t = Instant::now();
                        let (status, sale) = post(
                            &agent,
                            &format!("{url}/v1/sales"),
                            auth,
                            &json!({"game": game, "price": price}),
                        );
                        if status != 200 {
                            assert_eq!(sale["error"], "sold_out", "{sale}");
                            break;
                        }
                        let id = sale["id"].as_str().expect("a sale has an ID").to_string();
                        if mode == "play" {
                            for n in 1.. {
                                let (status, roll) = post(
                                    &agent,
                                    &format!("{url}/v1/plays/{id}/roll"),
                                    auth,
                                    &json!({ "roll": n }),
                                );
                                assert_eq!(status, 200, "{roll}");
                                steps.fetch_add(1, Ordering::Relaxed);
                                if roll["may_stop"] == true {
                                    let (status, stop) = post(
                                        &agent,
                                        &format!("{url}/v1/plays/{id}/stop"),
                                        auth,
                                        &json!({}),
                                    );
                                    assert_eq!(status, 200, "{stop}");
                                    steps.fetch_add(1, Ordering::Relaxed);
                                    break;
                                }
                                if roll["over"] == true {
                                    break;
                                }
                            }
                            let (status, paid) = post(
                                &agent,
                                &format!("{url}/v1/redemptions"),
                                auth,
                                &json!({ "id": id }),
                            );
                            assert_eq!(status, 200, "{paid}");
                        }
                        latencies.push(t.elapsed());
                    }
                    latencies
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a client"))
            .collect()
    });
    let elapsed = started.elapsed();
    let mut all: Vec<Duration> = results.into_iter().flatten().collect();
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    let what = if mode == "play" {
        format!(
            "whole plays (sale, {} rolls and stops, redemption)",
            steps.load(Ordering::Relaxed)
        )
    } else {
        "sales".to_string()
    };
    println!(
        "clients {clients} over {} node(s): {} {what} in {:.2} s: {:.0}/s; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        urls.len(),
        all.len(),
        elapsed.as_secs_f64(),
        all.len() as f64 / elapsed.as_secs_f64(),
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        all.last().copied().unwrap_or_default().as_secs_f64() * 1e3
    );
}
