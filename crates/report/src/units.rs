//! Number and unit formatting shared by every report: fio's `num2str` rule (a fixed number of
//! digits, then a k/M/G or Ki/Mi/Gi prefix with carry rounding), the choice between IEC and SI
//! prefixes from `kb_base`, bytes vs bits from `unit_base`, the per-line choice of
//! nsec/usec/msec, and the `ctime`-style dates fio prints.

/// Significant figures fio uses for sizes, rates and IOPS (`sig_figs` default).
pub const SIG_FIGS: usize = 4;

/// What a formatted number counts (fio's `N2S_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    None,
    PerSec,
    Byte,
    Bit,
    BytePerSec,
    BitPerSec,
}

impl Unit {
    fn suffix(self) -> &'static str {
        match self {
            Unit::None => "",
            Unit::PerSec => "/s",
            Unit::Byte => "B",
            Unit::Bit => "bit",
            Unit::BytePerSec => "B/s",
            Unit::BitPerSec => "bit/s",
        }
    }

    fn is_bits(self) -> bool {
        matches!(self, Unit::Bit | Unit::BitPerSec)
    }
}

const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// fio's `num2str`: print `num` (in units of `base`) with at most `maxlen` digits (the dot
/// counts), dividing by 1000 or 1024 (`pow2`) and adding a prefix until it fits, keeping as many
/// decimals of the last remainder as still fit. Reproduces fio's rounding quirks on purpose
/// (only the last remainder is used for decimals; a carry is applied only without decimals) so
/// the text matches fio's digit for digit.
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, unit: Unit) -> String {
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let prefixes = if pow2 { &IEC } else { &SI };
    let mut post = 0usize;
    let mut b = base;
    while b > 1 {
        b /= thousand;
        post += 1;
    }
    let mut num = if unit.is_bits() {
        num.wrapping_mul(8)
    } else {
        num
    };
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < prefixes.len() {
        if digits(num) <= maxlen {
            break;
        }
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post += 1;
    }
    if post >= prefixes.len() {
        post = 0;
    }
    let plain = |n: u64| format!("{n}{}{}", prefixes[post], unit.suffix());
    let Some(modulo) = modulo else {
        return plain(num);
    };
    let room = maxlen as i64 - digits(num) as i64;
    if room <= 1 {
        return plain(if carry { num + 1 } else { num });
    }
    let frac = format!(
        "{:.*}",
        (room - 1) as usize,
        modulo as f64 / thousand as f64
    );
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{}", &frac[2..], prefixes[post], unit.suffix())
}

fn digits(n: u64) -> usize {
    if n == 0 {
        1
    } else {
        n.ilog10() as usize + 1
    }
}

/// How a report scales data quantities: IEC or SI prefixes first (`kb_base`), bytes or bits for
/// rates (`unit_base`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Units {
    /// `kb_base` is a power of two (1024): IEC prefixes first, SI in parentheses.
    pub pow2: bool,
    pub rate_unit: Unit,
    /// The raw `kb_base` (1024 or 1000), used by bw sample rows.
    pub kb_base: u32,
    /// Digits of sizes, rates and IOPS (fio's `significant_figures`, default 4).
    pub sig_figs: usize,
}

impl Units {
    /// From the job/group options; `kb_base` 0 means the default 1024 and `unit_base` 1 means
    /// bits (0 and 8 mean bytes), as fio resolves them.
    pub fn new(kb_base: u32, unit_base: u32) -> Self {
        let kb_base = if kb_base == 0 { 1024 } else { kb_base };
        Units {
            pow2: kb_base.is_power_of_two(),
            rate_unit: if unit_base == 1 {
                Unit::BitPerSec
            } else {
                Unit::BytePerSec
            },
            kb_base,
            sig_figs: SIG_FIGS,
        }
    }

    /// With `significant_figures=n` (0 = fio's default 4).
    pub fn sig(mut self, n: u32) -> Self {
        if n > 0 {
            self.sig_figs = n as usize;
        }
        self
    }

    /// A plain count with an SI prefix (`27.4k`), for IOPS.
    pub fn count(&self, n: u64) -> String {
        num2str(n, self.sig_figs, 1, false, Unit::None)
    }

    /// A byte count in the primary prefix system (`214MiB`).
    pub fn bytes(&self, n: u64) -> String {
        num2str(n, self.sig_figs, 1, self.pow2, Unit::Byte)
    }

    /// A byte count in the other prefix system (`224MB`).
    pub fn bytes_alt(&self, n: u64) -> String {
        num2str(n, self.sig_figs, 1, !self.pow2, Unit::Byte)
    }

    /// A rate in bytes/s, primary prefix system (`107MiB/s`).
    pub fn rate(&self, bytes_per_sec: u64) -> String {
        num2str(bytes_per_sec, self.sig_figs, 1, self.pow2, self.rate_unit)
    }

    /// A rate in bytes/s, other prefix system (`112MB/s`).
    pub fn rate_alt(&self, bytes_per_sec: u64) -> String {
        num2str(bytes_per_sec, self.sig_figs, 1, !self.pow2, self.rate_unit)
    }

    /// fio's per-direction `BW=107MiB/s (112MB/s)(214MiB/2001msec)`.
    pub fn bw_summary(&self, io_bytes: u64, runtime_ms: u64) -> String {
        let bw = bytes_per_sec(io_bytes, runtime_ms);
        format!(
            "BW={} ({})({}/{}msec)",
            self.rate(bw),
            self.rate_alt(bw),
            self.bytes(io_bytes),
            runtime_ms
        )
    }
}

impl Default for Units {
    fn default() -> Self {
        Units::new(1024, 0)
    }
}

/// Integer bytes per second as fio computes it (`1000 * bytes / msec`); 0 without runtime.
pub fn bytes_per_sec(io_bytes: u64, runtime_ms: u64) -> u64 {
    if runtime_ms == 0 {
        0
    } else {
        ((io_bytes as u128 * 1000) / runtime_ms as u128) as u64
    }
}

/// IOPS as the integer fio prints in text formats.
pub fn iops_int(ios: u64, runtime_ms: u64) -> u64 {
    bytes_per_sec(ios, runtime_ms)
}

/// A plain count with at most 4 digits and an SI prefix (`27.4k`), for IOPS.
pub fn count(n: u64) -> String {
    num2str(n, SIG_FIGS, 1, false, Unit::None)
}

/// Unit fio picks for one latency line or percentile block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Nsec,
    Usec,
    Msec,
}

impl TimeUnit {
    pub fn label(self) -> &'static str {
        match self {
            TimeUnit::Nsec => "nsec",
            TimeUnit::Usec => "usec",
            TimeUnit::Msec => "msec",
        }
    }

    pub fn divisor(self) -> u64 {
        match self {
            TimeUnit::Nsec => 1,
            TimeUnit::Usec => 1_000,
            TimeUnit::Msec => 1_000_000,
        }
    }

    /// Unit of a `slat/clat/lat` line: scale down only when min, max and stdev are all large,
    /// so small minimums keep nanosecond precision (`clat (nsec): min=722, max=1830.9k`).
    pub fn for_stat_line(min: u64, max: u64, dev: f64) -> Self {
        if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
            TimeUnit::Msec
        } else if min > 2_000 && max > 99_999 && dev > 1_000.0 {
            TimeUnit::Usec
        } else {
            TimeUnit::Nsec
        }
    }

    /// Unit of a percentile block, from its smallest and largest value (ns).
    pub fn for_percentiles(minv: u64, maxv: u64) -> Self {
        if minv > 2_000_000 && maxv > 99_999_999 {
            TimeUnit::Msec
        } else if minv > 2_000 && maxv > 99_999 {
            TimeUnit::Usec
        } else {
            TimeUnit::Nsec
        }
    }
}

/// A date as C's `ctime` prints it, without the newline (`Sun Nov 22 05:04:54 2026`), in the
/// local time zone as fio prints it.
pub fn ctime(unix_secs: u64) -> String {
    ctime_in(unix_secs, crate::tz::local_zone())
}

/// [`ctime`] in a given zone.
pub fn ctime_in(unix_secs: u64, zone: &crate::tz::Zone) -> String {
    let t = i64::try_from(unix_secs).unwrap_or(i64::MAX);
    let local = t.saturating_add(i64::from(zone.offset_at(t)));
    ctime_utc(local.max(0) as u64)
}

/// [`ctime`] in UTC.
pub fn ctime_utc(unix_secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = unix_secs / 86_400;
    let rem = unix_secs % 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[(days % 7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        y
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_matches_fio_reference_strings() {
        // Figures taken from fio 3.33 output (randrw-libaio.normal.txt and others).
        assert_eq!(num2str(1_830_949, 6, 1, false, Unit::None), "1830.9k");
        assert_eq!(num2str(722, 6, 1, false, Unit::None), "722");
        assert_eq!(count(27_378), "27.4k");
        assert_eq!(count(8_192_000), "8192k");
        assert_eq!(count(26_531), "26.5k");
        let u = Units::default();
        assert_eq!(u.rate(112_074_731), "107MiB/s");
        assert_eq!(u.rate_alt(112_074_731), "112MB/s");
        assert_eq!(u.bytes(4096), "4096B");
        assert_eq!(u.bytes(131_072), "128KiB");
        assert_eq!(u.bytes(33_554_432), "32.0MiB");
        assert_eq!(u.bytes_alt(33_554_432), "33.6MB");
        assert_eq!(u.rate(99_086_456), "94.5MiB/s");
    }

    #[test]
    fn units_follow_kb_base_and_unit_base() {
        let si = Units::new(1000, 0);
        assert!(!si.pow2);
        assert_eq!(si.bytes(224_000_000), "224MB");
        assert_eq!(si.bytes_alt(224_000_000), "214MiB");
        let bits = Units::new(1024, 1);
        assert_eq!(bits.rate(1_000_000), "7813Kibit/s");
        assert_eq!(bits.rate_alt(1_000_000), "8000kbit/s");
    }

    #[test]
    fn bw_summary_shape() {
        let u = Units::default();
        // 214 MiB in 2001 ms as in the reference run.
        let s = u.bw_summary(224_403_456, 2001);
        assert_eq!(s, "BW=107MiB/s (112MB/s)(214MiB/2001msec)");
    }

    #[test]
    fn time_units_as_fio_picks_them() {
        assert_eq!(
            TimeUnit::for_stat_line(722, 1_830_949, 43_858.78),
            TimeUnit::Nsec
        );
        assert_eq!(
            TimeUnit::for_stat_line(22_000, 2_809_000, 55_630.0),
            TimeUnit::Usec
        );
        assert_eq!(
            TimeUnit::for_stat_line(3_000_000, 200_000_000, 2e6),
            TimeUnit::Msec
        );
        assert_eq!(TimeUnit::for_percentiles(71_000, 1_795_000), TimeUnit::Usec);
        assert_eq!(TimeUnit::for_percentiles(10, 948), TimeUnit::Nsec);
    }

    #[test]
    fn ctime_format() {
        assert_eq!(ctime_utc(1_795_323_896), "Sun Nov 22 05:04:56 2026");
        assert_eq!(ctime_utc(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime_utc(951_782_400), "Tue Feb 29 00:00:00 2000");
        let cet = crate::tz::Zone::parse(&crate::tz::tests_sample()).unwrap();
        assert_eq!(ctime_in(1_767_225_600, &cet), "Thu Jan  1 01:00:00 2026");
        assert_eq!(ctime_in(1_795_323_896, &cet), "Sun Nov 22 07:04:56 2026");
    }
}
