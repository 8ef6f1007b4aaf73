//! `fiox plot RESULT... [-o FILE|DIR] [--format=html|svg|png] [--title=TEXT]`. The switches
//! live in [`FLAGS`], which also feeds `fiox --help`, the man page and the shell completions.

use crate::{chart, html_page, png, svg, Inputs, PlotError};
pub use fiox_job::help::Flag;
use std::path::{Path, PathBuf};

/// `fiox plot`'s switches.
pub const FLAGS: &[Flag] = &[
    Flag {
        long: "output",
        short: Some('o'),
        value: Some("PATH"),
        choices: &[],
        help: "HTML file to write (default fiox-report.html), or with --format=svg|png the \
               directory for one file per chart (default .)",
    },
    Flag {
        long: "format",
        short: None,
        value: Some("FORMAT"),
        choices: &["html", "svg", "png"],
        help: "html (one self-contained page, the default), svg or png (one file per chart)",
    },
    Flag {
        long: "title",
        short: None,
        value: Some("TEXT"),
        choices: &[],
        help: "Page title (default: fiox report)",
    },
    Flag {
        long: "help",
        short: Some('h'),
        value: None,
        choices: &[],
        help: "Print this text",
    },
];

/// One line saying what `fiox plot` does.
pub const ABOUT: &str = "Chart results: an HTML page with inline SVG, or SVG/PNG files";

/// `fiox plot --help`.
pub fn usage() -> String {
    let mut s = format!(
        "fiox plot - {ABOUT}\n\nUsage: fiox plot RESULT... [-o FILE|DIR] [--format=html|svg|png]\n\n\
         RESULT is a fio or fiox JSON/json+ file, a `fiox compare --format json` file, a fio log\n\
         (NAME_bw.1.log, NAME_clat.1.log...) or a directory of those (experiment results\n\
         directories included).\n\nSwitches:\n"
    );
    s.push_str(&fiox_job::help::flags_text(FLAGS));
    s
}

#[derive(Debug, PartialEq)]
enum Format {
    Html,
    Svg,
    Png,
}

#[derive(Debug)]
struct Args {
    inputs: Vec<PathBuf>,
    output: Option<PathBuf>,
    format: Format,
    title: String,
}

fn parse(args: &[String]) -> Result<Option<Args>, PlotError> {
    let mut a = Args {
        inputs: Vec::new(),
        output: None,
        format: Format::Html,
        title: "fiox report".into(),
    };
    let mut w = fiox_job::help::Words::new(args);
    while let Some(key) = w.next_key() {
        let arg = w.word();
        let mut value = || {
            w.value().map(str::to_string).ok_or_else(|| {
                PlotError::Usage(format!("plot: {key} needs a value (see fiox plot --help)"))
            })
        };
        match key {
            "-h" | "--help" => return Ok(None),
            "-o" | "--output" => a.output = Some(PathBuf::from(value()?)),
            "--title" => a.title = value()?,
            "--format" => {
                a.format = match value()?.as_str() {
                    "html" => Format::Html,
                    "svg" => Format::Svg,
                    "png" => Format::Png,
                    v => {
                        return Err(PlotError::Usage(format!(
                            "plot: --format={v}: use html, svg or png"
                        )))
                    }
                }
            }
            k if k.starts_with('-') && k.len() > 1 => {
                return Err(PlotError::Usage(format!(
                    "plot: unknown switch {arg} (see fiox plot --help)"
                )))
            }
            _ => a.inputs.push(PathBuf::from(arg)),
        }
    }
    if a.inputs.is_empty() {
        return Err(PlotError::Usage(
            "plot: no RESULT given (a JSON result, a fio log or a directory of them; see fiox plot --help)".into(),
        ));
    }
    Ok(Some(a))
}

/// Run `fiox plot`; returns the exit code. The help text goes to stdout, nothing else does.
pub fn run(args: &[String]) -> Result<i32, PlotError> {
    let Some(a) = parse(args)? else {
        print!("{}", usage());
        return Ok(0);
    };
    let mut inputs = Inputs::default();
    for p in &a.inputs {
        inputs.add_path(p)?;
    }
    match a.format {
        Format::Html => {
            let out = a
                .output
                .unwrap_or_else(|| PathBuf::from("fiox-report.html"));
            crate::write_file(&out, html_page(&a.title, &inputs).as_bytes())?;
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
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
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
        crate::write_file(&path, &bytes)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn switches_parse_in_both_spellings() {
        let a = parse(&args(&["r.json", "-o", "x.html", "--format=svg"]))
            .unwrap()
            .unwrap();
        assert_eq!(a.inputs, [PathBuf::from("r.json")]);
        assert_eq!(a.output, Some(PathBuf::from("x.html")));
        assert_eq!(a.format, Format::Svg);
        assert!(parse(&args(&["--help"])).unwrap().is_none());
        let e = parse(&args(&["r.json", "--format=pdf"]))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "plot: --format=pdf: use html, svg or png");
        let e = parse(&args(&["r.json", "--bogus"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown switch --bogus"), "{e}");
        assert!(parse(&args(&[]))
            .unwrap_err()
            .to_string()
            .contains("no RESULT"));
        assert!(parse(&args(&["r.json", "-o"]))
            .unwrap_err()
            .to_string()
            .contains("needs a value"));
    }

    #[test]
    fn usage_lists_every_flag() {
        let u = usage();
        for f in FLAGS {
            assert!(u.contains(&format!("--{}", f.long)), "{u}");
        }
    }
}
