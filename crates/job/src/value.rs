//! Value syntax shared by all options: sizes (with fio's `kb_base` rules and its inverted `KiB`
//! convention), percentages, times with per-option default units, integers (decimal, `0x` hex,
//! parenthesised arithmetic), booleans, ranges, per-direction triplets and `:`-separated lists.
//!
//! Every function returns `Err(String)` with a sentence fragment; callers add file/line/option.

/// The largest size or offset fio accepts: its values are signed 64-bit (`long long`), so a
/// larger one fails to parse there, and would wrap offset arithmetic here.
pub const MAX_SIZE: u64 = i64::MAX as u64;

/// Parse a byte size such as `4k`, `1.5g`, `0x1000`, `(2*4k)`, at most [`MAX_SIZE`].
pub fn parse_size(s: &str, kb_base: u32) -> Result<u64, String> {
    let v = match exact_size(s.trim(), kb_base)? {
        Some(v) => v,
        None => to_u64(parse_size_f(s, kb_base, false)?, s)?,
    };
    if v > MAX_SIZE {
        return Err(format!(
            "'{}' is too large: sizes and offsets are at most 2^63-1 ({MAX_SIZE}) bytes, as in fio",
            s.trim()
        ));
    }
    Ok(v)
}

/// A size as fio 3.33's `str_to_decimal` reads one where fiox's own syntax fails: `strtoll`
/// (base 16 when `0x` appears anywhere) then a unit taken from the first letters after the
/// digits (`k...` is kilo, whatever follows), and anything else after them ignored. Returns the
/// value and the text fio ignored (empty when nothing was). Errors where fio errors (no digits)
/// and where fio's value is not a size (negative, `%`, overflow).
pub fn fio_lenient_size(s: &str, kb_base: u32) -> Result<(u64, String), String> {
    let t = s.trim_start();
    let b = t.as_bytes();
    let hex = t.contains("0x") || t.contains("0X");
    let mut i = 0;
    let neg = matches!(b.first(), Some(b'-'));
    if matches!(b.first(), Some(b'-' | b'+')) {
        i += 1;
    }
    if hex
        && b.len() > i + 2
        && b[i] == b'0'
        && (b[i + 1] | 0x20) == b'x'
        && b[i + 2].is_ascii_hexdigit()
    {
        i += 2;
    }
    let radix = if hex { 16 } else { 10 };
    let d = b[i..]
        .iter()
        .take_while(|c| (*c).is_ascii_digit() || hex && c.is_ascii_hexdigit())
        .count();
    if d == 0 {
        return Err(format!("'{}' is not a number", s.trim()));
    }
    let n = u64::from_str_radix(&t[i..i + d], radix)
        .ok()
        .filter(|&n| n <= MAX_SIZE && !(neg && n > 0))
        .ok_or_else(|| format!("'{}' is not a size fio accepts", s.trim()))?;
    let mut end = i + d;
    // fio looks for the unit right after the decimal digits (for hex, after the leading 0).
    let unit_at = if hex {
        b[..end]
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == b'-' || **c == b'+')
            .count()
    } else {
        end
    };
    let mut mult = 1u64;
    if !hex || unit_at == end {
        let (m, used) = fio_unit(&t[unit_at..], kb_base);
        if t[unit_at..].starts_with('%') {
            return Err(format!("'{}' is a percentage, not a size", s.trim()));
        }
        mult = m;
        end = end.max(unit_at + used);
    }
    let v = n
        .checked_mul(mult)
        .filter(|&v| v <= MAX_SIZE)
        .ok_or_else(|| format!("'{}' is too large", s.trim()))?;
    Ok((v, t[end..].to_string()))
}

/// fio's `__get_mult_bytes` on the text after the digits: the multiplier and how many
/// characters of unit it recognised (its prefix tests: `kib`, then `kb`/`k`, per power).
fn fio_unit(u: &str, kb_base: u32) -> (u64, usize) {
    let l = u.to_ascii_lowercase();
    let Some(first) = l.bytes().next().filter(u8::is_ascii_alphabetic) else {
        return (1, 0);
    };
    let pow = match first {
        b'k' => 1,
        b'm' => 2,
        b'g' => 3,
        b't' => 4,
        b'p' => 5,
        _ => return (1, 0),
    };
    let base = u64::from(kb_base);
    let swapped: u64 = if kb_base == 1000 { 1024 } else { 1000 };
    if l[1..].starts_with("ib") {
        return (swapped.pow(pow), 3);
    }
    let used = if l[1..].starts_with('b') { 2 } else { 1 };
    (base.pow(pow), used)
}

/// Integer sizes (no fraction, no expression) computed exactly, so large hex offsets and
/// byte counts above 2^53 keep every bit. None: not a plain integer; use the float path.
fn exact_size(t: &str, kb_base: u32) -> Result<Option<u64>, String> {
    if t.starts_with(['(', '-', '+']) {
        return Ok(None);
    }
    let (num, suffix) = split_number(t);
    let n = if let Some(hex) = num.strip_prefix("0x").or_else(|| num.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if !num.is_empty() && num.bytes().all(|b| b.is_ascii_digit()) {
        num.parse::<u64>().ok()
    } else {
        None
    };
    let Some(n) = n else {
        return Ok(None);
    };
    let mult = size_multiplier(suffix, kb_base, t)?;
    n.checked_mul(mult)
        .map(Some)
        .ok_or_else(|| format!("'{t}' is too large"))
}

/// Parse a size or a percentage (`50%`) as used by `size=` and `offset=`.
pub fn parse_size_or_percent(s: &str, kb_base: u32) -> Result<crate::SizeSpec, String> {
    let t = s.trim();
    if let Some(num) = t.strip_suffix('%') {
        let p = parse_float(num)?;
        if !(0.0..=100.0).contains(&p) {
            return Err(format!("percentage '{t}' is outside 0%..100%"));
        }
        return Ok(crate::SizeSpec::Percent(p));
    }
    Ok(crate::SizeSpec::Bytes(parse_size(t, kb_base)?))
}

fn to_u64(v: f64, s: &str) -> Result<u64, String> {
    if !v.is_finite() || v < 0.0 {
        return Err(format!("'{}' is not a non-negative number", s.trim()));
    }
    if v >= u64::MAX as f64 {
        return Err(format!("'{}' is too large", s.trim()));
    }
    Ok(v as u64)
}

fn parse_size_f(s: &str, kb_base: u32, allow_neg: bool) -> Result<f64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty value where a size was expected".to_string());
    }
    if t.starts_with('(') {
        return eval_expr(t, &|term| parse_size_term(term, kb_base));
    }
    let v = parse_size_term(t, kb_base)?;
    if v < 0.0 && !allow_neg {
        return Err(format!("'{t}' is negative"));
    }
    Ok(v)
}

/// Split `4k` into (`4`, `k`), `0x10` into (`0x10`, ``).
fn split_number(t: &str) -> (&str, &str) {
    let bytes = t.as_bytes();
    let mut i = 0;
    if i < bytes.len() && (bytes[i] == b'-' || bytes[i] == b'+') {
        i += 1;
    }
    if t[i..].len() > 2 && (t[i..].starts_with("0x") || t[i..].starts_with("0X")) {
        i += 2;
        while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
            i += 1;
        }
        return (&t[..i], &t[i..]);
    }
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
        i += 1;
    }
    (&t[..i], &t[i..])
}

fn parse_number(num: &str, whole: &str) -> Result<f64, String> {
    let (neg, digits) = match num.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, num.strip_prefix('+').unwrap_or(num)),
    };
    let v = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16)
            .map(|v| v as f64)
            .map_err(|_| format!("'{whole}' is not a valid number"))?
    } else {
        if digits.is_empty() || digits == "." {
            return Err(format!("'{whole}' is not a valid number"));
        }
        digits
            .parse::<f64>()
            .map_err(|_| format!("'{whole}' is not a valid number"))?
    };
    Ok(if neg { -v } else { v })
}

/// One size term: number plus optional suffix.
fn parse_size_term(t: &str, kb_base: u32) -> Result<f64, String> {
    let t = t.trim();
    let (num, suffix) = split_number(t);
    let v = parse_number(num, t)?;
    Ok(v * size_multiplier(suffix, kb_base, t)? as f64)
}

/// fio's unit rules: with `kb_base=1024`, `k`/`kb` mean 1024 and `kib` means 1000 (fio inverts
/// IEC and SI for compatibility); `kb_base=1000` swaps them.
pub fn size_multiplier(suffix: &str, kb_base: u32, whole: &str) -> Result<u64, String> {
    let s = suffix.trim().to_ascii_lowercase();
    let (pow, iec) = match s.as_str() {
        "" | "b" => return Ok(1),
        "k" | "kb" => (1, false),
        "m" | "mb" => (2, false),
        "g" | "gb" => (3, false),
        "t" | "tb" => (4, false),
        "p" | "pb" => (5, false),
        "kib" => (1, true),
        "mib" => (2, true),
        "gib" => (3, true),
        "tib" => (4, true),
        "pib" => (5, true),
        _ => {
            return Err(format!(
                "bad size suffix '{}' in '{whole}' (expected k, m, g, t, p with optional b or ib)",
                suffix.trim()
            ))
        }
    };
    let base: u64 = match (kb_base, iec) {
        (1000, true) => 1024,
        (1000, false) => 1000,
        (_, true) => 1000,
        (_, false) => 1024,
    };
    Ok(base.pow(pow))
}

/// Parse a time into microseconds. `default_unit_us` is the multiplier for a bare number
/// (1_000_000 for options counted in seconds, 1 for options counted in microseconds).
pub fn parse_time_us(s: &str, default_unit_us: u64) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty value where a time was expected".to_string());
    }
    let v = if t.starts_with('(') {
        eval_expr(t, &|term| time_term(term, default_unit_us))?
    } else {
        time_term(t, default_unit_us)?
    };
    to_u64(v.round(), t)
}

fn time_term(t: &str, default_unit_us: u64) -> Result<f64, String> {
    let t = t.trim();
    let (num, suffix) = split_number(t);
    let v = parse_number(num, t)?;
    let mult: f64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" => default_unit_us as f64,
        "us" | "usec" => 1.0,
        "ms" | "msec" => 1e3,
        "s" | "sec" => 1e6,
        "m" | "min" => 60e6,
        "h" => 3600e6,
        "d" => 86400e6,
        other => {
            return Err(format!(
                "bad time suffix '{other}' in '{t}' (expected us, ms, s, m, h or d)"
            ))
        }
    };
    Ok(v * mult)
}

/// Parse an integer: decimal, `0x` hex, or a parenthesised expression. Size suffixes are
/// accepted as fio does for its integer options (`fsync=1k` is 1024).
pub fn parse_int(s: &str, kb_base: u32) -> Result<i64, String> {
    let t = s.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t),
    };
    if let Some(v) = exact_size(body, kb_base)? {
        let v = i64::try_from(v).map_err(|_| format!("'{t}' is out of range"))?;
        return Ok(if neg { -v } else { v });
    }
    let v = parse_size_f(s, kb_base, true)?;
    if !v.is_finite() || v.abs() >= i64::MAX as f64 {
        return Err(format!("'{}' is out of range", s.trim()));
    }
    Ok(v as i64)
}

/// Parse a floating point number (plain decimal).
pub fn parse_float(s: &str) -> Result<f64, String> {
    let t = s.trim();
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("'{t}' is not a valid number")),
    }
}

/// Parse a boolean: `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(format!("'{other}' is not a boolean (use 0 or 1)")),
    }
}

/// Split `read,write,trim`: `None` means "keep the default" for that direction. A value not
/// followed by a comma also applies to the directions after it (`bs=8k,32k` = 8k,32k,32k).
pub fn split_triplet(s: &str) -> Result<[Option<&str>; 3], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!(
            "'{s}' has {} comma-separated values; at most 3 (read,write,trim) are allowed",
            parts.len()
        ));
    }
    let mut out = [None, None, None];
    for (i, p) in parts.iter().enumerate() {
        if !p.is_empty() {
            out[i] = Some(*p);
        }
    }
    if let Some(last) = parts.last().filter(|p| !p.is_empty()) {
        for slot in out.iter_mut().skip(parts.len()) {
            *slot = Some(*last);
        }
    }
    Ok(out)
}

/// Split a range `a-b` or `a:b`. A single value gives `(a, a)`.
pub fn split_range(s: &str) -> (&str, &str) {
    let t = s.trim();
    // Skip a leading sign/`0x` so that hex and negative lower bounds still split correctly.
    if let Some(i) = t
        .char_indices()
        .skip(1)
        .find(|&(_, c)| c == '-' || c == ':')
    {
        return (t[..i.0].trim(), t[i.0 + 1..].trim());
    }
    (t, t)
}

/// Split a `:`-separated list where `\:` stands for a literal colon (fio's `filename=` syntax).
pub fn split_colon_list(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().filter(|p| !p.is_empty()).collect()
}

/// Evaluate `( ... )` arithmetic with `+ - * /`, parentheses, and terms parsed by `term`.
pub fn eval_expr(s: &str, term: &dyn Fn(&str) -> Result<f64, String>) -> Result<f64, String> {
    let mut p = ExprParser {
        src: s,
        pos: 0,
        term,
        depth: 0,
    };
    let v = p.expr()?;
    p.skip_ws();
    if p.pos != s.len() {
        return Err(format!("unexpected '{}' in expression '{s}'", &s[p.pos..]));
    }
    Ok(v)
}

struct ExprParser<'a> {
    src: &'a str,
    pos: usize,
    term: &'a dyn Fn(&str) -> Result<f64, String>,
    depth: u32,
}

impl ExprParser<'_> {
    fn skip_ws(&mut self) {
        while self.src[self.pos..].starts_with([' ', '\t']) {
            self.pos += 1;
        }
    }
    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.src[self.pos..].chars().next()
    }
    fn expr(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.pos += 1;
            let r = self.product()?;
            v = if op == '+' { v + r } else { v - r };
        }
        Ok(v)
    }
    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.atom()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.pos += 1;
            let r = self.atom()?;
            if op == '/' && r == 0.0 {
                return Err(format!("division by zero in '{}'", self.src));
            }
            v = if op == '*' { v * r } else { v / r };
        }
        Ok(v)
    }
    fn atom(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some('(') => {
                self.depth += 1;
                if self.depth > 64 {
                    return Err(format!("expression '{}' is nested too deeply", self.src));
                }
                self.pos += 1;
                let v = self.expr()?;
                if self.peek() != Some(')') {
                    return Err(format!("missing ')' in expression '{}'", self.src));
                }
                self.pos += 1;
                self.depth -= 1;
                Ok(v)
            }
            Some('-') => {
                self.pos += 1;
                Ok(-self.atom()?)
            }
            Some(_) => {
                let rest = &self.src[self.pos..];
                let len = rest
                    .find(|c: char| "+-*/() \t".contains(c))
                    .unwrap_or(rest.len());
                if len == 0 {
                    return Err(format!("unexpected '{rest}' in expression '{}'", self.src));
                }
                self.pos += len;
                (self.term)(&rest[..len])
            }
            None => Err(format!("expression '{}' ends too early", self.src)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SizeSpec;

    #[test]
    fn sizes_follow_kb_base() {
        for s in ["4k", "4K", "4kb", "4KB"] {
            assert_eq!(parse_size(s, 1024), Ok(4096), "{s}");
            assert_eq!(parse_size(s, 1000), Ok(4000), "{s}");
        }
        assert_eq!(parse_size("4KiB", 1024), Ok(4000));
        assert_eq!(parse_size("4KiB", 1000), Ok(4096));
        assert_eq!(parse_size("1m", 1024), Ok(1 << 20));
        assert_eq!(parse_size("1g", 1024), Ok(1 << 30));
        assert_eq!(parse_size("2t", 1024), Ok(2 << 40));
        assert_eq!(parse_size("1p", 1024), Ok(1 << 50));
        assert_eq!(parse_size("0x1000", 1024), Ok(4096));
        assert_eq!(parse_size("1.5k", 1024), Ok(1536));
        assert_eq!(parse_size("512", 1024), Ok(512));
        assert_eq!(parse_size("(4k*2+1)", 1024), Ok(8193));
        assert_eq!(
            parse_size("0x1234567890abcdef", 1024),
            Ok(0x1234567890abcdef)
        );
        assert_eq!(parse_size("9007199254740993", 1024), Ok(9007199254740993));
        assert!(parse_size("20000000p", 1024)
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert!(parse_size("4q", 1024)
            .unwrap_err()
            .contains("bad size suffix 'q'"));
        assert!(parse_size("", 1024).is_err());
        assert!(parse_size("k", 1024).is_err());
        assert!(parse_size("-4k", 1024).is_err());
        assert!(parse_size("(1/0)", 1024)
            .unwrap_err()
            .contains("division by zero"));
        assert!(parse_size("(1+", 1024).is_err());
        // fio: "failed parsing offset=18446744073709543424"; 2^63-1 itself is accepted.
        let e = parse_size("18446744073709543424", 1024).unwrap_err();
        assert!(e.contains("at most 2^63-1"), "{e}");
        assert!(parse_size("9223372036854775808", 1024).is_err());
        assert!(parse_size("0x8000000000000000", 1024).is_err());
        assert!(parse_size("8e", 1024).is_err(), "8 EiB is 2^63");
        assert_eq!(parse_size("9223372036854775807", 1024), Ok(MAX_SIZE));
    }

    #[test]
    fn percent_sizes() {
        assert_eq!(
            parse_size_or_percent("50%", 1024),
            Ok(SizeSpec::Percent(50.0))
        );
        assert_eq!(parse_size_or_percent("8k", 1024), Ok(SizeSpec::Bytes(8192)));
        assert!(parse_size_or_percent("150%", 1024).is_err());
    }

    #[test]
    fn times_use_default_unit() {
        assert_eq!(parse_time_us("10", 1_000_000), Ok(10_000_000));
        assert_eq!(parse_time_us("10", 1), Ok(10));
        assert_eq!(parse_time_us("10ms", 1), Ok(10_000));
        assert_eq!(parse_time_us("2m", 1), Ok(120_000_000));
        assert_eq!(parse_time_us("1h", 1), Ok(3_600_000_000));
        assert_eq!(parse_time_us("1d", 1), Ok(86_400_000_000));
        assert_eq!(parse_time_us("1.5", 1_000_000), Ok(1_500_000));
        assert_eq!(parse_time_us("5us", 1_000_000), Ok(5));
        assert!(parse_time_us("5x", 1)
            .unwrap_err()
            .contains("bad time suffix"));
    }

    #[test]
    fn ints_and_bools() {
        assert_eq!(parse_int("0x10", 1024), Ok(16));
        assert_eq!(parse_int("-3", 1024), Ok(-3));
        assert_eq!(parse_int("-2k", 1024), Ok(-2048));
        assert_eq!(parse_int("9007199254740993", 1024), Ok(9007199254740993));
        assert_eq!(parse_int("(2*3)", 1024), Ok(6));
        assert!(parse_int("abc", 1024).is_err());
        assert_eq!(parse_bool("1"), Ok(true));
        assert_eq!(parse_bool("off"), Ok(false));
        assert!(parse_bool("2").is_err());
    }

    #[test]
    fn triplets() {
        assert_eq!(split_triplet("4k"), Ok([Some("4k"); 3]));
        assert_eq!(
            split_triplet("8k,32k"),
            Ok([Some("8k"), Some("32k"), Some("32k")])
        );
        assert_eq!(
            split_triplet("8k,32k,"),
            Ok([Some("8k"), Some("32k"), None])
        );
        assert_eq!(split_triplet(",8k"), Ok([None, Some("8k"), Some("8k")]));
        assert_eq!(split_triplet(",8k,"), Ok([None, Some("8k"), None]));
        assert!(split_triplet("1,2,3,4").is_err());
    }

    #[test]
    fn ranges_and_lists() {
        assert_eq!(split_range("1k-4k"), ("1k", "4k"));
        assert_eq!(split_range("1k:4k"), ("1k", "4k"));
        assert_eq!(split_range("4k"), ("4k", "4k"));
        assert_eq!(split_colon_list("a:b"), vec!["a", "b"]);
        assert_eq!(split_colon_list(r"c\:x:d"), vec!["c:x", "d"]);
        assert_eq!(split_colon_list("/dev/sda"), vec!["/dev/sda"]);
    }
}
