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

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Html => "html",
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }

    fn article_name(self) -> &'static str {
        match self {
            Format::Html => "an HTML",
            Format::Svg => "an SVG",
            Format::Png => "a PNG",
        }
    }
}

/// `fiox plot`'s command line.
#[derive(Debug, clap::Parser)]
#[command(name = "fiox plot", about = ABOUT, after_help = AFTER_HELP)]
pub struct PlotArgs {
    /// Results to chart (JSON, json+, fio logs, comparison documents, directories of them)
    #[arg(value_name = "RESULT")]
    pub inputs: Vec<PathBuf>,
    /// HTML file to write (default fiox-report.html); with svg or png a directory for one file
    /// per chart (default .), or NAME.svg|NAME.png: NAME-CHART.png beside it (the format
    /// follows the name's extension when --format is not given)
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// html (one self-contained page, the default), svg or png (one file per chart)
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Print nothing on success (by default one line on stderr says what was written)
    #[arg(short, long)]
    pub quiet: bool,
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
    let format = format_of(a.format, a.output.as_deref())?;
    let mut inputs = Inputs::default();
    for p in &a.inputs {
        inputs.add_path(p)?;
    }
    let said = match format {
        Format::Html => {
            let (out, named) = match a.output {
                Some(o) => (o, fiox_guard::Named::ByUser),
                None => (PathBuf::from("fiox-report.html"), fiox_guard::Named::ByFiox),
            };
            crate::write_file(&out, html_page(&a.title, &inputs).as_bytes(), named)?;
            format!("fiox plot: wrote {}", out.display())
        }
        Format::Svg | Format::Png => {
            let png = format == Format::Png;
            let ext = if png { "png" } else { "svg" };
            let out = a.output.unwrap_or_else(|| PathBuf::from("."));
            let files = if has_ext(&out, ext) {
                Files::Named(out)
            } else {
                Files::In(out)
            };
            let written = write_charts(&inputs, &files, png)?;
            written_line(&written, ext)
        }
    };
    if !a.quiet {
        fiox_guard::eprintln!("{said}");
    }
    Ok(0)
}

/// The format asked for, else the one `-o`'s extension names (html by default); an extension
/// of another format is refused (`--format=png -o x.svg` would write a directory named x.svg).
fn format_of(asked: Option<Format>, out: Option<&Path>) -> Result<Format, PlotError> {
    let by_name = out.and_then(|o| {
        [
            ("png", Format::Png),
            ("svg", Format::Svg),
            ("html", Format::Html),
            ("htm", Format::Html),
        ]
        .into_iter()
        .find_map(|(e, f)| has_ext(o, e).then_some(f))
    });
    match (asked, by_name) {
        (Some(a), Some(n)) if a != n => Err(PlotError::Usage(format!(
            "plot: -o {} names {} file but --format={} was asked; name a .{} file or, for \
             svg and png, a directory",
            out.unwrap_or(Path::new("")).display(),
            n.article_name(),
            a.name(),
            a.name()
        ))),
        (Some(a), _) => Ok(a),
        (None, n) => Ok(n.unwrap_or(Format::Html)),
    }
}

fn has_ext(p: &Path, ext: &str) -> bool {
    p.extension()
        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case(ext))
}

/// Where the SVG or PNG files of the charts go.
enum Files {
    /// One file per chart, named after the chart, in this directory (created if missing).
    In(PathBuf),
    /// NAME.png: NAME-CHART.png beside it (or that very file when there is one chart).
    Named(PathBuf),
}

/// One line saying what was written: the file, or how many files and where.
fn written_line(written: &[PathBuf], ext: &str) -> String {
    match written {
        [] => "fiox plot: no chart to write (the results hold no data to chart)".into(),
        [one] => format!("fiox plot: wrote {}", one.display()),
        [first, ..] => {
            let dir = first.parent().unwrap_or(Path::new("."));
            let mut names: Vec<String> = written
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            names.sort();
            format!(
                "fiox plot: wrote {} {} files in {}: {}",
                written.len(),
                ext.to_uppercase(),
                if dir.as_os_str().is_empty() {
                    Path::new(".").display()
                } else {
                    dir.display()
                },
                names.join(" ")
            )
        }
    }
}

/// One SVG or PNG file per chart (see [`Files`]); returns the paths.
fn write_charts(inputs: &Inputs, files: &Files, png: bool) -> Result<Vec<PathBuf>, PlotError> {
    let charts = chart::build(inputs);
    let ext = if png { "png" } else { "svg" };
    let path_of = |id: &str| match files {
        Files::In(dir) => dir.join(format!("{id}.{ext}")),
        Files::Named(p) if charts.len() == 1 => p.clone(),
        Files::Named(p) => {
            let stem = p.file_stem().unwrap_or_default().to_string_lossy();
            p.with_file_name(format!("{stem}-{id}.{ext}"))
        }
    };
    if let Files::In(dir) = files {
        fiox_guard::Dir::create_all(dir, 0o755)?;
    }
    let mut written = Vec::new();
    for c in &charts {
        let text = svg::render(c, &svg::LIGHT);
        let bytes = if png {
            png::svg_to_png(&text, 2.0)?
        } else {
            text.into_bytes()
        };
        let path = path_of(&c.id);
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
        assert_eq!(a.format, Some(Format::Svg));
        let b = parse(&["--output=y", "--format", "png", "r.json", "-q"]).unwrap();
        assert_eq!(
            (b.output, b.format, b.quiet),
            (Some(PathBuf::from("y")), Some(Format::Png), true)
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

    /// `-o x.png` means PNG (issue 43: it made a directory named x.png and wrote HTML
    /// nowhere near it); a directory stays a directory; an extension of another format than
    /// the one asked is refused.
    #[test]
    fn the_output_name_chooses_the_format_and_a_file_name_is_not_a_directory() {
        let f = |asked, out: &str| format_of(asked, Some(Path::new(out)));
        assert_eq!(f(None, "x.png").unwrap(), Format::Png);
        assert_eq!(f(None, "x.SVG").unwrap(), Format::Svg);
        assert_eq!(f(None, "x.html").unwrap(), Format::Html);
        assert_eq!(f(None, "out").unwrap(), Format::Html);
        assert_eq!(f(Some(Format::Png), "charts").unwrap(), Format::Png);
        assert_eq!(f(Some(Format::Png), "x.png").unwrap(), Format::Png);
        let e = f(Some(Format::Png), "x.svg").unwrap_err().to_string();
        assert!(e.contains("--format=png") && e.contains("x.svg"), "{e}");
        assert_eq!(format_of(None, None).unwrap(), Format::Html);
        let line = written_line(&[PathBuf::from("d/a.png"), PathBuf::from("d/b.png")], "png");
        assert_eq!(line, "fiox plot: wrote 2 PNG files in d: a.png b.png");
        assert_eq!(
            written_line(&[PathBuf::from("x.png")], "png"),
            "fiox plot: wrote x.png"
        );
    }

    #[test]
    fn no_result_is_a_usage_error() {
        let e = run(parse(&[]).unwrap()).unwrap_err().to_string();
        assert!(e.contains("no RESULT given"), "{e}");
    }
}
