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

/// A share of stakes ("0.70000000000000000000", "0.752614") as a
/// percentage with two decimals ("70.00 %"); text that is not a number
/// is shown as it is.
fn percent(share: &str) -> String {
    match share.parse::<rust_decimal::Decimal>() {
        Ok(d) => format!("{} %", (d * rust_decimal::Decimal::ONE_HUNDRED).round_dp(2)),
        Err(_) => share.to_string(),
    }
}

/// Euros as the report's JSON writes them ("38032.1") with two decimals
/// ("38032.10"); text that is not a number is shown as it is.
fn amount(euros: &str) -> String {
    match euros.parse::<rust_decimal::Decimal>() {
        Ok(d) => format!("{:.2}", d.round_dp(2)),
        Err(_) => euros.to_string(),
    }
}

/// Cents as euros with two decimals ("1234.50 €").
fn euros(cents: u64) -> String {
    format!("{}.{:02} €", cents / 100, cents % 100)
}

/// A lot's name as the regulation writes it: L'île au trésor's
/// "tete_de_mort-3" is « 3 têtes de mort » (article 4.5); any other name
/// is shown as it is.
fn lot_words(name: &str) -> String {
    let Some((symbol, n)) = name.rsplit_once('-') else {
        return name.to_string();
    };
    let (one, many) = match symbol {
        "chandelier" => ("chandelier", "chandeliers"),
        "singe" => ("singe", "singes"),
        "saphir" => ("saphir", "saphirs"),
        "tete_de_mort" => ("tête de mort", "têtes de mort"),
        _ => return name.to_string(),
    };
    match n {
        "1" => format!("1 {one}"),
        n if n.chars().all(|c| c.is_ascii_digit()) => format!("{n} {many}"),
        _ => name.to_string(),
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
table{border-collapse:collapse;margin:.5em 0;width:100%}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left;vertical-align:top}\
th{background:#f4f4f4}.pass{color:#1a7f37}.fail{color:#c00;font-weight:bold}.notrun{color:#888}\
.notdone{color:#8a5a00;font-weight:bold;background:#fff4d6}.breach{color:#b45309;font-weight:bold;background:#fff1e0}\
.ok{background:#e6f4ea;padding:.5em 1em}.ko{background:#fde7e9;padding:.5em 1em}.todo{background:#fff4d6;padding:.5em 1em}\
code{overflow-wrap:anywhere;word-break:break-all}td,th{overflow-wrap:break-word}td:last-child{overflow-wrap:anywhere}table.wide{font-size:.85em}table.wide td,table.wide th{overflow-wrap:anywhere;padding:.15em .3em}\
figure{margin:1.5em 0;break-inside:avoid}figure svg{display:block;max-width:100%;height:auto}figcaption{color:#444;font-style:italic}\
@page{size:A4;margin:12mm}\
@media print{body{max-width:none;margin:0;padding:0;font-size:9pt}nav{display:none}h2{break-after:avoid}tr{break-inside:avoid}}";

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
    let name = ticket_issuer_core::game::Game::from_slug(&report.game)
        .map_or_else(|| report.game.clone(), |g| g.display_name());
    let title = format!(
        "Audit of {name}{}",
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

/// The verdict and the counts, then what is not done yet and every band
/// breach, each as prominent as the verdict.
fn summary_of(h: &mut String, report: &AuditReport) {
    let s = &report.summary;
    let count = |n: usize, noun: &str| match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    };
    let verdict = match (report.ok, s.checks_not_done) {
        (false, _) => "FAIL",
        (true, 0) => "PASS",
        (true, _) => "PASS so far",
    };
    let _ = write!(
        h,
        "<p class={}><b>{verdict}</b>: {}; {} run, {} could not run; {} failing at {} after {} ({} before); {} failing. Written by issuer {}.</p>",
        if report.ok { "ok" } else { "ko" },
        count(report.blocks.len(), "block"),
        count(s.tests_run, "test"),
        s.tests_not_run,
        s.failed_adjusted,
        report.level,
        esc(&report.correction),
        s.failed_raw,
        count(s.checks_failed, "check"),
        esc(&report.issuer_version)
    );
    let not_done: Vec<String> = report
        .all_checks()
        .filter(|c| !c.done)
        .map(|c| {
            format!(
                "<li><b>{}</b> ({}): {}</li>",
                esc(&c.id),
                esc(&c.name),
                esc(&c.detail)
            )
        })
        .collect();
    let heading = format!(
        "<b>Not done yet: {}.</b> The verdict above holds for the checks made; this audit is complete only once these are:",
        count(not_done.len(), "check")
    );
    notice(h, &heading, &not_done);
    let breaches: Vec<String> = report
        .band_breaches()
        .map(|b| {
            format!(
                "<li class=breach>{} — {}: {}</li>",
                esc(&b.figure),
                esc(&b.article),
                esc(&b.why)
            )
        })
        .collect();
    let heading = format!(
        "<b>{} outside a band of the payout rule, not binding</b> (see <a href=\"#par\">the payout rule</a> for why a figure is or is not binding):",
        count(breaches.len(), "figure")
    );
    notice(h, &heading, &breaches);
    if s.failed_raw > s.failed_adjusted {
        let _ = write!(
            h,
            "<p>{} at {} on its raw p-value only: with {} run, about {:.1} such raw failures are expected by chance alone; after {} none of them fails (each is marked in <a href=\"#tests\">the table of tests</a>).</p>",
            count(s.failed_raw - s.failed_adjusted, "test fails"),
            report.level,
            count(s.tests_run, "test"),
            report.level * s.tests_run as f64,
            esc(&report.correction)
        );
    }
}

/// A highlighted notice: `heading`, then its `items` (`<li>`s); nothing
/// when there are none.
fn notice(h: &mut String, heading: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<div class=todo>{heading}<ul>{}</ul></div>",
        items.concat()
    );
}

/// Each block's facts and lot table, then the hard checks.
fn lot_tables(h: &mut String, report: &AuditReport) {
    for b in &report.blocks {
        let _ = write!(
            h,
            "<h3>Block {} — {} units at {} €, {} winners, {} € paid once played to the end</h3>\
<p>file SHA-256 <code>{}</code>, Merkle root <code>{}</code></p>",
            b.block,
            b.units,
            esc(&amount(&b.price)),
            b.winners,
            esc(&amount(&b.paid)),
            esc(&b.file_sha256),
            esc(&b.merkle_root)
        );
        if !b.lots.is_empty() {
            h.push_str(
                "<table><tr><th>lot</th><th>amount</th><th>the regulation's table</th><th>found in the block</th></tr>",
            );
            for l in &b.lots {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{} €</td><td>{}</td><td class={}>{}</td></tr>",
                    esc(&lot_words(&l.name)),
                    esc(&amount(&l.amount)),
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
            "<table><tr><th>PAR figure</th><th>return to player</th><th>the payout rule is judged on it</th><th>how it is known</th></tr>",
        );
        for f in figures {
            let rate = f.get("rate");
            let shown = match rate.and_then(|r| r.get("decimal")).or(rate) {
                Some(serde_json::Value::String(s)) => esc(&percent(s)),
                other => text(other),
            };
            let binding = match f.get("binding") {
                Some(serde_json::Value::Bool(true)) => "yes",
                Some(serde_json::Value::Bool(false)) => "no: reported only",
                _ => "—",
            };
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{shown}</td><td>{binding}</td><td>{}</td></tr>",
                text(f.get("figure")),
                text(f.get("note"))
            );
        }
        h.push_str("</table>");
    }
    h.push_str(BINDING);
    payout_table(h, &report.payout);
}

/// Why one figure is binding and the others are not (docs/GAMES.md §Payout
/// rule), on the page beside the figures.
const BINDING: &str = "<p><b>Which figure the payout rule is judged on.</b> Article D.322-10 bounds the share of stakes a game is built to pay back. For a game whose lots are fixed in advance (L'île au trésor) that is its lot table over a block's stakes: exact, binding. For a game played step by step (Trésors Ensablés) it is the return of the game as its regulation draws it with no choice made by the player, every unit played to its end (never stop): a unit left unplayed is played out to its end, so that return is what the game pays whatever players do. The returns of a player's own strategies (stop at the first chest, stop at 0.50 €, play optimally seeing the board) depend on that player's choices, not on the game: they are reported, shown as breaches when outside a band, and do not fail the audit. An estimate (optimal play) is given with its standard error, and a breach of it is said significant or not at 99 % (one-sided).</p>";

/// The payout rule: one row per figure, one column per band (its
/// verdict and why), the bands named once in the header.
fn payout_table(h: &mut String, checks: &[BandCheck]) {
    let mut bands: Vec<&BandCheck> = Vec::new();
    for b in checks {
        if !bands.iter().any(|x| x.article == b.article) {
            bands.push(b);
        }
    }
    h.push_str("<table class=wide><tr><th>figure</th><th>source</th><th>return</th>");
    for b in &bands {
        let _ = write!(
            h,
            "<th>{}: {} ({} to {})</th>",
            esc(&b.article),
            esc(&b.band),
            esc(&percent(&b.low)),
            esc(&percent(&b.high))
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
            esc(&percent(rate))
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
                        (true, false, false) => ("breach", "OUTSIDE THE BAND (not binding)"),
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
    h.push_str("<table><tr><th>block</th><th>units</th><th>sold</th><th>unsold</th><th>played</th><th>redeemed</th><th>paid</th><th>unclaimed</th><th>liability</th></tr>");
    for b in &l.blocks {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            b.block,
            b.units,
            b.sold,
            b.unsold,
            b.played,
            b.redeemed,
            euros(b.paid_cents),
            b.unclaimed,
            euros(b.liability_cents)
        );
    }
    let total = |f: fn(&ticket_issuer_core::evidence::LedgerBlock) -> u64| {
        l.blocks.iter().map(f).sum::<u64>()
    };
    let _ = write!(
        h,
        "<tr><th>this emission</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></table>",
        total(|b| b.units),
        total(|b| b.sold),
        total(|b| b.unsold),
        total(|b| b.played),
        total(|b| b.redeemed),
        euros(total(|b| b.paid_cents)),
        total(|b| b.unclaimed),
        euros(total(|b| b.liability_cents))
    );
    if let (Some(r), Some(e), Some([lo, hi])) = (l.realised_return, l.expected_return, l.band_99) {
        let _ = write!(
            h,
            "<p>Realised return {:.4} % against {:.4} % expected for the units played out (99 % band {:.4} % to {:.4} %).</p>",
            r * 100.0,
            e * 100.0,
            lo * 100.0,
            hi * 100.0
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
            match (c.done, c.ok) {
                (false, _) => "notdone",
                (true, true) => "pass",
                (true, false) => "fail",
            },
            match (c.done, c.ok) {
                (false, _) => "NOT DONE",
                (true, true) => "holds",
                (true, false) => "FAILS",
            },
            esc(&c.detail)
        );
    }
    h.push_str("</table>");
}

/// The table of every test.
fn every_test(h: &mut String, report: &AuditReport) {
    h.push_str("<table class=wide><tr><th>test</th><th>scope</th><th>what</th><th>method</th><th>statistic</th><th>dof</th><th>p</th><th>p (Holm)</th>");
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
        // A raw failure the correction clears is said so in its cell: it
        // is what so many tests give by chance, not a failure.
        match (v.raw, v.adjusted) {
            (Verdict::Fail, Verdict::Pass) => {
                h.push_str("<td class=notrun>fails raw only (passes after the correction)</td>")
            }
            (raw, _) => h.push_str(verdict(raw)),
        }
        h.push_str(verdict(v.adjusted));
    }
    let _ = write!(h, "<td>{}</td></tr>", esc(&t.note));
}
