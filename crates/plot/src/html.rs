//! The report page: one self-contained HTML file (inline CSS and SVG; no script, font, image
//! or stylesheet is fetched) that leads with the charts by section, then the sources,
//! environment facts and job options, folded (a sweep's 35 rows of options came before the
//! first chart). The page follows the reader's light or dark preference
//! (`prefers-color-scheme`); the SVGs carry light colours as attributes and CSS overrides them.

use crate::chart::{Chart, Section};
use crate::input::Inputs;
use crate::svg::{self, esc, DARK, LIGHT};
use std::fmt::Write;

/// The whole page.
pub fn page(title: &str, inputs: &Inputs, charts: &[Chart]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\">\
         <title>{}</title><style>{}</style></head><body><main>\n<h1>{}</h1>\n",
        esc(title),
        css(),
        esc(title)
    );
    let mut sections: Vec<Section> = charts.iter().map(|c| c.section).collect();
    sections.dedup();
    for sec in sections {
        let _ = writeln!(s, "<h2>{}</h2>", sec.title());
        for c in charts.iter().filter(|c| c.section == sec) {
            let _ = writeln!(s, "<figure>{}</figure>", svg::render(c, &LIGHT));
        }
    }
    if charts.is_empty() {
        s.push_str("<p>Nothing to chart: the inputs hold no I/O.</p>\n");
    }
    s.push_str("<h2>Sources and environment</h2>\n");
    header(&mut s, inputs);
    let _ = writeln!(
        s,
        "<footer>Made by fiox {} plot.</footer></main></body></html>",
        env!("CARGO_PKG_VERSION")
    );
    s
}

fn header(s: &mut String, inputs: &Inputs) {
    s.push_str("<section class=\"meta\">");
    for r in &inputs.results {
        let _ = write!(
            s,
            // Folded: the charts are what the reader came for; a click shows their source.
            "<details><summary><b>{}</b> <span class=\"path\">{}</span></summary><table>",
            esc(&r.label),
            esc(&r.path.display().to_string())
        );
        for (k, v) in &r.facts {
            let _ = write!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
        }
        let opts = |o: &[(String, String)]| {
            o.iter()
                .map(|(k, v)| format!("{}={}", esc(k), esc(v)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if !r.global_options.is_empty() {
            let _ = write!(
                s,
                "<tr><th>global options</th><td><code>{}</code></td></tr>",
                opts(&r.global_options)
            );
        }
        let mut shown = Vec::new();
        for j in &r.jobs {
            // numjobs clones repeat their job's options.
            if shown.contains(&&j.name) {
                continue;
            }
            shown.push(&j.name);
            let _ = write!(
                s,
                "<tr><th>job {}</th><td><code>{}</code></td></tr>",
                esc(&j.name),
                opts(&j.options)
            );
        }
        s.push_str("</table></details>");
    }
    logs_and_comparisons(s, inputs);
    s.push_str("</section>\n");
}

fn logs_and_comparisons(s: &mut String, inputs: &Inputs) {
    let mut sources: Vec<&str> = inputs.logs.iter().map(|l| l.source.as_str()).collect();
    sources.dedup();
    for src in sources {
        let files: Vec<String> = inputs
            .logs
            .iter()
            .filter(|l| l.source == src)
            .map(|l| format!("{}_{} ({})", l.job, l.kind.suffix(), l.ddir))
            .collect();
        let _ = write!(
            s,
            "<p><b>logs</b> {}: {}</p>",
            esc(src),
            esc(&files.join(", "))
        );
    }
    for c in &inputs.comparisons {
        let _ = write!(
            s,
            "<p><b>comparison</b> {}: {} (error bars: 95% confidence interval of the mean; \
             * marks a significant change against {})</p>",
            esc(&c.path.display().to_string()),
            esc(&c.sides.join(" vs ")),
            esc(c.sides.first().map_or("", String::as_str))
        );
    }
    if !inputs.skipped.is_empty() {
        s.push_str("<details><summary>not plotted</summary><ul>");
        for k in &inputs.skipped {
            let _ = write!(s, "<li>{}</li>", esc(k));
        }
        s.push_str("</ul></details>");
    }
}

/// Page CSS: light by default, dark when the reader prefers it (chart colours included);
/// `fiox history page` styles its pages with it too.
pub fn css() -> String {
    let mut dark = String::new();
    for (i, c) in DARK.palette.iter().enumerate() {
        let _ = write!(dark, ".c{i}.line{{stroke:{c}}}.c{i}.fill{{fill:{c}}}");
    }
    format!(
        "body{{margin:0;font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;\
         background:{lbg};color:{lfg}}}main{{max-width:800px;margin:0 auto;padding:16px}}\
         h1{{font-size:1.5em}}h2{{margin-top:1.6em;border-bottom:1px solid {lgrid}}}\
         figure{{margin:16px 0}}svg.chart{{max-width:100%;height:auto}}\
         table{{border-collapse:collapse;font-size:.9em}}th{{text-align:left;padding-right:12px;\
         vertical-align:top}}td{{overflow-wrap:anywhere}}code{{word-break:break-word}}.path{{opacity:.7}}\
         footer{{margin-top:2em;font-size:.8em;opacity:.7}}\
         @media (prefers-color-scheme: dark){{body{{background:{dbg};color:{dfg}}}\
         h2{{border-color:{dgrid}}}svg.chart .bg{{fill:{dbg}}}svg.chart .fg{{fill:{dfg}}}\
         svg.chart .muted{{fill:{dmuted}}}svg.chart .grid{{stroke:{dgrid}}}\
         svg.chart .axisline,svg.chart .markline{{stroke:{dmuted}}}svg.chart .errbar{{stroke:{dfg}}}{dark}}}",
        lbg = LIGHT.bg,
        lfg = LIGHT.fg,
        lgrid = LIGHT.grid,
        dbg = DARK.bg,
        dfg = DARK.fg,
        dgrid = DARK.grid,
        dmuted = DARK.muted,
    )
}
