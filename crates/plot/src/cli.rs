//! `fiox plot RESULT... [-o FILE|DIR] [--format=html|svg|png] [--title=TEXT]`: the switches
//! as a clap parser ([`PlotArgs`]), which the `fiox` binary also walks for its man page and
//! shell completions.

use crate::{chart, html_page, png, svg, Inputs, PlotError};
use std::path::{Path, PathBuf};

/// One line saying what `fiox plot` does.
pub const ABOUT: &str = "Chart results: an HTML page with inline SVG, or SVG/PNG files";

/// What RESULT may be, after the switches in `fiox plot --help`.
const AFTER_HELP: &str = "RESULT is a fio or fiox JSON/json+ file, a `fiox compare --format json` \
file, a fio log (NAME_bw.1.log, NAME_clat.1.log...) or a directory of those (experiment results \
directories included).";

/// What `--format` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Html,
    Svg,
    Png,
}

/// `fiox plot`'s command line.
#[derive(Debug, clap::Parser)]
#[command(name = "fiox plot", about = ABOUT, after_help = AFTER_HELP)]
pub struct PlotArgs {
    /// Results to chart (JSON, json+, fio logs, comparison documents, directories of them)
    #[arg(value_name = "RESULT")]
    pub inputs: Vec<PathBuf>,
    /// HTML file to write (default fiox-report.html), or with --format=svg|png the directory
    /// for one file per chart (default .)
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// html (one self-contained page, the default), svg or png (one file per chart)
    #[arg(long, value_enum, default_value_t = Format::Html, hide_default_value = true)]
    pub format: Format,
    /// Page title (default: fiox report)
    #[arg(
        long,
        value_name = "TEXT",
        default_value = "fiox report",
        hide_default_value = true
    )]
    pub title: String,
}

/// Run `fiox plot`; returns the exit code. The help text goes to stdout, nothing else does.
pub fn run(a: PlotArgs) -> Result<i32, PlotError> {
    // Not a clap requirement: the message says what a RESULT can be.
    if a.inputs.is_empty() {
        return Err(PlotError::Usage(
            "plot: no RESULT given (a JSON result, a fio log or a directory of them; see fiox plot --help)".into(),
        ));
    }
    let mut inputs = Inputs::default();
    for p in &a.inputs {
        inputs.add_path(p)?;
    }
    match a.format {
        Format::Html => {
            let (out, named) = match a.output {
                Some(o) => (o, fiox_guard::Named::ByUser),
                None => (PathBuf::from("fiox-report.html"), fiox_guard::Named::ByFiox),
            };
            crate::write_file(&out, html_page(&a.title, &inputs).as_bytes(), named)?;
        }
        Format::Svg | Format::Png => {
            let dir = a.output.unwrap_or_else(|| PathBuf::from("."));
            write_charts(&inputs, &dir, a.format == Format::Png)?;
        }
    }
    Ok(0)
}

/// One SVG or PNG file per chart in `dir` (created if missing); returns the paths.
fn write_charts(inputs: &Inputs, dir: &Path, png: bool) -> Result<Vec<PathBuf>, PlotError> {
    fiox_guard::Dir::create_all(dir, 0o755)?;
    let mut written = Vec::new();
    for c in chart::build(inputs) {
        let text = svg::render(&c, &svg::LIGHT);
        let (path, bytes) = if png {
            (
                dir.join(format!("{}.png", c.id)),
                png::svg_to_png(&text, 2.0)?,
            )
        } else {
            (dir.join(format!("{}.svg", c.id)), text.into_bytes())
        };
        crate::write_file(&path, &bytes, fiox_guard::Named::ByFiox)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn parse(s: &[&str]) -> Result<PlotArgs, clap::Error> {
        PlotArgs::try_parse_from(std::iter::once("fiox plot").chain(s.iter().copied()))
    }

    #[test]
    fn switches_parse_in_both_spellings() {
        let a = parse(&["r.json", "-o", "x.html", "--format=svg"]).unwrap();
        assert_eq!(a.inputs, [PathBuf::from("r.json")]);
        assert_eq!(a.output, Some(PathBuf::from("x.html")));
        assert_eq!(a.format, Format::Svg);
        let b = parse(&["--output=y", "--format", "png", "r.json"]).unwrap();
        assert_eq!(
            (b.output, b.format),
            (Some(PathBuf::from("y")), Format::Png)
        );
        assert_eq!(
            parse(&["--help"]).unwrap_err().kind(),
            clap::error::ErrorKind::DisplayHelp
        );
        let e = parse(&["r.json", "--format=pdf"]).unwrap_err().to_string();
        assert!(
            e.contains("invalid value 'pdf' for '--format <FORMAT>'")
                && e.contains("[possible values: html, svg, png]"),
            "{e}"
        );
        let e = parse(&["r.json", "--formt=svg"]).unwrap_err().to_string();
        assert!(
            e.contains("unexpected argument '--formt' found") && e.contains("'--format'"),
            "{e}"
        );
        let e = parse(&["r.json", "-o"]).unwrap_err().to_string();
        assert!(
            e.contains("a value is required for '--output <PATH>'"),
            "{e}"
        );
    }

    #[test]
    fn no_result_is_a_usage_error() {
        let e = run(parse(&[]).unwrap()).unwrap_err().to_string();
        assert!(e.contains("no RESULT given"), "{e}");
    }
}
