//! Headless Chromium driven through the DevTools protocol over `--remote-debugging-pipe` (fd 3
//! in, fd 4 out, NUL-terminated JSON; a shell `exec` wires the descriptors, so no unsafe code
//! and no WebSocket client are needed). [`look_at`] opens a page as a person would, records
//! console errors, exceptions and every network request, checks the charts' SVG in the live
//! DOM and takes a full-page screenshot.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// Chromium's flags for a root, sandbox-less, offline machine.
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-pipe",
];

/// What a page showed.
#[derive(Debug)]
pub struct Look {
    /// Console errors, uncaught exceptions and error log entries.
    pub errors: Vec<String>,
    /// URLs the page requested besides its own.
    pub requests: Vec<String>,
    /// Per `svg.chart`: (id, number of `.data` elements with geometry).
    pub charts: Vec<(String, u64)>,
    /// Every link's target as the page resolves it (`a.href`: absolute URLs).
    pub links: Vec<String>,
    pub png: Vec<u8>,
}

struct Browser {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: u64,
    events: Vec<Value>,
    stderr_path: PathBuf,
}

impl Drop for Browser {
    /// Close Chromium as a user would (its helper processes exit with it), killing it only
    /// when it does not go within 5 s, also after a failed assertion.
    fn drop(&mut self) {
        let _ = self
            .stdin
            .write_all(b"{\"id\":999999,\"method\":\"Browser.close\",\"params\":{}}\0");
        let _ = self.stdin.flush();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    fn start(profile: &Path) -> Browser {
        let stderr_path = profile.join("chromium.stderr");
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(r#"exec chromium "$@" 3<&0 4>&1 1>/dev/null 2>"$FIOX_CHROMIUM_STDERR""#)
            .arg("chromium")
            .args(FLAGS)
            .arg(format!(
                "--user-data-dir={}",
                profile.join("profile").display()
            ))
            .env("FIOX_CHROMIUM_STDERR", &stderr_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium (Debian package chromium; .ci/run installs it)");
        let stdin = child.stdin.take().expect("chromium stdin");
        let stdout = child.stdout.take().expect("chromium stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut buf = Vec::new();
            while let Ok(n) = r.read_until(0, &mut buf) {
                if n == 0 {
                    break;
                }
                buf.pop_if(|b| *b == 0);
                if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
                buf.clear();
            }
        });
        Browser {
            child,
            stdin,
            rx,
            next_id: 0,
            events: Vec::new(),
            stderr_path,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Send a command and wait for its answer, keeping the events that come meanwhile.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).expect("json");
        bytes.push(0);
        self.stdin.write_all(&bytes).expect("write to chromium");
        self.stdin.flush().expect("flush to chromium");
        loop {
            let v = self.recv(method);
            if v["id"] == json!(id) {
                if let Some(e) = v.get("error") {
                    panic!("chromium {method}: {e}");
                }
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn recv(&mut self, what: &str) -> Value {
        match self.rx.recv_timeout(Duration::from_secs(60)) {
            Ok(v) => v,
            Err(e) => panic!(
                "no answer from chromium to {what} ({e}); its stderr:\n{}",
                self.stderr()
            ),
        }
    }

    /// Wait for an event of `method` (already received or coming).
    fn wait_event(&mut self, method: &str) {
        let start = Instant::now();
        while !self.events.iter().any(|e| e["method"] == method) {
            assert!(start.elapsed() < Duration::from_secs(60), "no {method}");
            let v = self.recv(method);
            self.events.push(v);
        }
    }
}

/// The JavaScript that counts, per chart, the data elements that have geometry.
const CHART_CHECK: &str = r#"JSON.stringify([...document.querySelectorAll('svg.chart')].map(s => [s.id,
  [...s.querySelectorAll('.data')].filter(e => {
    const b = e.getBBox();
    return (e.tagName === 'path' ? (e.getAttribute('d') || '').length > 3 : true) && (b.width > 0 || b.height > 0);
  }).length]))"#;

/// Open `page` in headless Chromium at `width` CSS pixels, in the dark theme if `dark`.
pub fn look_at(page: &Path, width: u32, dark: bool) -> Look {
    let profile = page.with_extension("chromium");
    std::fs::create_dir_all(&profile).expect("profile dir");
    let mut b = Browser::start(&profile);
    let target = b.call(None, "Target.createTarget", json!({"url": "about:blank"}));
    let attached = b.call(
        None,
        "Target.attachToTarget",
        json!({"targetId": target["targetId"], "flatten": true}),
    );
    let sid = attached["sessionId"]
        .as_str()
        .expect("sessionId")
        .to_string();
    let s = Some(sid.as_str());
    for m in [
        "Runtime.enable",
        "Log.enable",
        "Network.enable",
        "Page.enable",
    ] {
        b.call(s, m, json!({}));
    }
    let scheme = if dark { "dark" } else { "light" };
    b.call(
        s,
        "Emulation.setEmulatedMedia",
        json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
    );
    let metrics =
        |h: u64| json!({"width": width, "height": h, "deviceScaleFactor": 1, "mobile": false});
    b.call(s, "Emulation.setDeviceMetricsOverride", metrics(900));
    let url = format!(
        "file://{}",
        page.canonicalize().expect("page path").display()
    );
    b.call(s, "Page.navigate", json!({"url": url}));
    b.wait_event("Page.loadEventFired");
    let eval = |b: &mut Browser, expr: &str| {
        b.call(
            s,
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true}),
        )["result"]["value"]
            .clone()
    };
    let charts: Vec<(String, u64)> =
        serde_json::from_str(eval(&mut b, CHART_CHECK).as_str().expect("chart check"))
            .expect("json");
    let links: Vec<String> = serde_json::from_str(
        eval(
            &mut b,
            "JSON.stringify([...document.querySelectorAll('a[href]')].map(a => a.href))",
        )
        .as_str()
        .expect("links"),
    )
    .expect("json");
    let height = eval(&mut b, "document.documentElement.scrollHeight")
        .as_u64()
        .unwrap_or(900);
    b.call(
        s,
        "Emulation.setDeviceMetricsOverride",
        metrics(height.min(16_000)),
    );
    let shot = b.call(s, "Page.captureScreenshot", json!({"format": "png"}));
    let png = base64(shot["data"].as_str().expect("screenshot data"));
    let (errors, requests) = problems(&b.events, &url);
    drop(b);
    let _ = std::fs::remove_dir_all(&profile);
    Look {
        errors,
        requests,
        charts,
        links,
        png,
    }
}

/// Console errors and foreign requests among the recorded events.
fn problems(events: &[Value], url: &str) -> (Vec<String>, Vec<String>) {
    let mut errors = Vec::new();
    let mut requests = Vec::new();
    for e in events {
        let p = &e["params"];
        match e["method"].as_str().unwrap_or("") {
            "Runtime.consoleAPICalled"
                if matches!(p["type"].as_str(), Some("error" | "assert" | "warning")) =>
            {
                errors.push(format!("console {}: {}", p["type"], p["args"]))
            }
            "Runtime.exceptionThrown" => {
                errors.push(format!("exception: {}", p["exceptionDetails"]))
            }
            "Log.entryAdded" if p["entry"]["level"] == "error" => {
                errors.push(format!("log: {}", p["entry"]["text"]))
            }
            "Network.requestWillBeSent" => {
                let u = p["request"]["url"].as_str().unwrap_or("").to_string();
                if u != url {
                    requests.push(u);
                }
            }
            _ => {}
        }
    }
    (errors, requests)
}

fn base64(s: &str) -> Vec<u8> {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes().filter(|c| *c != b'=') {
        let v = A.iter().position(|a| *a == c).expect("base64 digit") as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// (width, height, share of pixels that differ from the top-left pixel, distinct colours).
pub fn pixel_stats(png_bytes: &[u8]) -> (u32, u32, f64, usize) {
    let dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut r = dec.read_info().expect("screenshot is a PNG");
    let mut buf = vec![0; r.output_buffer_size().expect("size")];
    let info = r.next_frame(&mut buf).expect("PNG frame");
    let px = info.color_type.samples();
    let data = &buf[..info.buffer_size()];
    let bg = &data[..px];
    let mut differ = 0usize;
    let mut colours = std::collections::HashSet::new();
    for p in data.chunks(px) {
        if p != bg {
            differ += 1;
        }
        if colours.len() < 10_000 {
            colours.insert(p.to_vec());
        }
    }
    let n = (data.len() / px).max(1);
    (
        info.width,
        info.height,
        differ as f64 / n as f64,
        colours.len(),
    )
}
