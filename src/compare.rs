//! `fiox compare A B [C...]`: compare the results of two or more sides (experiment results
//! directories, fiox JSON files, fio's own JSON files, or directories of them) with means,
//! standard deviations, confidence intervals, Welch and Mann-Whitney p-values adjusted over
//! the whole comparison, and a verdict against a practical threshold. The statistics and the
//! grouping of files into sides live in fiox-experiment; this file parses switches and prints.

use anyhow::Result;
use fiox_experiment::compare::{self, Metrics, Thresholds};
use fiox_experiment::sides;
use fiox_experiment::stats::Adjust;
use std::io::Write;
use std::path::PathBuf;

/// What `fiox compare` reads, after the switches in its `--help`.
const AFTER_HELP: &str = "A, B...: experiment results directories, JSON result files (fiox or \
fio --output-format=json), or directories of them; the first side is the base. Files are \
grouped by their directory (before/*.json after/*.json: two sides, before and after) unless all \
share one directory (then each file is a side); --side NAME=GLOB names a side outright. \
Verdicts: better/worse when the adjusted p is under --alpha and the change is at least \
--threshold; equivalent when the 95% CI of the change lies inside +-threshold; inconclusive \
otherwise; no claim when no test is possible (n < 2, both sides constant). --latency adds \
completion latency percentiles per side (merged json+ histograms where the runs have them).";

/// What `--adjust` does to the p-values of one comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AdjustArg {
    /// Holm: bounds the chance of any false claim (family-wise error rate)
    Holm,
    /// Benjamini-Hochberg: bounds the expected share of false claims (false discovery rate)
    Bh,
    /// No adjustment: each row on its own
    None,
}

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
    /// The metrics compared, shown and adjusted over (default iops, bw_mib, lat_mean_us,
    /// lat_p99_us; `all` for every metric)
    #[arg(
        long,
        alias = "metrics",
        value_name = "NAME[,NAME...]|all",
        value_delimiter = ',',
        conflicts_with = "all"
    )]
    metric: Option<Vec<String>>,
    /// Every metric (the same as --metric all)
    #[arg(long)]
    all: bool,
    /// Completion latency percentiles per side
    #[arg(long)]
    latency: bool,
    /// Smallest change worth claiming: 2% by default; METRIC=X overrides one metric
    #[arg(long, value_name = "X[,METRIC=X...]", value_delimiter = ',')]
    threshold: Vec<String>,
    /// p-value adjustment over every row: holm (default), bh or none
    #[arg(long, value_name = "METHOD", value_enum, default_value_t = AdjustArg::Holm,
          hide_default_value = true)]
    adjust: AdjustArg,
    /// A side named NAME of the files GLOB matches (repeatable; quote the glob)
    #[arg(long, value_name = "NAME=GLOB")]
    side: Vec<String>,
    /// Bootstrap resamples for a CI of the latency percentiles' change (0: none)
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    bootstrap: usize,
    /// Seed of the bootstrap (the same seed gives the same intervals)
    #[arg(long, value_name = "N", default_value_t = 1, hide_default_value = true)]
    seed: u64,
}

/// `--alpha`: a probability strictly between 0 and 1.
pub(crate) fn parse_alpha(v: &str) -> Result<f64, String> {
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
        threshold,
        adjust,
        side,
        bootstrap,
        seed,
    } = args;
    let metrics = if all {
        Metrics::All
    } else {
        Metrics::parse(&metric.unwrap_or_default())
    };
    let thresholds = Thresholds::parse(&threshold).map_err(anyhow::Error::msg)?;
    let sides = sides::load_args(&paths, &side)?;
    let options = compare::Options {
        alpha,
        thresholds,
        metrics,
        adjust: match adjust {
            AdjustArg::Holm => Adjust::Holm,
            AdjustArg::Bh => Adjust::Bh,
            AdjustArg::None => Adjust::None,
        },
        bootstrap,
        seed,
    };
    // Every format shows the rows compared: the family is what the reader sees.
    let c = compare::compare(&sides, &options)?;
    let text = match format {
        Format::Text => compare::to_text(&c),
        Format::Markdown => compare::to_markdown(&c),
        Format::Csv => compare::to_csv(&c),
        Format::Json if latency => {
            // The comparison with the latency table beside it.
            let mut v: serde_json::Value = serde_json::from_str(&compare::to_json(&c))?;
            v["latency_us"] = serde_json::json!(compare::latency_table(&sides));
            serde_json::to_string_pretty(&v)? + "\n"
        }
        Format::Json => compare::to_json(&c),
    };
    let text = if latency && matches!(format, Format::Text | Format::Markdown) {
        text + &compare::latency_text(&sides)
    } else {
        text
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(0)
}
