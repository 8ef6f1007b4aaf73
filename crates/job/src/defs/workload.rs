//! Random offsets, buffer contents, rate limits, think time and zones.

use super::{Category as C, Kind as K, OptDef};
use crate::value;
use crate::{DedupeMode, PerDir, RandomDistribution, RandomGenerator, RateProcess, Zone, ZoneMode};

pub(super) static OPTS: &[OptDef] = &[
    OptDef::new("randrepeat", K::Bool, C::Random, "Same random offsets on every run", |j, v| {
        j.rand.randrepeat = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("allrandrepeat", K::Bool, C::Random, "Seed every random generator repeatably", |j, v| {
        j.rand.allrandrepeat = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("randseed", K::Int, C::Random, "Seed for the random generators", |j, v| {
        j.rand.randseed = v.u64()?;
        Ok(())
    })
    .def("0x89"),
    OptDef::new("norandommap", K::Bool, C::Random, "Do not track visited blocks (random offsets may repeat)", |j, v| {
        j.rand.norandommap = v.bool()?;
        Ok(())
    }),
    OptDef::new("softrandommap", K::Bool, C::Random, "Run without the random map when it cannot be allocated", |j, v| {
        j.rand.softrandommap = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("A file whose random map does not fit in memory (one bit per block) is then done as with norandommap; without it such a job fails, as fio's does."),
    OptDef::new("rw_sequencer", K::Choice(&["sequential", "identical"]), C::Random, "What the I/Os between new random offsets of rw=randX:N do", |j, v| {
        j.rand.rw_seq_identical = v.choice()? == "identical";
        Ok(())
    })
    .def("sequential")
    .long("With rw=randread:8, a new random offset is drawn every 8 I/Os; the 7 between continue sequentially from it (`sequential`) or repeat it (`identical`). No effect without :N or on sequential modes."),
    OptDef::new("random_generator", K::Choice(&["tausworthe", "lfsr", "tausworthe64"]), C::Random, "Random number generator", |j, v| {
        j.rand.generator = match v.choice()?.as_str() {
            "lfsr" => RandomGenerator::Lfsr,
            "tausworthe64" => RandomGenerator::Tausworthe64,
            _ => RandomGenerator::Tausworthe,
        };
        Ok(())
    })
    .def("tausworthe"),
    OptDef::new("random_distribution", K::Choice(&["random", "zipf", "pareto", "normal", "gauss", "zoned", "zoned_abs", "sequence"]), C::Random, "Distribution of random offsets", |j, v| {
        super::forget(j, "random_distribution");
        if let Some(seq) = v.raw.trim().to_ascii_lowercase().strip_prefix("sequence") {
            check_sequence(seq)?;
            super::record_value(j, "random_distribution", v.raw, "fio master's fixed sequence of blocks");
            return Ok(());
        }
        let (dist, center) = parse_distribution(v.raw.trim(), v.kb_base)?;
        j.rand.distribution = dist;
        j.rand.distribution_center = center;
        Ok(())
    })
    .def("random")
    .long("`zipf:θ` (θ ≠ 1), `pareto:h` (0<h<1), `normal:σ` (σ in % of the range) with an optional `:center` in 0..1; `zoned:pct/size%:...` and `zoned_abs:pct/size:...`, per direction separated by commas, access shares adding up to 100."),
    OptDef::new("percentage_random", K::Complex("pct[,pct][,pct]"), C::Random, "Percent of random I/O in a random job, per direction", |j, v| {
        for (d, p) in crate::Ddir::ALL.into_iter().zip(value::split_triplet(v.raw)?) {
            if let Some(p) = p {
                let n = value::parse_int(p, 1024)?;
                if !(0..=100).contains(&n) {
                    return Err(format!("{n} is outside 0..100"));
                }
                *j.rand.percentage_random.get_mut(d) = n as u32;
            }
        }
        Ok(())
    })
    .def("100"),
    OptDef::new("percentage_sequential", K::Str, C::Random, "Deprecated: fio 3.33 refuses it", |_, _| {
        Err(deprecated("percentage_sequential", "use percentage_random=100-N instead"))
    })
    .long("fio 3.33 marks it deprecated and fails the job (\"Option percentage_sequential is deprecated\"); fiox refuses it the same way."),
    OptDef::new("rwmixcycle", K::Str, C::Io, "Deprecated: fio 3.33 refuses it", |_, _| {
        Err(deprecated("rwmixcycle", "remove it (rwmixread/rwmixwrite set the mix)"))
    })
    .long("fio 3.33 marks it deprecated and fails the job (\"Option rwmixcycle is deprecated\"); fiox refuses it the same way."),
    OptDef::new("zero_buffers", K::Bool, C::Buffers, "Fill buffers with zeroes", |j, v| {
        j.buffers.zero_buffers = v.bool()?;
        Ok(())
    }),
    OptDef::new("refill_buffers", K::Bool, C::Buffers, "Refill buffers with new data on every submit", |j, v| {
        j.buffers.refill_buffers = v.bool()?;
        Ok(())
    }),
    OptDef::new("scramble_buffers", K::Bool, C::Buffers, "Lightly scramble buffers on every submit", |j, v| {
        j.buffers.scramble_buffers = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("buffer_compress_percentage", K::Int, C::Buffers, "Make buffers about this compressible", |j, v| {
        j.buffers.compress_percentage = Some(v.u32()?);
        Ok(())
    })
    .range(0, 100),
    OptDef::new("buffer_compress_chunk", K::Size, C::Buffers, "Size of the compressible runs", |j, v| {
        j.buffers.compress_chunk = v.size()?;
        Ok(())
    })
    .def("512")
    .range(1, 1 << 30),
    OptDef::new("buffer_pattern", K::Complex("pattern: 0xHEX, \"text\", decimal, 'file', concatenated"), C::Buffers, "Fill buffers with this byte pattern", |j, v| {
        super::forget(j, "buffer_pattern");
        j.buffers.pattern = parse_pattern(v.raw.trim())?;
        Ok(())
    })
    .long("'file' parts read the file's first bytes, as many as still fit in fio's 512-byte pattern (the rest is ignored, as in fio); the name is relative to the working directory. An empty or unreadable file is an error."),
    OptDef::new("dedupe_percentage", K::Int, C::Buffers, "Percent of buffers that repeat earlier ones", |j, v| {
        j.buffers.dedupe_percentage = v.u32()?;
        Ok(())
    })
    .def("0")
    .range(0, 100),
    OptDef::new("dedupe_mode", K::Choice(&["repeat", "working_set"]), C::Buffers, "What a deduplicated buffer repeats", |j, v| {
        j.buffers.dedupe_mode = match v.choice()?.as_str() {
            "working_set" => DedupeMode::WorkingSet,
            _ => DedupeMode::Repeat,
        };
        Ok(())
    })
    .def("repeat")
    .long("As fio: `repeat` repeats the last unique buffer; `working_set` repeats a page drawn at random from a working set of dedupe_working_set_percentage of `size` (which must be given), generated up front from the buffer stream."),
    OptDef::new("dedupe_working_set_percentage", K::Int, C::Buffers, "Share of size the dedupe working set covers", |j, v| {
        j.buffers.dedupe_working_set_percentage = v.u32()?;
        Ok(())
    })
    .def("5")
    .range(0, 100),
    OptDef::new("dedupe_global", K::Bool, C::Buffers, "Share the dedupe working set across jobs", |j, v| {
        j.buffers.dedupe_global = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("With dedupe_mode=working_set: the pages of the working set are taken in turn from the buffer streams of every job of the run, as fio does, so jobs repeat each other's data."),
    OptDef::new("rate", K::Complex("size/s[,size/s][,size/s]"), C::Rate, "Bandwidth cap in bytes/s, per direction", |j, v| {
        set_rates(&mut j.pacing.rate, v.raw, v.kb_base, true)
    })
    .long("Suffixes as for sizes (`rate=10m` is 10 MiB/s); 0 means no cap."),
    OptDef::new("rate_min", K::Complex("size/s[,size/s][,size/s]"), C::Rate, "Fail the job if bandwidth drops below this", |j, v| {
        set_rates(&mut j.pacing.rate_min, v.raw, v.kb_base, true)
    })
    .alias(&["ratemin"]),
    OptDef::new("rate_iops", K::Complex("iops[,iops][,iops]"), C::Rate, "IOPS cap, per direction", |j, v| {
        set_rates(&mut j.pacing.rate_iops, v.raw, v.kb_base, false)
    }),
    OptDef::new("rate_iops_min", K::Complex("iops[,iops][,iops]"), C::Rate, "Fail the job if IOPS drop below this", |j, v| {
        set_rates(&mut j.pacing.rate_iops_min, v.raw, v.kb_base, false)
    }),
    OptDef::new("rate_process", K::Choice(&["linear", "poisson"]), C::Rate, "Spacing of rate-limited I/O", |j, v| {
        j.pacing.rate_process = if v.choice()? == "poisson" { RateProcess::Poisson } else { RateProcess::Linear };
        Ok(())
    })
    .def("linear"),
    OptDef::new("rate_cycle", K::Time("ms"), C::Rate, "Averaging window for rate_min checks", |j, v| {
        j.pacing.rate_cycle = v.duration()?;
        Ok(())
    })
    .alias(&["ratecycle"])
    .def("1000"),
    OptDef::new("thinktime", K::Time("us"), C::Rate, "Pause between I/Os", |j, v| {
        j.pacing.thinktime = v.duration()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("thinktime_spin", K::Time("us"), C::Rate, "Busy-wait this part of thinktime", |j, v| {
        j.pacing.thinktime_spin = v.duration()?;
        Ok(())
    })
    .def("0")
    .long("Capped at thinktime."),
    OptDef::new("thinktime_blocks", K::Int, C::Rate, "I/Os between think times", |j, v| {
        j.pacing.thinktime_blocks = v.u32()?;
        j.pacing.thinktime_blocks_set = true;
        Ok(())
    })
    .def("1")
    .range(1, u32::MAX as i64),
    OptDef::new("thinktime_blocks_type", K::Choice(&["complete", "issue"]), C::Rate, "Count completed or issued I/Os toward thinktime_blocks", |j, v| {
        j.pacing.thinktime_blocks_issue = v.choice()? == "issue";
        Ok(())
    })
    .def("complete"),
    OptDef::new("thinktime_iotime", K::Time("s"), C::Rate, "Think after this long of I/O", |j, v| {
        j.pacing.thinktime_iotime = v.duration()?;
        Ok(())
    })
    .def("0")
    .long("Repeats a cycle of this long of I/O, then thinktime. With thinktime_blocks also given, whichever comes first starts the think time (as fio: without it, the default thinktime_blocks=1 is not used)."),
    OptDef::new("thinkcycles", K::Int, C::Rate, "Spin this many CPU cycles after each I/O (fio 3.42)", |j, v| {
        j.pacing.thinkcycles = v.u32()?;
        Ok(())
    })
    .def("0")
    .long("fio 3.42's option: after each read, write or trim is issued the job busy-waits for this many CPU pause instructions (fio's cycles_spin), apart from and before any thinktime."),
    OptDef::new("rate_ignore_thinktime", K::Bool, C::Rate, "Do not catch up on the rate after a think time", |j, v| {
        j.pacing.rate_ignore_thinktime = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("By default a rate-limited job issues faster after a think time until it is back on its rate; with this, the time spent thinking is not made up."),
    OptDef::new("zonemode", K::Choice(&["none", "strided", "zbd"]), C::Io, "How zonesize/zonerange/zoneskip divide the file", |j, v| {
        super::forget(j, "zonemode");
        j.zone.mode = match v.choice()?.as_str() {
            "strided" => ZoneMode::Strided,
            "zbd" => {
                // Zoned block devices: parsed; the job fails when run (EINVAL, as fio 3.33 on a
                // file smaller than a zone), see JobSpec::zoned.
                super::record_value(j, "zonemode", "zbd", super::unsupported::ZONED);
                ZoneMode::None
            }
            _ => ZoneMode::None,
        };
        Ok(())
    })
    .def("none"),
    OptDef::new("zonesize", K::Size, C::Io, "Bytes of I/O per zone", |j, v| {
        j.zone.size = v.size()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("zonerange", K::Size, C::Io, "Size of each zone", |j, v| {
        j.zone.range = v.size()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("zoneskip", K::Size, C::Io, "Bytes skipped after each zone", |j, v| {
        j.zone.skip = v.size()?;
        Ok(())
    })
    .def("0"),
];

/// fio 3.33's hard-deprecated options: fio prints "Option NAME is deprecated" and fails the
/// job file, so fiox refuses them too (as a parse error, not as "not supported yet").
fn deprecated(name: &str, instead: &str) -> String {
    format!("option {name} is deprecated: fio 3.33 fails parsing it and drops the job; {instead}")
}

fn set_rates(out: &mut PerDir<u64>, raw: &str, kb_base: u32, bytes: bool) -> Result<(), String> {
    for (d, p) in crate::Ddir::ALL.into_iter().zip(value::split_triplet(raw)?) {
        if let Some(p) = p {
            *out.get_mut(d) = if bytes {
                value::parse_size(p, kb_base)?
            } else {
                let n = value::parse_int(p, kb_base)?;
                u64::try_from(n).map_err(|_| format!("{n} is negative"))?
            };
        }
    }
    Ok(())
}

/// Parse a `random_distribution` value.
pub fn parse_distribution(
    s: &str,
    kb_base: u32,
) -> Result<(RandomDistribution, Option<f64>), String> {
    let lower = s.to_ascii_lowercase();
    let (head, rest) = match lower.split_once(':') {
        Some((h, r)) => (h, Some(r)),
        None => (lower.as_str(), None),
    };
    match head {
        "random" => Ok((RandomDistribution::Random, None)),
        "zipf" | "pareto" | "normal" | "gauss" => {
            let rest = rest.ok_or_else(|| format!("{head} needs a parameter ({head}:x)"))?;
            let (p, center) = match rest.split_once(':') {
                Some((p, c)) => {
                    let c = value::parse_float(c)?;
                    if !(0.0..=1.0).contains(&c) {
                        return Err(format!("center {c} is outside 0..1"));
                    }
                    (value::parse_float(p)?, Some(c))
                }
                None => (value::parse_float(rest)?, None),
            };
            let d = match head {
                "zipf" if p <= 0.0 || p == 1.0 => {
                    return Err(format!("zipf theta must be above 0 and not 1 (got {p})"))
                }
                "zipf" => RandomDistribution::Zipf(p),
                "pareto" if p <= 0.0 || p >= 1.0 => {
                    return Err(format!("pareto h must be between 0 and 1 (got {p})"))
                }
                "pareto" => RandomDistribution::Pareto(p),
                _ if !(0.0..=100.0).contains(&p) => {
                    return Err(format!("normal deviation must be within 0..100 (got {p})"))
                }
                _ => RandomDistribution::Normal(p),
            };
            Ok((d, center))
        }
        "zoned" | "zoned_abs" => {
            let abs = head == "zoned_abs";
            let rest = rest.ok_or_else(|| format!("{head} needs zones ({head}:pct/size:...)"))?;
            let zones = parse_zones(rest, abs, kb_base)?;
            Ok((
                if abs {
                    RandomDistribution::ZonedAbs(zones)
                } else {
                    RandomDistribution::Zoned(zones)
                },
                None,
            ))
        }
        other => Err(format!(
            "'{other}' is not one of random, zipf, pareto, normal, zoned, zoned_abs, sequence"
        )),
    }
}

/// fio's most elements in a `sequence:` distribution (FIO_SEQ_MAX).
const SEQUENCE_MAX: usize = 64;

/// fio master's `sequence:N,N,...` (block indexes, non-negative, at most [`SEQUENCE_MAX`]);
/// `rest` is what follows the word `sequence`.
fn check_sequence(rest: &str) -> Result<(), String> {
    let list = rest
        .strip_prefix(':')
        .ok_or("sequence needs block indexes (sequence:N,N,...)")?;
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    if items.len() > SEQUENCE_MAX {
        return Err(format!(
            "a sequence has at most {SEQUENCE_MAX} elements (found {})",
            items.len()
        ));
    }
    for n in items {
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || n.parse::<u32>().is_err() {
            return Err(format!(
                "'{n}' in the sequence is not a block index (0, 1, 2, ...)"
            ));
        }
    }
    Ok(())
}

/// Per-direction zone lists; a direction without its own list reuses read's.
fn parse_zones(s: &str, abs: bool, kb_base: u32) -> Result<PerDir<Vec<Zone>>, String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() > 3 {
        return Err("at most 3 comma-separated zone lists (read,write,trim) are allowed".into());
    }
    let mut lists = Vec::new();
    for part in &parts {
        let mut zones: Vec<Zone> = Vec::new();
        let items: Vec<&str> = part
            .split(':')
            .map(str::trim)
            .filter(|z| !z.is_empty())
            .collect();
        for (i, z) in items.iter().enumerate() {
            let (a, b) = z
                .split_once('/')
                .ok_or_else(|| format!("zone '{z}' is not pct/size"))?;
            let access_pct = value::parse_float(a)?;
            let size = if b.trim().is_empty() && !abs && i + 1 == items.len() {
                // fio: a blank size on the last zone takes the rest of the file.
                100.0 - zones.iter().map(|z| z.size).sum::<f64>()
            } else if abs {
                value::parse_size(b, kb_base)? as f64
            } else {
                value::parse_float(b.trim().trim_end_matches('%'))?
            };
            zones.push(Zone { access_pct, size });
        }
        let total: f64 = zones.iter().map(|z| z.access_pct).sum();
        if (total - 100.0).abs() > 1e-9 {
            return Err(format!("zone access shares add up to {total}%, not 100%"));
        }
        if !abs && zones.iter().map(|z| z.size).sum::<f64>() > 100.0 + 1e-9 {
            return Err("zone sizes add up to more than 100% of the file".into());
        }
        lists.push(zones);
    }
    let read = lists[0].clone();
    let write = lists.get(1).cloned().unwrap_or_else(|| read.clone());
    let trim = lists.get(2).cloned().unwrap_or_else(|| read.clone());
    Ok(PerDir { read, write, trim })
}

/// fio's pattern syntax (fio 3.33's lib/pattern.c): `0x` hex bytes, `"text"`, decimal
/// integers (little-endian, minimal length), `'file'` contents, concatenated without
/// separators. No `%` formats (fio refuses them in `buffer_pattern`).
pub fn parse_pattern(s: &str) -> Result<Vec<u8>, String> {
    parse_fio_pattern(s, None).map(|(b, _)| b)
}

/// Longest pattern fio accepts (its MAX_PATTERN_SIZE).
pub const MAX_PATTERN: usize = 512;

/// fio's `parse_and_fill_pattern`: the bytes, and for each `format` (such as `%o`) found the
/// position of the `len` zero bytes it reserves. `formats` None: any `%` is an error.
pub fn parse_fio_pattern(
    s: &str,
    formats: Option<(&str, usize, usize)>,
) -> Result<(Vec<u8>, Vec<usize>), String> {
    let mut out = Vec::new();
    let mut at = Vec::new();
    let mut rest = s;
    if rest.is_empty() {
        return Err("empty pattern".into());
    }
    while !rest.is_empty() {
        let before = out.len();
        rest = match rest.as_bytes()[0] {
            b'"' => {
                let r = &rest[1..];
                let end = r.find('"').ok_or("unterminated \"string\" in pattern")?;
                if end == 0 {
                    return Err("an empty \"\" string in a pattern (fio aborts on it)".into());
                }
                out.extend_from_slice(&r.as_bytes()[..end]);
                &r[end + 1..]
            }
            b'\'' => {
                let r = &rest[1..];
                let end = r.find('\'').ok_or("unterminated 'file name' in pattern")?;
                out.extend(pattern_file(&r[..end], MAX_PATTERN - out.len())?);
                &r[end + 1..]
            }
            b'%' => {
                let Some((fmt, len, max)) = formats else {
                    return Err("pattern formats such as %o are not allowed here (fio refuses them in buffer_pattern)".into());
                };
                if !rest.starts_with(fmt) {
                    return Err(format!(
                        "unknown pattern format '{}': the only format is {fmt} (the offset of each write)",
                        rest.chars().take(2).collect::<String>()
                    ));
                }
                if at.len() == max {
                    return Err(format!("at most {max} {fmt} formats fit in a pattern"));
                }
                at.push(out.len());
                out.extend(std::iter::repeat_n(0u8, len));
                &rest[fmt.len()..]
            }
            _ => {
                let (bytes, used) = pattern_number(rest)?;
                out.extend(bytes);
                &rest[used..]
            }
        };
        if out.len() > MAX_PATTERN {
            return Err(format!(
                "pattern longer than fio's {MAX_PATTERN} bytes ({} bytes)",
                out.len()
            ));
        }
        if out.len() == before {
            // fio asserts (aborts) on a part that fills nothing, such as 0x0x1.
            return Err(format!("'{s}': a part of the pattern gives no bytes"));
        }
    }
    Ok((out, at))
}

/// The bytes of a `'file'` part: the first `room` bytes of the file (fio reads what still
/// fits in its 512-byte pattern and ignores the rest). The name is used as written, relative
/// to the working directory, as fio opens it.
fn pattern_file(name: &str, room: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    if room == 0 {
        return Err(format!(
            "'{name}': the pattern already holds fio's {MAX_PATTERN} bytes, no room for the file"
        ));
    }
    let file =
        std::fs::File::open(name).map_err(|e| format!("cannot open pattern file '{name}': {e}"))?;
    let mut bytes = Vec::with_capacity(room);
    file.take(room as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read pattern file '{name}': {e}"))?;
    if bytes.is_empty() {
        // fio asserts (aborts) on a part that fills nothing.
        return Err(format!("pattern file '{name}' is empty"));
    }
    Ok(bytes)
}

/// One number of a pattern at the start of `s`: its bytes and how many characters it used.
/// Hex (`0x` then digits, big-endian digit order, an odd count giving a leading nibble byte;
/// a trailing `0` followed by `x` starts the next number, as in `0xff0x14`) or decimal in
/// [-2^31, 2^31) as its low non-zero bytes, little-endian. A decimal ends where the next `0x`
/// anywhere later in the value begins (fio looks ahead for it: `-120xab` is -12 then 0xab),
/// and fio refuses a decimal when that `0x` is 24 or more characters away.
fn pattern_number(s: &str) -> Result<(Vec<u8>, usize), String> {
    let b = s.as_bytes();
    let hex_prefix = b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x';
    let digits = if hex_prefix {
        b[2..].iter().take_while(|c| c.is_ascii_hexdigit()).count()
    } else {
        0
    };
    let bad = || format!("'{s}' is not a valid pattern");
    if digits > 0 {
        let mut n = digits;
        if b.get(2 + n).is_some_and(|&c| c | 0x20 == b'x') && b[1 + n] == b'0' {
            n -= 1;
        }
        let hex = &s[2..2 + n];
        let mut out = Vec::with_capacity(n.div_ceil(2));
        let (head, tail) = hex.split_at(n % 2);
        if !head.is_empty() {
            out.push(u8::from_str_radix(head, 16).map_err(|_| bad())?);
        }
        for i in (0..tail.len()).step_by(2) {
            out.push(u8::from_str_radix(&tail[i..i + 2], 16).map_err(|_| bad())?);
        }
        return Ok((out, 2 + n));
    }
    // Decimal: strtol over the characters before the next "0x" (fio's strntol when one
    // follows, which skips leading spaces and refuses 24 characters or more).
    let lookahead = s.to_ascii_lowercase().find("0x").filter(|&i| i > 0);
    let (start, limit) = match lookahead {
        Some(i) => {
            let spaces = b[..i].iter().take_while(|&&c| c == b' ').count();
            let sz = i - spaces;
            if sz == 0 || sz >= 24 {
                return Err(bad());
            }
            (spaces, i)
        }
        None => (0, s.len()),
    };
    let (val, used) = strtol(&s[start..limit]).ok_or_else(bad)?;
    let used = start + used;
    if used == 0 || val > i64::from(i32::MAX) || val < i64::from(i32::MIN) {
        return Err(bad());
    }
    let mut u = val as i32 as u32;
    let mut out = Vec::new();
    if u == 0 {
        out.push(0);
    }
    while u != 0 {
        out.push((u & 0xff) as u8);
        u >>= 8;
    }
    Ok((out, used))
}

/// C's strtol in base 10: leading whitespace, a sign, digits (saturating like strtol). The
/// value and the characters used, None when no digit follows.
fn strtol(s: &str) -> Option<(i64, usize)> {
    let b = s.as_bytes();
    let mut i = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let d = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    if d == 0 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in &b[i..i + d] {
        let x = i64::from(c - b'0');
        v = if neg {
            v.saturating_mul(10).saturating_sub(x)
        } else {
            v.saturating_mul(10).saturating_add(x)
        };
    }
    Some((v, i + d))
}

#[cfg(test)]
pub(super) use tests::CASES;

#[cfg(test)]
mod tests {
    use super::super::testutil::{run, Case};
    use super::*;
    use std::time::Duration;

    pub static CASES: &[Case] = &[
        ("randrepeat", "0", Some(|j| !j.rand.randrepeat)),
        ("allrandrepeat", "1", Some(|j| j.rand.allrandrepeat)),
        ("randseed", "1234", Some(|j| j.rand.randseed == 1234)),
        ("randseed", "-1", None),
        ("norandommap", "", Some(|j| j.rand.norandommap)),
        ("softrandommap", "1", Some(|j| j.rand.softrandommap)),
        (
            "rw_sequencer",
            "identical",
            Some(|j| j.rand.rw_seq_identical),
        ),
        ("rw_sequencer", "random", None),
        (
            "random_generator",
            "lfsr",
            Some(|j| j.rand.generator == RandomGenerator::Lfsr),
        ),
        ("random_generator", "mt", None),
        (
            "random_distribution",
            "zipf:1.2",
            Some(|j| j.rand.distribution == RandomDistribution::Zipf(1.2)),
        ),
        ("random_distribution", "zipf:1", None),
        (
            "random_distribution",
            "pareto:0.5:0.25",
            Some(|j| {
                j.rand.distribution == RandomDistribution::Pareto(0.5)
                    && j.rand.distribution_center == Some(0.25)
            }),
        ),
        ("random_distribution", "pareto:2", None),
        (
            "random_distribution",
            "normal:10",
            Some(|j| j.rand.distribution == RandomDistribution::Normal(10.0)),
        ),
        (
            "random_distribution",
            "gauss:5",
            Some(|j| j.rand.distribution == RandomDistribution::Normal(5.0)),
        ),
        (
            "random_distribution",
            "zoned:60/10:30/20:10/70",
            Some(
                |j| matches!(&j.rand.distribution, RandomDistribution::Zoned(z) if z.read.len() == 3 && z.write == z.read),
            ),
        ),
        ("random_distribution", "zoned:50/10:40/90", None),
        (
            "random_distribution",
            "zoned:50/5:30/15:20/",
            Some(
                |j| matches!(&j.rand.distribution, RandomDistribution::Zoned(z) if z.read[2].size == 80.0),
            ),
        ),
        (
            "random_distribution",
            "zoned_abs:60/20g:40/100g",
            Some(
                |j| matches!(&j.rand.distribution, RandomDistribution::ZonedAbs(z) if z.read[0].size == (20u64 << 30) as f64),
            ),
        ),
        (
            "random_distribution",
            "random",
            Some(|j| j.rand.distribution == RandomDistribution::Random),
        ),
        ("random_distribution", "lumpy", None),
        (
            "percentage_random",
            "80,20",
            Some(|j| {
                j.rand.percentage_random
                    == PerDir {
                        read: 80,
                        write: 20,
                        trim: 20,
                    }
            }),
        ),
        ("percentage_random", "101", None),
        ("percentage_sequential", "50", None),
        ("rwmixcycle", "50", None),
        ("zero_buffers", "", Some(|j| j.buffers.zero_buffers)),
        ("refill_buffers", "", Some(|j| j.buffers.refill_buffers)),
        (
            "scramble_buffers",
            "0",
            Some(|j| !j.buffers.scramble_buffers),
        ),
        (
            "buffer_compress_percentage",
            "50",
            Some(|j| j.buffers.compress_percentage == Some(50)),
        ),
        ("buffer_compress_percentage", "101", None),
        (
            "buffer_compress_chunk",
            "4k",
            Some(|j| j.buffers.compress_chunk == 4096),
        ),
        (
            "buffer_pattern",
            "0xdeadbeef",
            Some(|j| j.buffers.pattern == vec![0xde, 0xad, 0xbe, 0xef]),
        ),
        (
            "buffer_pattern",
            "\"ab\"0x1",
            Some(|j| j.buffers.pattern == vec![b'a', b'b', 1]),
        ),
        (
            "buffer_pattern",
            "258",
            Some(|j| j.buffers.pattern == vec![2, 1]),
        ),
        ("buffer_pattern", "\"open", None),
        (
            "dedupe_mode",
            "working_set",
            Some(|j| j.buffers.dedupe_mode == DedupeMode::WorkingSet),
        ),
        ("dedupe_mode", "sometimes", None),
        (
            "dedupe_working_set_percentage",
            "30",
            Some(|j| j.buffers.dedupe_working_set_percentage == 30),
        ),
        ("dedupe_working_set_percentage", "101", None),
        ("dedupe_global", "1", Some(|j| j.buffers.dedupe_global)),
        ("buffer_pattern", "'/nonexistent/pattern.bin'", None),
        ("buffer_pattern", "'unterminated", None),
        ("buffer_pattern", "'/dev/null'", None),
        (
            "buffer_pattern",
            "0xab'/dev/zero'",
            Some(|j| j.buffers.pattern.len() == 512 && j.buffers.pattern[..2] == [0xab, 0]),
        ),
        ("buffer_pattern", "'/dev/zero'0x1", None),
        (
            "dedupe_percentage",
            "10",
            Some(|j| j.buffers.dedupe_percentage == 10),
        ),
        (
            "rate",
            "10m",
            Some(|j| j.pacing.rate == PerDir::all(10 << 20)),
        ),
        (
            "rate",
            "1m,2m",
            Some(|j| j.pacing.rate.read == 1 << 20 && j.pacing.rate.write == 2 << 20),
        ),
        ("rate_min", "1k", Some(|j| j.pacing.rate_min.read == 1024)),
        ("ratemin", "2k", Some(|j| j.pacing.rate_min.write == 2048)),
        (
            "rate_iops",
            "500",
            Some(|j| j.pacing.rate_iops == PerDir::all(500)),
        ),
        ("rate_iops", "-5", None),
        (
            "rate_iops_min",
            "100",
            Some(|j| j.pacing.rate_iops_min.read == 100),
        ),
        (
            "rate_process",
            "poisson",
            Some(|j| j.pacing.rate_process == RateProcess::Poisson),
        ),
        (
            "rate_cycle",
            "500",
            Some(|j| j.pacing.rate_cycle == Duration::from_millis(500)),
        ),
        (
            "ratecycle",
            "2s",
            Some(|j| j.pacing.rate_cycle == Duration::from_secs(2)),
        ),
        (
            "thinktime",
            "10",
            Some(|j| j.pacing.thinktime == Duration::from_micros(10)),
        ),
        (
            "thinktime",
            "2ms",
            Some(|j| j.pacing.thinktime == Duration::from_millis(2)),
        ),
        (
            "thinktime_spin",
            "5",
            Some(|j| j.pacing.thinktime_spin == Duration::from_micros(5)),
        ),
        (
            "thinktime_blocks",
            "4",
            Some(|j| j.pacing.thinktime_blocks == 4),
        ),
        ("thinktime_blocks", "0", None),
        (
            "thinktime_blocks_type",
            "issue",
            Some(|j| j.pacing.thinktime_blocks_issue),
        ),
        ("thinktime_blocks_type", "later", None),
        (
            "thinktime_iotime",
            "2m",
            Some(|j| j.pacing.thinktime_iotime == Duration::from_secs(120)),
        ),
        ("thinktime_iotime", "10x", None),
        (
            "thinkcycles",
            "1000",
            Some(|j| j.pacing.thinkcycles == 1000),
        ),
        (
            "rate_ignore_thinktime",
            "1",
            Some(|j| j.pacing.rate_ignore_thinktime),
        ),
        (
            "zonemode",
            "strided",
            Some(|j| j.zone.mode == ZoneMode::Strided && j.unsupported.is_empty()),
        ),
        (
            "zonemode",
            "zbd",
            Some(|j| j.zone.mode == ZoneMode::None && j.unsupported[0].option == "zonemode"),
        ),
        ("zonesize", "256m", Some(|j| j.zone.size == 256 << 20)),
        ("zonerange", "1g", Some(|j| j.zone.range == 1 << 30)),
        ("zoneskip", "2g", Some(|j| j.zone.skip == 2 << 30)),
    ];

    /// The examples in fio 3.33's lib/pattern.c, and its look-ahead for "0x".
    #[test]
    fn patterns_parse_as_fio() {
        let p = |s: &str| parse_pattern(s);
        assert_eq!(p("\"abcd\"").unwrap(), b"abcd");
        assert_eq!(p("-1024").unwrap(), [0x00, 0xfc, 0xff, 0xff]);
        assert_eq!(p("66").unwrap(), [0x42]);
        assert_eq!(p("0xFF0X1").unwrap(), [0xff, 0x01]);
        assert_eq!(
            p("\"123\"0xFFeeCC").unwrap(),
            [0x31, 0x32, 0x33, 0xff, 0xee, 0xcc]
        );
        assert_eq!(p("0xabc").unwrap(), [0x0a, 0xbc]);
        assert_eq!(p("0").unwrap(), [0]);
        assert_eq!(
            p("\"abcd\"-120xdeadface").unwrap(),
            [0x61, 0x62, 0x63, 0x64, 0xf4, 0xff, 0xff, 0xff, 0xde, 0xad, 0xfa, 0xce]
        );
        let off = Some(("%o", 8, 8));
        let (b, at) = parse_fio_pattern("-100xab\"1\"%o\"2\"", off).unwrap();
        assert_eq!(
            b,
            [0xf6, 0xff, 0xff, 0xff, 0xab, 0x31, 0, 0, 0, 0, 0, 0, 0, 0, 0x32]
        );
        assert_eq!(at, [6]);
        let (b, at) = parse_fio_pattern("%o0xdeadbeef%o", off).unwrap();
        assert_eq!(b.len(), 20);
        assert_eq!(&b[8..12], &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(at, [0, 12]);
        // What fio refuses: %o in buffer_pattern, spaces, out-of-range decimals, a "0x" too
        // far ahead of a decimal, empty parts, over 512 bytes.
        for bad in [
            "%o",
            " 0x12",
            "2147483648",
            "1\"aaaaaaaaaaaaaaaaaaaaaaaa\"0x1",
            "\"\"",
            "0x0x1",
            "abc",
            "0x",
        ] {
            assert!(p(bad).is_err(), "{bad} accepted");
        }
        assert_eq!(p("-2147483648").unwrap(), [0, 0, 0, 0x80]);
        assert!(p(&format!("0x{}", "ab".repeat(513))).is_err());
    }

    #[test]
    fn workload_options() {
        run(CASES);
    }
}
