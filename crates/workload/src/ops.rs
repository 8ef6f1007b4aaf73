//! The per-I/O decisions of `Generator`, one function per fio step: pick the file (file
//! service type), the direction (rwmix / trimwrite), the offset (sequential with holes, or
//! random through the map, lfsr or a distribution, with `:N` sequential runs and
//! percentage_random), then the length (fixed, bsrange, bssplit) and mark the random map.

use fiox_job::Ddir;

use crate::cfg::{DistCfg, FileSvc};
use crate::dist::zone_pick;
use crate::gen::{Generator, IoReq, RandNote, NONE};

/// Outcome of choosing a file.
enum Pick {
    File(usize),
    /// The file is closed and `openfiles` are open already: fio retries.
    Busy,
    /// Every file is done.
    None,
}

/// Upper bound on block size redraws; fio loops until a size fits, which always terminates in
/// practice. The cap only guards pathological bssplit tables (e.g. 0% for the only fitting size).
const MAX_BS_DRAWS: u32 = 100_000;

impl Generator {
    /// fio's `__get_next_file`: None when every file is done for this pass. Files open
    /// lazily, at most `openfiles` at a time; a pick that would open one more is "busy" in
    /// fio and retried, which is what the loop does (the retry only moves the file choice).
    #[inline]
    pub(crate) fn next_file(&mut self) -> Option<usize> {
        if self.files.len() == 1 {
            // Every service type picks the only file; the file stream feeds nothing else.
            if self.nr_done >= 1 {
                return None;
            }
            if !self.files[0].open {
                self.open_file(0);
            }
            return Some(0);
        }
        self.next_file_of_many()
    }

    /// `next_file` with more than one file: the service types decide.
    fn next_file_of_many(&mut self) -> Option<usize> {
        let n = self.files.len();
        loop {
            if self.nr_done >= n {
                return None;
            }
            if let Some(sf) = self.service_file {
                if self.files[sf].open {
                    if self.cfg.fsvc == FileSvc::Sequential {
                        return Some(sf);
                    }
                    if self.service_left > 0 {
                        self.service_left -= 1;
                        return Some(sf);
                    }
                }
            }
            let pick = match self.cfg.fsvc {
                FileSvc::RoundRobin | FileSvc::Sequential => self.next_file_rr(),
                _ => self.next_file_rand(),
            };
            match pick {
                Pick::File(f) => {
                    self.service_file = Some(f);
                    self.service_left = self.cfg.fsvc_nr - 1;
                    return Some(f);
                }
                Pick::Busy => continue,
                Pick::None => return None,
            }
        }
    }

    /// Opening a file rewinds it (fio's `td_io_open_file` resets its position and map).
    pub(crate) fn open_file(&mut self, fi: usize) {
        self.files[fi].open = true;
        self.files[fi].opens += 1;
        self.nr_open += 1;
        self.reset_file(fi);
    }

    /// A file that is not open can be used only if fewer than `openfiles` are open.
    fn try_open(&mut self, fi: usize) -> Pick {
        if !self.files[fi].open {
            if self.nr_open >= self.open_cap {
                return Pick::Busy;
            }
            self.open_file(fi);
        }
        Pick::File(fi)
    }

    fn next_file_rr(&mut self) -> Pick {
        let n = self.files.len();
        let old = self.next_file;
        loop {
            let f = self.next_file;
            self.next_file += 1;
            if self.next_file == n {
                self.next_file = 0;
            }
            if !self.files[f].done {
                return self.try_open(f);
            }
            if self.next_file == old {
                return Pick::None;
            }
        }
    }

    fn next_file_rand(&mut self) -> Pick {
        let n = self.files.len();
        loop {
            let f = match &mut self.st.file_dist {
                Some(d) => (d.next() >> 10) as usize,
                None => (n as f64 * self.st.file.next_fraction()) as usize,
            };
            if f < n && !self.files[f].done {
                return self.try_open(f);
            }
        }
    }

    /// The direction of a job whose every I/O takes the same steps: one file, one direction
    /// (no mix, no trimwrite), uniform random offsets (map, no map or lfsr) drawn for every
    /// I/O (no `:N`, no percentage_random, no strided zones) and one block size. Such a job's
    /// `fill` is [`Generator::fill_fast`]; None for every other job.
    pub(crate) fn fast_ddir(&self) -> Option<Ddir> {
        let c = &self.cfg;
        let plain = self.files.len() == 1
            && !c.mixed()
            && !c.trimwrite
            && !c.randtrimwrite
            && c.strided.is_none()
            && c.random
            && c.seq_nr == 1
            && !c.seq_identical
            && !c.bs_is_seq_rand
            && !c.fsvc.nonuniform()
            && matches!(c.dist, DistCfg::Random);
        if !plain {
            return None;
        }
        let ddir = if c.read {
            Ddir::Read
        } else if c.write {
            Ddir::Write
        } else {
            Ddir::Trim
        };
        let dc = &c.dir[ddir.index()];
        (dc.min_bs == dc.max_bs && c.perc_rand[ddir.index()] >= 100).then_some(ddir)
    }

    /// `fill` of file 0 for a job [`Generator::fast_ddir`] accepts, step for step: a `:1`
    /// job hits a new random offset every time (`seq_left` stays 1), the offset is a uniform
    /// block (rewinding the file once for time_based jobs), the length the one block size, and
    /// the map marks one block (which cannot shorten the I/O). None: the file is done.
    #[inline(always)]
    pub(crate) fn fill_fast(&mut self, ddir: Ddir) -> Option<IoReq> {
        let d = ddir.index();
        self.is_random = true;
        let b = match self.uniform_fast(d) {
            Some(b) => b,
            None if self.cfg.time_based => {
                self.reset_file(0);
                self.note_wrap(0);
                self.uniform_fast(d)?
            }
            None => return None,
        };
        let dc = &self.cfg.dir[d];
        let rel = b * dc.ba;
        let f = &mut self.files[0];
        if rel >= f.io_size {
            return None;
        }
        let offset = rel + f.file_offset;
        let len = dc.min_bs;
        if offset >= f.real_size || offset + len > f.real_size {
            return None;
        }
        if !self.busy_ok {
            if let Some(map) = &mut f.map {
                map.set_nr(dc.min_div.div(offset - f.file_offset), 1);
            }
        }
        f.last_start[d] = offset;
        f.last_pos[d] = offset + len;
        self.busy_ok = false;
        self.zone_bytes += len;
        Some(IoReq {
            ddir,
            file: 0,
            offset,
            len: len as u32,
        })
    }

    /// `rand_offset` of file 0 with the uniform distribution.
    #[inline(always)]
    fn uniform_fast(&mut self, d: usize) -> Option<u64> {
        let lastb = self.files[0].lastb[d];
        if lastb == 0 {
            return None;
        }
        self.uniform_block(0, lastb, self.fast_lastb)
    }

    /// fio's `fill_io_u` + the bookkeeping of `get_io_u`. None: this file cannot take another
    /// I/O this pass.
    pub(crate) fn fill(
        &mut self,
        fi: usize,
        rate_pick: &mut impl FnMut(Ddir) -> Ddir,
    ) -> Option<IoReq> {
        let mut ddir = self.rw_ddir();
        if self.cfg.mixed() {
            ddir = rate_pick(ddir);
            self.rwmix_ddir = ddir;
        }
        if self.cfg.trimwrite {
            let f = &self.files[fi];
            ddir = if f.last_start[1] == f.last_start[2] {
                Ddir::Trim
            } else {
                Ddir::Write
            };
        }
        if self.cfg.strided.is_some() {
            self.strided_zone(fi, ddir);
        }
        let offset = self.next_offset(fi, ddir)?;
        let mut len = self.next_buflen(fi, ddir, offset)?;
        let f = &mut self.files[fi];
        if offset + len > f.real_size {
            return None;
        }
        if !self.busy_ok {
            if let Some(map) = &mut f.map {
                let dc = &self.cfg.dir[ddir.index()];
                let block = dc.min_div.div(offset - f.file_offset);
                let set = map.set_nr(block, dc.min_div.div(len + dc.min_bs - 1));
                if set > 0 && set * dc.min_bs < len {
                    len = set * dc.min_bs;
                }
            }
        }
        f.last_start[ddir.index()] = offset;
        f.last_pos[ddir.index()] = offset + len;
        // The I/O unit's "may overlap" flag clears when it completes, before its next use.
        self.busy_ok = false;
        self.zone_bytes += len;
        Some(IoReq {
            ddir,
            file: fi as u32,
            offset,
            len: len as u32,
        })
    }

    /// fio's `setup_strided_zone_mode`: after `zonesize` bytes move to the next zone (wrapping
    /// to the start past the file's end); inside a zone, wrap to its start past `zonerange`;
    /// at each `zonerange` of I/O reset the file's random map.
    fn strided_zone(&mut self, fi: usize, ddir: Ddir) {
        let Some(z) = self.cfg.strided else {
            return;
        };
        let d = ddir.index();
        let f = &mut self.files[fi];
        if self.zone_bytes >= z.size {
            self.zone_bytes = 0;
            f.file_offset = f.file_offset.saturating_add(z.range.saturating_add(z.skip));
            if f.file_offset >= f.real_size {
                f.file_offset = f.start_offset;
            }
            f.last_pos[d] = f.file_offset;
        }
        if f.last_pos[d] >= f.file_offset.saturating_add(z.range) {
            f.last_pos[d] = f.file_offset;
        }
        if self.zone_bytes.is_multiple_of(z.range) {
            self.reset_file(fi);
        }
    }

    /// fio's `get_rw_ddir`: for mixed jobs, stay in a direction for a while, then redraw.
    fn rw_ddir(&mut self) -> Ddir {
        let c = &self.cfg;
        if c.mixed() {
            let cur = self.rwmix_ddir;
            if self.io_issues[cur.index()] >= self.rwmix_issues {
                let v = self.st.mix.between(1, 100);
                let d = if v <= c.rwmix[0] {
                    Ddir::Read
                } else {
                    Ddir::Write
                };
                if d != cur {
                    self.rwmix_issues = self.io_issues[cur.index()] * c.rwmix[d.index()] / 100;
                }
                self.rwmix_ddir = d;
            }
            self.rwmix_ddir
        } else if c.read {
            Ddir::Read
        } else if c.write {
            Ddir::Write
        } else {
            Ddir::Trim
        }
    }

    /// fio's `get_next_offset`: the absolute offset.
    #[inline]
    fn next_offset(&mut self, fi: usize, ddir: Ddir) -> Option<u64> {
        let mut hit = false;
        if self.cfg.seq_nr != 0 {
            self.seq_left -= 1;
            if self.seq_left == 0 {
                hit = true;
                self.seq_left = self.cfg.seq_nr;
            }
        }
        let rel = self.next_block(fi, ddir, hit)?;
        let f = &mut self.files[fi];
        if rel >= f.io_size {
            return None;
        }
        let offset = rel + f.file_offset;
        if offset >= f.real_size {
            return None;
        }
        // randtrimwrite picks trim or write by whether the last trim and write start at the
        // same offset: a new trim that lands where the last pair was must still be followed
        // by its write, so the write's mark is moved off (as fio does).
        if self.cfg.randtrimwrite && ddir == Ddir::Trim && f.last_start[2] == offset {
            f.last_start[1] = f.last_start[1].wrapping_sub(1);
        }
        Some(offset)
    }

    /// fio's `get_next_block`: the offset relative to the extent start. Sequential
    /// continuations inside a random job set `busy_ok` (no map marking); like fio's I/O unit
    /// flag it is set even when the attempt then fails, and stays set for the next attempt.
    fn next_block(&mut self, fi: usize, ddir: Ddir, hit: bool) -> Option<u64> {
        let ba = self.cfg.dir[ddir.index()].ba;
        self.is_random = false;
        if self.cfg.randtrimwrite && ddir == Ddir::Write {
            // The write goes where the trim before it went (not marked in the random map).
            self.busy_ok = true;
            self.is_random = true;
            let f = &self.files[fi];
            return Some(f.last_start[2] - f.file_offset);
        }
        if !hit && self.cfg.seq_identical {
            // fio's RW_SEQ_IDENT: where the last I/O of this direction started.
            self.busy_ok = true;
            let f = &self.files[fi];
            let last = f.last_start[ddir.index()];
            return Some(if last == NONE {
                0
            } else {
                last - f.file_offset
            });
        }
        if hit && !self.cfg.random {
            return self.seq_offset(fi, ddir);
        }
        // One call site for the random draw (the per-I/O path of random jobs), so it inlines.
        if hit && self.should_do_random(ddir) {
            self.is_random = true;
        } else {
            // A sequential continuation, falling back to a random block at the end.
            self.busy_ok = true;
            if let Some(o) = self.seq_offset(fi, ddir) {
                return Some(o);
            }
        }
        self.rand_block(fi, ddir).map(|b| b * ba)
    }

    fn should_do_random(&mut self, ddir: Ddir) -> bool {
        let p = self.cfg.perc_rand[ddir.index()];
        if p >= 100 {
            return true;
        }
        self.st.seq_rand[ddir.index()].between(1, 100) <= p as u64
    }

    /// Remember that file `fi` wrapped (at most once until the caller takes it).
    fn note_wrap(&mut self, fi: usize) {
        if !self.wrapped.contains(&(fi as u32)) {
            self.wrapped.push(fi as u32);
        }
    }

    /// fio's `get_next_seq_offset`, including its wrap rules for holes and time_based runs.
    fn seq_offset(&mut self, fi: usize, ddir: Ddir) -> Option<u64> {
        let d = ddir.index();
        let single = self.files.len() == 1;
        let time_based = self.cfg.time_based;
        let add = self.cfg.seq_add;
        let f = &self.files[fi];
        if f.last_pos[d] >= f.io_size + f.file_offset && time_based && single {
            self.files[fi].last_pos[d] = self.files[fi].file_offset;
            self.note_wrap(fi);
        }
        let back = self.cfg.seq_back;
        let f = &mut self.files[fi];
        if f.last_pos[d] >= f.real_size {
            return None;
        }
        // Walking backwards from a region that does not start at 0: fio first moves to the
        // end (io_size or the file size, whichever is smaller; not file_offset + io_size).
        if back && f.last_pos[d] == f.file_offset && f.file_offset != 0 {
            f.last_pos[d] = f.io_size.min(f.real_size);
        }
        // fio's unsigned arithmetic: positions wrap rather than go below 0.
        let mut pos = f.last_pos[d].wrapping_sub(f.file_offset);
        if pos != 0 && add != 0 {
            pos = pos.wrapping_add(add);
            // fio compares the relative position with the absolute file size and wraps to the
            // absolute extent start (forwards) or N before the end (backwards); kept as-is so
            // the patterns match fio's.
            if pos >= f.real_size {
                pos = if back {
                    f.io_size.min(f.real_size).wrapping_add(add)
                } else {
                    f.file_offset
                };
            }
        }
        Some(pos)
    }

    /// fio's `get_next_rand_block`: on failure, time_based and non-uniform file service jobs
    /// rewind the file and try once more.
    fn rand_block(&mut self, fi: usize, ddir: Ddir) -> Option<u64> {
        if let Some(b) = self.rand_offset(fi, ddir) {
            return Some(b);
        }
        if self.cfg.time_based || self.cfg.fsvc.nonuniform() {
            self.reset_file(fi);
            self.note_wrap(fi);
            return self.rand_offset(fi, ddir);
        }
        None
    }

    #[inline]
    fn rand_offset(&mut self, fi: usize, ddir: Ddir) -> Option<u64> {
        let d = ddir.index();
        let lastb = self.files[fi].lastb[d];
        match &self.cfg.dist {
            DistCfg::Random => {
                if lastb == 0 {
                    return None;
                }
                self.uniform_block(fi, lastb, lastb as f64)
            }
            DistCfg::Zipf(_) | DistCfg::Pareto(_) | DistCfg::Gauss(_) => {
                self.files[fi].dist.as_mut().map(|dist| dist.next())
            }
            DistCfg::Zoned(t) => {
                if lastb == 0 {
                    return None;
                }
                if t[d].is_empty() {
                    return self.uniform_block(fi, lastb, lastb as f64);
                }
                let z = t[d][zone_pick(&mut self.st.zone) - 1];
                let start = z.perc_prev * lastb / 100;
                let span = lastb * (z.perc - z.perc_prev) / 100;
                self.uniform_block(fi, span, span as f64).map(|b| b + start)
            }
            DistCfg::ZonedAbs(t) => {
                if lastb == 0 {
                    return None;
                }
                if t[d].is_empty() {
                    return self.uniform_block(fi, lastb, lastb as f64);
                }
                let z = t[d][zone_pick(&mut self.st.zone) - 1];
                let ba = self.cfg.dir[d].ba;
                let (start, end) = (z.size_prev / ba, z.size / ba);
                if end > lastb {
                    return None;
                }
                self.uniform_block(fi, end - start, (end - start) as f64)
                    .map(|b| b + start)
            }
        }
    }

    /// fio's `__get_next_rand_offset`: a uniform block in `0..lastb` (or the lfsr's next),
    /// moved to the next free block when the map says it was done already. `lastb_f` is
    /// `lastb as f64` (the plain path keeps its file's converted once: 6 instructions per I/O
    /// on files above 2^21 blocks, where the draw is scaled in doubles).
    #[inline(always)]
    fn uniform_block(&mut self, fi: usize, lastb: u64, lastb_f: f64) -> Option<u64> {
        let f = &mut self.files[fi];
        let b = match &mut f.lfsr {
            Some(l) => l.next()?,
            None if self.rand_notes.is_some() => {
                // The same draw as next_fraction, its raw number kept for --debug=random.
                let r = self.st.random.next();
                let frac = r as f64 / (self.st.random.max() as f64 + 1.0);
                self.rand_notes
                    .get_or_insert_with(Vec::new)
                    .push(RandNote::Drawn(r));
                (lastb_f * frac) as u64
            }
            None => self.st.random.next_below(lastb, lastb_f),
        };
        match &f.map {
            Some(m) if m.is_set(b) => {
                if let Some(n) = self.rand_notes.as_mut() {
                    n.push(RandNote::Busy(b));
                }
                m.next_free(b)
            }
            _ => Some(b),
        }
    }

    /// fio's `get_next_buflen`. None (fio: length 0) when the smallest size does not fit.
    #[inline]
    fn next_buflen(&mut self, fi: usize, ddir: Ddir, offset: u64) -> Option<u64> {
        // The per-I/O case: one block size, no per-offset-kind sizes.
        if !self.cfg.randtrimwrite && !self.cfg.bs_is_seq_rand {
            let dc = &self.cfg.dir[ddir.index()];
            if dc.min_bs == dc.max_bs {
                return Some(dc.min_bs);
            }
        }
        self.next_buflen_drawn(fi, ddir, offset)
    }

    /// `next_buflen` for the other cases: randtrimwrite's pairs, bs_is_seq_rand, size ranges
    /// and bssplit tables drawn from the block size stream.
    fn next_buflen_drawn(&mut self, fi: usize, ddir: Ddir, offset: u64) -> Option<u64> {
        if self.cfg.randtrimwrite && ddir == Ddir::Write {
            let f = &self.files[fi];
            return Some(f.last_pos[2] - f.last_start[2]);
        }
        let d = match (self.cfg.bs_is_seq_rand, self.is_random) {
            (false, _) => ddir.index(),
            (true, false) => Ddir::Read.index(),
            (true, true) => Ddir::Write.index(),
        };
        let dc = &self.cfg.dir[d];
        let (minbs, maxbs) = (dc.min_bs, dc.max_bs);
        if minbs == maxbs {
            return Some(minbs);
        }
        let f = &self.files[fi];
        let end = f.io_size + f.file_offset;
        let fits = |len: u64| offset + len <= end;
        if !fits(minbs) {
            return None;
        }
        let state = &mut self.st.bs[d];
        let frand_max = state.max();
        let mut buflen = 0u64;
        for _ in 0..MAX_BS_DRAWS {
            let r = state.next();
            if dc.split.is_empty() {
                let frac = r as f64 / (frand_max as f64 + 1.0);
                buflen = minbs + (maxbs as f64 * frac) as u64;
            } else {
                let mut perc = 0u64;
                for &(bs, p) in &dc.split {
                    if p == 0 {
                        continue;
                    }
                    buflen = bs;
                    perc += p;
                    if r / perc <= frand_max / 100 && fits(buflen) {
                        break;
                    }
                }
            }
            if !self.cfg.bs_unaligned {
                if minbs.is_power_of_two() {
                    buflen &= !(minbs - 1);
                } else {
                    buflen -= buflen % minbs;
                }
            }
            buflen = buflen.min(maxbs);
            if fits(buflen) {
                return (buflen > 0).then_some(buflen);
            }
        }
        None
    }
}
