//! A testbed's description (`fiox testbed up` switches or an experiment's `testbed = {...}`):
//! its kind and keys, checked when parsed, so a bad value is refused with its key before
//! anything is made. Sizes are exact integers (or decimals) with binary suffixes and at most
//! the largest file size; `mkfs_options` may hold only options and their values, never a path
//! or a device mkfs would format or write (D12).

use crate::error::{Result, TestbedError};
use std::path::{Path, PathBuf};

/// What kind of testbed to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Loop,
    Tmpfs,
    Ramfs,
    Fs,
    Slow,
    /// Machine limits (cgroups) around a run (the machine module, above this one); never
    /// made by `testbed up`.
    Machine,
    /// A QEMU guest around a run (the vm module); never made by `testbed up`.
    Vm,
    /// A scratch file of a run (`fiox quick`'s test file, the scratch module); never made by
    /// `testbed up`.
    Scratch,
}

impl Kind {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Kind::Loop => "loop",
            Kind::Tmpfs => "tmpfs",
            Kind::Ramfs => "ramfs",
            Kind::Fs => "fs",
            Kind::Slow => "slow",
            Kind::Machine => "machine",
            Kind::Vm => "vm",
            Kind::Scratch => "scratch",
        }
    }

    pub(crate) fn from_name(k: &str) -> Option<Kind> {
        Some(match k {
            "loop" => Kind::Loop,
            "tmpfs" => Kind::Tmpfs,
            "ramfs" => Kind::Ramfs,
            "fs" => Kind::Fs,
            "slow" => Kind::Slow,
            "machine" => Kind::Machine,
            "vm" => Kind::Vm,
            "scratch" => Kind::Scratch,
            _ => return None,
        })
    }
}

/// A testbed's description (from `fiox testbed up` switches or an experiment file).
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub kind: Kind,
    /// Bytes of the backing file (loop, fs) or the tmpfs limit.
    pub size: u64,
    /// LOOP_SET_DIRECT_IO on the loop device (loop, fs).
    pub direct_io: bool,
    /// Logical block size of the loop device.
    pub block_size: Option<u32>,
    /// Where the backing file (default /var/tmp) or the tmpfs/ramfs mount point (default the
    /// system temp dir) goes.
    pub dir: Option<PathBuf>,
    /// Filesystem for `fs`: ext4, xfs or btrfs.
    pub fs: String,
    /// Extra mkfs arguments for `fs` (options and their values only).
    pub mkfs_options: Vec<String>,
    /// Mount options (comma separated) for `fs` and tmpfs.
    pub mount_options: String,
    /// `slow`: microseconds each read or write request waits (served one at a time).
    pub delay_us: u64,
    /// `slow`: share of requests failing with EIO.
    pub error_rate: f64,
    /// `slow`: the program serving the file, run as `SERVER testbed serve-slow ...` (the fiox
    /// binary; set by the caller, not by a key).
    pub server: Option<PathBuf>,
}

/// Keys [`Spec::from_pairs`] accepts.
pub const SPEC_KEYS: &str = "size, direct_io (on|off), block_size, dir, fs (ext4|xfs|btrfs), \
                             mkfs_options, mount_options; slow: size, delay_us, error_rate";

/// The largest slow device: FaultFs keeps the file in memory (its MAX_SIZE).
pub const SLOW_MAX: u64 = 2 << 30;

impl Spec {
    /// Build a spec from a kind name and `key=value` pairs (see [`SPEC_KEYS`]).
    pub fn from_pairs(kind: &str, pairs: &[(String, String)]) -> Result<Spec> {
        let kind = Kind::from_name(kind)
            .filter(|k| !matches!(k, Kind::Machine | Kind::Vm | Kind::Scratch))
            .ok_or_else(|| {
                TestbedError::Invalid(format!(
                    "testbed kind {kind:?}: expected loop, tmpfs, ramfs, fs or slow"
                ))
            })?;
        let mut s = Spec {
            kind,
            size: 1 << 30,
            direct_io: false,
            block_size: None,
            dir: None,
            fs: "ext4".into(),
            mkfs_options: Vec::new(),
            mount_options: String::new(),
            delay_us: 0,
            error_rate: 0.0,
            server: None,
        };
        if s.kind == Kind::Slow {
            // FaultFs keeps the file in memory.
            s.size = 64 << 20;
        }
        for (k, v) in pairs {
            s.set(k, v)?;
        }
        if s.kind == Kind::Slow && s.size > SLOW_MAX {
            return Err(TestbedError::Invalid(format!(
                "testbed size={}: a slow device is kept in memory, at most {SLOW_MAX} bytes (2g)",
                s.size
            )));
        }
        Ok(s)
    }

    fn set(&mut self, key: &str, v: &str) -> Result<()> {
        let bad = |why: &str| TestbedError::Invalid(format!("testbed {key}={v}: {why}"));
        match key.replace('-', "_").as_str() {
            "size" => self.size = size_of(v).map_err(|w| bad(&w))?,
            "direct_io" | "dio" => {
                self.direct_io = match v {
                    "on" | "1" | "true" | "yes" => true,
                    "off" | "0" | "false" | "no" => false,
                    _ => return Err(bad("expected on or off")),
                }
            }
            "block_size" | "bs" => {
                self.block_size = Some(v.parse().map_err(|_| bad("expected 512..4096"))?)
            }
            "dir" => self.dir = Some(PathBuf::from(v)),
            "fs" => match v {
                "ext4" | "xfs" | "btrfs" => self.fs = v.into(),
                _ => return Err(bad("expected ext4, xfs or btrfs")),
            },
            "mkfs_options" => {
                let words: Vec<String> = v.split_whitespace().map(String::from).collect();
                check_mkfs_options(&words).map_err(|w| bad(&w))?;
                self.mkfs_options = words;
            }
            "mount_options" => self.mount_options = v.into(),
            "delay_us" => self.delay_us = v.parse().map_err(|_| bad("expected microseconds"))?,
            "error_rate" => {
                self.error_rate = v
                    .parse()
                    .ok()
                    .filter(|r| (0.0..=1.0).contains(r))
                    .ok_or_else(|| bad("expected a share between 0 and 1"))?
            }
            _ => return Err(bad(&format!("unknown key; known: {SPEC_KEYS}"))),
        }
        Ok(())
    }
}

/// The largest size a file (a backing file) can have: off_t's maximum.
const MAX_FILE: u64 = i64::MAX as u64;

/// Parse "4096", "512k", "1g", "1.5g" (binary multiples, as fio's sizes); None when it is
/// not a size or is above the largest file size.
pub fn parse_size(s: &str) -> Option<u64> {
    size_of(s).ok()
}

/// [`parse_size`] with the reason for a refusal.
fn size_of(s: &str) -> std::result::Result<u64, String> {
    let not_size = || "expected a size like 1g".to_string();
    let too_big = || format!("above the largest file size, {MAX_FILE} bytes (8 EiB)");
    let s = s.trim().to_ascii_lowercase();
    let s = s.trim_end_matches("ib").trim_end_matches('b');
    let (num, mult) = match s.chars().last().ok_or_else(not_size)? {
        'k' => (&s[..s.len() - 1], 1u64 << 10),
        'm' => (&s[..s.len() - 1], 1 << 20),
        'g' => (&s[..s.len() - 1], 1 << 30),
        't' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    let bytes = if !num.is_empty() && num.bytes().all(|b| b.is_ascii_digit()) {
        // Exact: no float rounding, and overflow is "too big", not a wrap.
        let n: u64 = num.parse().map_err(|_| too_big())?;
        n.checked_mul(mult).ok_or_else(too_big)?
    } else {
        let v: f64 = num.parse().map_err(|_| not_size())?;
        if !v.is_finite() || v <= 0.0 {
            return Err(not_size());
        }
        let b = v * mult as f64;
        if b >= MAX_FILE as f64 {
            return Err(too_big());
        }
        b as u64
    };
    match bytes {
        0 => Err(not_size()),
        b if b > MAX_FILE => Err(too_big()),
        b => Ok(b),
    }
}

/// Suboption keys whose value is a device mkfs writes: ext4's external journal
/// (`-J device=`), xfs's log, realtime and data devices (`-l logdev=`, `-r rtdev=`,
/// `-d name=`, and `-l name=`/`-r name=`).
const DEVICE_KEYS: [&str; 4] = ["device", "logdev", "rtdev", "name"];

/// D12, N4: refuse mkfs words that are not options or their values, read as mkfs's getopt
/// reads them. mkfs takes every other word as a device (btrfs formats them all as members) or
/// a size, so: no `--`; a word not starting with '-' only right after an option that takes it
/// (`-L label`, `--label label`); no value naming an existing path (relative to the working
/// directory too) or a device to write. A short option's value may be attached
/// (`-llogdev=FILE`), and in a cluster (`-qLlabel`) any letter may be the one taking the rest
/// of the word, so every tail of a cluster counts as a possible value; a value is a
/// comma-separated list of `key=value` suboptions (`-o a=b,c=d`), each checked.
pub(crate) fn check_mkfs_options(words: &[String]) -> std::result::Result<(), String> {
    check_mkfs_options_in(words, Path::new("."))
}

/// [`check_mkfs_options`] with relative names resolved in `cwd` (mkfs's working directory).
fn check_mkfs_options_in(words: &[String], cwd: &Path) -> std::result::Result<(), String> {
    let mut value_allowed = false;
    for w in words {
        if w == "--" {
            return Err(
                "\"--\" ends mkfs's options: what follows would be taken as devices".into(),
            );
        }
        let is_opt = w.starts_with('-') && w.len() > 1;
        if !is_opt && !value_allowed {
            return Err(format!(
                "{w:?} is not an option or an option's value: mkfs would take it as a device \
                 or a size (give options only, e.g. \"-L data -O ^has_journal\")"
            ));
        }
        for v in possible_values(w, is_opt) {
            check_value(w, v, cwd)?;
        }
        // A short option (-L) or a long one without its value attached (--label) may take the
        // next word; an option's value may not.
        value_allowed = is_opt && (w.len() == 2 || (w.starts_with("--") && !w.contains('=')));
    }
    Ok(())
}

/// What getopt may hand an option as its value in the word `w`: the word itself after an
/// option, a long option's `=value`, or any tail of a short-option cluster.
fn possible_values(w: &str, is_opt: bool) -> Vec<&str> {
    if !is_opt {
        return vec![w];
    }
    if let Some(long) = w.strip_prefix("--") {
        return long
            .split_once('=')
            .map(|(_, v)| vec![v])
            .unwrap_or_default();
    }
    w.char_indices().skip(2).map(|(i, _)| &w[i..]).collect()
}

/// Refuse a value (of the word `w`) that names an existing path or, among its `key=value`
/// suboptions, a device mkfs would write or an existing path.
fn check_value(w: &str, v: &str, cwd: &Path) -> std::result::Result<(), String> {
    let exists = |p: &str| !p.is_empty() && cwd.join(p).symlink_metadata().is_ok();
    let path_refusal = |p: &str| {
        format!(
            "{w:?} names the existing path {p}: fiox passes mkfs no paths (only the backing \
             file it made is formatted)"
        )
    };
    if exists(v) {
        return Err(path_refusal(v));
    }
    for sub in v.split(',') {
        let (key, val) = sub.split_once('=').unwrap_or((sub, ""));
        if DEVICE_KEYS.contains(&key.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "{w:?}: {key}= names a device mkfs would write; fiox formats only the \
                 testbed's own backing file"
            ));
        }
        if exists(val) || (val.contains('/') && exists(val.trim_end_matches('/'))) {
            return Err(path_refusal(val));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the tests make their own scratch files
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn sizes_parse_exactly_and_huge_ones_are_a_clear_refusal() {
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("512KiB"), Some(512 << 10));
        assert_eq!(parse_size("1.5k"), Some(1536));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("0"), None);
        // M2: 2^64-1 gave "out of range integral type conversion attempted" at set_len.
        let e = Spec::from_pairs("loop", &[("size".into(), "18446744073709551615".into())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("above the largest file size"), "{e}");
        for big in ["9223372036854775808", "8589934592g", "1e30", "1e400"] {
            assert_eq!(parse_size(big), None, "{big}");
        }
        assert_eq!(parse_size("9223372036854775807"), Some(i64::MAX as u64));
        let e = Spec::from_pairs("slow", &[("size".into(), "1e18".into())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("kept in memory"), "{e}");
    }

    #[test]
    fn mkfs_options_refuse_paths_devices_and_stray_words() {
        assert!(
            check_mkfs_options(&words("-L data -O ^has_journal -E lazy_itable_init=0")).is_ok()
        );
        assert!(check_mkfs_options(&words("--label data -m 0")).is_ok());
        // D12: a path among the options made a user's file a btrfs member.
        let exe = std::env::current_exe().unwrap();
        let e = check_mkfs_options(&words(&format!("-f {}", exe.display()))).unwrap_err();
        assert!(e.contains("existing path"), "{e}");
        let e = check_mkfs_options(&words("-L x extra")).unwrap_err();
        assert!(e.contains("not an option"), "{e}");
        let e = check_mkfs_options(&words("nodev")).unwrap_err();
        assert!(e.contains("not an option"), "{e}");
        let e = check_mkfs_options(&words("-J device=/dev/nonexistent9")).unwrap_err();
        assert!(e.contains("device=") && e.contains("names a device"), "{e}");
        let e = check_mkfs_options(&words("-l logdev=/nonexistent,size=1m")).unwrap_err();
        assert!(e.contains("logdev="), "{e}");
        let e = check_mkfs_options(&words("-q --")).unwrap_err();
        assert!(e.contains("\"--\""), "{e}");
        let e = check_mkfs_options(&words("-d/etc")).unwrap_err();
        assert!(e.contains("existing path /etc"), "{e}");
        // N4: the attached forms, as getopt reads them, with a bare relative name.
        let dir = std::env::temp_dir().join(format!("fiox-mkfs-n4-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("userimg"), b"data").unwrap();
        let rel = |w: &str| check_mkfs_options_in(&words(w), &dir);
        for w in [
            "-llogdev=userimg",
            "-rrtdev=userimg",
            "-Jdevice=userimg",
            "-dname=userimg",
        ] {
            let e = rel(w).unwrap_err();
            assert!(e.contains("names a device"), "{w}: {e}");
        }
        for w in [
            "-o opt=userimg",
            "-ouserimg",
            "-Euserimg",
            "-qLuserimg",
            "--x=userimg",
        ] {
            let e = rel(w).unwrap_err();
            assert!(e.contains("existing path userimg"), "{w}: {e}");
        }
        assert!(rel("-L data -O ^has_journal -E lazy_itable_init=0").is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
        let pairs = [
            ("fs".to_string(), "btrfs".to_string()),
            ("mkfs_options".to_string(), format!("-f {}", exe.display())),
        ];
        let e = Spec::from_pairs("fs", &pairs).unwrap_err().to_string();
        assert!(
            e.contains("mkfs_options") && e.contains("existing path"),
            "{e}"
        );
    }
}
