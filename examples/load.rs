//! Load client for `issuer serve` (benches/service.sh; docs/PERFORMANCE.md
//! §Service): N concurrent clients POST distinct unit IDs to
//! /v1/redemptions over keep-alive connections, for at most a count and a
//! time; prints the durable redemption rate and latency percentiles.
//!
//! Usage: load URL[,URL…] TOKEN IDS_FILE [CLIENTS=16] [MAX_SECONDS=60]
//! Several URLs (nodes on one shared ledger, benches/pg_service.sh): client
//! c talks to URL c mod n. Only loopback URLs are accepted.

use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: load URL[,URL...] TOKEN IDS_FILE [CLIENTS] [MAX_SECONDS]");
        std::process::exit(2);
    }
    let (urls, token, ids_file) = (&args[1], &args[2], &args[3]);
    let urls: Vec<&str> = urls.split(',').collect();
    if !urls.iter().all(|u| u.starts_with("http://127.0.0.1:")) {
        eprintln!("load: only http://127.0.0.1 URLs");
        std::process::exit(2);
    }
    let clients: usize = args.get(4).and_then(|c| c.parse().ok()).unwrap_or(16);
    let max = Duration::from_secs(args.get(5).and_then(|c| c.parse().ok()).unwrap_or(60));
    let ids: Vec<String> = std::fs::read_to_string(ids_file)
        .expect("read the IDs file")
        .lines()
        .map(str::to_string)
        .collect();
    let endpoints: Vec<String> = urls.iter().map(|u| format!("{u}/v1/redemptions")).collect();
    let auth = format!("Bearer {token}");
    let started = Instant::now();
    let deadline = started + max;
    let results: Vec<(Vec<Duration>, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                let (ids, endpoint, auth) = (&ids, &endpoints[c % endpoints.len()], &auth);
                s.spawn(move || {
                    let agent: ureq::Agent = ureq::Agent::config_builder()
                        .http_status_as_error(false)
                        .build()
                        .into();
                    let mut latencies = Vec::new();
                    let mut refused = 0;
                    for id in ids.iter().skip(c).step_by(clients) {
                        if Instant::now() > deadline {
                            break;
                        }
                        let t = Instant::now();
                        let mut r = agent
                            .post(endpoint)
                            .header("Authorization", auth)
                            .content_type("application/json")
                            .send(format!("{{\"id\":\"{id}\"}}"))
                            .expect("the service answers");
                        let _ = r.body_mut().read_to_string();
                        if r.status().as_u16() == 200 {
                            latencies.push(t.elapsed());
                        } else {
                            refused += 1;
                        }
                    }
                    (latencies, refused)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a client"))
            .collect()
    });
    let elapsed = started.elapsed();
    let refused: u64 = results.iter().map(|r| r.1).sum();
    let mut all: Vec<Duration> = results.into_iter().flat_map(|r| r.0).collect();
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    println!(
        "clients {clients} over {} node(s): {} redeemed, {refused} refused in {:.2} s: {:.0} durable redemptions/s; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        endpoints.len(),
        all.len(),
        elapsed.as_secs_f64(),
        all.len() as f64 / elapsed.as_secs_f64(),
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        all.last().copied().unwrap_or_default().as_secs_f64() * 1e3
    );
}
