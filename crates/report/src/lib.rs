//! The audit report (docs/AUDIT.md §Report) as one self-contained HTML
//! page: no script or style from elsewhere, no network request (a
//! Content-Security-Policy forbids any), every figure of `report.json`.

#![deny(missing_docs)]

use std::fmt::Write as _;

use ticket_issuer_core::evidence::{AuditReport, Check, StatTest, Verdict};

/// Escapes text for HTML.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A p-value as text.
fn p(value: Option<f64>) -> String {
    match value {
        Some(v) if v < 1e-4 => format!("{v:.2e}"),
        Some(v) => format!("{v:.4}"),
        None => "—".into(),
    }
}

/// A verdict as a tagged cell.
fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "<td class=pass>pass</td>",
        Verdict::Fail => "<td class=fail>FAIL</td>",
        Verdict::NotRun => "<td class=notrun>not run</td>",
    }
}

/// The page's style (inline: the page loads nothing).
const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;margin-top:2em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}\
th{background:#f4f4f4}.pass{color:#1a7f37}.fail{color:#c00;font-weight:bold}.notrun{color:#888}\
.ok{background:#e6f4ea;padding:.5em 1em}.ko{background:#fde7e9;padding:.5em 1em}figure{margin:1em 0}";

/// The report as one HTML page.
pub fn render(report: &AuditReport) -> String {
    let mut h = String::new();
    let title = format!(
        "Audit of {}{}",
        report.game,
        report
            .emission
            .map_or(String::new(), |e| format!(", emission {e}"))
    );
    let _ = write!(
        h,
        "<!doctype html><html lang=en><head><meta charset=utf-8>\
<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
<title>{}</title><style>{STYLE}</style></head><body>",
        esc(&title)
    );
    let s = &report.summary;
    let _ = write!(
        h,
        "<h1>{}</h1><p class={}><b>{}</b>: {} block(s); {} tests run, {} could not run; {} failing at {} after {} ({} before); {} check(s) failing. Written by issuer {}.</p>",
        esc(&title),
        if report.ok { "ok" } else { "ko" },
        if report.ok { "PASS" } else { "FAIL" },
        report.blocks.len(),
        s.tests_run,
        s.tests_not_run,
        s.failed_adjusted,
        report.level,
        esc(&report.correction),
        s.failed_raw,
        s.checks_failed,
        esc(&report.issuer_version)
    );
    section(&mut h, "provenance", "Manifest, keys and seals");
    checks(&mut h, &report.provenance);
    section(&mut h, "lots", "The lot table met per block");
    for b in &report.blocks {
        let _ = write!(
            h,
            "<h3>Block {} — {} units at {} €, {} winners, {} € paid played to the end</h3>\
<p>file SHA-256 <code>{}</code>, Merkle root <code>{}</code></p>",
            b.block,
            b.units,
            esc(&b.price),
            b.winners,
            esc(&b.paid),
            b.file_sha256,
            b.merkle_root
        );
        if !b.lots.is_empty() {
            h.push_str(
                "<table><tr><th>lot</th><th>amount (€)</th><th>table</th><th>found</th></tr>",
            );
            for l in &b.lots {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td class={}>{}</td></tr>",
                    esc(&l.name),
                    esc(&l.amount),
                    l.expected,
                    if l.found == l.expected {
                        "pass"
                    } else {
                        "fail"
                    },
                    l.found
                );
            }
            h.push_str("</table>");
        }
    }
    checks(&mut h, &report.checks);
    section(
        &mut h,
        "par",
        "PAR figures against the blocks and the payout rule",
    );
    h.push_str("<table><tr><th>figure</th><th>source</th><th>return</th><th>article</th><th>band</th><th>applies</th><th>verdict</th><th>why</th></tr>");
    for b in &report.payout {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} to {}</td><td>{}</td><td class={}>{}</td><td>{}</td></tr>",
            esc(&b.figure),
            esc(&b.source),
            esc(&b.rate),
            esc(&b.article),
            esc(&b.low),
            esc(&b.high),
            if b.applies { "yes" } else { "no" },
            match (b.met, b.binding) {
                (true, _) => "pass",
                (false, true) => "fail",
                (false, false) => "notrun",
            },
            match (b.applies, b.met, b.binding) {
                (false, _, _) => "—",
                (true, true, _) => "meets",
                (true, false, true) => "MISSES",
                (true, false, false) => "misses (reported)",
            },
            esc(&b.why)
        );
    }
    h.push_str("</table>");
    section(&mut h, "tests", "Every test");
    tests(&mut h, report);
    section(&mut h, "ledger", "The ledger's reconciliation");
    match &report.ledger {
        None => {
            h.push_str("<p>No ledger was read (block files audited alone, or --no-ledger).</p>")
        }
        Some(l) => {
            let _ = write!(h, "<p>Ledger: <code>{}</code></p>", esc(&l.ledger));
            h.push_str("<table><tr><th>block</th><th>units</th><th>sold</th><th>unsold</th><th>played</th><th>redeemed</th><th>paid (cents)</th><th>unclaimed</th><th>liability (cents)</th></tr>");
            for b in &l.blocks {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    b.block, b.units, b.sold, b.unsold, b.played, b.redeemed, b.paid_cents, b.unclaimed, b.liability_cents
                );
            }
            h.push_str("</table>");
            if let (Some(r), Some(e), Some([lo, hi])) =
                (l.realised_return, l.expected_return, l.band_99)
            {
                let _ = write!(
                    h,
                    "<p>Realised return {r:.6} against {e:.6} expected for the units played out (99 % band {lo:.6} to {hi:.6}).</p>"
                );
            }
            checks(&mut h, &l.checks);
        }
    }
    h.push_str("</body></html>\n");
    h
}

/// A section heading.
fn section(h: &mut String, id: &str, title: &str) {
    let _ = write!(h, "<section id={id}><h2>{}</h2></section>", esc(title));
}

/// A table of checks.
fn checks(h: &mut String, checks: &[Check]) {
    if checks.is_empty() {
        return;
    }
    h.push_str(
        "<table><tr><th>check</th><th>scope</th><th>what</th><th>verdict</th><th>detail</th></tr>",
    );
    for c in checks {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class={}>{}</td><td>{}</td></tr>",
            esc(&c.id),
            esc(&c.scope),
            esc(&c.name),
            if c.ok { "pass" } else { "fail" },
            if c.ok { "holds" } else { "FAILS" },
            esc(&c.detail)
        );
    }
    h.push_str("</table>");
}

/// The table of every test.
fn tests(h: &mut String, report: &AuditReport) {
    h.push_str("<table><tr><th>test</th><th>scope</th><th>what</th><th>method</th><th>statistic</th><th>dof</th><th>p</th><th>p (Holm)</th>");
    for l in &report.levels {
        let _ = write!(h, "<th>at {l} raw</th><th>at {l} adjusted</th>");
    }
    h.push_str("<th>note</th></tr>");
    for t in &report.tests {
        row(h, t);
    }
    h.push_str("</table>");
}

/// One test's row.
fn row(h: &mut String, t: &StatTest) {
    let _ = write!(
        h,
        "<tr id=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
        esc(&t.id),
        esc(&t.id),
        esc(&t.scope),
        esc(&t.name),
        esc(&t.method),
        t.statistic.map_or("—".into(), |s| format!("{s:.4}")),
        t.dof.map_or("—".into(), |d| format!("{d}")),
        p(t.p),
        p(t.p_adjusted)
    );
    for v in &t.verdicts {
        h.push_str(verdict(v.raw));
        h.push_str(verdict(v.adjusted));
    }
    let _ = write!(h, "<td>{}</td></tr>", esc(&t.note));
}
