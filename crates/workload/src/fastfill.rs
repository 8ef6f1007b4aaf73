//! The plain random path's batch fill: `fill_fast` of many requests at once for its common
//! case (one file, one direction, one block size aligned to itself, the uniform draw, no lfsr,
//! no `--debug=random` notes). The file's bounds become one block limit, the random stream is
//! a local copy, the map is taken once per request, and the per-request bookkeeping (last
//! position, zone bytes, issue counts) is done once for the batch; the requests and the draws
//! are `fill_fast`'s one by one (tests: `next_batch_yields_what_next_yields`).

use crate::gen::{Generator, IoReq};
use crate::rand::{FRand, EXACT_LASTB};
use fiox_job::Ddir;

impl Generator {
    /// Up to `n` requests of the plain random path appended to `out`. It stops before the
    /// first draw that needs `fill_fast`'s other branches (the map full, a block outside the
    /// file) with the stream as it was before that draw, so `fill_fast` makes that draw next.
    /// Returns how many it appended (0 where the case does not apply).
    pub(crate) fn fill_fast_batch(&mut self, ddir: Ddir, out: &mut Vec<IoReq>, n: usize) -> usize {
        let d = ddir.index();
        let (len, ba) = (self.cfg.dir[d].min_bs, self.cfg.dir[d].ba);
        let f = &mut self.files[0];
        let lastb = f.lastb[d];
        if f.lfsr.is_some()
            || self.rand_notes.is_some()
            || self.busy_ok
            || ba != len
            || ba == 0
            || lastb == 0
            || u32::try_from(len).is_err()
        {
            return 0;
        }
        // `fill_fast`'s bounds (rel < io_size, offset + len <= real_size) as a block limit:
        // block b passes exactly when b < limit.
        let base = f.file_offset;
        let fits = f.real_size.saturating_sub(base).checked_sub(len);
        let by = self.cfg.dir[d].min_div; // ba == len: the block size's divisor
        let limit = match fits {
            Some(room) => by.div_ceil(f.io_size).min(by.div(room) + 1),
            None => 0,
        };
        let lastb_f = self.fast_lastb;
        let batch = Batch { ddir, base, len, n };
        let exact = lastb <= EXACT_LASTB;
        let (k, last) = match (&mut self.st.random, f.map.as_mut()) {
            (FRand::T32(t), Some(m)) if exact => {
                batch.run(out, t, |t| t.below_exact(lastb), |b| m.take(b, limit))
            }
            (FRand::T32(t), None) if exact => batch.run(
                out,
                t,
                |t| t.below_exact(lastb),
                |b| (b < limit).then_some(b),
            ),
            (r, Some(m)) => batch.run(
                out,
                r,
                |r| r.next_below(lastb, lastb_f),
                |b| m.take(b, limit),
            ),
            (r, None) => batch.run(
                out,
                r,
                |r| r.next_below(lastb, lastb_f),
                |b| (b < limit).then_some(b),
            ),
        };
        if k > 0 {
            let f = &mut self.files[0];
            f.last_start[d] = last;
            f.last_pos[d] = last + len;
            self.is_random = true;
            self.zone_bytes += k as u64 * len;
            self.count_issues(ddir, len, k as u64);
        }
        k
    }
}

/// One batch's invariants: the direction, the file's start, the block size and how many
/// requests are wanted (the block limit lives in the pick).
struct Batch {
    ddir: Ddir,
    base: u64,
    len: u64,
    n: usize,
}

impl Batch {
    /// Draw with `draw` from the stream `s`, take the block with `pick` (None: stop, with the
    /// stream as before the draw) and append each request. Returns how many were appended and
    /// the last one's offset.
    #[inline(always)]
    fn run<S: Copy>(
        &self,
        out: &mut Vec<IoReq>,
        s: &mut S,
        draw: impl Fn(&mut S) -> u64,
        mut pick: impl FnMut(u64) -> Option<u64>,
    ) -> (usize, u64) {
        out.reserve(self.n);
        let start = *s;
        let mut st = start;
        let (mut k, mut last) = (0, 0);
        while k < self.n {
            let Some(b) = pick(draw(&mut st)) else {
                // The stream as before this draw: the batch's `k` draws again from its start
                // (once a batch at most; not a copy of the stream kept each draw).
                st = start;
                for _ in 0..k {
                    draw(&mut st);
                }
                break;
            };
            last = self.base + b * self.len;
            out.push(IoReq {
                ddir: self.ddir,
                file: 0,
                offset: last,
                len: self.len as u32,
            });
            k += 1;
        }
        *s = st;
        (k, last)
    }
}
