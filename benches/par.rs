//! Benchmarks of the PAR sheet's parts (docs/PAR.md, issue 10): the exact
//! Trésors Ensablés figures, the optimal-play induction on one board (f64
//! and exact), and the engine's Monte Carlo. Whole-process timings of
//! `issuer par` are `benches/par.sh`. Figures go to docs/PERFORMANCE.md.
//! Run: `cargo bench --bench par`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use num_rational::BigRational;
use ticket_issuer::game::tresors::par::exact::exact_sheet;
use ticket_issuer::game::tresors::par::optimal::{board_value, drawn_board, Policy};
use ticket_issuer::game::tresors::par::sample::engine_sample;
use ticket_issuer::par::default_seed;

fn par(c: &mut Criterion) {
    let mut g = c.benchmark_group("par");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("exact_sheet", |b| b.iter(exact_sheet));
    let board = drawn_board(&default_seed("boards"), 0);
    g.throughput(Throughput::Elements(1));
    g.bench_function("optimal_board_f64", |b| {
        b.iter(|| board_value::<f64>(&board, Policy::Optimal))
    });
    g.bench_function("optimal_board_exact", |b| {
        b.iter(|| board_value::<BigRational>(&board, Policy::Optimal))
    });
    let exact = exact_sheet();
    g.throughput(Throughput::Elements(10_000));
    g.bench_function("engine_sample_10000_units", |b| {
        b.iter(|| engine_sample(10_000, &default_seed("units"), &exact))
    });
    g.finish();
}

criterion_group!(benches, par);
criterion_main!(benches);
