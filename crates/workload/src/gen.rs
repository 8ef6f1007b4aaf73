//! The I/O generator: given a job and the region of each file it may touch, yields each I/O
//! (direction, file, offset, length) in the order fio 3.33 would issue it, with the same
//! counts and bytes: fio's rwmix switching, file service order, sequential `:N` holes, random
//! offsets with a random map (or lfsr, or a non-uniform distribution), block size draws, and
//! its end-of-pass rules (per-pass budget, cumulative io_size/number_ios limits, file ends).
//!
//! Offsets: the caller resolves `offset=`/`offset_increment=`/`offset_align=` into each
//! `FileExtent::offset` (fio's `file_offset`), and `size`/`filesize`/`nrfiles` into
//! `FileExtent::size` (fio's per-file `io_size`; see `split_size`). Offsets returned are
//! absolute within the file.
//!
//! Driving it like fio's `thread_main`: call `next` until None (end of a pass), then ask
//! `another_pass` (fio's `keep_running`: loops, io_size larger than size, time_based) and
//! `restart` if it says so. Call `ramp_over` when ramp_time ends, `next_rated` instead of
//! `next` when rate limits may switch a mixed job's direction. fio ends a pass after `size`
//! bytes only for engines that queue I/O; the engine is read from `ioengine`
//! (`set_engine_queues` overrides).

use fiox_job::{Ddir, JobSpec};

use crate::cfg::{Cfg, DistCfg, FileSvc};
use crate::dist::{jhash, Dist};
use crate::lfsr::{Lfsr, LfsrError};
use crate::rand::FRand;
use crate::randmap::RandomMap;
use crate::seeds::{Seeds, Stream};
use crate::WorkloadError;

/// Region of file `i` the job may touch: `[offset, offset + size)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileExtent {
    pub offset: u64,
    pub size: u64,
}

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoReq {
    pub ddir: Ddir,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
}

/// Optional inputs beyond the job and the extents.
#[derive(Debug, Clone, Default)]
pub struct GenOptions {
    /// `randseed` to use instead of `job.rand.randseed`. With `randrepeat=0` and no explicit
    /// `randseed`, fio seeds from the OS: pass a time/entropy-derived value here.
    pub seed: Option<u64>,
    /// File names, one per extent. fio seeds the per-file zipf/pareto/normal streams from a
    /// hash of the name; without names the file index is hashed instead.
    pub file_names: Option<Vec<String>>,
    /// Actual size of each file/device when larger than `offset + size` (fio's
    /// `real_file_size`; I/O may then overhang the extent end exactly where fio lets it).
    pub real_sizes: Option<Vec<u64>>,
}

pub(crate) const NONE: u64 = u64::MAX;

#[derive(Debug, Clone)]
pub(crate) struct FileState {
    pub(crate) file_offset: u64,
    /// Where the extent starts (`file_offset` moves with strided zones; fio's
    /// `get_start_offset` brings it back here).
    pub(crate) start_offset: u64,
    pub(crate) io_size: u64,
    pub(crate) real_size: u64,
    pub(crate) last_pos: [u64; 3],
    pub(crate) last_start: [u64; 3],
    pub(crate) done: bool,
    pub(crate) open: bool,
    /// How many times the file was opened (fio opens a file at its first use in a pass, and
    /// again after an `openfiles` close): the runner's file-operation engines act per open.
    pub(crate) opens: u64,
    pub(crate) map: Option<RandomMap>,
    pub(crate) lfsr: Option<Lfsr>,
    pub(crate) dist: Option<Dist>,
    /// `Cfg::last_block` per direction, computed once.
    pub(crate) lastb: [u64; 3],
}

/// The per-job random streams (fio's `frand_state`s in `thread_data`).
#[derive(Debug, Clone)]
pub(crate) struct Streams {
    pub(crate) random: FRand,
    pub(crate) bs: [FRand; 3],
    pub(crate) mix: FRand,
    pub(crate) seq_rand: [FRand; 3],
    pub(crate) zone: FRand,
    pub(crate) file: FRand,
    pub(crate) file_dist: Option<Dist>,
}

impl Streams {
    fn new(cfg: &Cfg, seeds: &Seeds, nfiles: usize) -> Streams {
        let u = cfg.use64;
        let read_seed = seeds.get(Stream::BsRead);
        let mut write_seed = seeds.get(Stream::BsWrite);
        let mut trim_seed = seeds.get(Stream::BsTrim);
        // Verify needs reads to regenerate the writes' sizes; trimwrite writes what it trimmed.
        if cfg.verify {
            write_seed = read_seed;
        }
        if cfg.trimwrite {
            trim_seed = write_seed;
        }
        let fseed = seeds.get(Stream::File);
        let nranges = (nfiles as u64) << FSERVICE_SHIFT;
        let file_dist = match cfg.fsvc {
            FileSvc::Zipf(t) => Some(Dist::zipf(nranges, t, fseed as u32, false)),
            FileSvc::Pareto(h) => Some(Dist::pareto(nranges, h, fseed as u32, false)),
            FileSvc::Gauss(s) => Some(Dist::gauss(nranges, s, fseed as u32, false)),
            _ => None,
        };
        let sr = seeds.get(Stream::SeqRandRead);
        Streams {
            random: FRand::new(seeds.get(Stream::Block), u),
            bs: [
                FRand::new(read_seed, u),
                FRand::new(write_seed, u),
                FRand::new(trim_seed, u),
            ],
            mix: FRand::new(seeds.get(Stream::Mix), false),
            seq_rand: [
                FRand::new(sr, false),
                FRand::new(sr, false),
                FRand::new(sr, false),
            ],
            zone: FRand::new(seeds.get(Stream::Zone), false),
            file: FRand::new(fseed, u),
            file_dist,
        }
    }
}

/// fio spreads file choice over `nfiles << 10` ranges for the non-uniform file service types.
const FSERVICE_SHIFT: u32 = 10;

/// Generates the I/O sequence of one job. See the module docs.
#[derive(Debug, Clone)]
pub struct Generator {
    pub(crate) cfg: Cfg,
    pub(crate) randseed: u64,
    pub(crate) seeds: Seeds,
    pub(crate) files: Vec<FileState>,
    pub(crate) st: Streams,
    pub(crate) io_issues: [u64; 3],
    pub(crate) issue_bytes: [u64; 3],
    pub(crate) pass_bytes: u64,
    /// Bytes written before this pass (`issue_bytes`' write count when it began), and the
    /// verify reads counted in it ([`Generator::count_verified`]): the pass's other writes
    /// are what fio's do_verify reads after it.
    written_before_pass: u64,
    pass_verified: u64,
    pub(crate) pass_ios: u64,
    pub(crate) rwmix_issues: u64,
    pub(crate) rwmix_ddir: Ddir,
    pub(crate) seq_left: u64,
    pub(crate) next_file: usize,
    pub(crate) service_file: Option<usize>,
    pub(crate) service_left: u32,
    pub(crate) nr_done: usize,
    pub(crate) loops_left: u64,
    /// The last [`Generator::another_pass`] started a new `loops=` iteration (taken by
    /// [`Generator::take_new_loop`]).
    pub(crate) new_loop: bool,
    /// fio's `IO_U_F_BUSY_OK` on the I/O unit being filled: skip random map marking.
    pub(crate) busy_ok: bool,
    /// fio's `is_random` of the offset just chosen (picks the size with bs_is_seq_rand).
    pub(crate) is_random: bool,
    /// Bytes per direction since the start or the end of ramp_time (fio's `io_bytes`).
    pub(crate) stat_bytes: [u64; 3],
    pub(crate) nr_open: usize,
    /// Files closed in the model since the runner last asked ([`Generator::take_closed`]),
    /// kept only once the runner tracks closes; `closed_all`: a new pass closed every file.
    closed: Option<Vec<u32>>,
    closed_all: bool,
    /// `openfiles` (0 or more than nrfiles: all).
    pub(crate) open_cap: usize,
    /// Files that wrapped around inside a pass since the caller last asked (a time_based job
    /// rewinding its file): fio drops their page cache then.
    pub(crate) wrapped: Vec<u32>,
    /// Bytes of I/O in the current strided zone (fio's `zone_bytes`).
    pub(crate) zone_bytes: u64,
    /// The job's only direction when it takes the plain random path (`Generator::fast_ddir`):
    /// one file, one direction, fixed block size, uniform offsets. Fixed at construction.
    pub(crate) fast: Option<Ddir>,
    /// `limits_reached`'s bounds for the plain random path, computed once: bytes of its
    /// direction (limit × loops) and I/Os (number_ios × loops; u64::MAX without number_ios).
    pub(crate) fast_caps: (u64, u64),
    /// The plain random path's `lastb` (file 0, its direction) as a double, converted once.
    pub(crate) fast_lastb: f64,
    /// What the random offsets drew, kept for the caller's `--debug=random` lines (None:
    /// not asked for, the default).
    pub(crate) rand_notes: Option<Vec<RandNote>>,
}

/// One event of fio's random offset choice (`__get_next_rand_offset`), for `--debug=random`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RandNote {
    /// The Tausworthe generator's raw number for an offset (fio's `off rand N`).
    Drawn(u64),
    /// The drawn block was done already in this pass; the random map moves on from it.
    Busy(u64),
}

/// Per-file state for the extents, checked against the real sizes.
fn file_states(
    cfg: &mut Cfg,
    files: &[FileExtent],
    opts: &GenOptions,
) -> Result<Vec<FileState>, WorkloadError> {
    let mut out = Vec::with_capacity(files.len());
    for (i, f) in files.iter().enumerate() {
        let real = match &opts.real_sizes {
            Some(r) => r[i],
            None => f.offset + f.size,
        };
        if real < f.offset + f.size {
            return Err(WorkloadError::ExtentBeyondFile {
                file: i,
                offset: f.offset,
                size: f.size,
                real,
            });
        }
        // fio switches a 32-bit Tausworthe to the 64-bit one for files of more than 2^32
        // blocks (when the generator was left at its default).
        let blocks = f.size.min(real) / cfg.min_bs_all;
        if cfg.random && !cfg.lfsr && blocks > u32::MAX as u64 {
            cfg.use64 = true;
        }
        // Strided zones: random offsets are drawn inside one zone range (fio's last_block).
        let span = match cfg.strided {
            Some(z) => z.range,
            None => f.size.min(real),
        };
        out.push(FileState {
            file_offset: f.offset,
            start_offset: f.offset,
            io_size: f.size,
            real_size: real,
            last_pos: [f.offset; 3],
            last_start: [NONE; 3],
            done: false,
            open: false,
            opens: 0,
            map: None,
            lfsr: None,
            dist: None,
            lastb: Ddir::ALL.map(|d| cfg.last_block(span, d)),
        });
    }
    Ok(out)
}

fn lfsr_err(e: LfsrError) -> WorkloadError {
    WorkloadError::Lfsr(match e {
        LfsrError::TooLarge => "file has more than 2^63 blocks",
        LfsrError::BadSeed => "seed maps onto the forbidden all-ones state; change randseed",
    })
}

impl Generator {
    /// `io_bytes`: bytes to transfer per pass (fio: io_size if set, else size, both after
    /// fio's fix-ups: size capped at the extents' total). `number_ios` caps the count.
    pub fn new(
        job: &JobSpec,
        files: &[FileExtent],
        io_bytes: u64,
    ) -> Result<Generator, WorkloadError> {
        Self::with_options(job, files, io_bytes, &GenOptions::default())
    }

    pub fn with_options(
        job: &JobSpec,
        files: &[FileExtent],
        io_bytes: u64,
        opts: &GenOptions,
    ) -> Result<Generator, WorkloadError> {
        if files.is_empty() {
            return Err(WorkloadError::NoFiles);
        }
        if io_bytes == 0 && !job.timing.time_based {
            return Err(WorkloadError::NothingToDo);
        }
        for list in [
            opts.file_names.as_ref().map(Vec::len),
            opts.real_sizes.as_ref().map(Vec::len),
        ]
        .into_iter()
        .flatten()
        {
            if list != files.len() {
                return Err(WorkloadError::FileListMismatch(files.len(), list));
            }
        }
        let total: u64 = files.iter().map(|f| f.size).sum();
        let mut cfg = Cfg::new(job, io_bytes, total)?;
        let randseed = opts.seed.unwrap_or(job.rand.randseed);
        let thread_number = job.index + 1;
        // fio: strided zones only work with one file open at a time.
        let open = match job.files.openfiles as usize {
            0 => files.len(),
            n => n.min(files.len()),
        };
        if open > 1 {
            cfg.strided = None;
        }
        let fstates = file_states(&mut cfg, files, opts)?;
        let seeds = Seeds::derive(randseed, thread_number, cfg.randrepeat, cfg.random);
        let st = Streams::new(&cfg, &seeds, files.len());
        let mut g = Generator {
            rand_notes: None,
            loops_left: cfg.loops - 1,
            new_loop: false,
            cfg,
            randseed,
            seeds,
            files: fstates,
            st,
            io_issues: [0; 3],
            issue_bytes: [0; 3],
            pass_bytes: 0,
            written_before_pass: 0,
            pass_verified: 0,
            pass_ios: 0,
            rwmix_issues: 0,
            rwmix_ddir: Ddir::Read,
            seq_left: 1,
            next_file: 0,
            service_file: None,
            service_left: 0,
            nr_done: 0,
            busy_ok: false,
            is_random: false,
            stat_bytes: [0; 3],
            nr_open: 0,
            closed: None,
            closed_all: false,
            wrapped: Vec::new(),
            zone_bytes: 0,
            fast: None,
            fast_caps: (0, 0),
            fast_lastb: 0.0,
            open_cap: match job.files.openfiles as usize {
                0 => files.len(),
                n => n.min(files.len()),
            },
        };
        g.init_random_state(job, opts)?;
        g.fast = g.fast_ddir();
        let c = &g.cfg;
        let ios = match c.number_ios {
            0 => u64::MAX,
            n => n.saturating_mul(c.loops),
        };
        g.fast_caps = (c.limit.saturating_mul(c.loops), ios);
        if let (Some(d), Some(f)) = (g.fast, g.files.first()) {
            g.fast_lastb = f.lastb[d.index()] as f64;
        }
        Ok(g)
    }

    /// Per-file random machinery: map or lfsr for uniform random, streams for zipf & co.
    fn init_random_state(&mut self, job: &JobSpec, opts: &GenOptions) -> Result<(), WorkloadError> {
        if !self.cfg.random {
            return Ok(());
        }
        let range_size = self.cfg.dir[0].min_bs.min(self.cfg.dir[1].min_bs);
        let tn = job.index + 1;
        let block_seed = self.seeds.get(Stream::Block);
        let zone_range = self.cfg.strided.map(|z| z.range);
        for (i, f) in self.files.iter_mut().enumerate() {
            let fsize = zone_range.unwrap_or(f.real_size.min(f.io_size));
            let seed = if self.cfg.randrepeat {
                let h = match &opts.file_names {
                    Some(n) => jhash(n[i].as_bytes(), 0),
                    None => jhash(&(i as u64).to_le_bytes(), 0),
                };
                h.wrapping_mul(tn)
            } else {
                block_seed as u32
            };
            let nranges = fsize.div_ceil(range_size);
            f.dist = match self.cfg.dist {
                // An empty region has no ranges: its first offset fails and the file is done.
                _ if nranges == 0 => None,
                DistCfg::Zipf(t) => Some(Dist::zipf(nranges, t, seed, true)),
                DistCfg::Pareto(h) => Some(Dist::pareto(nranges, h, seed, true)),
                DistCfg::Gauss(s) => Some(Dist::gauss(nranges, s, seed, true)),
                _ => None,
            };
            if f.dist.is_some() {
                continue;
            }
            let blocks = fsize / self.cfg.min_bs_all;
            if self.cfg.lfsr {
                f.lfsr = Some(Lfsr::new(blocks, block_seed).map_err(lfsr_err)?);
            } else if self.cfg.randommap {
                f.map = RandomMap::try_new(blocks);
                if f.map.is_none() && !self.cfg.softrandommap {
                    return Err(WorkloadError::RandomMap { file: i, blocks });
                }
            }
        }
        self.check_zones_fit()
    }

    /// fio fails the file at run time when `zoned_abs` zones exceed it; reject up front.
    fn check_zones_fit(&self) -> Result<(), WorkloadError> {
        if let DistCfg::ZonedAbs(t) = &self.cfg.dist {
            let smallest = self.files.iter().map(|f| f.io_size).min().unwrap_or(0);
            for slots in t {
                if let Some(end) = slots.iter().map(|s| s.size).max() {
                    if end > smallest {
                        return Err(WorkloadError::BadZones {
                            abs: "_abs",
                            what: format!("zones span {end} bytes, file region is {smallest}"),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the engine queues reads and writes (libaio, io_uring, posixaio ...) rather
    /// than completing them inline (psync, sync, pvsync2 ...). fio ends a pass after `size`
    /// bytes only for queued I/O; inline I/O runs until a file ends or the io_size/loops
    /// limit. Derived from `ioengine`; set it for engines this crate does not know.
    pub fn set_engine_queues(&mut self, queues: bool) {
        self.cfg.engine_queues = queues;
    }

    /// The `randseed` actually used (for reports/repeatability).
    pub fn seed(&self) -> u64 {
        self.randseed
    }

    /// The seeds of every random stream, e.g. `Stream::Buf` for `BufferFiller`.
    pub fn seeds(&self) -> &Seeds {
        &self.seeds
    }

    /// I/Os issued per direction so far (all passes).
    pub fn issued(&self) -> [u64; 3] {
        self.io_issues
    }

    /// Bytes issued per direction so far (all passes).
    pub fn issued_bytes(&self) -> [u64; 3] {
        self.issue_bytes
    }

    /// Files that wrapped around inside the pass since the last call (fio's
    /// `loop_cache_invalidate` points); empty almost always, so cheap to poll per I/O.
    #[inline]
    pub fn take_wrapped(&mut self) -> Option<u32> {
        self.wrapped.pop()
    }

    /// Keep the random offsets' draws for [`Generator::take_rand_notes`] (`--debug=random`).
    pub fn note_random(&mut self) {
        self.rand_notes.get_or_insert_with(Vec::new);
    }

    /// The draws noted since the last call, oldest first.
    pub fn take_rand_notes(&mut self) -> Vec<RandNote> {
        self.rand_notes
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Next I/O; None when this pass is complete (io_bytes transferred or number_ios reached).
    // Not an `Iterator`: after None, `restart` begins another pass and `next` yields again.
    #[allow(clippy::should_implement_trait)]
    #[inline(always)]
    pub fn next(&mut self) -> Option<IoReq> {
        // The plain random path inlines into the caller's loop; the general one is a call.
        if let Some(d) = self.fast {
            return self.next_fast(d);
        }
        self.next_rated(|d| d)
    }

    /// Up to `n` of the next requests appended to `out`: what `next` would yield one by one.
    /// Only the plain random path (`Generator::fast_ddir`) yields batches, its limits checked
    /// once for the batch; it stops early where `next` has more to do (a pass's end, a file
    /// rewound inside the pass: that request is the batch's last, its wrap left for
    /// `take_wrapped`). Returns how many were appended (0 for any other job, with
    /// `--debug=random`'s notes, or at a pass's end): the caller then goes on with `next`.
    pub fn next_batch(&mut self, out: &mut Vec<IoReq>, n: usize) -> usize {
        let Some(ddir) = self.fast else {
            return 0;
        };
        let d = ddir.index();
        let len = self.cfg.dir[d].min_bs;
        let open = self.files.first().is_some_and(|f| f.open);
        if self.rand_notes.is_some() || self.nr_done >= 1 || !open || len == 0 {
            return 0;
        }
        if !self.wrapped.is_empty() {
            return 0;
        }
        let n = if self.cfg.time_based {
            n
        } else {
            self.fast_room(d, len).min(n)
        };
        let mut k = self.fill_fast_batch(ddir, out, n);
        while k < n {
            // `next_fast`'s loop body: the file is open and not done (checked above; a
            // fill that succeeds changes neither).
            match self.fill_fast(ddir) {
                Some(req) => {
                    self.count_issue(&req);
                    out.push(req);
                    k += 1;
                    if !self.wrapped.is_empty() {
                        break;
                    }
                }
                None => {
                    self.file_failed(0);
                    break;
                }
            }
        }
        k
    }

    /// How many requests of `len` bytes in direction `d` `next_fast`'s limits let through
    /// from here: each is checked before it is issued, so the last one may cross a limit.
    fn fast_room(&self, d: usize, len: u64) -> usize {
        // `len` is the direction's one block size: its divisor shifts where it can.
        let by = self.cfg.dir[d].min_div;
        debug_assert_eq!(len, self.cfg.dir[d].min_bs);
        let left = |done: u64, cap: u64| -> u64 {
            if done >= cap {
                0
            } else {
                by.div_ceil(cap - done)
            }
        };
        let mut room = left(self.issue_bytes[d], self.fast_caps.0)
            .min(self.fast_caps.1.saturating_sub(self.io_issues[d]));
        // Only the bytes of queued engines (not trims) count toward the pass's budget.
        if self.cfg.engine_queues && d != Ddir::Trim.index() {
            room = room.min(left(self.pass_bytes, self.cfg.pass_budget));
        } else if self.pass_bytes >= self.cfg.pass_budget {
            room = 0;
        }
        usize::try_from(room).unwrap_or(usize::MAX)
    }

    /// `next` for rate-limited jobs: `rate_pick` gets the direction the mix chose and returns
    /// the one to issue (fio's `rate_ddir`: a mixed job whose chosen direction is ahead of
    /// its rate while the other is behind switches to the other). The choice sticks, as in
    /// fio. The caller owns the clock and the rate bookkeeping.
    #[inline]
    pub fn next_rated(&mut self, mut rate_pick: impl FnMut(Ddir) -> Ddir) -> Option<IoReq> {
        if let Some(d) = self.fast {
            // One direction: `rate_pick` only ever switches a mixed job's.
            return self.next_fast(d);
        }
        if !self.cfg.time_based
            && (self.limits_reached() || self.pass_bytes >= self.cfg.pass_budget)
        {
            return None;
        }
        loop {
            let fi = self.next_file()?;
            match self.fill(fi, &mut rate_pick) {
                Some(req) => {
                    self.count_issue(&req);
                    return Some(req);
                }
                None => self.file_failed(fi),
            }
        }
    }

    /// `next_rated` of a job on the plain random path ([`Generator::fast_ddir`]): the same
    /// steps and draws as the general path, with the choices that cannot vary left out (the
    /// only file, the only direction, one block size, no `:N` runs, no distribution).
    #[inline(always)]
    fn next_fast(&mut self, ddir: Ddir) -> Option<IoReq> {
        // `limits_reached` with one direction: only its counts move (the mode's bytes are
        // that direction's: a plain job is not mixed).
        let d = ddir.index();
        if !self.cfg.time_based
            && (self.issue_bytes[d] >= self.fast_caps.0
                || self.io_issues[d] >= self.fast_caps.1
                || self.pass_bytes >= self.cfg.pass_budget)
        {
            debug_assert!(self.limits_reached() || self.pass_bytes >= self.cfg.pass_budget);
            return None;
        }
        debug_assert!(!self.limits_reached() || self.cfg.time_based);
        loop {
            if self.nr_done >= 1 {
                return None;
            }
            if !self.files[0].open {
                self.open_file(0);
            }
            match self.fill_fast(ddir) {
                Some(req) => {
                    self.count_issue(&req);
                    return Some(req);
                }
                None => self.file_failed(0),
            }
        }
    }

    /// The per-direction and per-pass counts of an issued request.
    #[inline(always)]
    fn count_issue(&mut self, req: &IoReq) {
        self.count_issues(req.ddir, u64::from(req.len), 1);
    }

    /// The counts of `k` issued requests of `len` bytes in direction `ddir`.
    #[inline(always)]
    pub(crate) fn count_issues(&mut self, ddir: Ddir, len: u64, k: u64) {
        let d = ddir.index();
        self.io_issues[d] += k;
        self.issue_bytes[d] += k * len;
        self.stat_bytes[d] += k * len;
        // Engines complete trims inline, and sync engines everything.
        if self.cfg.engine_queues && ddir != Ddir::Trim {
            self.pass_bytes += k * len;
        }
        self.pass_ios += k;
    }

    /// A verify read completed while the job still writes (`verify_backlog`): fio's
    /// keep_running counts it with the job's own bytes (its `io_bytes`), so a writing job with
    /// `io_size` above one pass stops after the pass whose writes and verify reads reach
    /// io_size, where fiox wrapped on to io_size of writes alone (ecosystem round's N4).
    pub fn count_verified(&mut self, bytes: u64) {
        self.stat_bytes[Ddir::Read.index()] += bytes;
        self.pass_verified += bytes;
    }

    /// fio's `io_issue_bytes_exceeded`: the mode's bytes against limit × loops, or number_ios.
    fn limits_reached(&self) -> bool {
        let c = &self.cfg;
        let b = &self.issue_bytes;
        let bytes = if c.mixed() {
            b[0] + b[1]
        } else if c.write {
            b[1]
        } else if c.read {
            b[0]
        } else {
            b[2]
        };
        if bytes >= c.limit.saturating_mul(c.loops) {
            return true;
        }
        c.number_ios != 0
            && self.io_issues.iter().sum::<u64>() >= c.number_ios.saturating_mul(c.loops)
    }

    /// fio closes a file whose fill failed; non-uniform service types rewind it for later
    /// picks, the others mark it done for this pass.
    fn file_failed(&mut self, fi: usize) {
        self.service_file = None;
        self.files[fi].open = false;
        self.nr_open -= 1;
        if let Some(c) = self.closed.as_mut() {
            c.push(fi as u32);
        }
        if self.cfg.fsvc.nonuniform() {
            self.reset_file(fi);
        } else {
            self.files[fi].done = true;
            self.nr_done += 1;
        }
    }

    /// Whether file `fi` is open in fio's model (`openfiles`): opened when first picked,
    /// closed when its fill fails or a new pass starts. The runner mirrors this with real fds.
    pub fn is_open(&self, fi: usize) -> bool {
        self.files.get(fi).is_some_and(|f| f.open)
    }

    /// Record the files the model closes from now on, for [`Generator::take_closed`]: a runner
    /// mirroring the model with real descriptors closes just those, instead of looking at every
    /// file before each I/O (quadratic in the files).
    pub fn track_closes(&mut self) {
        self.closed.get_or_insert_with(Vec::new);
    }

    /// The files closed in the model since the last call, appended to `out`; true when a new
    /// pass closed every file (then `out` gets nothing: close all).
    pub fn take_closed(&mut self, out: &mut Vec<u32>) -> bool {
        if let Some(c) = self.closed.as_mut() {
            out.append(c);
        }
        std::mem::take(&mut self.closed_all)
    }

    /// How many times file `fi` was opened in fio's model (0 for an unknown index).
    pub fn opens(&self, fi: usize) -> u64 {
        self.files.get(fi).map_or(0, |f| f.opens)
    }

    /// fio's `fio_file_reset`: rewind, forget the map, restart the lfsr.
    pub(crate) fn reset_file(&mut self, fi: usize) {
        let seed = self.seeds.get(Stream::Block);
        let f = &mut self.files[fi];
        f.last_pos = [f.file_offset; 3];
        f.last_start = [NONE; 3];
        if let Some(m) = &mut f.map {
            m.reset();
        }
        if let Some(l) = &mut f.lfsr {
            // The seed was accepted at construction, so it is accepted again.
            let _ = l.reset(seed);
        }
    }

    /// Whether fio would run another pass now (its `keep_running`, minus time and errors):
    /// consumes one of `loops`, else continues while less than the limit was done and the
    /// remainder is at least one maximum-size block. Time-based jobs always continue.
    pub fn another_pass(&mut self) -> bool {
        // fio stops a job whose pass did no I/O at all, time_based or not.
        if self.pass_ios == 0 {
            return false;
        }
        if self.cfg.time_based {
            return true;
        }
        if self.loops_left > 0 {
            self.loops_left -= 1;
            self.new_loop = true;
            return true;
        }
        let written = self.issue_bytes[Ddir::Write.index()] - self.written_before_pass;
        if self.cfg.verify && self.cfg.do_verify && written > self.pass_verified {
            // fio runs do_verify after each pass, before keep_running asks for another: the
            // pass's writes not verified yet are read back and counted with the job's bytes.
            // fiox verifies after its last pass instead, so the reads are counted here.
            self.stat_bytes[Ddir::Read.index()] += written - self.pass_verified;
            self.pass_verified = written;
        }
        let c = &self.cfg;
        if c.number_ios != 0
            && self.io_issues.iter().sum::<u64>() >= c.number_ios.saturating_mul(c.loops)
        {
            return false;
        }
        let done: u64 = self.stat_bytes.iter().sum();
        if done >= c.limit {
            return false;
        }
        if c.limit - done < c.max_bs_all {
            return false;
        }
        let files_done = self.files.iter().all(|f| f.done);
        !files_done || c.io_size_set
    }

    /// `ramp_time` ended: fio resets its issue counts (so the rwmix cycle, `number_ios` and the
    /// extra-pass decision count from here) but not the issued bytes of the `io_size` limit.
    pub fn ramp_over(&mut self) {
        self.io_issues = [0; 3];
        self.stat_bytes = [0; 3];
        self.rwmix_issues = 0;
        let c = &self.cfg;
        if c.time_based || c.loops > 1 || c.do_verify {
            self.nr_done = 0;
        }
    }

    /// Requests drawn before `ramp_over` and issued after it (a caller's batch drawn ahead):
    /// counted again in what the ramp's end reset (`io_issues`, `stat_bytes`).
    pub fn recount(&mut self, reqs: &[IoReq]) {
        for r in reqs {
            let d = r.ddir.index();
            self.io_issues[d] += 1;
            self.stat_bytes[d] += u64::from(r.len);
        }
    }

    /// Start a new pass (loops=N, or time_based wrap-around): sequential restarts at the
    /// start, random map cleared; with randrepeat every stream is reseeded, so each pass
    /// repeats the first one's offsets (as fio does).
    /// Whether the pass just allowed is a new `loops=` iteration (fio's next trip round
    /// thread_main's loop, where `unlink_each_loop` acts), not a time_based or io_size pass.
    pub fn take_new_loop(&mut self) -> bool {
        std::mem::take(&mut self.new_loop)
    }

    pub fn restart(&mut self) {
        self.pass_bytes = 0;
        self.written_before_pass = self.issue_bytes[Ddir::Write.index()];
        self.pass_verified = 0;
        self.pass_ios = 0;
        self.rwmix_issues = 0;
        let c = &self.cfg;
        if c.time_based || c.loops > 1 || c.do_verify {
            self.nr_done = 0;
        }
        // All files are closed; each is rewound when next opened.
        self.service_file = None;
        self.nr_open = 0;
        if let Some(c) = self.closed.as_mut() {
            c.clear();
            self.closed_all = true;
        }
        for f in &mut self.files {
            f.done = false;
            f.open = false;
        }
        if self.cfg.randrepeat {
            self.st = Streams::new(&self.cfg, &self.seeds, self.files.len());
        }
    }
}
