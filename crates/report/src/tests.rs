//! The page is one self-contained, well-formed file: every plot drawn in
//! its section, nothing that would load from elsewhere, everything escaped.

use ticket_issuer_core::evidence::payout::BandCheck;
use ticket_issuer_core::evidence::report::Summary;
use ticket_issuer_core::evidence::{AuditReport, Check, Plot, PlotKind, Series, StatTest};

use super::{anchor, plot_section_id, render, SECTIONS};

/// Text no page may hold as markup.
const HOSTILE: &str = "<script>alert(\"x\")</script> & 'https://evil.example/a.png'";

fn plot(id: &str, section: &str, kind: PlotKind, series: Vec<Series>) -> Plot {
    Plot {
        id: id.into(),
        section: section.into(),
        title: format!("{id}: {HOSTILE}"),
        x_label: "x".into(),
        y_label: format!("y {HOSTILE}"),
        x_categories: Vec::new(),
        kind,
        lines: Vec::new(),
        series,
    }
}

fn banded(name: &str, points: Vec<[f64; 2]>) -> Series {
    let band = points.iter().map(|[_, y]| [y - 0.1, y + 0.1]).collect();
    Series {
        band,
        ..Series::new(name, points)
    }
}

/// A report with a plot of every kind: bars with a line over them, points
/// with a band over named categories, lines with a band, an empty plot, a
/// NaN figure, and hostile text in titles, names and notes.
fn report() -> AuditReport {
    let counts: Vec<[f64; 2]> = (0..100)
        .map(|i| [f64::from(i), 1000.0 + f64::from(i % 7)])
        .collect();
    let mut categories = plot(
        "block-1-return",
        "return",
        PlotKind::Points,
        vec![
            Series::new("found", vec![[0.0, 0.63], [1.0, 0.28], [2.0, f64::NAN]]),
            banded(HOSTILE, vec![[0.0, 0.64], [1.0, 0.27], [2.0, 0.5]]),
        ],
    );
    categories.x_categories = vec!["never-stop".into(), "first-chest".into(), HOSTILE.into()];
    let mut report = AuditReport {
        game: "tresors-ensables".into(),
        emission: Some(2),
        issuer_version: "0.1.0".into(),
        levels: vec![0.01, 0.05],
        level: 0.01,
        correction: "Holm".into(),
        provenance: vec![Check::new(
            "manifest/signature".into(),
            "emission",
            "signed",
            true,
            HOSTILE.into(),
        )],
        blocks: Vec::new(),
        checks: vec![Check::new(
            "block-1/total".into(),
            "block 1",
            "total",
            false,
            HOSTILE.into(),
        )],
        tests: vec![StatTest::ran(
            "block-1/dice".into(),
            "block 1",
            HOSTILE,
            "chi-square",
            3.2,
            Some(5.0),
            0.67,
        )
        .noted(HOSTILE)],
        par: serde_json::json!([{
            "figure": HOSTILE,
            "rate": {"decimal": "0.65", "fraction": "13/20"},
            "binding": true,
            "note": "exact"
        }]),
        payout: vec![BandCheck {
            figure: HOSTILE.into(),
            source: "par".into(),
            rate: "0.65".into(),
            article: "D.322-10 I".into(),
            band: "expectation".into(),
            low: "0.450".into(),
            high: "0.750".into(),
            applies: true,
            met: true,
            binding: true,
            why: HOSTILE.into(),
            standard_error: None,
            z: None,
            significant: None,
        }],
        ledger: None,
        plots: vec![
            plot(
                "block-1-winners-per-bin",
                "positions",
                PlotKind::Bars,
                vec![
                    Series::new("found", counts),
                    Series::new(
                        "expected",
                        (0..100).map(|i| [f64::from(i), 1003.0]).collect(),
                    ),
                ],
            ),
            plot(
                "emission-top-positions",
                "positions",
                PlotKind::Points,
                vec![Series::new("top prize", Vec::new())],
            ),
            categories,
            plot(
                "block-1-lines",
                HOSTILE,
                PlotKind::Lines,
                vec![banded(
                    "estimate",
                    (0..20)
                        .map(|i| [f64::from(i) / 20.0, f64::from(i).sqrt()])
                        .collect(),
                )],
            ),
        ],
        ok: false,
        summary: Summary::default(),
    };
    report.judge();
    report
}

/// A tag of the page.
struct Tag<'a> {
    /// Its name, lower case (`/p` for a closing tag).
    name: String,
    /// Everything between `<` and `>`.
    text: &'a str,
}

/// The page's tags in order (its text holds no `<`: it is all escaped, and
/// its style has no `>` either).
fn tags(page: &str) -> Vec<Tag<'_>> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(open) = rest.find('<') {
        let close = open + rest[open..].find('>').expect("every tag is closed");
        let text = &rest[open + 1..close];
        let name = text
            .split(|c: char| c.is_whitespace() || c == '>')
            .next()
            .unwrap_or_default()
            .trim_end_matches('/')
            .to_ascii_lowercase();
        out.push(Tag { name, text });
        rest = &rest[close + 1..];
    }
    out
}

#[test]
fn every_plot_is_an_svg_figure_in_its_section() {
    let report = report();
    let page = render(&report);
    for (id, _) in SECTIONS {
        assert!(
            page.contains(&format!("<section id=\"{id}\">")),
            "section {id}"
        );
    }
    for plot in &report.plots {
        let section = format!("<section id=\"{}\">", plot_section_id(&plot.section));
        let figure = format!("<figure id=\"{}\">", anchor(&plot.id));
        let at = page
            .find(&figure)
            .unwrap_or_else(|| panic!("figure {}", plot.id));
        let opened = page[..at].rfind("<section ").unwrap();
        assert!(
            page[opened..].starts_with(&section),
            "{} is in its section",
            plot.id
        );
        let end = at + page[at..].find("</figure>").unwrap();
        let inner = &page[at..end];
        assert!(inner.contains("<svg "), "{}: {inner}", plot.id);
        assert!(inner.contains("</svg>"), "{}", plot.id);
        assert!(inner.contains("<text"), "{}: axes are labelled", plot.id);
        assert!(inner.contains("<figcaption>"), "{}", plot.id);
        assert!(
            !inner.contains("could not be drawn"),
            "{}: {inner}",
            plot.id
        );
    }
    // Points with a band: error bars; a line with a band: an area.
    let figure = |id: &str| {
        let at = page.find(&format!("<figure id=\"{id}\">")).unwrap();
        &page[at..at + page[at..].find("</figure>").unwrap()]
    };
    assert!(figure("block-1-return").contains("<circle"));
    assert!(
        figure("block-1-return").contains("\nnever-stop\n</text>"),
        "categories name the x axis"
    );
    assert!(figure("block-1-winners-per-bin").matches("<rect").count() >= 100);
    assert!(figure("block-1-lines").contains("<polygon"));
    assert!(figure("emission-top-positions").contains("no point to draw"));
}

#[test]
fn the_page_loads_nothing_and_runs_nothing() {
    let page = render(&report());
    assert!(page.contains(
        "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline';"
    ));
    for tag in tags(&page) {
        // SVG's namespace is a name, never fetched.
        let text = tag
            .text
            .replace(" xmlns=\"http://www.w3.org/2000/svg\"", "");
        let lower = text.to_ascii_lowercase();
        for scheme in ["http:", "https:", "//", "url(", "data:", "javascript:"] {
            assert!(
                !lower.contains(scheme),
                "a tag refers elsewhere: <{}>",
                tag.text
            );
        }
        for attribute in [" src=", " srcset=", "xlink:href"] {
            assert!(!lower.contains(attribute), "<{}>", tag.text);
        }
        let handler = lower.match_indices(" on").any(|(at, _)| {
            let name = lower[at + 3..].trim_start_matches(|c: char| c.is_ascii_alphabetic());
            name.starts_with('=')
        });
        assert!(!handler, "an event handler: <{}>", tag.text);
        if let Some(at) = lower.find(" href=") {
            assert!(
                lower[at..].starts_with(" href=\"#"),
                "a link within the page only: <{}>",
                tag.text
            );
        }
        let loads = [
            "script", "link", "img", "image", "iframe", "object", "embed", "use", "base", "form",
        ];
        assert!(!loads.contains(&tag.name.as_str()), "<{}>", tag.text);
    }
    assert!(!super::STYLE.contains("url(") && !super::STYLE.contains("@import"));
    // Hostile text is shown, as text.
    assert!(page.contains("&lt;script&gt;"));
}

#[test]
fn the_page_is_well_formed() {
    let page = render(&report());
    assert!(page.starts_with("<!doctype html>"));
    let void = ["!doctype", "meta", "br"];
    let mut open: Vec<String> = Vec::new();
    for tag in tags(&page) {
        if void.contains(&tag.name.as_str()) || tag.text.ends_with('/') {
            continue;
        }
        match tag.name.strip_prefix('/') {
            Some(name) => {
                let top = open.pop();
                assert_eq!(top.as_deref(), Some(name), "</{name}> closes <{top:?}>");
            }
            None => open.push(tag.name),
        }
    }
    assert!(open.is_empty(), "left open: {open:?}");
    // Ids are unique.
    let mut ids: Vec<&str> = page
        .split(" id=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    let all = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all, "an id is given twice");
}
