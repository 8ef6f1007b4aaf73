//! fio's steady state detection: `steadystate` (`ss`) picks the criterion and its limit,
//! `ss_dur` the window over which it is judged (one sample per second), `ss_ramp` the time
//! before sampling begins. A job whose criterion holds over a full window stops early.

use super::{Category as C, Kind as K, OptDef, Val};
use crate::SsCriterion;

pub(super) static OPTS: &[OptDef] = &[
    OptDef::new(
        "steadystate",
        K::Choice(&["iops", "iops_slope", "bw", "bw_slope", "lat", "lat_slope"]),
        C::Timing,
        "Criterion and limit of steady state (iops:10%, bw_slope:1m...)",
        |j, v| {
            super::forget(j, "steadystate");
            if check_latency(v)? {
                super::record_value(j, "steadystate", v.raw, "fio 3.42's latency criterion");
                return Ok(());
            }
            let (c, slope, pct, limit) = parse(v)?;
            j.steadystate.criterion = c;
            j.steadystate.slope = slope;
            j.steadystate.pct = pct;
            j.steadystate.limit = limit;
            Ok(())
        },
    )
    .alias(&["ss"])
    .def("iops_slope:0.01%")
    .long("`iops`/`bw`: the largest deviation from the window's mean; `iops_slope`/`bw_slope`: the slope of a least-squares line through the window. The limit is a number (IOPS, or bytes/s with size suffixes for bw) or a percentage of the mean. Nothing is checked until `ss_dur` is set."),
    OptDef::new("steadystate_duration", K::Time("s"), C::Timing, "Window of steady state detection (0: off)", |j, v| {
        j.steadystate.dur_s = v.time_us()? / 1_000_000;
        Ok(())
    })
    .alias(&["ss_dur"])
    .def("0"),
    OptDef::new("steadystate_ramp_time", K::Time("s"), C::Timing, "Time before steady state samples are taken", |j, v| {
        j.steadystate.ramp_us = v.time_us()?;
        Ok(())
    })
    .alias(&["ss_ramp"])
    .def("0"),
    OptDef::new("steadystate_check_interval", K::Time("s"), C::Timing, "Period of the steady state samples (fio 3.42)", |j, v| {
        j.steadystate.interval_us = Some(v.time_us()?);
        Ok(())
    })
    .alias(&["ss_interval"])
    .def("1")
    .long("fio 3.42's option: the window of `ss_dur` holds one sample per interval (ss_dur / interval of them), each the rate over the last interval as fio 3.42 computes it. At least 1s, ss_dur a multiple of it and longer, and the same for every job of the run (fio refuses the run otherwise)."),
];

/// Is this fio 3.42's `lat:LIMIT`/`lat_slope:LIMIT` (limit a percentage, or a time in
/// microseconds by default)? Its limit is checked as fio does.
fn check_latency(v: &Val) -> Result<bool, String> {
    let word = v.choice()?;
    let Some(limit) = ["lat:", "lat_slope:"]
        .iter()
        .find_map(|h| word.strip_prefix(h))
    else {
        return if word == "lat" || word == "lat_slope" {
            Err("the limit is missing (e.g. lat:5% or lat_slope:100us)".into())
        } else {
            Ok(false)
        };
    };
    let limit = limit.trim();
    match limit.strip_suffix('%') {
        Some(p) => crate::value::parse_float(p.trim()).map(drop)?,
        None => crate::value::parse_time_us(limit, 1).map(drop)?,
    }
    Ok(true)
}

/// `iops:10%` -> (criterion, slope, percent, limit), with fio's rules for the limit.
fn parse(v: &Val) -> Result<(SsCriterion, bool, bool, f64), String> {
    let word = v.choice()?;
    let (head, limit) = word
        .split_once(':')
        .ok_or("the limit is missing (e.g. iops:10% or bw_slope:1m)")?;
    let (crit, slope) = match head {
        "iops" => (SsCriterion::Iops, false),
        "iops_slope" => (SsCriterion::Iops, true),
        "bw" => (SsCriterion::Bw, false),
        _ => (SsCriterion::Bw, true),
    };
    let limit = limit.trim();
    if let Some(p) = limit.strip_suffix('%') {
        let f = crate::value::parse_float(p.trim())?;
        return Ok((crit, slope, true, f));
    }
    let f = match crit {
        SsCriterion::Iops => crate::value::parse_float(limit)?,
        SsCriterion::Bw => crate::value::parse_size(limit, v.kb_base)? as f64,
    };
    Ok((crit, slope, false, f))
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::testutil::*;
    use crate::SsCriterion;

    pub static CASES: &[Case] = &[
        (
            "steadystate",
            "iops:10%",
            Some(|j| {
                let s = &j.steadystate;
                s.criterion == SsCriterion::Iops && !s.slope && s.pct && s.limit == 10.0
            }),
        ),
        (
            "ss",
            "bw_slope:1m",
            Some(|j| j.steadystate.slope && !j.steadystate.pct && j.steadystate.limit == 1048576.0),
        ),
        ("ss", "iops", None),
        ("ss", "iops:x", None),
        (
            "steadystate_duration",
            "30",
            Some(|j| j.steadystate.dur_s == 30),
        ),
        ("ss_dur", "2m", Some(|j| j.steadystate.dur_s == 120)),
        (
            "steadystate_check_interval",
            "2",
            Some(|j| j.steadystate.interval_us == Some(2_000_000)),
        ),
        (
            "ss_interval",
            "3s",
            Some(|j| j.steadystate.interval_us == Some(3_000_000)),
        ),
        (
            "steadystate_ramp_time",
            "5",
            Some(|j| j.steadystate.ramp_us == 5_000_000),
        ),
    ];

    #[test]
    fn steadystate_options() {
        run(CASES);
    }
}
