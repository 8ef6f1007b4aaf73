//! Axes: scales (linear, log, and the "nines" scale of latency percentiles), tick positions at
//! round values (1-2-5 steps, decades), and labels with units a reader knows at a glance:
//! 1k/10k/100k for counts, KiB/s..GiB/s for bandwidth, ns/µs/ms/s for latency.

/// How values map to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Decades; values must be above 0.
    Log,
    /// Percentiles as "nines": p maps to -log10(1 - p/100), so 90, 99, 99.9 are equally spaced.
    Nines,
}

/// What the values measure (their unit as stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Seconds,
    /// I/Os per second.
    Iops,
    /// Bytes per second.
    BytesPerSec,
    /// Nanoseconds.
    Nanos,
    /// Percent (0..100).
    Percent,
    /// A plain count or number.
    Plain,
}

/// One axis of a chart.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The quantity ("Bandwidth"); the unit is added by [`Axis::title`].
    pub quantity: String,
    pub unit: Unit,
    pub scale: Scale,
}

impl Axis {
    pub fn new(quantity: &str, unit: Unit, scale: Scale) -> Self {
        Axis {
            quantity: quantity.to_string(),
            unit,
            scale,
        }
    }

    /// Position transform (before mapping to pixels).
    pub fn tf(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log => v.max(1e-12).log10(),
            Scale::Nines => -(1.0 - (v / 100.0).min(1.0 - 1e-9)).log10(),
        }
    }

    /// The axis title with its unit, for a span up to `max`.
    pub fn title(&self, max: f64) -> String {
        match (self.scale, self.unit) {
            (Scale::Linear, Unit::BytesPerSec) => format!("{} ({})", self.quantity, bw_unit(max).1),
            (Scale::Linear, Unit::Nanos) => format!("{} ({})", self.quantity, time_unit(max).1),
            (_, Unit::Seconds) => format!("{} (s)", self.quantity),
            (_, Unit::Iops) => format!("{} (I/Os per second)", self.quantity),
            (_, Unit::Percent) | (Scale::Nines, _) => format!("{} (%)", self.quantity),
            _ => self.quantity.clone(),
        }
    }

    /// The domain to show for data in `[lo, hi]` (in data units).
    pub fn domain(&self, lo: f64, hi: f64) -> (f64, f64) {
        match self.scale {
            Scale::Log => {
                let lo = lo.max(1e-9);
                let hi = hi.max(lo * 10.0);
                (
                    10f64.powf(lo.log10().floor()),
                    10f64.powf(hi.log10().ceil()),
                )
            }
            // Whole nines, so the axis ends on a tick: 99.7 shows up to 99.9.
            Scale::Nines => {
                let n = self.tf(hi.clamp(90.0, 99.9999)).ceil().clamp(1.0, 6.0);
                (0.0, 100.0 * (1.0 - 10f64.powf(-n)))
            }
            Scale::Linear if self.unit == Unit::Seconds => {
                if hi > lo {
                    (lo.min(0.0).max(lo - (hi - lo) * 0.02), hi)
                } else {
                    (lo - 1.0, hi + 1.0)
                }
            }
            Scale::Linear => {
                let lo = lo.min(0.0);
                let hi = if hi > lo { hi } else { lo + 1.0 };
                let step = self.step(lo, hi);
                (lo, (hi / step).ceil() * step)
            }
        }
    }

    /// Ticks (value, label) over the domain.
    pub fn ticks(&self, lo: f64, hi: f64) -> Vec<(f64, String)> {
        match self.scale {
            Scale::Log => {
                let (a, b) = (lo.log10().round() as i32, hi.log10().round() as i32);
                // f64 spans 10^-324..10^308: at most ~630 decades, never an endless range.
                (a.max(-330)..=b.min(310))
                    .map(|e| {
                        let v = 10f64.powi(e);
                        (v, self.label(v, v))
                    })
                    .collect()
            }
            Scale::Nines => {
                let top = self.tf(hi).round() as i32;
                (0..=top.max(1))
                    .map(|n| {
                        let p = 100.0 * (1.0 - 10f64.powi(-n));
                        (p, format!("{p:.*}", (n - 2).max(0) as usize))
                    })
                    .collect()
            }
            Scale::Linear => {
                let step = self.step(lo, hi);
                let first = (lo / step).ceil() as i64;
                let last = (hi / step + 1e-9).floor() as i64;
                // Values near f64's limits (a json+ bin key of 1e308) leave no room for a
                // round step: two ticks at the ends, not 2^63 of them.
                if !step.is_finite() || step <= 0.0 || last.saturating_sub(first) > 1000 {
                    let top = hi.abs().max(lo.abs());
                    return vec![(lo, self.label(lo, top)), (hi, self.label(hi, top))];
                }
                (first..=last)
                    .map(|i| {
                        let v = i as f64 * step;
                        (v, self.label(v, hi.abs().max(lo.abs())))
                    })
                    .collect()
            }
        }
    }

    /// A round tick step in the unit the labels show (200 MiB/s, not 209715200 B/s).
    fn step(&self, lo: f64, hi: f64) -> f64 {
        let top = hi.abs().max(lo.abs());
        let div = match self.unit {
            Unit::BytesPerSec => bw_unit(top).0,
            Unit::Nanos => time_unit(top).0,
            _ => 1.0,
        };
        nice_step((hi - lo) / div / 5.0) * div
    }

    /// A value's tick label, scaled as for a span up to `max`.
    pub fn label(&self, v: f64, max: f64) -> String {
        match (self.scale, self.unit) {
            (Scale::Log, Unit::Nanos) => {
                let (div, unit) = time_unit(v);
                format!("{} {unit}", si(v / div))
            }
            (Scale::Log, Unit::BytesPerSec) => {
                let (div, unit) = bw_unit(v);
                format!("{} {unit}", si(v / div))
            }
            (_, Unit::Nanos) => si(v / time_unit(max).0),
            (_, Unit::BytesPerSec) => si(v / bw_unit(max).0),
            _ => si(v),
        }
    }
}

/// A step of 1, 2 or 5 times a power of ten near `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Compact number: 950, 1k, 2.5k, 10k, 100k, 1.2M, 3G; small values keep their decimals.
pub fn si(v: f64) -> String {
    let a = v.abs();
    let (div, suffix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{}{suffix}", trim_float(v / div))
}

/// At most 3 significant decimals, no trailing zeros.
pub fn trim_float(v: f64) -> String {
    let s = if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// (divisor, unit) for nanosecond values up to `max`.
pub fn time_unit(max: f64) -> (f64, &'static str) {
    if max >= 1e9 {
        (1e9, "s")
    } else if max >= 1e6 {
        (1e6, "ms")
    } else if max >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    }
}

/// (divisor, unit) for bytes/s values up to `max`.
pub fn bw_unit(max: f64) -> (f64, &'static str) {
    const K: f64 = 1024.0;
    if max >= K * K * K {
        (K * K * K, "GiB/s")
    } else if max >= K * K {
        (K * K, "MiB/s")
    } else if max >= K {
        (K, "KiB/s")
    } else {
        (1.0, "B/s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_1k_10k_100k() {
        assert_eq!(si(1000.0), "1k");
        assert_eq!(si(10_000.0), "10k");
        assert_eq!(si(100_000.0), "100k");
        assert_eq!(si(2500.0), "2.5k");
        assert_eq!(si(1_200_000.0), "1.2M");
        assert_eq!(si(0.25), "0.25");
        let a = Axis::new("IOPS", Unit::Iops, Scale::Linear);
        let (lo, hi) = a.domain(0.0, 93_000.0);
        assert_eq!((lo, hi), (0.0, 100_000.0));
        let labels: Vec<String> = a.ticks(lo, hi).into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0", "20k", "40k", "60k", "80k", "100k"]);
    }

    #[test]
    fn latency_log_ticks_carry_units() {
        let a = Axis::new("Latency", Unit::Nanos, Scale::Log);
        let (lo, hi) = a.domain(800.0, 2_500_000.0);
        let labels: Vec<String> = a.ticks(lo, hi).into_iter().map(|t| t.1).collect();
        assert_eq!(
            labels,
            ["100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms"]
        );
    }

    #[test]
    fn nines_ticks() {
        let a = Axis::new("Percentile", Unit::Percent, Scale::Nines);
        let labels: Vec<String> = a.ticks(0.0, 99.99).into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0", "90", "99", "99.9", "99.99"]);
        assert!((a.tf(99.0) - 2.0).abs() < 1e-9);
    }

    #[test]
    fn bandwidth_axis_picks_its_unit() {
        let a = Axis::new("Bandwidth", Unit::BytesPerSec, Scale::Linear);
        assert_eq!(a.title(300.0 * 1024.0 * 1024.0), "Bandwidth (MiB/s)");
        assert_eq!(
            a.label(200.0 * 1024.0 * 1024.0, 300.0 * 1024.0 * 1024.0),
            "200"
        );
        let mib = 1024.0 * 1024.0;
        let (lo, hi) = a.domain(0.0, 95.0 * mib);
        assert_eq!(hi, 100.0 * mib);
        let labels: Vec<String> = a.ticks(lo, hi).into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0", "20", "40", "60", "80", "100"]);
    }
}
