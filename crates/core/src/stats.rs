//! Pearson's chi-square test, for the tests that check the games' draws
//! against the regulation (f64 for statistics only, never for money).
//! Reached from outside the crate through `test_support` only.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let t = x + 7.5;
    let a = C[0]
        + C.iter()
            .enumerate()
            .skip(1)
            .map(|(i, c)| c / (x + i as f64))
            .sum::<f64>();
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised upper incomplete gamma function Q(a, x): a series
/// below a + 1, a continued fraction (modified Lentz) above.
pub fn gamma_q(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 1.0;
    }
    let front = (-x + a * x.ln() - ln_gamma(a)).exp();
    if x < a + 1.0 {
        let (mut n, mut term) = (a, 1.0 / a);
        let mut sum = term;
        while term > sum * 1e-16 {
            n += 1.0;
            term *= x / n;
            sum += term;
        }
        return 1.0 - front * sum;
    }
    let tiny = 1e-300;
    let mut b = x + 1.0 - a;
    let (mut c, mut d) = (1.0 / tiny, 1.0 / b);
    let mut h = d;
    for i in 1..10_000 {
        let an = -(i as f64) * (i as f64 - a);
        b += 2.0;
        d = an * d + b;
        d = if d.abs() < tiny { tiny } else { d };
        c = b + an / c;
        c = if c.abs() < tiny { tiny } else { c };
        d = 1.0 / d;
        h *= d * c;
        if (d * c - 1.0).abs() < 1e-16 {
            break;
        }
    }
    front * h
}

/// The outcome of a chi-square test.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "test-support"), allow(dead_code))]
pub struct ChiSquare {
    /// Pearson's statistic.
    pub stat: f64,
    /// Degrees of freedom (cells after merging, less one).
    pub dof: usize,
    /// P(χ²(dof) ≥ stat).
    pub p: f64,
}

/// Pearson's chi-square for `observed` counts against `probabilities`; a
/// cell expected fewer than 5 times is merged into its neighbour first.
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
        p: gamma_q(dof as f64 / 2.0, stat / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi_square_p_values_match_tables() {
        for (stat, dof, p) in [
            (3.841_459, 1, 0.05),
            (11.070_50, 5, 0.05),
            (16.266_24, 3, 0.001),
            (2.0, 2, (-1.0f64).exp()),
            (124.342_1, 100, 0.05),
        ] {
            let q = gamma_q(dof as f64 / 2.0, stat / 2.0);
            assert!((q - p).abs() < 1e-5, "chi2 {stat} dof {dof}: {q} != {p}");
        }
        // A loaded die is caught.
        let loaded = [11_000u64, 10_000, 10_000, 10_000, 10_000, 9_000];
        assert!(chi_square(&loaded, &[1.0 / 6.0; 6]).p < 1e-6);
        assert!(chi_square(&[1_000; 6], &[1.0 / 6.0; 6]).p > 0.99);
    }
}
