//! Headless Chromium for the tests that open a page (`audit_browser`, the
//! audit report; `player_page`, the reference player page): `apt-get
//! install chromium`; a test fails, saying so, when it is missing.
//!
//! The browser is driven through the DevTools protocol over a pipe
//! (`--remote-debugging-pipe`: JSON messages ended by a NUL byte, read on
//! the browser's fd 3 and written on its fd 4), so no WebSocket client and
//! no crate: the tests read only the few fields they check. A page is
//! opened in its own tab, watched from before its first request: `Runtime`,
//! `Log` and `Network` are enabled first, so [`Browser::seen`] lists every
//! request the page made and every console call, exception and log entry
//! of level error or warning (the browser logs a CSP violation, a failed
//! load or a deprecated feature there). `Runtime.evaluate` reads the DOM
//! and clicks buttons; the protocol runs it outside the page's
//! Content-Security-Policy.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

/// How long one answer or event of the browser may take, and a condition
/// waited for with [`Browser::wait_until`].
pub const PATIENCE: Duration = Duration::from_secs(60);

/// A page opened in its own tab.
pub struct Tab {
    /// The URL opened.
    pub url: String,
    /// The DevTools session the tab is attached to.
    session: String,
}

/// What a page did since it was opened (or last asked).
#[derive(Default)]
pub struct Seen {
    /// Every request the page made, by URL (its own file included).
    pub requests: Vec<String>,
    /// Console calls, exceptions and log entries of level error or warning.
    pub errors: Vec<String>,
}

/// `<target>/NAME/`, made if needed: screenshots go under the target
/// folder, never into git.
pub fn screenshot_dir(name: &str) -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target folder")
        .join(name);
    std::fs::create_dir_all(&target).unwrap();
    target
}

/// Headless Chromium, spoken to over its DevTools pipe; closed (or
/// killed) when dropped.
pub struct Browser {
    child: Child,
    to_browser: std::io::PipeWriter,
    from_browser: Receiver<Value>,
    /// Events read while waiting for an answer, not yet looked at.
    events: Vec<Value>,
    next_id: u64,
}

impl Browser {
    /// Starts `chromium` with its profile in `dir`.
    pub fn launch(dir: &Path) -> Browser {
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
                "chromium is not installed: this test opens a page in headless \
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

    /// Opens `url` in a new tab 1280 px wide, watched from before its first
    /// request, and returns once it has loaded.
    pub fn open(&mut self, url: &str) -> Tab {
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
        self.events.retain(|e| e["sessionId"] != session.as_str());
        let navigated = self.call(s, "Page.navigate", json!({ "url": url }));
        assert!(navigated.get("errorText").is_none(), "{url}: {navigated}");
        self.wait_for(&session, "Page.loadEventFired");
        Tab {
            url: url.to_string(),
            session,
        }
    }

    /// The value of `expression` in `tab`'s page (a promise is awaited);
    /// an exception fails the test.
    pub fn evaluate(&mut self, tab: &Tab, expression: &str) -> Value {
        let answer = self.call(
            Some(&tab.session),
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        );
        assert!(
            answer.get("exceptionDetails").is_none(),
            "{expression}: {answer}"
        );
        answer["result"]["value"].clone()
    }

    /// Evaluates `expression` every 50 ms until it is true, within
    /// [`PATIENCE`]; `what` names it in the failure, with what `report`
    /// (another expression) then says.
    pub fn wait_until(&mut self, tab: &Tab, expression: &str, what: &str, report: &str) {
        let started = Instant::now();
        while self.evaluate(tab, expression) != json!(true) {
            if started.elapsed() > PATIENCE {
                let said = self.evaluate(tab, report);
                panic!("the page: no {what} within {PATIENCE:?}: {said}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What `tab`'s page did since it was opened or last asked: its
    /// requests, and its console and log errors.
    pub fn seen(&mut self, tab: &Tab) -> Seen {
        let mut seen = Seen::default();
        let (mine, others): (Vec<Value>, Vec<Value>) = std::mem::take(&mut self.events)
            .into_iter()
            .partition(|e| e["sessionId"] == tab.session.as_str());
        self.events = others;
        for event in mine {
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

    /// Lays `tab`'s page out as it prints on A4: the print media, and the
    /// printable width of an A4 page with 12 mm margins at 96 dpi (186 mm,
    /// 703 px). Returns the page printed to PDF by the browser itself.
    pub fn print_a4(&mut self, tab: &Tab) -> Vec<u8> {
        self.call(
            Some(&tab.session),
            "Emulation.setEmulatedMedia",
            json!({ "media": "print" }),
        );
        self.call(
            Some(&tab.session),
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 703, "height": 1000, "deviceScaleFactor": 1, "mobile": false }),
        );
        let pdf = self.call(
            Some(&tab.session),
            "Page.printToPDF",
            json!({ "paperWidth": 8.27, "paperHeight": 11.69, "preferCSSPageSize": true }),
        );
        base64::engine::general_purpose::STANDARD
            .decode(pdf["data"].as_str().unwrap())
            .unwrap()
    }

    /// A PNG of the top `height` pixels of `tab`'s page, 1280 px wide.
    pub fn screenshot(&mut self, tab: &Tab, height: f64) -> Vec<u8> {
        let shot = self.call(
            Some(&tab.session),
            "Page.captureScreenshot",
            json!({
                "format": "png",
                "captureBeyondViewport": true,
                "clip": { "x": 0, "y": 0, "width": 1280, "height": height.max(1.0), "scale": 1 },
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

    /// Saves a screenshot of the whole of `tab`'s page as `path`: down to
    /// the end of its body (the window is 4,000 px high).
    pub fn save_screenshot(&mut self, tab: &Tab, path: &Path) {
        let height = self
            .evaluate(
                tab,
                "Math.ceil(document.body.getBoundingClientRect().bottom) + 16",
            )
            .as_f64()
            .unwrap();
        std::fs::write(path, self.screenshot(tab, height)).unwrap();
        eprintln!("screenshot: {}", path.display());
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
