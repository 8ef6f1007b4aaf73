//! `fiox compare A B [C...]`: compare the results of two or more sides (experiment results
//! directories, fiox JSON files, fio's own JSON files, or directories of them) with means,
//! standard deviations, confidence intervals, Welch and Mann-Whitney p-values and a verdict.
//! The statistics live in fiox-experiment; this file parses switches and prints.

use anyhow::{bail, Context, Result};
use fiox_experiment::compare::{self, DEFAULT_METRICS};
use fiox_experiment::load;
use fiox_job::help::Flag;
use std::io::Write;
use std::path::PathBuf;

const USAGE: &str = "usage: fiox compare A B [C...] [--format=text|markdown|csv|json] \
                     [--alpha=0.05] [--metric=NAME[,NAME...]|--all] [--latency]\n  A, B...: experiment \
                     results directories, JSON result files (fiox or fio --output-format=json), \
                     or directories of them; the first side is the base. --latency adds completion \
                     latency percentiles per side (merged json+ histograms where the runs have \
                     them).";

#[derive(PartialEq)]
enum Format {
    Text,
    Markdown,
    Csv,
    Json,
}

/// The parsed command line.
struct Args {
    paths: Vec<PathBuf>,
    format: Format,
    alpha: f64,
    metrics: Option<Vec<String>>,
    latency: bool,
}

/// Parse the switches; `None` after printing the help.
fn parse(args: &[String]) -> Result<Option<Args>> {
    let mut paths = Vec::new();
    let mut format = Format::Text;
    let mut alpha = 0.05;
    let mut metrics: Option<Vec<String>> = None;
    let mut latency = false;
    let mut w = fiox_job::help::Words::new(args);
    while let Some(key) = w.next_key() {
        let a = w.word();
        let mut value = || -> Result<String> {
            w.value()
                .map(str::to_string)
                .with_context(|| format!("{key} needs a value"))
        };
        match key {
            "-h" | "--help" => {
                println!("{USAGE}\n\n{}", fiox_job::help::flags_text(FLAGS));
                return Ok(None);
            }
            "--format" | "--output-format" => {
                format = match value()?.as_str() {
                    "text" | "normal" => Format::Text,
                    "markdown" | "md" => Format::Markdown,
                    "csv" => Format::Csv,
                    "json" => Format::Json,
                    v => bail!("--format={v}: expected text, markdown, csv or json"),
                }
            }
            "--alpha" => {
                let v = value()?;
                alpha = v
                    .parse::<f64>()
                    .ok()
                    .filter(|a| *a > 0.0 && *a < 1.0)
                    .with_context(|| format!("--alpha={v}: expected a number between 0 and 1"))?;
            }
            "--metric" | "--metrics" => {
                metrics = Some(value()?.split(',').map(str::to_string).collect())
            }
            "--all" => metrics = Some(Vec::new()),
            "--latency" => latency = true,
            k if k.starts_with('-') => bail!("unknown switch {k}\n{USAGE}"),
            _ => paths.push(PathBuf::from(a)),
        }
    }
    Ok(Some(Args {
        paths,
        format,
        alpha,
        metrics,
        latency,
    }))
}

/// The switches of `fiox compare`, for the man page and the completions.
pub const FLAGS: &[Flag] = &[
    Flag {
        long: "format",
        short: None,
        value: Some("FORMAT"),
        choices: &["text", "markdown", "csv", "json"],
        help: "Output: text (default), markdown, csv or json",
    },
    Flag {
        long: "alpha",
        short: None,
        value: Some("P"),
        choices: &[],
        help: "Significance level for the verdict (default 0.05)",
    },
    Flag {
        long: "metric",
        short: None,
        value: Some("NAME[,NAME...]"),
        choices: &[],
        help: "Only these metrics",
    },
    Flag {
        long: "all",
        short: None,
        value: None,
        choices: &[],
        help: "Every metric, not only the main ones",
    },
    Flag {
        long: "latency",
        short: None,
        value: None,
        choices: &[],
        help: "Completion latency percentiles per side",
    },
    Flag {
        long: "help",
        short: Some('h'),
        value: None,
        choices: &[],
        help: "Print this text",
    },
];

/// Entry point; returns the exit code.
pub fn main(args: &[String]) -> Result<i32> {
    let Some(Args {
        paths,
        format,
        alpha,
        metrics,
        latency,
    }) = parse(args)?
    else {
        return Ok(0);
    };
    let mut sides = Vec::new();
    for p in &paths {
        sides.extend(load::load_sides(p)?);
    }
    if sides.len() < 2 {
        bail!(
            "compare needs at least two sides, found {}\n{USAGE}",
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
