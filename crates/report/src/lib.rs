//! The audit report (docs/AUDIT.md §Report) as one self-contained HTML
//! page: no script, no style or font from elsewhere, no network request (a
//! Content-Security-Policy forbids any), every figure of `report.json`, its
//! plots drawn as inline SVG by plotters (`plot`).

#![deny(missing_docs)]

use std::fmt::Write as _;

mod plot;
#[cfg(test)]
mod tests;

use ticket_issuer_core::evidence::payout::BandCheck;
use ticket_issuer_core::evidence::{AuditReport, Check, Plot, StatTest, Verdict};

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
const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;margin-top:2em}\
table{border-collapse:collapse;margin:.5em 0;display:block;max-width:100%;overflow-x:auto}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}\
th{background:#f4f4f4}.pass{color:#1a7f37}.fail{color:#c00;font-weight:bold}.notrun{color:#888}\
.ok{background:#e6f4ea;padding:.5em 1em}.ko{background:#fde7e9;padding:.5em 1em}\
figure{margin:1.5em 0}figure svg{display:block;max-width:100%;height:auto}figcaption{color:#444;font-style:italic}";

/// What the page may load: nothing but its own inline style. No script
/// runs; the plots are inline SVG.
const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// The sections every page has, in order: (id, heading). The plots' own
/// sections follow.
const SECTIONS: [(&str, &str); 6] = [
    ("summary", "Summary"),
    ("provenance", "Manifest, keys and seals"),
    ("lots", "The lot table met per block"),
    ("par", "PAR figures against the blocks and the payout rule"),
    ("tests", "Every test"),
    ("ledger", "The ledger's reconciliation"),
];

/// `id` as a page anchor: letters, digits, `-`, `_` and `.` kept, any
/// other character a `-` (a report's ids are already such).
pub fn anchor(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The id of the page section holding the plots of `section`.
pub fn plot_section_id(section: &str) -> String {
    anchor(&format!("plots-{section}"))
}

/// The heading of the plots of `section`.
fn plot_section_heading(section: &str) -> String {
    match section {
        "positions" => "Plots: where the winners are in their block".into(),
        "draws" => "Plots: draws against the regulation's probabilities".into(),
        "return" => "Plots: return to player per strategy".into(),
        "neutrality" => "Plots: what a unit shows, winners against losers".into(),
        other => format!("Plots: {other}"),
    }
}

/// The plots' sections, in the order their first plot comes in the report.
fn plot_sections(report: &AuditReport) -> Vec<&str> {
    let mut sections: Vec<&str> = Vec::new();
    for plot in &report.plots {
        if !sections.contains(&plot.section.as_str()) {
            sections.push(&plot.section);
        }
    }
    sections
}

/// The report as one HTML page: the summary, the provenance, each block's
/// lot table, the PAR figures and the payout rule, every test, the ledger,
/// then the plots section by section, each an inline SVG `<figure>` whose
/// id is the plot's.
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
<meta http-equiv=Content-Security-Policy content=\"{CSP}\">\
<meta name=viewport content=\"width=device-width\">\
<title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>",
        esc(&title),
        esc(&title)
    );
    let plot_sections = plot_sections(report);
    h.push_str("<nav><ul>");
    let headings = SECTIONS
        .iter()
        .map(|(id, heading)| (id.to_string(), heading.to_string()))
        .chain(
            plot_sections
                .iter()
                .map(|s| (plot_section_id(s), plot_section_heading(s))),
        );
    for (id, heading) in headings {
        let _ = write!(
            h,
            "<li><a href=\"#{}\">{}</a></li>",
            esc(&id),
            esc(&heading)
        );
    }
    h.push_str("</ul></nav>");
    let [summary, provenance, lots, par, tests, ledger] = SECTIONS;
    section(&mut h, summary, |h| summary_of(h, report));
    section(&mut h, provenance, |h| checks(h, &report.provenance));
    section(&mut h, lots, |h| lot_tables(h, report));
    section(&mut h, par, |h| par_figures(h, report));
    section(&mut h, tests, |h| every_test(h, report));
    section(&mut h, ledger, |h| ledger_of(h, report));
    for s in plot_sections {
        let (id, heading) = (plot_section_id(s), plot_section_heading(s));
        section(&mut h, (&id, &heading), |h| {
            for plot in report.plots.iter().filter(|p| p.section == s) {
                figure(h, plot);
            }
        });
    }
    h.push_str("</body></html>\n");
    h
}

/// A section: its heading, then what `body` writes.
fn section(h: &mut String, (id, heading): (&str, &str), body: impl FnOnce(&mut String)) {
    let _ = write!(h, "<section id=\"{}\"><h2>{}</h2>", esc(id), esc(heading));
    body(h);
    h.push_str("</section>");
}

/// The verdict and the counts.
fn summary_of(h: &mut String, report: &AuditReport) {
    let s = &report.summary;
    let _ = write!(
        h,
        "<p class={}><b>{}</b>: {} block(s); {} tests run, {} could not run; {} failing at {} after {} ({} before); {} check(s) failing. Written by issuer {}.</p>",
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
}

/// Each block's facts and lot table, then the hard checks.
fn lot_tables(h: &mut String, report: &AuditReport) {
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
            esc(&b.file_sha256),
            esc(&b.merkle_root)
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
    checks(h, &report.checks);
}

/// The PAR sheet's figures, then each figure against the payout rule.
fn par_figures(h: &mut String, report: &AuditReport) {
    if let Some(figures) = report.par.as_array().filter(|f| !f.is_empty()) {
        let text = |v: Option<&serde_json::Value>| match v {
            Some(serde_json::Value::String(s)) => esc(s),
            Some(serde_json::Value::Null) | None => "—".into(),
            Some(v) => esc(&v.to_string()),
        };
        h.push_str(
            "<table><tr><th>PAR figure</th><th>return</th><th>binding</th><th>note</th></tr>",
        );
        for f in figures {
            let rate = f.get("rate");
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                text(f.get("figure")),
                text(rate.and_then(|r| r.get("decimal")).or(rate)),
                text(f.get("binding")),
                text(f.get("note"))
            );
        }
        h.push_str("</table>");
    }
    payout_table(h, &report.payout);
}

/// The payout rule: one row per figure, one column per band (its
/// verdict and why), the bands named once in the header.
fn payout_table(h: &mut String, checks: &[BandCheck]) {
    let mut bands: Vec<&BandCheck> = Vec::new();
    for b in checks {
        if !bands.iter().any(|x| x.article == b.article) {
            bands.push(b);
        }
    }
    h.push_str("<table><tr><th>figure</th><th>source</th><th>return</th>");
    for b in &bands {
        let _ = write!(
            h,
            "<th>{}: {} ({} to {})</th>",
            esc(&b.article),
            esc(&b.band),
            esc(&b.low),
            esc(&b.high)
        );
    }
    h.push_str("</tr>");
    let mut rows: Vec<(&str, &str, &str)> = Vec::new();
    for b in checks {
        let key = (b.figure.as_str(), b.source.as_str(), b.rate.as_str());
        if !rows.contains(&key) {
            rows.push(key);
        }
    }
    for (figure, source, rate) in rows {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td>",
            esc(figure),
            esc(source),
            esc(rate)
        );
        for band in &bands {
            let cell = checks.iter().find(|b| {
                (b.figure.as_str(), b.source.as_str(), b.rate.as_str()) == (figure, source, rate)
                    && b.article == band.article
            });
            match cell {
                None => h.push_str("<td>—</td>"),
                Some(b) => {
                    let (class, word) = match (b.applies, b.met, b.binding) {
                        (false, _, _) => ("notrun", "does not apply"),
                        (true, true, _) => ("pass", "meets"),
                        (true, false, true) => ("fail", "MISSES"),
                        (true, false, false) => ("notrun", "misses (reported, not binding)"),
                    };
                    let _ = write!(
                        h,
                        "<td class={class}>{word}<br><small>{}</small></td>",
                        esc(&b.why)
                    );
                }
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
}

/// The ledger's figures per block and its checks, if a ledger was read.
fn ledger_of(h: &mut String, report: &AuditReport) {
    let Some(l) = &report.ledger else {
        h.push_str("<p>No ledger was read (block files audited alone, or --no-ledger).</p>");
        return;
    };
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
    if let (Some(r), Some(e), Some([lo, hi])) = (l.realised_return, l.expected_return, l.band_99) {
        let _ = write!(
            h,
            "<p>Realised return {r:.6} against {e:.6} expected for the units played out (99 % band {lo:.6} to {hi:.6}).</p>"
        );
    }
    checks(h, &l.checks);
}

/// A plot as a figure: its drawing, then its title.
fn figure(h: &mut String, plot: &Plot) {
    let _ = write!(h, "<figure id=\"{}\">", anchor(&plot.id));
    match plot::svg(plot) {
        Ok(svg) => h.push_str(&svg),
        Err(e) => {
            let _ = write!(
                h,
                "<p class=fail>This plot could not be drawn: {}</p>",
                esc(&e.to_string())
            );
        }
    }
    let _ = write!(h, "<figcaption>{}</figcaption></figure>", esc(&plot.title));
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
fn every_test(h: &mut String, report: &AuditReport) {
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
