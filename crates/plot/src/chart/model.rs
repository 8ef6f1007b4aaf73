//! What a chart is, as data: its section on the page, axes, marks and body (lines, grouped
//! bars with confidence intervals, stacked bars, or a heat grid). Every builder fills these; `svg` draws them.

use crate::axis::Axis;
use crate::timeline::Mark;

/// Where a chart goes on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    OverTime,
    Latency,
    Comparison,
    Matrix,
}

impl Section {
    pub fn title(self) -> &'static str {
        match self {
            Section::OverTime => "Over time",
            Section::Latency => "Latency",
            Section::Comparison => "Comparisons",
            Section::Matrix => "iodepth x numjobs",
        }
    }
}

/// One chart.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Unique within a report; also the file name of `--format svg|png`.
    pub id: String,
    pub title: String,
    pub section: Section,
    pub x: Axis,
    pub y: Axis,
    pub body: Body,
    /// Vertical lines on the x axis (group starts, ramp ends on a time axis).
    pub marks: Vec<Mark>,
    /// The x span to show, when charts must line up (every over-time chart of a page).
    pub x_range: Option<(f64, f64)>,
}

impl Chart {
    /// A chart without marks, its x span from its data.
    pub fn new(id: String, title: String, section: Section, x: Axis, y: Axis, body: Body) -> Self {
        Chart {
            id,
            title,
            section,
            x,
            y,
            body,
            marks: Vec::new(),
            x_range: None,
        }
    }
}

/// What is drawn.
#[derive(Debug, Clone)]
pub enum Body {
    Lines(Vec<Series>),
    Bars(Bars),
    Heat(Heat),
    Stack(Stack),
}

/// Stacked bars: one column per entry of `columns`, made of `layers` (bottom first):
/// `values[column][layer]`, each at least 0 (what cannot be stacked, a negative rest, is told
/// in the column's `notes`).
#[derive(Debug, Clone)]
pub struct Stack {
    pub columns: Vec<String>,
    pub layers: Vec<String>,
    pub values: Vec<Vec<f64>>,
    pub notes: Vec<String>,
}

/// A named line.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Grouped bars: `values[group][variant]`.
#[derive(Debug, Clone)]
pub struct Bars {
    pub groups: Vec<String>,
    pub variants: Vec<String>,
    pub values: Vec<Vec<Option<Bar>>>,
}

/// One bar, with its 95% confidence interval and a note (relative change) when known.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub value: f64,
    pub ci: Option<(f64, f64)>,
    pub note: String,
}

/// A grid of values: `cells[y][x]`.
#[derive(Debug, Clone)]
pub struct Heat {
    pub xs: Vec<String>,
    pub ys: Vec<String>,
    pub cells: Vec<Vec<Option<f64>>>,
}

/// A file-name-safe id.
pub fn slug(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let mut out = String::new();
    for part in s.split('-').filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(part);
    }
    out
}
