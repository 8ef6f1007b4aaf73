//! `fiox compare A B [C...]`: compare the results of two or more sides (experiment results
//! directories, fiox JSON files, fio's own JSON files, or directories of them) with means,
//! standard deviations, confidence intervals, Welch and Mann-Whitney p-values and a verdict.
//! The statistics live in fiox-experiment; this file parses switches and prints.

use anyhow::{bail, Result};
use fiox_experiment::compare::{self, DEFAULT_METRICS};
use fiox_experiment::load;
use std::io::Write;
use std::path::PathBuf;

/// What `fiox compare` reads, after the switches in its `--help`.
const AFTER_HELP: &str = "A, B...: experiment results directories, JSON result files (fiox or \
fio --output-format=json), or directories of them; the first side is the base. --latency adds \
completion latency percentiles per side (merged json+ histograms where the runs have them).";

/// What `--format` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    #[value(alias = "normal")]
    Text,
    #[value(alias = "md")]
    Markdown,
    Csv,
    Json,
}

/// `fiox compare`'s command line.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct CompareArgs {
    /// The sides to compare, base first
    #[arg(value_name = "SIDE")]
    paths: Vec<PathBuf>,
    /// Output: text (default), markdown, csv or json
    #[arg(long, alias = "output-format", value_name = "FORMAT", value_enum,
          default_value_t = Format::Text, hide_default_value = true)]
    format: Format,
    /// Significance level for the verdict (default 0.05)
    #[arg(long, value_name = "P", value_parser = parse_alpha, default_value_t = 0.05,
          hide_default_value = true)]
    alpha: f64,
    /// Only these metrics
    #[arg(
        long,
        alias = "metrics",
        value_name = "NAME[,NAME...]",
        value_delimiter = ',',
        conflicts_with = "all"
    )]
    metric: Option<Vec<String>>,
    /// Every metric, not only the main ones
    #[arg(long)]
    all: bool,
    /// Completion latency percentiles per side
    #[arg(long)]
    latency: bool,
}

/// `--alpha`: a probability strictly between 0 and 1.
fn parse_alpha(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|a| *a > 0.0 && *a < 1.0)
        .ok_or_else(|| "expected a number between 0 and 1".to_string())
}

/// Entry point; returns the exit code.
pub fn main(args: CompareArgs) -> Result<i32> {
    let CompareArgs {
        paths,
        format,
        alpha,
        metric,
        all,
        latency,
    } = args;
    // --all: every metric (an empty list).
    let metrics = if all { Some(Vec::new()) } else { metric };
    let mut sides = Vec::new();
    for p in &paths {
        sides.extend(load::load_sides(p)?);
    }
    if sides.len() < 2 {
        bail!(
            "compare needs at least two sides, found {} (see fiox compare --help)",
            sides.len()
        );
    }
    let c = compare::compare(&sides, alpha);
    // Text and markdown show the headline metrics unless asked; CSV and JSON carry all.
    let wanted = metrics.unwrap_or_else(|| match format {
        Format::Text | Format::Markdown => DEFAULT_METRICS.iter().map(|m| m.to_string()).collect(),
        _ => Vec::new(),
    });
    let text = match format {
        Format::Text => compare::to_text(&c, &wanted),
        Format::Markdown => compare::to_markdown(&c, &wanted),
        Format::Csv => compare::to_csv(&c, &wanted),
        Format::Json if latency => {
            // The comparison with the latency table beside it.
            let mut v: serde_json::Value = serde_json::from_str(&compare::to_json(&c, &wanted))?;
            v["latency_us"] = serde_json::json!(compare::latency_table(&sides));
            serde_json::to_string_pretty(&v)? + "\n"
        }
        Format::Json => compare::to_json(&c, &wanted),
    };
    let text = if latency && matches!(format, Format::Text | Format::Markdown) {
        text + &compare::latency_text(&sides)
    } else {
        text
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(0)
}
