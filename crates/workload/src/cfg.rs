//! The generator's view of a job: `JobSpec` options reduced to the numbers the hot path needs
//! (per-direction block sizes and alignment, mix ratios, `:N` behaviour, distribution tables,
//! pass budgets), with fio's option fix-ups applied (blockalign or a non-uniform distribution
//! turns the random map off, bssplit sorted by share, `number_ios` doubled for trimwrite ...).

use fiox_job::{
    Ddir, FileServiceType, JobSpec, RandomDistribution, RandomGenerator, RwMode, SizeSpec,
    VerifyMethod, Zone, ZoneMode,
};

use crate::dist::{zone_table, ZoneSlot};
use crate::WorkloadError;

/// Block size settings of one direction.
#[derive(Debug, Clone)]
pub(crate) struct DirCfg {
    pub(crate) min_bs: u64,
    pub(crate) max_bs: u64,
    /// bssplit `(bs, percent)`, stably sorted by ascending percent as fio does.
    pub(crate) split: Vec<(u64, u64)>,
    /// Offset alignment for random I/O (blockalign; min_bs otherwise).
    pub(crate) ba: u64,
    /// Division by min_bs without a hardware divide when it is a power of two (hot path).
    pub(crate) min_div: Divisor,
}

/// Divides by a constant, with a shift when the constant is a power of two.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Divisor {
    d: u64,
    shift: Option<u32>,
}

impl Divisor {
    pub(crate) fn new(d: u64) -> Divisor {
        Divisor {
            d,
            shift: d.is_power_of_two().then(|| d.trailing_zeros()),
        }
    }

    #[inline]
    pub(crate) fn div(self, x: u64) -> u64 {
        match self.shift {
            Some(s) => x >> s,
            None => x / self.d,
        }
    }

    /// `x.div_ceil(d)`, with a shift and a mask when `d` is a power of two.
    #[inline]
    pub(crate) fn div_ceil(self, x: u64) -> u64 {
        match self.shift {
            Some(s) => (x >> s) + u64::from(x & (self.d - 1) != 0),
            None => x.div_ceil(self.d),
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum DistCfg {
    Random,
    Zipf(f64),
    Pareto(f64),
    Gauss(f64),
    Zoned([Vec<ZoneSlot>; 3]),
    ZonedAbs([Vec<ZoneSlot>; 3]),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum FileSvc {
    RoundRobin,
    Sequential,
    Random,
    Zipf(f64),
    Pareto(f64),
    Gauss(f64),
}

impl FileSvc {
    pub(crate) fn nonuniform(self) -> bool {
        matches!(
            self,
            FileSvc::Zipf(_) | FileSvc::Pareto(_) | FileSvc::Gauss(_)
        )
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Cfg {
    pub(crate) read: bool,
    pub(crate) write: bool,
    pub(crate) random: bool,
    pub(crate) trimwrite: bool,
    pub(crate) dir: [DirCfg; 3],
    pub(crate) bs_unaligned: bool,
    /// rw=randtrimwrite: each write rewrites the block the trim before it trimmed.
    pub(crate) randtrimwrite: bool,
    /// `bs_is_seq_rand`: block sizes by sequential (read's) or random (write's) offset.
    pub(crate) bs_is_seq_rand: bool,
    pub(crate) max_bs_all: u64,
    pub(crate) min_bs_all: u64,
    /// Random modes: I/Os per newly drawn random offset (fio `ddir_seq_nr`).
    pub(crate) seq_nr: u64,
    /// Sequential modes: bytes skipped after each I/O (fio `ddir_seq_add`), two's complement
    /// when `seq_back` (added with wrapping arithmetic, as fio's unsigned offsets do).
    pub(crate) seq_add: u64,
    /// `rw=...:-N`: fio's negative `ddir_seq_add` (walking backwards).
    pub(crate) seq_back: bool,
    /// `rw_sequencer=identical`: the I/Os between new random offsets repeat the last one.
    pub(crate) seq_identical: bool,
    /// `softrandommap`: a random map that cannot be allocated is done without.
    pub(crate) softrandommap: bool,
    pub(crate) rwmix: [u64; 2],
    pub(crate) perc_rand: [u32; 3],
    pub(crate) randommap: bool,
    pub(crate) lfsr: bool,
    pub(crate) use64: bool,
    pub(crate) dist: DistCfg,
    pub(crate) fsvc: FileSvc,
    pub(crate) fsvc_nr: u32,
    pub(crate) time_based: bool,
    pub(crate) loops: u64,
    pub(crate) randrepeat: bool,
    pub(crate) verify: bool,
    pub(crate) do_verify: bool,
    pub(crate) io_size_set: bool,
    /// Cumulative limit per loop (fio: io_size, else size).
    pub(crate) limit: u64,
    /// Per-pass issue budget (fio's `total_bytes` in do_io).
    pub(crate) pass_budget: u64,
    /// Whether the engine queues I/O (fio counts only queued bytes against `pass_budget`;
    /// I/O an engine completes inline, as every sync engine does, is not counted).
    pub(crate) engine_queues: bool,
    pub(crate) number_ios: u64,
    /// `zonemode=strided`: I/O moves through zones of the file (None: whole file).
    pub(crate) strided: Option<Strided>,
}

/// fio's strided zones: `size` bytes of I/O in the `range` bytes from the zone start, then
/// the zone start moves by `range + skip` (back to the file's start past its end).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strided {
    pub(crate) size: u64,
    pub(crate) range: u64,
    pub(crate) skip: u64,
}

/// fio's zone options check (`fixup_options`): strided needs zonesize; zonesize needs
/// strided; zonerange defaults to zonesize.
fn strided(job: &JobSpec) -> Result<Option<Strided>, WorkloadError> {
    let z = &job.zone;
    match (z.mode, z.size) {
        (ZoneMode::Strided, 0) => Err(WorkloadError::BadZoneMode(
            "zonemode=strided needs zonesize (fio refuses it too)",
        )),
        (ZoneMode::Strided, size) => Ok(Some(Strided {
            size,
            range: if z.range == 0 { size } else { z.range },
            skip: z.skip,
        })),
        (ZoneMode::None, 0) => Ok(None),
        (ZoneMode::None, _) => Err(WorkloadError::BadZoneMode(
            "zonesize needs zonemode=strided (fio refuses zonemode=none with zonesize too)",
        )),
    }
}

const DIR_NAMES: [&str; 3] = ["read", "write", "trim"];

fn dir_cfg(job: &JobSpec, d: Ddir, random: bool) -> Result<DirCfg, WorkloadError> {
    let bs = job.bs.get(d);
    let name = DIR_NAMES[d.index()];
    let mut split: Vec<(u64, u64)> = bs.split.iter().map(|&(b, p)| (b, p as u64)).collect();
    let (min_bs, max_bs) = if split.is_empty() {
        (bs.min, bs.max)
    } else {
        let min = split.iter().map(|s| s.0).min().unwrap_or(0);
        let max = split.iter().map(|s| s.0).max().unwrap_or(0);
        (min, max)
    };
    split.sort_by_key(|s| s.1);
    if min_bs == 0 {
        return Err(WorkloadError::ZeroBlockSize { ddir: name });
    }
    if min_bs > max_bs {
        return Err(WorkloadError::BadBlockRange {
            ddir: name,
            min: min_bs,
            max: max_bs,
        });
    }
    let ba = match job.blockalign.get(d) {
        Some(a) if *a > 0 && random => *a,
        _ => min_bs,
    };
    Ok(DirCfg {
        min_bs,
        max_bs,
        split,
        ba,
        min_div: Divisor::new(min_bs),
    })
}

fn zones(list: &[Zone], abs: bool) -> Result<Vec<ZoneSlot>, WorkloadError> {
    let tag = if abs { "_abs" } else { "" };
    let bad = |what: String| WorkloadError::BadZones { abs: tag, what };
    let mut out = Vec::with_capacity(list.len());
    let (mut acc, mut size) = (0u64, 0u64);
    for z in list {
        if z.access_pct < 0.0 || z.size < 0.0 {
            return Err(bad("negative zone value".into()));
        }
        let a = z.access_pct.round() as u64;
        let s = z.size.round() as u64;
        acc += a;
        size += s;
        out.push((a, s));
    }
    if list.is_empty() {
        return Ok(Vec::new());
    }
    if acc != 100 {
        return Err(bad(format!("access percentages add up to {acc}, not 100")));
    }
    if !abs && size != 100 {
        return Err(bad(format!("zone sizes add up to {size}%, not 100%")));
    }
    Ok(zone_table(&out, abs))
}

fn dist_cfg(job: &JobSpec) -> Result<DistCfg, WorkloadError> {
    Ok(match &job.rand.distribution {
        RandomDistribution::Random => DistCfg::Random,
        RandomDistribution::Zipf(t) => {
            if *t <= 0.0 || *t == 1.0 {
                return Err(WorkloadError::BadDistribution(format!(
                    "zipf theta must be > 0 and != 1 (got {t})"
                )));
            }
            DistCfg::Zipf(*t)
        }
        RandomDistribution::Pareto(h) => {
            if *h <= 0.0 || *h >= 1.0 {
                return Err(WorkloadError::BadDistribution(format!(
                    "pareto h must be in (0, 1) (got {h})"
                )));
            }
            DistCfg::Pareto(*h)
        }
        RandomDistribution::Normal(s) => {
            if *s < 0.0 || *s >= 100.0 {
                return Err(WorkloadError::BadDistribution(format!(
                    "normal deviation must be in [0, 100) (got {s})"
                )));
            }
            DistCfg::Gauss(*s)
        }
        RandomDistribution::Zoned(z) => DistCfg::Zoned([
            zones(&z.read, false)?,
            zones(&z.write, false)?,
            zones(&z.trim, false)?,
        ]),
        RandomDistribution::ZonedAbs(z) => DistCfg::ZonedAbs([
            zones(&z.read, true)?,
            zones(&z.write, true)?,
            zones(&z.trim, true)?,
        ]),
    })
}

fn file_svc(t: FileServiceType) -> (FileSvc, u32) {
    match t {
        FileServiceType::RoundRobin(n) => (FileSvc::RoundRobin, n.max(1)),
        FileServiceType::Sequential(n) => (FileSvc::Sequential, n.max(1)),
        FileServiceType::Random(n) => (FileSvc::Random, n.max(1)),
        FileServiceType::Zipf(v) => (FileSvc::Zipf(v), 1),
        FileServiceType::Pareto(v) => (FileSvc::Pareto(v), 1),
        FileServiceType::Gauss(v) => (FileSvc::Gauss(v), 1),
    }
}

/// Whether fio's engine of this name returns "queued" (rather than "completed") for reads
/// and writes. Unknown engines are taken as synchronous; `Generator::set_engine_queues`
/// overrides.
pub(crate) fn engine_queues(name: &fiox_job::IoEngineName, iodepth: u32) -> bool {
    use fiox_job::Engine;
    match name.engine() {
        Some(
            Engine::Libaio | Engine::IoUring | Engine::Posixaio | Engine::Vsync | Engine::Guasi,
        ) => true,
        Some(Engine::Null) => iodepth > 1,
        Some(_) => false,
        None => name.lacked_engine_queues(),
    }
}

/// fio's per-pass `total_bytes` and the effective `number_ios`: the extents' total, capped
/// by `size=`; random writes without a map may go up to io_size; trimwrite counts trims too.
fn budgets(
    job: &JobSpec,
    io_bytes: u64,
    extent_total: u64,
    min_bs_all: u64,
    randommap: bool,
    loops: u64,
) -> Result<(u64, u64), WorkloadError> {
    let mode = job.rw.mode;
    let mut pass_budget = extent_total;
    if let Some(SizeSpec::Bytes(s)) = job.size {
        if s > 0 && s < extent_total {
            pass_budget = s;
        }
    }
    if pass_budget < min_bs_all {
        return Err(WorkloadError::BlockSizeTooLarge {
            bs: min_bs_all,
            size: pass_budget,
        });
    }
    if mode.has_write() && mode.is_random() && !randommap && job.io_size.is_some() {
        pass_budget = pass_budget.max(io_bytes);
    }
    let mut number_ios = job.number_ios.unwrap_or(0);
    if matches!(mode, RwMode::TrimWrite | RwMode::RandTrimWrite) {
        pass_budget += io_bytes.saturating_mul(loops);
        number_ios = number_ios.saturating_mul(2);
    }
    Ok((pass_budget, number_ios))
}

impl Cfg {
    /// `extent_total`: sum of the files' I/O region sizes (what fio calls `total_size`).
    pub(crate) fn new(
        job: &JobSpec,
        io_bytes: u64,
        extent_total: u64,
    ) -> Result<Cfg, WorkloadError> {
        let mode = job.rw.mode;
        let random = mode.is_random();
        let dir = [
            dir_cfg(job, Ddir::Read, random)?,
            dir_cfg(job, Ddir::Write, random)?,
            dir_cfg(job, Ddir::Trim, random)?,
        ];
        let dist = dist_cfg(job)?;
        let aligned = dir.iter().all(|d| d.ba == d.min_bs);
        let lfsr = job.rand.generator == RandomGenerator::Lfsr;
        let randommap =
            !job.rand.norandommap && matches!(dist, DistCfg::Random) && aligned && !lfsr;
        let (fsvc, fsvc_nr) = file_svc(job.files.file_service_type);
        let trimwrite = matches!(mode, RwMode::TrimWrite | RwMode::RandTrimWrite);
        let loops = job.timing.loops.max(1) as u64;
        // fio's td_min_bs/rw_min_bs: over all three directions, used or not.
        let min_bs_all = dir.iter().map(|d| d.min_bs).min().unwrap_or(4096);
        let max_bs_all = dir.iter().map(|d| d.max_bs).max().unwrap_or(4096);
        let (pass_budget, number_ios) =
            budgets(job, io_bytes, extent_total, min_bs_all, randommap, loops)?;
        let verify = job.verify.method != VerifyMethod::None;
        let seq_nr = if random { job.rw.n.max(1) } else { 1 };
        let seq_back = !random && job.seq_backwards && job.rw.n > 0;
        let seq_add = match (random, seq_back) {
            (true, _) => 0,
            (false, true) => job.rw.n.wrapping_neg(),
            (false, false) => job.rw.n,
        };
        let rr = job.rwmixread.min(100) as u64;
        Ok(Cfg {
            read: mode.has_read(),
            write: mode.has_write(),
            random,
            trimwrite,
            randtrimwrite: mode == RwMode::RandTrimWrite,
            bs_is_seq_rand: job.bs_is_seq_rand,
            dir,
            bs_unaligned: job.bs_unaligned,
            max_bs_all,
            min_bs_all,
            seq_nr,
            seq_add,
            seq_back,
            seq_identical: job.rand.rw_seq_identical,
            softrandommap: job.rand.softrandommap,
            rwmix: [rr, 100 - rr],
            perc_rand: [
                job.rand.percentage_random.read,
                job.rand.percentage_random.write,
                job.rand.percentage_random.trim,
            ],
            randommap,
            lfsr,
            use64: job.rand.generator == RandomGenerator::Tausworthe64,
            dist,
            fsvc,
            fsvc_nr,
            time_based: job.timing.time_based,
            loops,
            randrepeat: job.rand.randrepeat,
            verify,
            do_verify: job.verify.do_verify,
            io_size_set: job.io_size.is_some(),
            limit: io_bytes,
            pass_budget,
            engine_queues: engine_queues(&job.ioengine, job.iodepth),
            number_ios,
            strided: strided(job)?,
        })
    }

    /// fio's `last_block`: how many `ba`-sized slots a random offset may start in, for a
    /// file region of `size` bytes.
    pub(crate) fn last_block(&self, size: u64, d: Ddir) -> u64 {
        let dc = &self.dir[d.index()];
        let mut max_size = size;
        if dc.min_bs > dc.ba {
            max_size = max_size.saturating_sub(dc.min_bs - dc.ba);
        }
        max_size / dc.ba
    }

    /// Both reads and writes (fio `td_rw`): the direction comes from the rwmix draw.
    pub(crate) fn mixed(&self) -> bool {
        self.read && self.write
    }
}
