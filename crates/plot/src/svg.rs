//! Drawing a [`Chart`] as SVG by hand: axes with titles and units, round ticks and light grid
//! lines, data as `class="data"` paths and rects (a `<title>` on each gives a tooltip without
//! JavaScript), and the legend below the plot so it never covers data. Colours come from the
//! Okabe-Ito palette (colour-blind safe) and are written as attributes of the light theme; the
//! classes on every element let the page's CSS switch to the dark theme.

use crate::axis::{trim_float, Axis, Scale};
use crate::chart::{Bars, Body, Chart, Heat, Series, Stack};
use std::fmt::Write;

/// Colours of one theme.
pub struct Theme {
    pub bg: &'static str,
    pub fg: &'static str,
    pub muted: &'static str,
    pub grid: &'static str,
    pub palette: [&'static str; 8],
}

/// Okabe-Ito on white (yellow darkened to stay visible on white).
pub const LIGHT: Theme = Theme {
    bg: "#ffffff",
    fg: "#1a1a1a",
    muted: "#555555",
    grid: "#e3e3e3",
    palette: [
        "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#A89800", "#777777",
    ],
};

/// The same hues, lighter where needed, on a dark background.
pub const DARK: Theme = Theme {
    bg: "#1b1d21",
    fg: "#e8e8e8",
    muted: "#b0b0b0",
    grid: "#34373d",
    palette: [
        "#56B4E9", "#E69F00", "#2BC79A", "#F0713A", "#E08CC0", "#9AD3F5", "#F0E442", "#BBBBBB",
    ],
};

const W: f64 = 760.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 36.0;
const TOP: f64 = 44.0;
const PLOT_H: f64 = 270.0;
/// Space under the plot for tick labels and the x axis title.
const UNDER: f64 = 58.0;
const ROW: f64 = 18.0;

/// Series dash patterns after the palette's eight colours are used once.
const DASHES: [&str; 3] = ["", "6 3", "2 3"];

/// The chart as a standalone `<svg>` element.
pub fn render(chart: &Chart, theme: &Theme) -> String {
    let legend = legend_items(chart);
    let rows = legend_rows(&legend);
    let h = TOP + PLOT_H + UNDER + rows.len() as f64 * ROW + 10.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="chart-{id}" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" aria-labelledby="title-{id}" font-family="DejaVu Sans, Verdana, sans-serif" font-size="12">"#,
        id = chart.id
    );
    let _ = write!(
        s,
        r#"<title id="title-{}">{}</title><rect class="bg" width="{W}" height="{h}" fill="{}"/><text class="fg" x="{LEFT}" y="24" font-size="15" font-weight="bold" fill="{}">{}</text>"#,
        chart.id,
        esc(&chart.title),
        theme.bg,
        theme.fg,
        esc(&chart.title)
    );
    match &chart.body {
        Body::Lines(series) => lines(&mut s, chart, series, theme),
        Body::Bars(b) => bars(&mut s, chart, b, theme),
        Body::Heat(hm) => heat(&mut s, chart, hm, theme),
        Body::Stack(st) => stacked(&mut s, chart, st, theme),
    }
    draw_legend(&mut s, &legend, &rows, theme);
    s.push_str("</svg>");
    s
}

/// Maps data values to pixels along one axis.
struct Map<'a> {
    axis: &'a Axis,
    lo: f64,
    hi: f64,
    p0: f64,
    p1: f64,
}

impl Map<'_> {
    fn px(&self, v: f64) -> f64 {
        let (a, b) = (self.axis.tf(self.lo), self.axis.tf(self.hi));
        let t = if b > a {
            (self.axis.tf(v) - a) / (b - a)
        } else {
            0.5
        };
        self.p0 + t.clamp(-0.05, 1.05) * (self.p1 - self.p0)
    }
}

fn bounds(vals: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in vals.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        (if log { 1.0 } else { 0.0 }, if log { 10.0 } else { 1.0 })
    } else {
        (lo, hi)
    }
}

fn lines(s: &mut String, chart: &Chart, series: &[Series], theme: &Theme) {
    let pts = || series.iter().flat_map(|x| x.points.iter());
    let (xl, xh) = match chart.x_range {
        Some(r) => r,
        None => bounds(pts().map(|p| p.0), chart.x.scale == Scale::Log),
    };
    let (yl, yh) = bounds(pts().map(|p| p.1), chart.y.scale == Scale::Log);
    let (xl, xh) = chart.x.domain(xl, xh);
    let (yl, yh) = chart.y.domain(yl, yh);
    let mx = Map {
        axis: &chart.x,
        lo: xl,
        hi: xh,
        p0: LEFT,
        p1: W - RIGHT,
    };
    let my = Map {
        axis: &chart.y,
        lo: yl,
        hi: yh,
        p0: TOP + PLOT_H,
        p1: TOP,
    };
    frame(s, chart, &mx, &my, theme);
    marks(s, chart, &mx, theme);
    let _ = write!(
        s,
        r#"<clipPath id="clip-{}"><rect x="{LEFT}" y="{TOP}" width="{}" height="{PLOT_H}"/></clipPath><g clip-path="url(#clip-{})">"#,
        chart.id,
        W - LEFT - RIGHT,
        chart.id
    );
    for (i, ser) in series.iter().enumerate() {
        let mut d = String::new();
        for (x, y) in &ser.points {
            if (chart.x.scale == Scale::Log && *x <= 0.0)
                || (chart.y.scale == Scale::Log && *y <= 0.0)
            {
                continue;
            }
            let cmd = if d.is_empty() { 'M' } else { 'L' };
            let _ = write!(d, "{cmd}{:.1} {:.1}", mx.px(*x), my.px(*y));
        }
        lone_point(s, &d, i, &ser.name, theme);
        let dash = DASHES[(i / 8) % DASHES.len()];
        let _ = write!(
            s,
            r#"<path class="data line c{}" d="{d}" fill="none" stroke="{}" stroke-width="1.8" stroke-linejoin="round"{}><title>{}</title></path>"#,
            i % 8,
            theme.palette[i % 8],
            if dash.is_empty() {
                String::new()
            } else {
                format!(r#" stroke-dasharray="{dash}""#)
            },
            esc(&ser.name)
        );
    }
    s.push_str("</g>");
}

/// A line of one point has no length to stroke: a dot shows it (a history series of a
/// single run).
fn lone_point(s: &mut String, d: &str, i: usize, name: &str, theme: &Theme) {
    let Some((x, y)) = d
        .strip_prefix('M')
        .filter(|r| !r.contains('L'))
        .and_then(|r| r.split_once(' '))
    else {
        return;
    };
    let _ = write!(
        s,
        r#"<circle class="data fill c{}" cx="{x}" cy="{y}" r="3" fill="{}"><title>{}</title></circle>"#,
        i % 8,
        theme.palette[i % 8],
        esc(name)
    );
}

/// The chart's marks: dashed vertical lines, each labelled at the top of the plot (labels
/// step down a row when they would overlap the one before).
fn marks(s: &mut String, chart: &Chart, mx: &Map, theme: &Theme) {
    let mut last_end = f64::NEG_INFINITY;
    let mut row = 0.0;
    for m in chart.marks.iter().filter(|m| m.x >= mx.lo && m.x <= mx.hi) {
        let x = mx.px(m.x);
        // About 6.5 px per character at 11 px.
        let width = 6.5 * m.label.chars().count() as f64;
        row = if x + 3.0 < last_end {
            (row + 1.0) % 3.0
        } else {
            0.0
        };
        last_end = last_end.max(x + 3.0 + width);
        let _ = write!(
            s,
            r#"<g class="mark"><line class="markline" x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{}" stroke="{}" stroke-dasharray="4 3"/><text class="muted" x="{:.1}" y="{:.1}" font-size="11" fill="{}">{}</text></g>"#,
            TOP + PLOT_H,
            theme.muted,
            x + 3.0,
            TOP + 11.0 + row * 12.0,
            theme.muted,
            esc(&m.label)
        );
    }
}

/// Grid, ticks, axis lines and titles.
fn frame(s: &mut String, chart: &Chart, mx: &Map, my: &Map, theme: &Theme) {
    for (v, label) in chart.y.ticks(my.lo, my.hi) {
        let y = my.px(v);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="{}"/><text class="muted" x="{}" y="{:.1}" text-anchor="end" fill="{}">{}</text>"#,
            W - RIGHT,
            theme.grid,
            LEFT - 6.0,
            y + 4.0,
            theme.muted,
            esc(&label)
        );
    }
    for (v, label) in chart.x.ticks(mx.lo, mx.hi) {
        let x = mx.px(v);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{}" stroke="{}"/><text class="muted" x="{x:.1}" y="{}" text-anchor="middle" fill="{}">{}</text>"#,
            TOP + PLOT_H,
            theme.grid,
            TOP + PLOT_H + 16.0,
            theme.muted,
            esc(&label)
        );
    }
    axis_lines(s, theme);
    axis_titles(s, &chart.x.title(mx.hi), &chart.y.title(my.hi), theme);
}

fn axis_lines(s: &mut String, theme: &Theme) {
    let _ = write!(
        s,
        r#"<path class="axisline" d="M{LEFT} {TOP}V{}H{}" fill="none" stroke="{}"/>"#,
        TOP + PLOT_H,
        W - RIGHT,
        theme.muted
    );
}

fn axis_titles(s: &mut String, x: &str, y: &str, theme: &Theme) {
    let _ = write!(
        s,
        r#"<text class="fg" x="{}" y="{}" text-anchor="middle" fill="{}">{}</text><text class="fg" transform="translate(16 {}) rotate(-90)" text-anchor="middle" fill="{}">{}</text>"#,
        LEFT + (W - LEFT - RIGHT) / 2.0,
        TOP + PLOT_H + 38.0,
        theme.fg,
        esc(x),
        TOP + PLOT_H / 2.0,
        theme.fg,
        esc(y)
    );
}

/// The value axis of a bar chart from `yl` to `yh`: its grid lines and labels drawn, its
/// mapping to pixels returned (bars and stacked bars share it).
fn value_axis<'c>(
    s: &mut String,
    chart: &'c Chart,
    (yl, yh): (f64, f64),
    theme: &Theme,
) -> Map<'c> {
    let my = Map {
        axis: &chart.y,
        lo: yl,
        hi: yh,
        p0: TOP + PLOT_H,
        p1: TOP,
    };
    for (v, label) in chart.y.ticks(yl, yh) {
        let y = my.px(v);
        let _ = write!(
            s,
            r#"<line class="grid" x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="{}"/><text class="muted" x="{}" y="{:.1}" text-anchor="end" fill="{}">{}</text>"#,
            W - RIGHT,
            theme.grid,
            LEFT - 6.0,
            y + 4.0,
            theme.muted,
            esc(&label)
        );
    }
    my
}

fn bars(s: &mut String, chart: &Chart, b: &Bars, theme: &Theme) {
    let all = b.values.iter().flatten().flatten();
    let hi = all
        .map(|v| v.ci.map_or(v.value, |c| c.1.max(v.value)))
        .fold(0.0f64, f64::max);
    let (yl, yh) = chart.y.domain(0.0, hi);
    let my = value_axis(s, chart, (yl, yh), theme);
    let gw = (W - LEFT - RIGHT) / b.groups.len().max(1) as f64;
    let bw = gw * 0.8 / b.variants.len().max(1) as f64;
    for (gi, g) in b.groups.iter().enumerate() {
        let gx = LEFT + gi as f64 * gw;
        let max_chars = (gw / 6.5) as usize;
        let _ = write!(
            s,
            r#"<text class="muted" x="{:.1}" y="{}" text-anchor="middle" fill="{}">{}<title>{}</title></text>"#,
            gx + gw / 2.0,
            TOP + PLOT_H + 16.0,
            theme.muted,
            esc(&shorten(g, max_chars)),
            esc(g)
        );
        for (vi, bar) in b.values[gi].iter().enumerate() {
            let Some(bar) = bar else { continue };
            let x = gx + gw * 0.1 + vi as f64 * bw;
            one_bar(s, bar, x, bw, &my, vi, &b.variants[vi], g, theme);
        }
    }
    axis_lines(s, theme);
    axis_titles(s, &chart.x.quantity, &chart.y.title(yh), theme);
}

/// Stacked bars: a column per entry, its layers bottom up in the palette's colours (the
/// legend's order), each with its value and share of the column as a tooltip.
fn stacked(s: &mut String, chart: &Chart, st: &Stack, theme: &Theme) {
    let hi = st
        .values
        .iter()
        .map(|c| c.iter().sum::<f64>())
        .fold(0.0f64, f64::max);
    let (yl, yh) = chart.y.domain(0.0, hi);
    let my = value_axis(s, chart, (yl, yh), theme);
    let gw = (W - LEFT - RIGHT) / st.columns.len().max(1) as f64;
    for (ci, col) in st.columns.iter().enumerate() {
        let x = LEFT + ci as f64 * gw + gw * 0.15;
        let _ = write!(
            s,
            r#"<text class="muted" x="{:.1}" y="{}" text-anchor="middle" fill="{}">{}<title>{}</title></text>"#,
            x + gw * 0.35,
            TOP + PLOT_H + 16.0,
            theme.muted,
            esc(&shorten(col, (gw / 6.5) as usize)),
            esc(col)
        );
        let vals = st.values.get(ci).map(Vec::as_slice).unwrap_or(&[]);
        let total: f64 = vals.iter().sum();
        let note = st.notes.get(ci).filter(|n| !n.is_empty());
        let mut base = 0.0;
        for (li, v) in vals.iter().enumerate().filter(|(_, v)| **v > 0.0) {
            let (y0, y1) = (my.px(base), my.px(base + v));
            base += v;
            let _ = write!(
                s,
                r#"<rect class="data fill c{}" x="{x:.1}" y="{y1:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}: {} ({:.0}%){}</title></rect>"#,
                li % 8,
                gw * 0.7,
                (y0 - y1).abs(),
                theme.palette[li % 8],
                esc(col),
                esc(st.layers.get(li).map_or("?", String::as_str)),
                trim_float(*v),
                if total > 0.0 { v / total * 100.0 } else { 0.0 },
                note.map(|n| format!("; not drawn: {}", esc(n)))
                    .unwrap_or_default()
            );
        }
    }
    axis_lines(s, theme);
    axis_titles(s, &chart.x.quantity, &chart.y.title(yh), theme);
}

#[allow(clippy::too_many_arguments)]
fn one_bar(
    s: &mut String,
    bar: &crate::chart::Bar,
    x: f64,
    bw: f64,
    my: &Map,
    vi: usize,
    variant: &str,
    group: &str,
    theme: &Theme,
) {
    let (y0, y1) = (my.px(0.0), my.px(bar.value));
    let ci = bar
        .ci
        .map(|(lo, hi)| format!(", 95% CI {}..{}", trim_float(lo), trim_float(hi)))
        .unwrap_or_default();
    let _ = write!(
        s,
        r#"<rect class="data fill c{}" x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}: {}{}{}</title></rect>"#,
        vi % 8,
        y1.min(y0),
        (bw - 2.0).max(1.0),
        (y0 - y1).abs(),
        theme.palette[vi % 8],
        esc(group),
        esc(variant),
        trim_float(bar.value),
        ci,
        if bar.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", esc(&bar.note))
        }
    );
    let cx = x + (bw - 2.0) / 2.0;
    let mut top = y1;
    if let Some((lo, hi)) = bar.ci {
        let (a, b) = (my.px(lo), my.px(hi));
        top = top.min(b);
        let _ = write!(
            s,
            r#"<path class="errbar" d="M{cx:.1} {a:.1}V{b:.1}M{:.1} {a:.1}H{:.1}M{:.1} {b:.1}H{:.1}" stroke="{}" stroke-width="1.4" fill="none"/>"#,
            cx - 4.0,
            cx + 4.0,
            cx - 4.0,
            cx + 4.0,
            theme.fg
        );
    }
    if !bar.note.is_empty() {
        let _ = write!(
            s,
            r#"<text class="fg" x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="10" fill="{}">{}</text>"#,
            top - 4.0,
            theme.fg,
            esc(&bar.note)
        );
    }
}

fn heat(s: &mut String, chart: &Chart, hm: &Heat, theme: &Theme) {
    let vals = hm.cells.iter().flatten().flatten().copied();
    let (lo, hi) = bounds(vals, false);
    let cw = (W - LEFT - RIGHT) / hm.xs.len().max(1) as f64;
    let ch = PLOT_H / hm.ys.len().max(1) as f64;
    for (yi, row) in hm.cells.iter().enumerate() {
        // numjobs grows upwards.
        let y = TOP + PLOT_H - (yi + 1) as f64 * ch;
        for (xi, cell) in row.iter().enumerate() {
            let Some(v) = cell else { continue };
            let t = if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
            let (fill, dark) = viridis(t);
            let x = LEFT + xi as f64 * cw;
            let _ = write!(
                s,
                r#"<rect class="data cell" x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}"><title>iodepth {} numjobs {}: {}</title></rect><text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{}">{}</text>"#,
                cw - 2.0,
                ch - 2.0,
                esc(&hm.xs[xi]),
                esc(&hm.ys[yi]),
                trim_float(*v),
                x + cw / 2.0,
                y + ch / 2.0 + 4.0,
                if dark { "#ffffff" } else { "#000000" },
                chart.y.label(*v, *v)
            );
        }
        let _ = write!(
            s,
            r#"<text class="muted" x="{}" y="{:.1}" text-anchor="end" fill="{}">{}</text>"#,
            LEFT - 6.0,
            y + ch / 2.0 + 4.0,
            theme.muted,
            esc(&hm.ys[yi])
        );
    }
    for (xi, x) in hm.xs.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text class="muted" x="{:.1}" y="{}" text-anchor="middle" fill="{}">{}</text>"#,
            LEFT + (xi as f64 + 0.5) * cw,
            TOP + PLOT_H + 16.0,
            theme.muted,
            esc(x)
        );
    }
    axis_titles(s, &chart.x.quantity, &chart.y.quantity, theme);
}

/// Viridis (perceptually uniform, colour-blind safe) at `t` in 0..1, and whether it is dark.
fn viridis(t: f64) -> (String, bool) {
    const STOPS: [(u8, u8, u8); 5] = [
        (68, 1, 84),
        (59, 82, 139),
        (33, 145, 140),
        (94, 201, 98),
        (253, 231, 37),
    ];
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let (r, g, bl) = (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2));
    let luma = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * bl as f64;
    (format!("#{r:02x}{g:02x}{bl:02x}"), luma < 140.0)
}

/// (name, is a bar swatch) per legend entry.
fn legend_items(chart: &Chart) -> Vec<(String, bool)> {
    match &chart.body {
        Body::Lines(series) if series.len() > 1 || series.iter().any(|x| !x.name.is_empty()) => {
            series.iter().map(|x| (x.name.clone(), false)).collect()
        }
        Body::Bars(b) => b.variants.iter().map(|v| (v.clone(), true)).collect(),
        Body::Stack(st) => st.layers.iter().map(|v| (v.clone(), true)).collect(),
        _ => Vec::new(),
    }
}

/// Legend entries per row, wrapped to the chart's width: (x offset, item index).
fn legend_rows(items: &[(String, bool)]) -> Vec<Vec<(f64, usize)>> {
    let mut rows: Vec<Vec<(f64, usize)>> = Vec::new();
    let mut x = LEFT;
    for (i, (name, _)) in items.iter().enumerate() {
        let w = 30.0 + 7.0 * name.chars().count().min(60) as f64;
        if rows.is_empty() || (x + w > W - RIGHT && x > LEFT) {
            rows.push(Vec::new());
            x = LEFT;
        }
        if let Some(r) = rows.last_mut() {
            r.push((x, i));
        }
        x += w;
    }
    rows
}

fn draw_legend(
    s: &mut String,
    items: &[(String, bool)],
    rows: &[Vec<(f64, usize)>],
    theme: &Theme,
) {
    for (ri, row) in rows.iter().enumerate() {
        let y = TOP + PLOT_H + UNDER + ri as f64 * ROW;
        for (x, i) in row {
            let (name, bar) = &items[*i];
            let c = theme.palette[i % 8];
            if *bar {
                let _ = write!(
                    s,
                    r#"<rect class="fill c{}" x="{x:.1}" y="{:.1}" width="18" height="10" fill="{c}"/>"#,
                    i % 8,
                    y - 9.0
                );
            } else {
                let dash = DASHES[(i / 8) % DASHES.len()];
                let _ = write!(
                    s,
                    r#"<path class="line c{}" d="M{x:.1} {:.1}h20" stroke="{c}" stroke-width="2.5"{}/>"#,
                    i % 8,
                    y - 4.0,
                    if dash.is_empty() {
                        String::new()
                    } else {
                        format!(r#" stroke-dasharray="{dash}""#)
                    }
                );
            }
            let _ = write!(
                s,
                r#"<text class="fg" x="{:.1}" y="{y:.1}" fill="{}">{}</text>"#,
                x + 25.0,
                theme.fg,
                esc(&shorten(name, 60))
            );
        }
    }
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max.max(4) {
        s.to_string()
    } else {
        let keep: String = s.chars().take(max.max(4) - 1).collect();
        format!("{keep}…")
    }
}

/// XML text escaping.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axis::Unit;

    fn line_chart(names: &[&str]) -> Chart {
        Chart {
            id: "t".into(),
            title: "A <title>".into(),
            section: crate::chart::Section::OverTime,
            x: Axis::new("Time", Unit::Seconds, Scale::Linear),
            y: Axis::new("IOPS", Unit::Iops, Scale::Linear),
            body: Body::Lines(
                names
                    .iter()
                    .map(|n| Series {
                        name: n.to_string(),
                        points: vec![(0.0, 1000.0), (1.0, 50_000.0)],
                    })
                    .collect(),
            ),
            marks: Vec::new(),
            x_range: None,
        }
    }

    #[test]
    fn lines_have_data_paths_escaped_titles_and_a_legend_below() {
        let svg = render(&line_chart(&["a", "b"]), &LIGHT);
        assert_eq!(svg.matches(r#"class="data line"#).count(), 2);
        assert!(svg.contains("A &lt;title&gt;"));
        assert!(
            svg.contains(">50k<") && svg.contains("IOPS (I/Os per second)"),
            "{svg}"
        );
        assert!(svg.contains("Time (s)"));
    }

    #[test]
    fn legends_wrap_into_rows() {
        let many: Vec<String> = (0..12).map(|i| format!("a long series name {i}")).collect();
        let names: Vec<&str> = many.iter().map(String::as_str).collect();
        let items: Vec<(String, bool)> = many.iter().map(|n| (n.clone(), false)).collect();
        assert!(legend_rows(&items).len() >= 3);
        let svg = render(&line_chart(&names), &LIGHT);
        // The 9th series reuses the first colour, dashed.
        assert!(svg.contains(r#"stroke-dasharray="6 3""#));
    }

    #[test]
    fn viridis_ends() {
        assert_eq!(viridis(0.0), ("#440154".to_string(), true));
        assert_eq!(viridis(1.0), ("#fde725".to_string(), false));
    }
}
