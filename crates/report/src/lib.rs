//! Reports in fio 3.33's formats, one module per format: `normal` (the human text, plus the
//! job header lines fio prints before a run), `json` (`json` and `json+`, plus one-line status
//! objects), `terse` (version 3). [`units`] holds fio's number formatting and [`calc`] the
//! figures all formats derive the same way; [`identity`] the version line (fiox's own, or fio's
//! release then fiox's when fiox stands in fio's place). Input is a [`fiox_stats::RunResult`]; fiox's own
//! additions (warnings) never change fio's fields: JSON puts them under new `fiox` keys and
//! human text goes through [`warnings_text`].
#![forbid(unsafe_code)]

pub mod calc;
pub mod errno;
pub mod identity;
pub mod json;
pub mod normal;
pub mod terse;
pub mod tz;
pub mod units;

pub use json::{json, json_objects, json_problem, json_status_line, to_fio_json_text};
pub use normal::{header, normal};
pub use terse::terse;

use fiox_job::{JobSpec, OutputFormat};
use fiox_stats::{RunResult, Warning};

/// What fio prints before a run for the chosen `--output-format`s: the job header lines,
/// version and `Starting ...` line only when `normal` is among them (an empty list means
/// fio's default, normal).
pub fn render_header(jobs: &[JobSpec], formats: &[OutputFormat]) -> String {
    if formats.is_empty() || formats.contains(&OutputFormat::Normal) {
        header(jobs)
    } else {
        String::new()
    }
}

/// The end-of-run report for a combination of formats, in fio's order: terse lines first, then
/// the JSON document (json+ if requested; it includes everything json has), then the normal
/// text. An empty list means normal.
pub fn render(run: &RunResult, formats: &[OutputFormat]) -> String {
    let has = |f: OutputFormat| formats.contains(&f);
    let mut out = String::new();
    if has(OutputFormat::Terse) {
        out.push_str(&terse(run));
    }
    if has(OutputFormat::Json) || has(OutputFormat::JsonPlus) {
        out.push_str(&to_fio_json_text(&json(run, has(OutputFormat::JsonPlus))));
    }
    if formats.is_empty() || has(OutputFormat::Normal) {
        out.push_str(&normal(run));
    }
    out
}

/// fiox's own part of the normal report, after fio's lines: the disks under loop devices,
/// then the advice (see [`advice_block`]). Empty when there is nothing to add.
pub fn fiox_block(run: &RunResult) -> String {
    normal::backing_disk_stats(&run.disks) + &advice_block(run)
}

/// fiox's advice block of the normal report, after fio's lines (which it leaves unchanged):
/// `fiox advice:` and each warning as `  [code] (job NAME): message` with an indented `fix:`
/// line. Empty when there is nothing to say (JSON has the same under `fiox.warnings`).
pub fn advice_block(run: &RunResult) -> String {
    let text = warnings_text(run);
    if text.is_empty() {
        return text;
    }
    let mut out = String::from("\nfiox advice:\n");
    for line in text.lines() {
        let line = line.strip_prefix("fiox: warning ").unwrap_or(line);
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Human text for every warning of a run (run-wide first, then per job), one block per
/// warning: `fiox: warning [code] (job NAME): message` and an indented `fix:` line. Empty when
/// there is nothing to say. The binary prints this on stderr when asked (`--warnings=stderr`,
/// `--warnings-fatal`); the normal report carries it as [`advice_block`].
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
    use fiox_stats::{JobResult, WarningCode};

    fn one_job_run() -> RunResult {
        let mut job = JobResult {
            name: "t".into(),
            jobs: 1,
            clat_percentiles: true,
            percentile_list: fiox_job::DEFAULT_PERCENTILES.to_vec(),
            ..Default::default()
        };
        job.dirs.read.io_bytes = 4096;
        job.dirs.read.total_ios = 1;
        job.dirs.read.runtime_ms = 1;
        job.dirs.read.clat.add(1000);
        RunResult {
            jobs: vec![job],
            ..Default::default()
        }
    }

    /// act's table: two jobs' slices added up, fio's layout, the verdict from the sum (1 of 40
    /// I/Os over 8 ms is 2.5%, over the 1% limit), and the same numbers under fiox.act in JSON.
    #[test]
    fn act_table_is_fios() {
        let mut run = one_job_run();
        let mut a = fiox_stats::ActSlice::default();
        for _ in 0..19 {
            a.add(10);
        }
        a.add(9000);
        run.jobs[0].act_slices = Some(vec![a, fiox_stats::ActSlice::default()]);
        let mut b = run.jobs[0].clone();
        b.act_slices = Some(vec![fiox_stats::ActSlice {
            total_ios: 20,
            over: [0; 3],
        }]);
        run.jobs.push(b);
        let text = crate::normal::act_summary(&run).unwrap();
        assert_eq!(
            text,
            "        trans                   device\n\
             \x20       %>(ms)                  %>(ms)\n\
             \x20slice\t  1\t  8\t 64\t  1\t  8\t 64\n\
             \x20-----  -----   -----  ------   -----   -----  ------\n\
             \x20   1\t0.00\t2.50\t0.00\t0.00\t2.50\t0.00\n\
             \x20   2\t0.00\t0.00\t0.00\t0.00\t0.00\t0.00\n\
             \nact: test complete, device(s): FAILED\n"
        );
        assert!(render(&run, &[OutputFormat::Normal]).contains(&text));
        let v = json::json(&run, false);
        assert_eq!(v["fiox"]["act"]["passed"], false);
        assert_eq!(v["fiox"]["act"]["slices"][0]["total_ios"], 40);
        assert_eq!(v["fiox"]["act"]["slices"][0]["pct_over_8ms"], 2.5);
        // Not an act run: no table, no key.
        run.jobs.iter_mut().for_each(|j| j.act_slices = None);
        assert!(crate::normal::act_summary(&run).is_none());
        assert!(json::json(&run, false)["fiox"].get("act").is_none());
    }

    #[test]
    fn render_orders_formats_like_fio() {
        let run = one_job_run();
        let all = render(
            &run,
            &[
                OutputFormat::Normal,
                OutputFormat::Json,
                OutputFormat::Terse,
            ],
        );
        let terse_at = all.find("3;fiox-").unwrap();
        let json_at = all.find("{\n  \"fio version\"").unwrap();
        let normal_at = all.find("t: (groupid=0").unwrap();
        assert!(terse_at < json_at && json_at < normal_at);
        assert_eq!(render(&run, &[]), normal(&run));
        let plus = render(&run, &[OutputFormat::JsonPlus]);
        assert!(plus.contains("\"bins\""));
        assert!(!plus.contains("groupid=0, jobs"));
    }

    #[test]
    fn header_only_with_normal() {
        let jobs = [JobSpec::default()];
        assert!(render_header(&jobs, &[OutputFormat::Json]).is_empty());
        assert!(
            render_header(&jobs, &[OutputFormat::Terse, OutputFormat::Normal])
                .contains("Starting 1 process")
        );
        assert_eq!(render_header(&jobs, &[]), header(&jobs));
    }

    #[test]
    fn warnings_text_lists_run_and_job_warnings() {
        let w = |code| Warning::with_fix(code, "numbers come from the page cache", "use direct=1");
        let run = RunResult {
            warnings: vec![w(WarningCode::PageCache)],
            jobs: vec![JobResult {
                name: "j1".into(),
                warnings: vec![w(WarningCode::BufferedLibaio)],
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
        assert_eq!(
            advice_block(&run),
            "\nfiox advice:\n  [page-cache]: numbers come from the page cache\n    fix: use direct=1\n  \
             [buffered-libaio] (job j1): numbers come from the page cache\n    fix: use direct=1\n"
        );
        assert_eq!(advice_block(&RunResult::default()), "");
    }
}
