//! Statistical tests for an auditor's kit: do a game's draws follow the
//! regulation, and do they look independent? Pearson's chi-square, the
//! gap test, the Wald–Wolfowitz runs test, lag-1 serial correlation,
//! Kolmogorov–Smirnov against the uniform law, an exact Poisson test and
//! Holm's correction for testing many things at once.
//!
//! f64 here is for statistics only, never for money. The special
//! functions are well-kept crates': the regularised incomplete gamma
//! function `statrs`'s, erfc `libm`'s (musl's, to an ulp or two).

use libm::erfc;
use serde::Serialize;
use statrs::function::gamma;

/// The outcome of a chi-square test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ChiSquare {
    /// Pearson's statistic.
    pub stat: f64,
    /// Degrees of freedom (cells after merging, less one).
    pub dof: usize,
    /// P(χ²(dof) ≥ stat).
    pub p: f64,
}

/// The outcome of a test whose statistic is (approximately) standard
/// normal under the null hypothesis.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ZTest {
    /// The z statistic.
    pub stat: f64,
    /// The two-sided p-value, 2·P(N(0,1) ≥ |stat|).
    pub p: f64,
}

/// The outcome of a one-sample Kolmogorov–Smirnov test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Ks {
    /// D = sup |F_n(x) − F(x)|.
    pub d: f64,
    /// The number of samples.
    pub n: usize,
    /// The p-value, Q_KS((√n + 0.12 + 0.11/√n)·D).
    pub p: f64,
}

/// P(χ²(dof) ≥ stat), the chi-squared survival function:
/// Q(dof/2, stat/2) = Γ(dof/2, stat/2) / Γ(dof/2), the regularised upper
/// incomplete gamma function.
///
/// 1 for `stat` ≤ 0; with `dof` = 0 (a point mass at 0), 0 for any
/// `stat` > 0; NaN for a NaN `stat`.
pub fn chi_square_sf(stat: f64, dof: usize) -> f64 {
    if stat.is_nan() {
        f64::NAN
    } else if stat <= 0.0 {
        1.0
    } else if dof == 0 || stat == f64::INFINITY {
        0.0
    } else {
        gamma::gamma_ur(dof as f64 / 2.0, stat / 2.0)
    }
}

/// Pearson's chi-square for `observed` counts against `probabilities`; a
/// cell expected fewer than 5 times is merged into its neighbour first.
///
/// With the expected counts e_i = p_i·n (n the total observed), the
/// statistic is Σ (o_i − e_i)² / e_i over the cells after merging, with
/// cells − 1 degrees of freedom, and p = [`chi_square_sf`].
pub fn chi_square(observed: &[u64], probabilities: &[f64]) -> ChiSquare {
    let n = observed.iter().sum::<u64>() as f64;
    let mut cells: Vec<(f64, f64)> = observed
        .iter()
        .zip(probabilities)
        .map(|(&o, &p)| (o as f64, p * n))
        .collect();
    while let Some(i) = cells.iter().position(|c| c.1 < 5.0) {
        if cells.len() == 1 {
            break;
        }
        let small = cells.remove(i);
        let into = i.saturating_sub(1).min(cells.len() - 1);
        cells[into].0 += small.0;
        cells[into].1 += small.1;
    }
    let stat: f64 = cells.iter().map(|(o, e)| (o - e) * (o - e) / e).sum();
    let dof = cells.len() - 1;
    ChiSquare {
        stat,
        dof,
        p: chi_square_sf(stat, dof),
    }
}

/// The two-sided p-value of a standard normal statistic:
/// 2·P(N(0,1) ≥ |z|) = erfc(|z|/√2).
///
/// Through erfc, not 1 − Φ, so it keeps its relative accuracy far into
/// the tails (about 1e-307 at |z| = 37.5). NaN for a NaN `z`.
pub fn normal_two_sided_p(z: f64) -> f64 {
    erfc(z.abs() / std::f64::consts::SQRT_2)
}

/// The Wald–Wolfowitz runs test: are the two kinds of outcome in `seq`
/// mixed as by chance, or clumped (too few runs) or alternating (too many)?
///
/// With n1 `true`s, n2 `false`s, n = n1 + n2 and R the number of runs
/// (maximal blocks of equal values), under the hypothesis that every
/// order is equally likely R has the exact mean and variance
///
/// μ = 2·n1·n2/n + 1,  σ² = 2·n1·n2·(2·n1·n2 − n) / (n²·(n − 1)),
///
/// and z = (R − μ)/σ is taken as standard normal (no continuity
/// correction; as R's `tseries::runs.test`). z > 0: more runs than chance
/// (alternation); z < 0: fewer (clumping). p is two-sided.
///
/// `None` when either kind is absent or n < 20, where the normal
/// approximation is not to be trusted.
pub fn runs_test(seq: &[bool]) -> Option<ZTest> {
    let n = seq.len();
    let n1 = seq.iter().filter(|&&b| b).count();
    let n2 = n - n1;
    if n < 20 || n1 == 0 || n2 == 0 {
        return None;
    }
    let runs = 1 + seq.windows(2).filter(|w| w[0] != w[1]).count();
    let (n, n1, n2) = (n as f64, n1 as f64, n2 as f64);
    let two = 2.0 * n1 * n2;
    let mean = two / n + 1.0;
    let variance = two * (two - n) / (n * n * (n - 1.0));
    let stat = (runs as f64 - mean) / variance.sqrt();
    Some(ZTest {
        stat,
        p: normal_two_sided_p(stat),
    })
}

/// The gap test: `gaps` are the numbers of non-events between consecutive
/// events (say, draws between two wins), tested against the geometric law
/// of independent events of probability `p`:
///
/// P(G = k) = (1 − p)^k·p,  P(G ≥ K) = (1 − p)^K.
///
/// The cells are 0, 1, …, K − 1 and a tail cell ≥ K, with K as large as
/// possible while every cell is expected at least 5 times, i.e.
/// n·(1 − p)^(K−1)·p ≥ 5 and n·(1 − p)^K ≥ 5 (n gaps; at least K = 1, two
/// cells). Then Pearson's chi-square with K degrees of freedom (`p` is
/// given, not estimated), as [`chi_square`].
///
/// `None` when not even two cells can be formed (n·p < 5 or
/// n·(1 − p) < 5), or when `p` is not in (0, 1).
pub fn gap_test(gaps: &[u64], p: f64) -> Option<ChiSquare> {
    if !(p > 0.0 && p < 1.0) {
        return None;
    }
    let n = gaps.len() as f64;
    let q = 1.0 - p;
    // cells[k] = P(G = k) for k < K; the tail P(G ≥ K) apart.
    let mut cells: Vec<f64> = Vec::new();
    let mut tail = 1.0; // (1 − p)^K for K = cells.len()
    loop {
        let next_cell = tail * p;
        let next_tail = tail * q;
        if next_cell * n < 5.0 || next_tail * n < 5.0 {
            break;
        }
        cells.push(next_cell);
        tail = next_tail;
    }
    let k = cells.len();
    if k == 0 {
        return None;
    }
    let mut observed = vec![0u64; k + 1];
    for &g in gaps {
        observed[usize::try_from(g).map_or(k, |g| g.min(k))] += 1;
    }
    cells.push(tail);
    Some(chi_square(&observed, &cells))
}

/// Lag-1 serial correlation: does each value tell about the next?
///
/// r = Σ_{i<n} (x_i − x̄)(x_{i+1} − x̄) / Σ_{i≤n} (x_i − x̄)²,
///
/// the usual autocorrelation estimator (R's `acf`). For independent,
/// identically distributed values E\[r\] = −1/n exactly (Moran 1948;
/// Dufour and Roy 1985), and Var(r) is taken as its large-sample value
/// 1/n (Bartlett's formula for white noise; the exact normal-theory
/// variance differs by O(1/n²)):
///
/// z = (r + 1/n)·√n,
///
/// taken as standard normal; p two-sided. z > 0: each value tends to be
/// followed by a similar one; z < 0: by an opposite one.
///
/// `None` for n < 20, zero variance (all values equal) or a value that is
/// not finite.
pub fn serial_correlation(values: &[f64]) -> Option<ZTest> {
    let n = values.len();
    if n < 20 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let nf = n as f64;
    let mean = values.iter().sum::<f64>() / nf;
    let denominator: f64 = values.iter().map(|x| (x - mean) * (x - mean)).sum();
    if denominator <= 0.0 {
        return None;
    }
    let numerator: f64 = values
        .windows(2)
        .map(|w| (w[0] - mean) * (w[1] - mean))
        .sum();
    let r = numerator / denominator;
    let stat = (r + 1.0 / nf) * nf.sqrt();
    Some(ZTest {
        stat,
        p: normal_two_sided_p(stat),
    })
}

/// The Kolmogorov distribution's survival function,
/// Q_KS(λ) = 2·Σ_{j≥1} (−1)^(j−1)·e^(−2j²λ²).
///
/// That series converges slowly for small λ; there (λ < 1.18) the
/// equivalent Jacobi theta form
/// Q_KS(λ) = 1 − (√(2π)/λ)·Σ_{j≥1} e^(−(2j−1)²π²/(8λ²)) is summed instead
/// (as Numerical Recipes, 3rd ed., §6.14).
fn kolmogorov_q(lambda: f64) -> f64 {
    if lambda.is_nan() {
        return f64::NAN;
    }
    if lambda <= 0.0 {
        return 1.0;
    }
    let q = if lambda < 1.18 {
        let y = (-std::f64::consts::PI.powi(2) / (8.0 * lambda * lambda)).exp();
        let sum: f64 = (1..=6).map(|j| y.powi((2 * j - 1) * (2 * j - 1))).sum();
        1.0 - (2.0 * std::f64::consts::PI).sqrt() / lambda * sum
    } else {
        let mut sum = 0.0;
        let mut sign = 1.0;
        for j in 1..=100 {
            let j = f64::from(j);
            let term = (-2.0 * j * j * lambda * lambda).exp();
            sum += sign * term;
            sign = -sign;
            if term <= sum.abs() * 1e-17 {
                break;
            }
        }
        2.0 * sum
    };
    q.clamp(0.0, 1.0)
}

/// One-sample Kolmogorov–Smirnov test of `samples` against the uniform
/// law on [0, 1) (F(x) = x, clamped to [0, 1]); the samples need not be
/// sorted.
///
/// D = sup |F_n(x) − F(x)| = max_i max(i/n − F(x_(i)), F(x_(i)) − (i−1)/n)
/// over the sorted samples x_(1) ≤ … ≤ x_(n). The p-value is the
/// Kolmogorov distribution's with Stephens' (1970) correction for small n:
///
/// λ = (√n + 0.12 + 0.11/√n)·D,  p = Q_KS(λ) = 2·Σ_{j≥1} (−1)^(j−1)·e^(−2j²λ²).
///
/// `None` for n < 5 or a NaN sample.
pub fn ks_uniform(samples: &[f64]) -> Option<Ks> {
    let n = samples.len();
    if n < 5 || samples.iter().any(|x| x.is_nan()) {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let nf = n as f64;
    let d = sorted
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = x.clamp(0.0, 1.0);
            ((i + 1) as f64 / nf - f).max(f - i as f64 / nf)
        })
        .fold(0.0, f64::max);
    let root = nf.sqrt();
    let p = kolmogorov_q((root + 0.12 + 0.11 / root) * d);
    Some(Ks { d, n, p })
}

/// The exact two-sided p-value of observing `k` events where a Poisson
/// law of mean `lambda` is expected, by doubling the smaller tail:
///
/// p = min(1, 2·min(P(X ≤ k), P(X ≥ k))),
///
/// with P(X ≤ k) = Q(k + 1, λ) and P(X ≥ k) = P(k, λ) (k ≥ 1), the
/// regularised upper and lower incomplete gamma functions, whose
/// prefactor λ^a·e^(−λ)/Γ(a) is computed in log space: λ and k up to 1e7
/// and beyond are fine (a tail below about 1e-308 is 0). Relative accuracy
/// about 1e-11 for λ in the hundreds, 1e-8 at λ = 1e7 (the rounding of
/// ln Γ(k) ≈ 1.5e8).
///
/// With λ = 0 the count is surely 0: p = 1 for k = 0, else 0. NaN for a
/// negative, infinite or NaN `lambda`.
pub fn poisson_two_sided_p(k: u64, lambda: f64) -> f64 {
    if !(lambda.is_finite() && lambda >= 0.0) {
        return f64::NAN;
    }
    if lambda == 0.0 {
        return if k == 0 { 1.0 } else { 0.0 };
    }
    let at_most = gamma::gamma_ur(k as f64 + 1.0, lambda);
    let at_least = if k == 0 {
        1.0
    } else {
        gamma::gamma_lr(k as f64, lambda)
    };
    (2.0 * at_most.min(at_least)).min(1.0)
}

/// P(X ≤ k) for X binomial with `n` trials of probability `p`: the
/// regularised incomplete beta I_{1−p}(n − k, k + 1) (statrs); 1 when
/// k ≥ n. NaN for a `p` outside [0, 1].
pub fn binomial_at_most(k: u64, n: u64, p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if k >= n {
        return 1.0;
    }
    if p == 0.0 {
        return 1.0;
    }
    if p == 1.0 {
        return 0.0;
    }
    statrs::function::beta::beta_reg((n - k) as f64, k as f64 + 1.0, 1.0 - p)
}

/// Holm–Bonferroni adjusted p-values, in the input order: with the m
/// p-values sorted p_(1) ≤ … ≤ p_(m),
///
/// p̃_(i) = min(1, max_{j≤i} (m − j + 1)·p_(j)),
///
/// the step-down adjustment made monotone and capped at 1 (R's
/// `p.adjust(p, "holm")`). Rejecting where p̃ ≤ α holds the family-wise
/// error rate at α under any dependence. A NaN stays NaN and is not
/// counted in m (as R's NA).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let m = order.len();
    let mut adjusted = vec![f64::NAN; p.len()];
    let mut running = 0.0f64;
    for (j, &i) in order.iter().enumerate() {
        running = running.max((m - j) as f64 * p[i]).min(1.0);
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    /// |got − want| ≤ tol·|want| (or ≤ tol when want is 0).
    fn close(got: f64, want: f64, tol: f64) -> bool {
        (got - want).abs() <= tol * want.abs().max(f64::MIN_POSITIVE)
            || (want == 0.0 && got.abs() <= tol)
    }

    #[test]
    fn chi_square_p_values_match_tables() {
        // Table critical values (e.g. Abramowitz & Stegun 26.8): the
        // upper 5 %, 5 %, 0.1 % points of χ²(1), χ²(5), χ²(3); χ²(2) is
        // Exp(1/2), so P(≥ 2) = e^-1; the upper 5 % point of χ²(100).
        for (stat, dof, p) in [
            (3.841_459, 1, 0.05),
            (11.070_50, 5, 0.05),
            (16.266_24, 3, 0.001),
            (2.0, 2, (-1.0f64).exp()),
            (124.342_1, 100, 0.05),
        ] {
            let q = chi_square_sf(stat, dof);
            assert!((q - p).abs() < 1e-5, "chi2 {stat} dof {dof}: {q} != {p}");
        }
        // A loaded die is caught.
        let loaded = [11_000u64, 10_000, 10_000, 10_000, 10_000, 9_000];
        assert!(chi_square(&loaded, &[1.0 / 6.0; 6]).p < 1e-6);
        assert!(chi_square(&[1_000; 6], &[1.0 / 6.0; 6]).p > 0.99);
    }

    #[test]
    fn chi_square_sf_matches_scipy() {
        // scipy 1.17.1: scipy.stats.chi2.sf(stat, dof) (agreeing with
        // mpmath's regularised gammainc at 50 digits to the digits shown).
        for (stat, dof, want) in [
            (3.841459, 1, 0.04999999465319563),
            (11.0705, 5, 0.0499999554280436),
            (16.26624, 3, 0.0009999982027924868),
            (2.0, 2, 0.36787944117144245),
            (124.3421, 100, 0.05000008460135852),
            (0.5, 1, 0.47950012218695337),
            (300.0, 10, 1.5546747543803087e-58),
            (1e-3, 4, 0.9999998750416589),
            (5000.0, 4000, 1.6633156038804178e-25),
        ] {
            let got = chi_square_sf(stat, dof);
            assert!(
                close(got, want, 1e-9),
                "chi2 {stat} dof {dof}: {got:e} != {want:e}"
            );
        }
        assert_eq!(chi_square_sf(0.0, 3), 1.0);
        assert_eq!(chi_square_sf(-1.0, 3), 1.0);
        assert_eq!(chi_square_sf(f64::INFINITY, 3), 0.0);
        assert_eq!(chi_square_sf(1.0, 0), 0.0);
        assert!(chi_square_sf(f64::NAN, 3).is_nan());
        // One cell: nothing to test, p = 1 (as before).
        let one = chi_square(&[10], &[1.0]);
        assert_eq!((one.dof, one.stat, one.p), (0, 0.0, 1.0));
    }

    #[test]
    fn normal_two_sided_p_matches_scipy_into_the_tails() {
        // scipy 1.17.1: 2 * scipy.stats.norm.sf(z) (mpmath erfc(z/√2) at
        // 50 digits agrees to the digits shown).
        for (z, want) in [
            (0.0, 1.0),
            (1.0, 0.31731050786291415),
            (1.959963984540054, 0.05),
            (2.5758293035489, 0.01000000000000002),
            (3.0, 0.0026997960632601866),
            (5.0, 5.733031437583866e-07),
            (10.0, 1.523970604832094e-23),
            (20.0, 5.507248237212311e-89),
            (30.0, 9.813427854295816e-198),
            (37.5, 9.210706019163908e-308),
        ] {
            for z in [z, -z] {
                let got = normal_two_sided_p(z);
                assert!(close(got, want, 1e-12), "z {z}: {got:e} != {want:e}");
            }
        }
        assert_eq!(normal_two_sided_p(f64::INFINITY), 0.0);
        assert!(normal_two_sided_p(f64::NAN).is_nan());
    }

    #[test]
    fn runs_test_sees_alternation_and_clumping() {
        // Alternating, 20 long: R = 20, μ = 11, σ² = 36000/7600.
        let alternating: Vec<bool> = (0..20).map(|i| i % 2 == 0).collect();
        let z = runs_test(&alternating).expect("n = 20");
        assert!(close(z.stat, 9.0 / (36_000.0f64 / 7_600.0).sqrt(), 1e-12));
        assert!(z.stat > 4.0 && z.p < 1e-4, "{z:?}");
        // Sorted: two runs.
        let sorted: Vec<bool> = (0..20).map(|i| i >= 10).collect();
        let z = runs_test(&sorted).expect("n = 20");
        assert!(z.stat < -4.0 && z.p < 1e-4, "{z:?}");
        // A long sequence from a seeded generator passes.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        let fair: Vec<bool> = (0..10_000).map(|_| rng.random_bool(0.3)).collect();
        let z = runs_test(&fair).expect("n = 10000");
        assert!(z.stat.abs() < 4.0 && z.p > 1e-4, "{z:?}");
    }

    #[test]
    fn runs_test_matches_statsmodels() {
        // statsmodels 0.15.0:
        // Runs(x).runs_test(correction=False) for this sequence
        // (T = 1): (-3.3739284805504184, 0.0007410361810450345); the
        // same formula as R's tseries::runs.test.
        let seq: Vec<bool> = "TTTTTFFFFTTTTTFFFFFFTTTFFFTTTTTFFFFT"
            .chars()
            .map(|c| c == 'T')
            .collect();
        let z = runs_test(&seq).expect("n = 36");
        assert!(close(z.stat, -3.3739284805504184, 1e-12), "{z:?}");
        assert!(close(z.p, 0.0007410361810450345, 1e-9), "{z:?}");
    }

    #[test]
    fn runs_test_refuses_what_it_cannot_judge() {
        assert_eq!(runs_test(&[true; 50]), None);
        assert_eq!(runs_test(&[false; 50]), None);
        let short: Vec<bool> = (0..19).map(|i| i % 2 == 0).collect();
        assert_eq!(runs_test(&short), None);
        assert_eq!(runs_test(&[]), None);
    }

    /// Gaps with `counts[k]` gaps of length k.
    fn gaps_from(counts: &[u64]) -> Vec<u64> {
        (0u64..)
            .zip(counts)
            .flat_map(|(k, &c)| std::iter::repeat_n(k, c as usize))
            .collect()
    }

    #[test]
    fn gap_test_passes_exact_geometric_counts_and_fails_equal_gaps() {
        // p = 1/2, 1024 gaps: cells 0..=6 expected 512, 256, …, 8, the
        // tail ≥ 7 expected 8 (cell 7 alone would be expected 4 < 5).
        let mut counts = vec![512, 256, 128, 64, 32, 16, 8];
        counts.extend([3, 2, 1, 1, 0, 0, 1]); // the tail's 8: lengths 7..=13
        let gaps = gaps_from(&counts);
        assert_eq!(gaps.len(), 1024);
        let c = gap_test(&gaps, 0.5).expect("enough gaps");
        assert_eq!(c.dof, 7);
        assert!(c.stat.abs() < 1e-9 && c.p > 0.999_999, "{c:?}");
        // Always exactly 3 non-events between events: not geometric.
        let c = gap_test(&[3; 1000], 0.25).expect("enough gaps");
        assert!(c.p < 1e-100, "{c:?}");
        // Gaps of a seeded Bernoulli(0.1) stream pass.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11);
        let mut gaps = Vec::new();
        let mut run = 0u64;
        for _ in 0..200_000 {
            if rng.random_bool(0.1) {
                gaps.push(run);
                run = 0;
            } else {
                run += 1;
            }
        }
        let c = gap_test(&gaps, 0.1).expect("enough gaps");
        assert!(c.dof > 40 && c.p > 1e-4, "{c:?}");
    }

    #[test]
    fn gap_test_matches_scipy() {
        // p = 0.2, 200 gaps: cells 0..=9 (cell 9 expected 5.37, cell 10
        // would be 4.29) and the tail ≥ 10, expected 21.47.
        // scipy 1.17.1: scipy.stats.chisquare(
        //   [45, 30, 22, 18, 20, 12, 9, 10, 5, 7, 22],
        //   [200*0.2*0.8**k for k in range(10)] + [200*0.8**10])
        // = (3.912901878356933, 0.9511905905006879).
        let mut gaps = gaps_from(&[45, 30, 22, 18, 20, 12, 9, 10, 5, 7]);
        gaps.extend([10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
        gaps.extend([10, 10, 12, 14, 17, 21, 25, 30, 40, 60, u64::MAX]);
        let c = gap_test(&gaps, 0.2).expect("200 gaps");
        assert_eq!(c.dof, 10);
        assert!(close(c.stat, 3.912901878356933, 1e-10), "{c:?}");
        assert!(close(c.p, 0.9511905905006879, 1e-9), "{c:?}");
    }

    #[test]
    fn gap_test_refuses_too_few_gaps() {
        // n·p = 4.5 < 5: not even the cell 0 is expected 5 times.
        assert_eq!(gap_test(&[0; 9], 0.5), None);
        // n·(1 − p) = 4 < 5: no tail.
        assert_eq!(gap_test(&[0; 100], 0.96), None);
        assert_eq!(gap_test(&[], 0.5), None);
        assert_eq!(gap_test(&[1; 100], 0.0), None);
        assert_eq!(gap_test(&[1; 100], 1.0), None);
        assert_eq!(gap_test(&[1; 100], f64::NAN), None);
        // n = 20, p = 1/2: cells 0 and 1 expected 10 and 5, the tail ≥ 2
        // expected 5 (cell 2 alone would be 2.5): K = 2.
        let c = gap_test(&gaps_from(&[10, 5, 5]), 0.5).expect("20 gaps");
        assert_eq!(c.dof, 2);
        assert!(c.stat.abs() < 1e-12);
    }

    /// R's `lh` data set (datasets package): luteinizing hormone in blood
    /// samples at 10-minute intervals, 48 values.
    const LH: [f64; 48] = [
        2.4, 2.4, 2.4, 2.2, 2.1, 1.5, 2.3, 2.3, 2.5, 2.0, 1.9, 1.7, 2.2, 1.8, 3.2, 3.2, 2.7, 2.2,
        2.2, 1.9, 1.9, 1.8, 2.7, 3.0, 2.3, 2.0, 2.0, 2.9, 2.9, 2.7, 2.7, 2.3, 2.6, 2.4, 1.8, 1.7,
        1.5, 1.4, 2.1, 3.3, 3.5, 3.5, 3.1, 2.6, 2.1, 3.4, 3.0, 2.9,
    ];

    #[test]
    fn serial_correlation_matches_r_acf() {
        // R: acf(lh)$acf[2] prints 0.576; statsmodels 0.15.0
        // acf(lh, nlags=1, adjusted=False, fft=False)[1] =
        // 0.5755244755244757. z = (r + 1/48)·√48 = 4.131688097728698,
        // p = 2 * scipy.stats.norm.sf(z) = 3.6010883887809355e-05.
        let z = serial_correlation(&LH).expect("48 values");
        let r = z.stat / 48f64.sqrt() - 1.0 / 48.0;
        assert!(close(r, 0.5755244755244757, 1e-12), "r = {r}");
        assert!(close(z.stat, 4.131688097728698, 1e-12), "{z:?}");
        assert!(close(z.p, 3.6010883887809355e-05, 1e-9), "{z:?}");
    }

    #[test]
    fn serial_correlation_sees_trends_and_alternation() {
        let trend: Vec<f64> = (0..100).map(f64::from).collect();
        let z = serial_correlation(&trend).expect("100 values");
        assert!(z.stat > 8.0 && z.p < 1e-15, "{z:?}");
        let alternating: Vec<f64> = (0..100).map(|i| f64::from(i % 2)).collect();
        let z = serial_correlation(&alternating).expect("100 values");
        // r = −0.99 exactly: z = (−0.99 + 0.01)·10.
        assert!(close(z.stat, -9.8, 1e-12) && z.p < 1e-20, "{z:?}");
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        let noise: Vec<f64> = (0..10_000).map(|_| rng.random::<f64>()).collect();
        let z = serial_correlation(&noise).expect("10000 values");
        assert!(z.stat.abs() < 4.0 && z.p > 1e-4, "{z:?}");
        assert_eq!(serial_correlation(&[5.0; 100]), None);
        assert_eq!(serial_correlation(&trend[..19]), None);
        let mut bad = trend.clone();
        bad[3] = f64::NAN;
        assert_eq!(serial_correlation(&bad), None);
    }

    #[test]
    fn kolmogorov_q_matches_scipy() {
        // scipy 1.17.1: scipy.special.kolmogorov(λ), the survival function
        // of the Kolmogorov distribution; 1.3581 and 1.6276 are its upper
        // 5 % and 1 % points (scipy.special.kolmogi(0.05), (0.01)).
        for (lambda, want) in [
            (0.2, 0.999999999999495),
            (0.3, 0.9999906941986655),
            (0.5, 0.9639452436648751),
            (0.8, 0.5441424115741981),
            (1.0, 0.26999967167735456),
            (1.18, 0.1234538094297657),
            (1.2, 0.11224966667072497),
            (1.3580986393225505, 0.05),
            (1.6276236115189477, 0.01),
            (2.0, 0.0006709252557796953),
            (3.0, 3.045995948942526e-08),
        ] {
            let got = kolmogorov_q(lambda);
            assert!(close(got, want, 1e-12), "λ {lambda}: {got:e} != {want:e}");
        }
        assert_eq!(kolmogorov_q(0.0), 1.0);
        assert_eq!(kolmogorov_q(0.01), 1.0);
        assert_eq!(kolmogorov_q(100.0), 0.0);
    }

    #[test]
    fn ks_uniform_passes_even_points_and_fails_half_range() {
        // Evenly spaced, given in reverse: D = 0.5/1000.
        let even: Vec<f64> = (0..1000)
            .rev()
            .map(|i| (f64::from(i) + 0.5) / 1000.0)
            .collect();
        let ks = ks_uniform(&even).expect("1000 samples");
        assert_eq!(ks.n, 1000);
        assert!(close(ks.d, 0.0005, 1e-9), "{ks:?}");
        assert!(ks.p > 0.99, "{ks:?}");
        // All in [0, 0.5): D ≥ 0.5.
        let half: Vec<f64> = (0..1000).map(|i| f64::from(i) / 2000.0).collect();
        let ks = ks_uniform(&half).expect("1000 samples");
        assert!(ks.d >= 0.5 && ks.p < 1e-10, "{ks:?}");
        // Seeded uniform draws pass.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
        let draws: Vec<f64> = (0..10_000).map(|_| rng.random::<f64>()).collect();
        assert!(ks_uniform(&draws).expect("10000 samples").p > 1e-4);
        assert_eq!(ks_uniform(&[0.1, 0.2, 0.3, 0.4]), None);
        assert_eq!(ks_uniform(&[0.1, 0.2, f64::NAN, 0.4, 0.5]), None);
    }

    #[test]
    fn ks_uniform_matches_scipy() {
        // x_i = ((i + 0.5)/20)², to 3 decimals. scipy 1.17.1:
        // scipy.stats.kstest(x, 'uniform') gives D = 0.274 (exact p
        // 0.08100099656430149); Stephens' λ = (√20 + 0.12 + 0.11/√20)·D =
        // 1.2649847605540694 and scipy.special.kolmogorov(λ) =
        // 0.08148850076467769.
        let mut x = [
            0.001, 0.006, 0.016, 0.031, 0.051, 0.076, 0.106, 0.141, 0.181, 0.226, 0.276, 0.331,
            0.391, 0.456, 0.526, 0.601, 0.681, 0.766, 0.856, 0.951,
        ];
        x.swap(0, 19);
        x.swap(3, 11);
        let ks = ks_uniform(&x).expect("20 samples");
        assert!(close(ks.d, 0.274, 1e-12), "{ks:?}");
        assert!(close(ks.p, 0.08148850076467769, 1e-9), "{ks:?}");
        // Stephens' correction is close to the exact p.
        assert!((ks.p - 0.08100099656430149).abs() < 0.002, "{ks:?}");
    }

    #[test]
    fn poisson_two_sided_p_matches_scipy() {
        // scipy 1.17.1: min(1, 2*min(poisson.cdf(k, λ), poisson.sf(k-1, λ)));
        // mpmath at 40 digits agrees to the digits shown.
        for (k, lambda, want) in [
            (10, 2.0, 9.299615003452772e-05),
            (0, 0.3, 1.0),
            (0, 5.0, 0.013475893998170936),
            (1, 0.1, 0.19032516392808088),
            (3, 3.0, 1.0),
            (50, 30.0, 0.0010377829250960689),
            (150, 100.0, 3.7684209320773687e-06),
            (10_000_000, 1e7, 1.0),
            (10_005_000, 1e7, 0.1139005135949267),
            (9_990_000, 1e7, 0.0015637021848155964),
        ] {
            // ln Γ(1e7) ≈ 1.5e8 carries an absolute error of ~1e-8.
            let tol = if lambda >= 1e6 { 1e-7 } else { 1e-11 };
            let got = poisson_two_sided_p(k, lambda);
            assert!(
                close(got, want, tol),
                "k {k} λ {lambda}: {got:e} != {want:e}"
            );
        }
        // Further out, scipy's gammainc is off by 1.4 % (1.27e-10 for
        // the upper tail); the reference is mpmath (40 digits), summing
        // e^-λ·λ^j/j! for j ≥ k directly: P(X ≥ 10020000) =
        // 1.288128898420476e-10 at λ = 1e7.
        let got = poisson_two_sided_p(10_020_000, 1e7);
        assert!(close(got, 2.0 * 1.288128898420476e-10, 1e-6), "{got:e}");
        // Far tails underflow to 0, not NaN.
        assert_eq!(poisson_two_sided_p(20_000_000, 1e7), 0.0);
        assert_eq!(poisson_two_sided_p(5, 1e7), 0.0);
        assert_eq!(poisson_two_sided_p(0, 0.0), 1.0);
        assert_eq!(poisson_two_sided_p(1, 0.0), 0.0);
        assert!(poisson_two_sided_p(1, -1.0).is_nan());
        assert!(poisson_two_sided_p(1, f64::NAN).is_nan());
    }

    #[test]
    fn holm_matches_r_p_adjust() {
        // R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") =
        // 0.03 0.06 0.06 0.02.
        let got = holm(&[0.01, 0.04, 0.03, 0.005]);
        for (g, w) in got.iter().zip([0.03, 0.06, 0.06, 0.02]) {
            assert!(close(*g, w, 1e-12), "{got:?}");
        }
        // Capped at 1 and monotone: p.adjust(c(0.5, 0.2, 0.9), "holm") =
        // 1.0 0.6 1.0.
        let got = holm(&[0.5, 0.2, 0.9]);
        for (g, w) in got.iter().zip([1.0, 0.6, 1.0]) {
            assert!(close(*g, w, 1e-12), "{got:?}");
        }
        // NA not counted: p.adjust(c(0.01, NA, 0.02), "holm") = 0.02 NA 0.02.
        let got = holm(&[0.01, f64::NAN, 0.02]);
        assert!(close(got[0], 0.02, 1e-12) && got[1].is_nan() && close(got[2], 0.02, 1e-12));
        assert!(holm(&[]).is_empty());
        assert_eq!(holm(&[0.3]), vec![0.3]);
    }

    #[test]
    fn results_serialise() {
        let json = serde_json::to_value(ZTest { stat: 1.5, p: 0.25 }).expect("serialises");
        assert_eq!(json, serde_json::json!({"stat": 1.5, "p": 0.25}));
        let json = serde_json::to_value(Ks {
            d: 0.5,
            n: 10,
            p: 0.125,
        })
        .expect("serialises");
        assert_eq!(json, serde_json::json!({"d": 0.5, "n": 10, "p": 0.125}));
        let json = serde_json::to_value(ChiSquare {
            stat: 2.0,
            dof: 3,
            p: 0.5,
        })
        .expect("serialises");
        assert_eq!(json, serde_json::json!({"stat": 2.0, "dof": 3, "p": 0.5}));
    }

    #[test]
    fn binomial_lower_tails_are_exact_sums() {
        // n = 10, p = ½: P(X ≤ 2) = (1 + 10 + 45) / 1024.
        assert!((binomial_at_most(2, 10, 0.5) - 56.0 / 1024.0).abs() < 1e-12);
        // P(X = 0) = (1 − p)^n.
        let p = 119_604.0 / 450_000.0;
        assert!((binomial_at_most(0, 20, p) - (1.0 - p).powi(20)).abs() < 1e-12);
        assert_eq!(binomial_at_most(5, 5, 0.3), 1.0);
        assert!(binomial_at_most(1, 2, 1.5).is_nan());
    }
}
