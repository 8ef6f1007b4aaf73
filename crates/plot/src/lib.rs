//! fiox-plot: charts of fio and fiox results. [`Inputs`] reads JSON/json+ results, fio-format
//! logs, `--status-interval` reports and comparison documents; [`chart::build`] turns them into
//! charts (over time, latency percentiles and histograms, bars with confidence intervals, an
//! iodepth x numjobs heatmap); [`html::page`] writes one self-contained page with inline SVG,
//! and `--format svg|png` writes one file per chart ([`svg::render`], [`png::svg_to_png`]).
//! [`cli`] is `fiox plot`.

pub mod axis;
pub mod chart;
pub mod cli;
pub mod compare;
mod error;
pub mod fiolog;
pub mod html;
pub mod input;
pub mod png;
pub mod result;
mod status;
pub mod svg;
pub mod timeline;

pub use input::{InputError, Inputs};

use std::path::{Path, PathBuf};

/// Errors of `fiox plot` and `--html`.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Png(#[from] png::PngError),
    #[error("{0}")]
    Usage(String),
    /// The guard refused or failed to write an output.
    #[error(transparent)]
    Guard(#[from] fiox_guard::GuardError),
}

/// The report page of `inputs`.
pub fn html_page(title: &str, inputs: &Inputs) -> String {
    html::page(title, inputs, &chart::build(inputs))
}

/// Write `bytes` to `path` through the guard: a name fiox chose (the default report, a
/// chart's file) replaces only fiox's own earlier output; a path the user typed replaces a
/// regular file as `>` would; neither follows a link planted there.
pub fn write_file(path: &Path, bytes: &[u8], named: fiox_guard::Named) -> Result<(), PlotError> {
    Ok(fiox_guard::output::write(path, bytes, named)?)
}

/// The page for a run that just finished: its json+ tree plus the fio-format logs it wrote;
/// `facts` (the kernel...) join the header.
pub fn run_page(
    result: &serde_json::Value,
    logs: &[PathBuf],
    facts: &[(String, String)],
) -> Result<String, PlotError> {
    let mut inputs = Inputs::default();
    inputs.add_json_value(result, "this run", Path::new("(this run)"))?;
    if let Some(r) = inputs.results.last_mut() {
        r.facts.extend(facts.iter().cloned());
    }
    for l in logs {
        inputs.add_path(l)?;
    }
    Ok(html_page("fiox report", &inputs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Odd but well-formed inputs render a page (no panic, no NaN in the SVG).
    #[test]
    fn odd_inputs_render_without_panics_or_nan() {
        let docs = [
            json!({"jobs": []}),
            json!({"jobs": [{"jobname": "z", "read": {"total_ios": 1, "io_bytes": 1, "iops": -5.0,
                   "clat_ns": {"N": 1, "mean": 0.0, "percentile": {"50.000000": 0}, "bins": {"0": 1}}}}]}),
            json!({"jobs": [{"read": {"total_ios": 1e300, "io_bytes": 1, "iops": 1e300,
                   "lat_ns": {"N": 3, "mean": 1e300, "bins": {"1e300": 3}}}}]}),
            json!({"sides": ["a"], "rows": [{"job": "j", "metric": "m", "summaries": [null]}]}),
        ];
        for (i, d) in docs.iter().enumerate() {
            let mut inputs = Inputs::default();
            inputs
                .add_json_value(d, "odd", Path::new("odd.json"))
                .unwrap();
            let page = html_page("odd", &inputs);
            assert!(page.ends_with("</html>\n"), "doc {i}");
            assert!(
                !page.contains("NaN") && !page.contains("inf"),
                "doc {i}: {page}"
            );
            for c in chart::build(&inputs) {
                png::svg_to_png(&svg::render(&c, &svg::LIGHT), 0.5).unwrap();
            }
        }
    }
}
