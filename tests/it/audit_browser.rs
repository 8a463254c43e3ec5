//! The audit page in a real browser: `issuer audit` of an L'île au trésor
//! and a Trésors Ensablés emission, each `report.html` opened in headless
//! Chromium (the driver, over the DevTools pipe, is `browser.rs`). For
//! each page:
//!
//! - **every section and every plot renders**: once the page has loaded,
//!   each section id is in the DOM, and each plot of `report.json` is a
//!   `<figure>` in its section holding an `<svg>` with drawn shapes and a
//!   rendered size above zero (`Runtime.evaluate`, which the protocol runs
//!   outside the page's Content-Security-Policy: the page has no script);
//! - **no console error**: any console call, exception, and log entry of
//!   level error or warning (the browser logs a CSP violation, a failed
//!   load or a deprecated feature there) fails the test;
//! - **no network request**: every request and WebSocket of the page is
//!   recorded, and the only request allowed is the page file itself. Two
//!   control pages show the check sees a load: the report with an `<img>`
//!   from 127.0.0.1 and its CSP removed must show that request; with its
//!   CSP kept, the load must be refused and the refusal logged as an error;
//! - **a screenshot** of the whole page, 1280 px wide
//!   (`Page.captureScreenshot`), into `<target>/audit-screenshots/`.

use std::path::Path;

use serde_json::Value;
use ticket_issuer::report_html::plot_section_id;

use crate::browser::{screenshot_dir, Browser, Seen};
use crate::common::{generate_te, issuer};

/// The sections every page has, in order.
const SECTIONS: [&str; 6] = ["summary", "provenance", "lots", "par", "tests", "ledger"];

#[test]
fn audit_pages_render_in_chromium_without_network_or_console_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    issuer(&store, &["keygen"]).expect_code(0);
    let ile: Vec<&str> = "generate --game ile-au-tresor --emission 1 --blocks 1 --price 1 --quiet"
        .split(' ')
        .collect();
    issuer(&store, &ile).expect_code(0);
    issuer(&store, &["close", "--emission", "1"]).expect_code(0);
    generate_te(&store, 2, 60_000);
    issuer(&store, &["close", "--emission", "2"]).expect_code(0);

    let shots = screenshot_dir("audit-screenshots");
    let mut browser = Browser::launch(dir.path());
    for (emission, name) in [(1, "ile-au-tresor"), (2, "tresors-ensables")] {
        let out = dir.path().join(format!("audit-{emission}"));
        let audit = issuer(
            &store,
            &[
                "audit",
                "--emission",
                &emission.to_string(),
                "--out",
                out.to_str().unwrap(),
                "--quiet",
            ],
        );
        assert!(
            audit.code == 0 || audit.code == 1,
            "audit of emission {emission}: {}\n{}",
            audit.stdout,
            audit.stderr
        );
        let report: Value =
            serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        let page = out.join("report.html");
        let (tab, dom, seen) = open_file(&mut browser, &page);
        assert_quiet(&seen, &tab, &page);
        assert_renders(&dom, &report, name);
        browser.save_screenshot(&tab, &shots.join(format!("{name}.png")));
        assert_reads_as_a_regulator_reads(&mut browser, &tab, name);
        assert_nothing_clipped(&mut browser, &tab, &format!("{name} on screen"));
        let pdf = browser.print_a4(&tab);
        assert!(pdf.starts_with(b"%PDF"), "{name}: printed to PDF");
        assert_nothing_clipped(&mut browser, &tab, &format!("{name} printed on A4"));
        std::fs::write(shots.join(format!("{name}.pdf")), pdf).unwrap();
    }

    // The controls: a page that loads an image from 127.0.0.1 (a port
    // nothing listens on), without and with the report's CSP.
    let html = std::fs::read_to_string(dir.path().join("audit-1/report.html")).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let image = format!("http://127.0.0.1:{port}/x.png");
    let with_image = html.replacen("<body>", &format!("<body><img src=\"{image}\">"), 1);
    let csp_start = with_image
        .find("<meta http-equiv=Content-Security-Policy")
        .unwrap();
    let csp_end = csp_start + with_image[csp_start..].find('>').unwrap() + 1;
    let without_csp = format!("{}{}", &with_image[..csp_start], &with_image[csp_end..]);

    let open = dir.path().join("control-open.html");
    std::fs::write(&open, without_csp).unwrap();
    let (_, _, seen) = open_file(&mut browser, &open);
    assert!(
        seen.requests.iter().any(|r| r == &image),
        "the check must see a page's request: {:?}",
        seen.requests
    );

    let guarded = dir.path().join("control-csp.html");
    std::fs::write(&guarded, with_image).unwrap();
    let (_, _, seen) = open_file(&mut browser, &guarded);
    assert!(
        seen.errors
            .iter()
            .any(|e| e.contains("Content Security Policy")),
        "the CSP must refuse the load, and the refusal be seen: {:?} {:?}",
        seen.errors,
        seen.requests
    );
}

/// No column and no text is cut: the page is no wider than its window,
/// no table wider than the body, and no cell's text wider than its cell.
fn assert_nothing_clipped(browser: &mut Browser, tab: &crate::browser::Tab, what: &str) {
    let clipped = browser.evaluate(
        tab,
        "JSON.stringify({\
           page: document.documentElement.scrollWidth - window.innerWidth,\
           tables: [...document.querySelectorAll('table')]\
             .filter(t => t.getBoundingClientRect().right > document.body.getBoundingClientRect().right + 1)\
             .map(t => t.closest('section').id),\
           cells: [...document.querySelectorAll('td, th')]\
             .filter(c => c.scrollWidth > c.clientWidth + 1)\
             .map(c => c.textContent.slice(0, 60)),\
         })",
    );
    let clipped: Value = serde_json::from_str(clipped.as_str().unwrap()).unwrap();
    assert!(
        clipped["page"].as_f64().unwrap() <= 1.0
            && clipped["tables"].as_array().unwrap().is_empty()
            && clipped["cells"].as_array().unwrap().is_empty(),
        "{what}: clipped {clipped}"
    );
}

/// What a regulator reads: the game's name in the title, a check not made
/// said *not done* in the summary and its table (never *holds*), returns
/// in percent (never a 20-decimal share), and for Trésors Ensablés every
/// band breach shown in the summary with whether the estimate's breach is
/// significant.
fn assert_reads_as_a_regulator_reads(browser: &mut Browser, tab: &crate::browser::Tab, name: &str) {
    let page = browser.evaluate(
        tab,
        "JSON.stringify({\
           title: document.querySelector('h1').textContent,\
           summary: document.getElementById('summary').innerText,\
           seeds: [...document.querySelectorAll('#provenance tr')]\
             .filter(r => r.textContent.startsWith('manifest/seeds')).map(r => r.innerText),\
           breaches: [...document.querySelectorAll('#summary .breach')].map(b => b.textContent),\
           par: document.getElementById('par').innerText,\
         })",
    );
    let page: Value = serde_json::from_str(page.as_str().unwrap()).unwrap();
    let title = page["title"].as_str().unwrap();
    let expected = match name {
        "ile-au-tresor" => "Audit of L'île au trésor, emission 1",
        _ => "Audit of Trésors Ensablés, emission 2",
    };
    assert_eq!(title, expected);
    let summary = page["summary"].as_str().unwrap();
    assert!(summary.contains("Not done yet: 1 check"), "{summary}");
    assert!(summary.contains("--seeds"), "what remains: {summary}");
    let seeds = page["seeds"][0].as_str().unwrap();
    assert!(
        seeds.contains("NOT DONE") && !seeds.contains("holds"),
        "{seeds}"
    );
    let par = page["par"].as_str().unwrap();
    assert!(!par.contains("0.7000000000"), "returns in percent: {par}");
    assert!(par.contains(" %"), "{par}");
    let breaches = page["breaches"].as_array().unwrap();
    match name {
        "ile-au-tresor" => assert!(breaches.is_empty(), "{breaches:?}"),
        _ => {
            assert!(breaches.len() >= 2, "{breaches:?}");
            let optimal = breaches
                .iter()
                .map(|b| b.as_str().unwrap())
                .find(|b| b.contains("optimally"))
                .expect("the optimal-play figure's breach");
            assert!(
                optimal.contains("significant at 99 %"),
                "settled at 99 %: {optimal}"
            );
            assert!(
                par.contains("Which figure the payout rule is judged on"),
                "{par}"
            );
        }
    }
}

/// What the page's DOM shows: each section id is there, and each plot of
/// `report` is a figure in its section with a drawn, visible SVG.
fn assert_renders(dom: &Value, report: &Value, name: &str) {
    let sections: Vec<&str> = dom["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let plots = report["plots"].as_array().unwrap();
    assert!(!plots.is_empty(), "{name}: the report has plots");
    let plot_sections = plots
        .iter()
        .map(|p| plot_section_id(p["section"].as_str().unwrap()));
    for id in SECTIONS.iter().map(|s| s.to_string()).chain(plot_sections) {
        assert!(
            sections.contains(&id.as_str()),
            "{name}: section {id} is not in {sections:?}"
        );
    }
    let figures = dom["figures"].as_array().unwrap();
    assert_eq!(
        figures.len(),
        plots.len(),
        "{name}: one figure per plot: {dom}"
    );
    for plot in plots {
        let id = plot["id"].as_str().unwrap();
        let figure = figures
            .iter()
            .find(|f| f["id"] == id)
            .unwrap_or_else(|| panic!("{name}: no figure {id}: {dom}"));
        let section = plot_section_id(plot["section"].as_str().unwrap());
        assert_eq!(figure["section"], section.as_str(), "{name}: {figure}");
        assert!(figure["shapes"].as_u64().unwrap() > 10, "{name}: {figure}");
        assert!(
            figure["labels"].as_u64().unwrap() > 3,
            "{name}: axes labelled: {figure}"
        );
        assert!(
            figure["width"].as_f64().unwrap() > 100.0,
            "{name}: {figure}"
        );
        assert!(
            figure["height"].as_f64().unwrap() > 50.0,
            "{name}: {figure}"
        );
        assert_eq!(figure["caption"], plot["title"], "{name}: {figure}");
    }
    if name == "tresors-ensables" {
        let labels = figures
            .iter()
            .find(|f| f["id"] == "block-1-return")
            .map(|f| f["text"].as_str().unwrap().to_string())
            .expect("the return plot");
        for strategy in ["never-stop", "first-chest", "reach-0.5", "reach-5"] {
            assert!(
                labels.contains(strategy),
                "the x axis names {strategy}: {labels}"
            );
        }
    }
}

/// The DOM as the page shows it: section ids, and each figure's section,
/// shapes, text labels, rendered size, caption and words.
const DOM_QUERY: &str = r#"(() => {
  const figures = [...document.querySelectorAll('figure[id]')].map(f => {
    const svg = f.querySelector('svg');
    const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    const section = f.closest('section');
    return {
      id: f.id,
      section: section ? section.id : null,
      shapes: svg ? svg.querySelectorAll('rect, circle, polyline, polygon, path, line').length : 0,
      labels: svg ? svg.querySelectorAll('text').length : 0,
      text: svg ? svg.textContent : '',
      width: box.width,
      height: box.height,
      caption: (f.querySelector('figcaption') || {}).textContent || null,
    };
  });
  return {
    sections: [...document.querySelectorAll('section[id]')].map(s => s.id),
    figures,
  };
})()"#;

/// Opens the file `page`: its tab, what `DOM_QUERY` finds once it has
/// loaded, and what it did.
fn open_file(browser: &mut Browser, page: &Path) -> (crate::browser::Tab, Value, Seen) {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let tab = browser.open(&url);
    let dom = browser.evaluate(&tab, DOM_QUERY);
    let seen = browser.seen(&tab);
    (tab, dom, seen)
}

/// No request but the page's own file, no console error or warning.
fn assert_quiet(seen: &Seen, tab: &crate::browser::Tab, page: &Path) {
    let others: Vec<&String> = seen.requests.iter().filter(|r| **r != tab.url).collect();
    assert!(others.is_empty(), "{}: requests {others:?}", page.display());
    assert!(
        seen.errors.is_empty(),
        "{}: console {:?}",
        page.display(),
        seen.errors
    );
}
