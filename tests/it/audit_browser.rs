//! The audit page in a real browser: `issuer audit` of an L'île au trésor
//! and a Trésors Ensablés emission, each `report.html` opened in headless
//! Chromium (`apt-get install chromium`; the test fails, saying so, when
//! it is missing).
//!
//! The browser is driven through the DevTools protocol over a pipe
//! (`--remote-debugging-pipe`: JSON messages ended by a NUL byte, read on
//! the browser's fd 3 and written on its fd 4), so no WebSocket client and
//! no crate: the test reads only the few fields it checks. For each page:
//!
//! - **every section and every plot renders**: once the page has loaded,
//!   each section id is in the DOM, and each plot of `report.json` is a
//!   `<figure>` in its section holding an `<svg>` with drawn shapes and a
//!   rendered size above zero (`Runtime.evaluate`, which the protocol runs
//!   outside the page's Content-Security-Policy: the page has no script);
//! - **no console error**: `Runtime` and `Log` are enabled before the page
//!   is opened; any `Runtime.consoleAPICalled`, any
//!   `Runtime.exceptionThrown` and any `Log.entryAdded` of level error or
//!   warning (the browser logs a CSP violation, a failed load or a
//!   deprecated feature there) fails the test;
//! - **no network request**: `Network` is enabled before the page is
//!   opened; every `Network.requestWillBeSent` and
//!   `Network.webSocketCreated` of the page is recorded, and the only
//!   request allowed is the page file itself. Two control pages show the
//!   check sees a load: the report with an `<img>` from 127.0.0.1 and its
//!   CSP removed must show that request; with its CSP kept, the load must be
//!   refused and the refusal logged as an error;
//! - **a screenshot** of the whole page, 1280 px wide
//!   (`Page.captureScreenshot`), into `<target>/audit-screenshots/`.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};
use ticket_issuer::report_html::plot_section_id;

use crate::common::{generate_te, issuer};

/// The sections every page has, in order.
const SECTIONS: [&str; 6] = ["summary", "provenance", "lots", "par", "tests", "ledger"];

/// How long one answer or event of the browser may take.
const PATIENCE: Duration = Duration::from_secs(60);

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

    let shots = screenshot_dir();
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
        let seen = browser.open(&page);
        seen.assert_quiet(&page);
        assert_renders(&seen.dom, &report, name);
        let shot = shots.join(format!("{name}.png"));
        std::fs::write(&shot, browser.screenshot(&seen)).unwrap();
        eprintln!("screenshot: {}", shot.display());
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
    let seen = browser.open(&open);
    assert!(
        seen.requests.iter().any(|r| r == &image),
        "the check must see a page's request: {:?}",
        seen.requests
    );

    let guarded = dir.path().join("control-csp.html");
    std::fs::write(&guarded, with_image).unwrap();
    let seen = browser.open(&guarded);
    assert!(
        seen.errors
            .iter()
            .any(|e| e.contains("Content Security Policy")),
        "the CSP must refuse the load, and the refusal be seen: {:?} {:?}",
        seen.errors,
        seen.requests
    );
}

/// `<target>/audit-screenshots/`, made if needed (under the target folder:
/// never in git).
fn screenshot_dir() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target folder")
        .join("audit-screenshots");
    std::fs::create_dir_all(&target).unwrap();
    target
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
    height: document.documentElement.scrollHeight,
  };
})()"#;

/// What a page did while it was opened.
struct Seen {
    /// The page's URL.
    url: String,
    /// `DOM_QUERY`'s answer.
    dom: Value,
    /// Every request the page made, by URL (its own file included).
    requests: Vec<String>,
    /// Console calls, exceptions and log entries of level error or warning.
    errors: Vec<String>,
    /// The session the page is attached to.
    session: String,
}

impl Seen {
    /// No request but the page's own file, no console error or warning.
    fn assert_quiet(&self, page: &Path) {
        let others: Vec<&String> = self.requests.iter().filter(|r| **r != self.url).collect();
        assert!(others.is_empty(), "{}: requests {others:?}", page.display());
        assert!(
            self.errors.is_empty(),
            "{}: console {:?}",
            page.display(),
            self.errors
        );
    }
}

/// Headless Chromium, spoken to over its DevTools pipe; killed when dropped.
struct Browser {
    child: Child,
    to_browser: std::io::PipeWriter,
    from_browser: Receiver<Value>,
    /// Events read while waiting for an answer, not yet looked at.
    events: Vec<Value>,
    next_id: u64,
}

impl Browser {
    /// Starts `chromium` with its profile in `dir`.
    fn launch(dir: &Path) -> Browser {
        let (browser_in, to_browser) = std::io::pipe().unwrap();
        let (from_browser, browser_out) = std::io::pipe().unwrap();
        // The browser's ends, first moved above fd 10 so that putting them
        // on 3 and 4 in the child cannot overwrite one with the other.
        let high = |fd: RawFd| -> OwnedFd {
            // SAFETY: `fd` is open; F_DUPFD_CLOEXEC returns a new fd we own.
            let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
            assert!(new >= 10, "fcntl: {}", std::io::Error::last_os_error());
            // SAFETY: `new` is a fresh fd nothing else owns.
            unsafe { OwnedFd::from_raw_fd(new) }
        };
        let (read_end, write_end) = (high(browser_in.as_raw_fd()), high(browser_out.as_raw_fd()));
        drop((browser_in, browser_out));
        let (r, w) = (read_end.as_raw_fd(), write_end.as_raw_fd());
        let profile = dir.join("chromium-profile");
        let mut command = Command::new("chromium");
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-pipe",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-default-apps",
                "--disable-extensions",
                "--disable-sync",
                "--mute-audio",
                "--hide-scrollbars",
                "--window-size=1280,4000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only dup2, which is async-signal-safe, between fork and
        // exec; dup2 clears close-on-exec on fds 3 and 4 alone.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = match command.spawn() {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                "chromium is not installed: this test opens the audit page in headless \
                 Chromium; install it with `apt-get install chromium` (as CI's .ci/run does)"
            ),
            Err(e) => panic!("chromium does not start: {e}"),
        };
        drop((read_end, write_end));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(from_browser);
            let mut message = Vec::new();
            while reader.read_until(0, &mut message).unwrap_or(0) > 0 {
                if message.last() == Some(&0) {
                    message.pop();
                }
                let Ok(value) = serde_json::from_slice::<Value>(&message) else {
                    return;
                };
                if tx.send(value).is_err() {
                    return;
                }
                message.clear();
            }
        });
        Browser {
            child,
            to_browser,
            from_browser: rx,
            events: Vec::new(),
            next_id: 0,
        }
    }

    /// The next message, within `PATIENCE`.
    fn receive(&mut self, waiting_for: &str) -> Value {
        match self.from_browser.recv_timeout(PATIENCE) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => panic!("chromium: no answer to {waiting_for}"),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.try_wait();
                panic!("chromium closed its pipe waiting for {waiting_for} ({status:?})")
            }
        }
    }

    /// Calls `method` (in `session`, or on the browser) and returns its result.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to_browser
            .write_all(&bytes)
            .expect("chromium reads its pipe");
        loop {
            let answer = self.receive(method);
            if answer["id"] == id {
                assert!(answer.get("error").is_none(), "{method}: {answer}");
                return answer["result"].clone();
            }
            if answer.get("method").is_some() {
                self.events.push(answer);
            }
        }
    }

    /// Waits for the event `method` of `session`.
    fn wait_for(&mut self, session: &str, method: &str) {
        let started = Instant::now();
        let is_it = |e: &Value| e["method"] == method && e["sessionId"] == session;
        while !self.events.iter().any(is_it) {
            assert!(started.elapsed() < PATIENCE, "chromium: no {method}");
            let event = self.receive(method);
            if event.get("method").is_some() {
                self.events.push(event);
            }
        }
    }

    /// Opens `page` in a new tab, watched from before its first request,
    /// and reports what it did and shows once loaded.
    fn open(&mut self, page: &Path) -> Seen {
        let target = self.call(None, "Target.createTarget", json!({ "url": "about:blank" }));
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
        );
        let session = attached["sessionId"].as_str().unwrap().to_string();
        let s = Some(session.as_str());
        for domain in ["Page", "Runtime", "Log", "Network"] {
            self.call(s, &format!("{domain}.enable"), json!({}));
        }
        self.call(
            s,
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1280, "height": 4000, "deviceScaleFactor": 1, "mobile": false }),
        );
        // The events so far are about:blank's.
        self.events.clear();
        let url = format!("file://{}", page.canonicalize().unwrap().display());
        let navigated = self.call(s, "Page.navigate", json!({ "url": url }));
        assert!(navigated.get("errorText").is_none(), "{url}: {navigated}");
        self.wait_for(&session, "Page.loadEventFired");
        let dom = self.call(
            s,
            "Runtime.evaluate",
            json!({ "expression": DOM_QUERY, "returnByValue": true }),
        );
        assert!(dom.get("exceptionDetails").is_none(), "{dom}");
        let mut seen = Seen {
            url,
            dom: dom["result"]["value"].clone(),
            requests: Vec::new(),
            errors: Vec::new(),
            session,
        };
        for event in std::mem::take(&mut self.events) {
            if event["sessionId"] != seen.session.as_str() {
                continue;
            }
            let p = &event["params"];
            match event["method"].as_str().unwrap_or_default() {
                "Network.requestWillBeSent" => seen
                    .requests
                    .push(p["request"]["url"].as_str().unwrap_or_default().into()),
                "Network.webSocketCreated" => seen
                    .requests
                    .push(p["url"].as_str().unwrap_or_default().into()),
                "Runtime.consoleAPICalled" => {
                    seen.errors.push(format!("console.{}: {p}", p["type"]))
                }
                "Runtime.exceptionThrown" => seen.errors.push(format!("exception: {p}")),
                "Log.entryAdded"
                    if matches!(p["entry"]["level"].as_str(), Some("error" | "warning")) =>
                {
                    seen.errors
                        .push(format!("{}: {}", p["entry"]["level"], p["entry"]["text"]))
                }
                _ => {}
            }
        }
        seen
    }

    /// A PNG of the whole of `seen`'s page, 1280 px wide.
    fn screenshot(&mut self, seen: &Seen) -> Vec<u8> {
        let height = seen.dom["height"].as_f64().unwrap().max(1.0);
        let shot = self.call(
            Some(&seen.session),
            "Page.captureScreenshot",
            json!({
                "format": "png",
                "captureBeyondViewport": true,
                "clip": { "x": 0, "y": 0, "width": 1280, "height": height, "scale": 1 },
            }),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        assert!(
            png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
            "a screenshot"
        );
        png
    }
}

impl Drop for Browser {
    /// Asks the browser to close (its helper processes go with it), and
    /// kills it if it has not within five seconds.
    fn drop(&mut self) {
        self.next_id += 1;
        let close = json!({ "id": self.next_id, "method": "Browser.close" }).to_string();
        let _ = self.to_browser.write_all(format!("{close}\0").as_bytes());
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
