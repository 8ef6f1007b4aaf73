//! fiox's own marks around its I/O syscalls, in place of the raw_syscalls hooks. Hooking
//! sys_enter/sys_exit puts every syscall of the machine through the kernel's tracing slow
//! path (about 0.8 us per I/O of a 4k QD8 libaio job, BENCHMARKS.md); a job thread that
//! knows when it submits or reaps writes what those two programs wrote itself, into its own
//! record in the thread-record array, which is BPF_F_MMAPABLE and mapped here. The sched and
//! block programs read the record as before (whether the thread is inside a call, of which
//! kind and direction, its sequence number), so off-CPU time, waits and the block time inside
//! a call keep coming from the kernel; the call's own totals are computed here at its end,
//! word for word as `progs::sys_exit` does. Times are CLOCK_MONOTONIC (bpf_ktime_get_ns's
//! clock, read through the vDSO). Only threads fiox runs its engine on mark: threads it does
//! not control (glibc's POSIX AIO helpers) need the hooks (see `Tracer::start_with`).
//! Marks obey the tracer's windows (`crate::window`): a thread marks a call only while a
//! window is open (one relaxed load of the window word, no clock read while closed), and a
//! call whose start mark was taken in another window counts nowhere.

use crate::layout::*;
use crate::sys;
use fiox_job::Engine;
use std::sync::atomic::{compiler_fence, AtomicU64, Ordering};
use std::sync::Mutex;

/// What a running tracer publishes to the job threads (read once per job thread, when its
/// loop starts, so a lock costs nothing per I/O): the window word (layout C_OPEN: the open
/// window's start, 0 while none is open; always open with full tracing), the mapped records
/// when the tracer relies on marks (no syscall hooks), and whether it traces in windows
/// (what [`WindowLat`] needs). Set after the first window opens, cleared before the
/// programs are detached: one publication, so a thread never sees half of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Published {
    pub open: &'static AtomicU64,
    pub records: Option<&'static [AtomicU64]>,
    pub windows: bool,
}

static PUBLISHED: Mutex<Option<Published>> = Mutex::new(None);

pub(crate) fn publish(p: Option<Published>) {
    if let Ok(mut g) = PUBLISHED.lock() {
        *g = p;
    }
}

fn published() -> Option<Published> {
    *PUBLISHED.lock().ok()?
}

/// Whether `--explain`'s programs watch this process (a tracer started and not stopped yet;
/// read once per job run): the job loop then makes its system calls as fio makes them, each
/// of one kind, since the programs read a call by its arguments (an io_uring_enter that
/// submits and also waits for completions would read as a slow submission).
pub fn watching() -> bool {
    published().is_some()
}

/// The latency of a job's I/Os that start and end inside one window, per direction (count,
/// sum in ns): in windows, the phases are of those I/Os, which the programs lengthen by their
/// cost, so their mean is what the phases add up to, not the whole run's. Kept by the job
/// thread on its own clock: a window counts from the first completion the thread sees in it
/// (no clock conversion), so an I/O counts when it started after that and completes while
/// the same window is open; the kernel's programs pair the same I/Os (the few that start in
/// the window before that first completion are left out here, a sample of the same kind).
/// At each window's opening or closing, and every [`REPORT_NS`] between, the thread also
/// reports the mean latency and the rate of all its I/Os since its last report: the next
/// windows stretch to that latency (`crate::window::stretch`), and slow or few I/Os are
/// traced in full (`crate::window::FULL_AT`, `FULL_RATE`).
#[derive(Debug, Clone, Copy)]
pub struct WindowLat {
    open: &'static AtomicU64,
    /// The window (its start, C_OPEN's value) this thread last saw open, 0: none.
    seen: u64,
    /// The thread's clock when it first saw that window.
    since: u64,
    pub n: [u64; 2],
    pub sum: [u64; 2],
    /// Every I/O since the last report (count, latency sum in ns).
    all: (u64, u64),
    /// The thread's clock at its last report (0: none yet).
    reported: u64,
    /// Windows opened or closed that this thread saw (the first window is 1).
    windows_seen: u32,
}

/// A job thread reports its I/Os' latency and rate at least this often (while it completes
/// I/Os), so that the first window can wait for a report rather than guess.
pub const REPORT_NS: u64 = 10_000_000;

impl WindowLat {
    /// For a job thread while a tracer traces in windows (None: full tracing or no tracer).
    pub fn this_run() -> Option<WindowLat> {
        let p = published().filter(|p| p.windows)?;
        Some(WindowLat::this_run_of(p.open))
    }

    fn this_run_of(open: &'static AtomicU64) -> WindowLat {
        WindowLat {
            open,
            seen: 0,
            since: 0,
            n: [0; 2],
            sum: [0; 2],
            all: (0, 0),
            reported: 0,
            windows_seen: 0,
        }
    }

    /// An I/O of direction `dir` (0 read, 1 write; others ignored) that started at `start`
    /// completed at `now` (the thread's clock, ns).
    #[inline]
    pub fn add(&mut self, dir: usize, start: u64, now: u64) {
        let lat = now.saturating_sub(start);
        self.all = (self.all.0 + 1, self.all.1 + lat);
        let open = self.open.load(Ordering::Relaxed);
        if open != self.seen {
            self.report(now);
            self.windows_seen += 1;
            (self.seen, self.since) = (open, now);
            return;
        }
        // In the first window the window thread waits for a report to decide how to trace.
        if self.windows_seen <= 1 && now.saturating_sub(self.reported) >= REPORT_NS {
            self.report(now);
        }
        if open != 0 && start >= self.since && dir < 2 {
            self.n[dir] += 1;
            self.sum[dir] += lat;
        }
    }

    /// Tell the window thread the mean latency and the rate of the I/Os since the last
    /// report (the first report has no rate: nothing to count it from).
    #[cold]
    fn report(&mut self, now: u64) {
        // The first I/O only starts the count: one I/O's latency says little (under load it
        // may have waited for a CPU for milliseconds).
        if self.reported > 0 {
            let span = now.saturating_sub(self.reported).max(1);
            crate::window::hint_rate(self.all.0.saturating_mul(1_000_000_000) / span);
            crate::window::hint_latency(self.all.1 / self.all.0.max(1));
        }
        (self.all, self.reported) = ((0, 0), now.max(1));
    }

    /// Start again (fio's statistics are reset at the end of ramp_time).
    pub fn reset(&mut self) {
        (self.n, self.sum) = ([0; 2], [0; 2]);
    }
}

/// What a marked call does (the syscall kinds of layout.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// One read (0) or write (1): pread, pwrite, preadv2...; one I/O when it returns > 0.
    Sync(u8),
    /// A batch submission (io_submit) whose first I/O has this direction (0 read, 1 write;
    /// 2 unknown): as many I/Os as it returns.
    Batch(u8),
    /// Waits for completions (io_getevents) with this many I/Os in flight: returns how many
    /// it reaped.
    Reap(u64),
}

/// Which calls a job's engine makes on the job's own thread, where fiox can mark them: the
/// one table the runner (what to mark) and the binary (whether the syscall hooks can go)
/// both read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marks {
    /// libaio submitting inline: each io_submit ([`Call::Batch`]) and io_getevents
    /// ([`Call::Reap`]).
    Aio,
    /// psync, pvsync, pvsync2: each read and write ([`Call::Sync`]).
    Sync,
}

/// How the calls of `engine` are marked, `submits_inline` false for `io_submit_mode=offload`.
/// None: the engine needs the raw_syscalls hooks (io_uring, whose reaps need the ring's head
/// read at each syscall; posixaio, whose calls glibc's threads make; guasi and offload's pool
/// threads; sync's lseek + read; any other).
pub fn marks_of(engine: Option<Engine>, submits_inline: bool) -> Option<Marks> {
    match engine? {
        Engine::Libaio if submits_inline => Some(Marks::Aio),
        Engine::Psync | Engine::Pvsync | Engine::Pvsync2 if submits_inline => Some(Marks::Sync),
        _ => None,
    }
}

/// `f`, marked by `m` as the call `call` says (None: not a call to mark) and returning what
/// `ret` says it returned, as the syscall would (I/Os submitted or reaped, bytes, -1 for a
/// failure); just `f` without a marker: one branch.
#[inline(always)]
pub fn marked<T>(
    m: Option<Marker>,
    call: impl FnOnce() -> Option<Call>,
    f: impl FnOnce() -> T,
    ret: impl FnOnce(&T) -> i64,
) -> T {
    match m.and_then(|m| call().map(|c| (m, c))) {
        Some((m, c)) => {
            m.enter(c);
            let r = f();
            m.exit(ret(&r));
            r
        }
        None => f(),
    }
}

/// The calling thread's record, to mark its calls in. Obtained on the thread it marks.
#[derive(Debug, Clone, Copy)]
pub struct Marker {
    rec: &'static [AtomicU64],
    /// The open window's start, 0 while none is open (layout C_OPEN).
    open: &'static AtomicU64,
}

/// The calling thread's marker, if a tracer that relies on marks runs (and the thread's
/// record slot is free or its own).
pub fn this_thread() -> Option<Marker> {
    let Published {
        open,
        records: Some(all),
        ..
    } = published()?
    else {
        return None;
    };
    let tid = sys::gettid();
    let slot = (tid & (T_SLOTS - 1)) as usize;
    let rec = all.get(slot * WORDS..(slot + 1) * WORDS)?;
    match rec[S_OWNER].compare_exchange(0, tid as u64, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Some(Marker { rec, open }),
        Err(o) if o == tid as u64 => Some(Marker { rec, open }),
        Err(_) => None,
    }
}

impl Marker {
    fn get(&self, i: usize) -> u64 {
        self.rec[i].load(Ordering::Relaxed)
    }
    fn set(&self, i: usize, v: u64) {
        self.rec[i].store(v, Ordering::Relaxed)
    }
    fn add(&self, i: usize, v: u64) {
        self.rec[i].fetch_add(v, Ordering::Relaxed);
    }

    /// The thread enters a call (sys_enter's work): its user time since the last mark, the
    /// call's scratch reset, kind and direction, and last the "inside" flag the programs test.
    #[inline]
    pub fn enter(&self, call: Call) {
        let open = self.open.load(Ordering::Relaxed);
        if open == 0 {
            return;
        }
        let now = sys::monotonic_ns();
        let mark = self.get(S_MARK);
        // User time since a mark of this window only (an older one spans a closed gap), and
        // from the first finished call on (before it: start-up, not time per I/O).
        let calls: u64 = (0..DIRS)
            .map(|d| self.get(DIR_BASE + d * DIR_WORDS + D_CALLS))
            .sum();
        if mark >= open && calls > 0 {
            self.add(G_USER, now.wrapping_sub(mark));
        }
        for s in [
            S_OFF, S_OFFSTART, S_MARK, S_OUTN, S_OUTSUMQ, S_BLKIN, S_QN, S_CIN, S_AIO,
        ] {
            self.set(s, 0);
        }
        for k in 0..3 {
            self.set(S_WAITS + k, 0);
        }
        self.set(S_SEQ, self.get(S_SEQ).wrapping_add(1));
        let (kind, dir) = match call {
            Call::Sync(d) => (K_SYNC, d.min(2)),
            Call::Batch(d) => (K_BATCH, d.min(2)),
            Call::Reap(n) => {
                self.set(M_INFLIGHT, n);
                (K_REAP, 2)
            }
        };
        self.set(S_KIND, kind as u64);
        self.set(S_DIR, dir as u64);
        self.set(S_ENTER, now);
        // The programs (on this CPU, at a context switch or a bio inside the call) must see
        // the scratch before the flag.
        compiler_fence(Ordering::SeqCst);
        self.set(S_INSYS, 1);
        compiler_fence(Ordering::SeqCst);
    }

    /// The call returned `ret` (sys_exit's work): a submission's phases per I/O it
    /// submitted, or a reap's totals.
    #[inline]
    pub fn exit(&self, ret: i64) {
        compiler_fence(Ordering::SeqCst);
        if self.get(S_INSYS) == 0 {
            return;
        }
        // Entered in a window that has closed since (and maybe another opened): what the
        // programs saw of it is not all of it, it counts nowhere.
        let open = self.open.load(Ordering::Relaxed);
        if open == 0 || self.get(S_ENTER) < open {
            self.set(S_INSYS, 0);
            return;
        }
        let now = sys::monotonic_ns();
        self.set(S_INSYS, 0);
        self.set(S_MARK, now);
        compiler_fence(Ordering::SeqCst);
        match self.get(S_KIND) as i32 {
            K_REAP => {
                self.add(G_REAP_NS, now.wrapping_sub(self.get(S_ENTER)));
                self.add(G_REAP_CALLS, 1);
                self.add(G_REAP_OFF, self.get(S_OFF));
                if ret > 0 {
                    self.add(G_REAPED, ret as u64);
                    self.reap_pending(ret as u64, now, open);
                }
            }
            K_SYNC if ret > 0 => self.submitted(1, now, open),
            K_BATCH if ret > 0 => self.submitted(ret as u64, now, open),
            _ => {}
        }
    }

    /// The window-`open` counters, reset at the window's first counted call.
    fn window(&self, open: u64) {
        if self.get(M_WIN) != open {
            self.set(M_WIN, open);
            self.set(M_WSUB, 0);
            self.set(M_SKIP, u64::MAX);
        }
    }

    /// progs::reap_pending: completions pushed before the window opened leave the ring
    /// uncounted, then the k oldest pending ones leave it. The window's first reaps return
    /// the I/Os submitted before it first (the ring has none of them: those in flight less
    /// those the window's calls submitted): they pair with nothing.
    fn reap_pending(&self, n: u64, now: u64, open: u64) {
        self.window(open);
        let mut skip = self.get(M_SKIP);
        if skip == u64::MAX {
            skip = self.get(M_INFLIGHT).saturating_sub(self.get(M_WSUB));
        }
        let old = n.min(skip);
        self.set(M_SKIP, skip - old);
        let n = n - old;
        if n == 0 {
            return;
        }
        let tail = self.rec[G_TAIL].load(Ordering::Acquire);
        let mut head = self.get(G_HEAD);
        while tail.wrapping_sub(head).wrapping_sub(1) < RING as u64
            && self.get(RING_BASE + (head as usize & (RING - 1))) < open
        {
            head = head.wrapping_add(1);
        }
        self.set(G_HEAD, head);
        let mut pending = tail.wrapping_sub(head);
        if pending == 0 || pending > 1 << 62 {
            return;
        }
        if pending > RING as u64 {
            self.add(G_LOST, pending - RING as u64);
            head = tail - RING as u64;
            self.set(G_HEAD, head);
            pending = RING as u64;
        }
        let k = n.min(pending);
        let sum: u64 = (0..k)
            .map(|i| self.get(RING_BASE + ((head + i) as usize & (RING - 1))))
            .fold(0u64, u64::wrapping_add);
        self.add(G_C2R_NS, now.wrapping_mul(k).wrapping_sub(sum));
        self.add(G_C2R_N, k);
        self.add(G_HEAD, k);
    }

    /// progs::submit_exit: `n` I/Os submitted by the call that ended at `now`.
    fn submitted(&self, n: u64, now: u64, open: u64) {
        self.window(open);
        self.add(M_WSUB, n);
        let dur = now.wrapping_sub(self.get(S_ENTER)) as i64;
        let off = self.get(S_OFF) as i64;
        let outn = self.get(S_OUTN) as i64;
        let blk = (outn.wrapping_mul(now as i64))
            .wrapping_sub(self.get(S_OUTSUMQ) as i64)
            .wrapping_add(self.get(S_BLKIN) as i64)
            .max(0);
        if self.get(S_KIND) as i32 == K_BATCH {
            // I/Os of the call not covered by its bios still out: pending from now.
            let inline = n as i64 - self.get(S_QN) as i64 + self.get(S_CIN) as i64;
            if inline > 0 && inline <= RING as i64 {
                let tail = self.get(G_TAIL);
                for i in 0..inline as u64 {
                    self.set(RING_BASE + ((tail + i) as usize & (RING - 1)), now);
                }
                self.add(G_TAIL, inline as u64);
            }
        }
        let d = self.get(S_DIR) as usize;
        if d > 2 {
            return;
        }
        let base = DIR_BASE + d * DIR_WORDS;
        self.add(base + D_CALLS, 1);
        for k in 0..3 {
            self.add(base + D_WAIT_R + k, self.get(S_WAITS + k));
        }
        self.add(base + D_IOS, n);
        self.add(base + D_RAWSYS, (dur as u64).wrapping_mul(n));
        self.add(base + D_RAWOFF, (off as u64).wrapping_mul(n));
        self.add(base + D_BLKIN, blk as u64);
        let ni = n as i64;
        let total = dur.wrapping_mul(ni).wrapping_sub(blk).max(0);
        let off_cpu = off.wrapping_mul(ni).wrapping_sub(blk).max(0).min(total);
        let on = total - off_cpu;
        self.add(base + D_ON, on as u64);
        self.add(base + D_OFF, off_cpu as u64);
        self.hist(d, H_SUBMIT_ON, on as u64 / n, n);
        self.hist(d, H_SUBMIT_OFF, off_cpu as u64 / n, n);
    }

    /// progs::hist: `wgt` into the log2 bucket of `v` (bucket b: [2^b, 2^(b+1)); 0 and 1 in 0).
    fn hist(&self, d: usize, ph: usize, v: u64, wgt: u64) {
        let b = if v <= 1 {
            0
        } else {
            63 - v.leading_zeros() as usize
        };
        self.add(HIST_BASE + d * PHASES * BUCKETS + ph * BUCKETS + b, wgt);
    }
}

#[cfg(test)]
mod tests {

    /// An I/O counts when it starts after the thread first saw the window and completes
    /// while that window is still open; nothing counts across a closed gap or a new window.
    #[test]
    fn window_latency_counts_the_ios_inside_one_window() {
        static OPEN: AtomicU64 = AtomicU64::new(0);
        let mut w = WindowLat {
            open: &OPEN,
            seen: 0,
            since: 0,
            n: [0; 2],
            sum: [0; 2],
            all: (0, 0),
            reported: 0,
            windows_seen: 0,
        };
        w.add(0, 0, 10); // closed
        OPEN.store(1_000, Ordering::Relaxed);
        w.add(0, 5, 100); // first seen at 100: started before, not counted
        w.add(0, 120, 150); // inside: 30
        w.add(1, 90, 160); // started before the window was first seen
        w.add(1, 130, 170); // inside: 40
        OPEN.store(0, Ordering::Relaxed);
        w.add(0, 140, 400); // completed after the close
        OPEN.store(5_000, Ordering::Relaxed);
        w.add(0, 150, 500); // a new window: seen from 500 on
        w.add(0, 450, 520); // started before 500
        w.add(0, 510, 530); // inside: 20
        assert_eq!((w.n, w.sum), ([2, 1], [50, 40]));
        // At each opening or closing, the mean of every I/O since the last report (the first
        // I/Os, 10 and 95, only start the count; then 30, 70, 40 and 260; 350): the longest
        // is what the next window stretches to.
        assert_eq!(crate::window::take_hint(), 350);
        crate::window::take_rate();
        w.reset();
        assert_eq!((w.n, w.sum), ([0, 0], [0, 0]));
        // Only while the first window is open, a report every REPORT_NS as well: the window
        // thread waits for it to decide whether to trace in full.
        static FIRST: AtomicU64 = AtomicU64::new(0);
        let mut f = WindowLat::this_run_of(&FIRST);
        FIRST.store(1, Ordering::Relaxed);
        f.add(0, 0, 1_000); // first seen: starts the count
        for i in 1..=100u64 {
            f.add(0, i * 100_000, i * 100_000 + 2_000_000);
        }
        // The first 10 ms after the count started: 81 I/Os of 2 ms, about 8,000 a second.
        assert_eq!(crate::window::take_hint(), 2_000_000);
        let rate = crate::window::take_rate();
        assert!((7_500..=8_500).contains(&rate), "{rate}");
        FIRST.store(0, Ordering::Relaxed);
        f.add(0, 0, 20_000_000); // closed: a transition report
        crate::window::take_hint();
        for i in 1..=100u64 {
            f.add(0, 20_000_000 + i * 100_000, 20_000_000 + i * 200_000);
        }
        assert_eq!(
            crate::window::take_hint(),
            0,
            "no periodic reports after the first window"
        );
    }
    use super::*;

    fn marker() -> Marker {
        let rec: &'static [AtomicU64] = Box::leak(
            (0..WORDS)
                .map(|_| AtomicU64::new(0))
                .collect::<Vec<_>>()
                .into(),
        );
        // A window open since the clock's first ns.
        let open: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(1)));
        Marker { rec, open }
    }

    #[test]
    fn engines_that_call_on_the_job_thread_mark_and_no_other() {
        let marks_of = |name: &str, inline| marks_of(Engine::parse(name), inline);
        assert_eq!(marks_of("libaio", true), Some(Marks::Aio));
        assert_eq!(marks_of(" PSync", true), Some(Marks::Sync));
        assert_eq!(marks_of("pvsync2", true), Some(Marks::Sync));
        // Offloaded submissions run on the pool's threads, not the job's.
        assert_eq!(marks_of("libaio", false), None);
        assert_eq!(marks_of("psync", false), None);
        for other in ["io_uring", "posixaio", "guasi", "sync", "null", "rbd"] {
            assert_eq!(marks_of(other, true), None, "{other}");
        }
    }

    #[test]
    fn a_marked_read_counts_one_call_and_its_time() {
        let m = marker();
        m.enter(Call::Sync(0));
        assert_eq!(m.get(S_INSYS), 1);
        assert_eq!(m.get(S_KIND) as i32, K_SYNC);
        std::thread::sleep(std::time::Duration::from_millis(1));
        m.exit(4096);
        assert_eq!(m.get(S_INSYS), 0);
        assert_eq!(m.get(DIR_BASE + D_CALLS), 1);
        assert_eq!(m.get(DIR_BASE + D_IOS), 1);
        assert!(
            m.get(DIR_BASE + D_ON) >= 1_000_000,
            "{}",
            m.get(DIR_BASE + D_ON)
        );
        let hist: u64 = (0..BUCKETS)
            .map(|b| m.get(HIST_BASE + H_SUBMIT_ON * BUCKETS + b))
            .sum();
        assert_eq!(hist, 1);
        // A failed read is a call of no I/O: nothing added.
        m.enter(Call::Sync(0));
        m.exit(-5);
        assert_eq!(m.get(DIR_BASE + D_CALLS), 1);
    }

    /// Closed: nothing is marked (and a call begun in a window that closed since counts
    /// nowhere); in the next window, the I/Os still in flight from before it are reaped first
    /// and pair with nothing, the window's own pair with their completions.
    #[test]
    fn marks_obey_the_windows() {
        let m = marker();
        m.enter(Call::Batch(0));
        m.open.store(0, Ordering::Relaxed);
        m.exit(8);
        assert_eq!((m.get(S_INSYS), m.get(DIR_BASE + D_CALLS)), (0, 0));
        m.enter(Call::Batch(0));
        assert_eq!(m.get(S_INSYS), 0, "no mark while closed");
        // The next window: 8 I/Os in flight from before it, 2 of its own (completed inline).
        m.open.store(sys::monotonic_ns(), Ordering::Relaxed);
        m.enter(Call::Batch(0));
        m.exit(2);
        assert_eq!(m.get(DIR_BASE + D_CALLS), 1);
        m.enter(Call::Reap(10));
        m.exit(8);
        assert_eq!(
            m.get(G_C2R_N),
            0,
            "the 8 from before the window pair with nothing"
        );
        m.enter(Call::Reap(2));
        m.exit(2);
        assert_eq!(m.get(G_C2R_N), 2);
    }

    #[test]
    fn a_batch_of_buffered_ios_is_pending_until_reaped() {
        let m = marker();
        m.enter(Call::Batch(1));
        m.exit(3);
        let w = DIR_BASE + DIR_WORDS;
        assert_eq!((m.get(w + D_CALLS), m.get(w + D_IOS)), (1, 3));
        assert_eq!(m.get(G_TAIL) - m.get(G_HEAD), 3);
        m.enter(Call::Reap(3));
        m.exit(2);
        assert_eq!(
            (m.get(G_REAP_CALLS), m.get(G_REAPED), m.get(G_C2R_N)),
            (1, 2, 2)
        );
        assert_eq!(m.get(G_TAIL) - m.get(G_HEAD), 1);
        assert!(m.get(G_USER) > 0);
    }
}
