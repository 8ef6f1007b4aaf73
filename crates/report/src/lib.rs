//! Reports in fio 3.33's formats, one module per format: [`normal`] (the human text, plus the
//! job header lines fio prints before a run), [`json`] (`json` and `json+`, plus one-line status
//! objects), [`terse`] (version 3). [`units`] holds fio's number formatting and [`calc`] the
//! figures all formats derive the same way. Input is a [`fiox_stats::RunResult`]; fiox's own
//! additions (warnings) never change fio's fields: JSON puts them under new `fiox` keys and
//! human text goes through [`warnings_text`].
#![forbid(unsafe_code)]

pub mod calc;
pub mod json;
pub mod normal;
pub mod terse;
pub mod units;

pub use json::{json, json_status_line, to_fio_json_text};
pub use normal::{header, normal};
pub use terse::terse;

use fiox_stats::{RunResult, Warning};

/// Human text for every warning of a run (run-wide first, then per job), one block per
/// warning: `fiox: warning [code] (job NAME): message` and an indented `fix:` line. Empty when
/// there is nothing to say. The binary prints this on stderr so stdout stays parseable.
pub fn warnings_text(run: &RunResult) -> String {
    let mut out = String::new();
    for w in &run.warnings {
        out.push_str(&warning_text(None, w));
    }
    for job in &run.jobs {
        for w in &job.warnings {
            out.push_str(&warning_text(Some(&job.name), w));
        }
    }
    out
}

fn warning_text(job: Option<&str>, w: &Warning) -> String {
    let whose = job.map(|j| format!(" (job {j})")).unwrap_or_default();
    let mut s = format!("fiox: warning [{}]{}: {}\n", w.code, whose, w.message);
    if !w.fix.is_empty() {
        s.push_str(&format!("  fix: {}\n", w.fix));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use fiox_stats::JobResult;

    #[test]
    fn warnings_text_lists_run_and_job_warnings() {
        let w = |code: &str| Warning {
            code: code.into(),
            message: "numbers come from the page cache".into(),
            fix: "use direct=1".into(),
        };
        let run = RunResult {
            warnings: vec![w("page-cache")],
            jobs: vec![JobResult {
                name: "j1".into(),
                warnings: vec![w("buffered-libaio")],
                ..Default::default()
            }],
            ..Default::default()
        };
        let t = warnings_text(&run);
        assert_eq!(
            t,
            "fiox: warning [page-cache]: numbers come from the page cache\n  fix: use direct=1\n\
             fiox: warning [buffered-libaio] (job j1): numbers come from the page cache\n  fix: use direct=1\n"
        );
        assert_eq!(warnings_text(&RunResult::default()), "");
    }
}
