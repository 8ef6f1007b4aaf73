//! The layout of the BPF maps' values, shared by the programs that write them (progs.rs) and
//! the reader that turns them into phases (phases.rs): word indexes into a thread's record
//! and into a request's record.

/// A thread's record: its current syscall (the programs' scratch state) ...
pub const S_INSYS: usize = 0;
pub const S_KIND: usize = 1;
pub const S_DIR: usize = 2;
pub const S_ENTER: usize = 3;
pub const S_OFF: usize = 4;
pub const S_OFFSTART: usize = 5;
pub const S_MARK: usize = 6;
pub const S_SEQ: usize = 7;
pub const S_OUTN: usize = 8;
pub const S_OUTSUMQ: usize = 9;
pub const S_BLKIN: usize = 10;
/// ... its totals over the run (time in user mode, reaping syscalls, timestamp sums) ...
pub const G_USER: usize = 11;
pub const G_REAP_CALLS: usize = 12;
pub const G_REAP_NS: usize = 13;
pub const G_REAP_OFF: usize = 14;
pub const G_REAPED: usize = 15;
/// Bios queued inside the current syscall (scratch).
pub const S_QN: usize = 16;
/// Completions not reaped yet, oldest first (block completions, and the I/Os a batch call
/// completed inside itself: those its bios do not cover): a ring of their times, with the
/// reaper's index (the thread's own) and the completers' (atomic); the completion->reaped
/// time and count of the I/Os reaped so far, and completions the ring lost (deeper queues).
pub const G_HEAD: usize = 17;
pub const G_TAIL: usize = 18;
pub const G_LOST: usize = 21;
/// Time off CPU outside syscalls (preempted in user mode).
pub const G_USER_OFF: usize = 22;
/// Bios of the current syscall that also completed inside it (scratch).
pub const S_CIN: usize = 23;
pub const G_C2R_NS: usize = 19;
pub const G_C2R_N: usize = 20;
/// The thread owning the record's slot (records are array slots picked by tid).
pub const S_OWNER: usize = 24;
/// Thread slots (a power of two): the record of tid t is slot t & (T_SLOTS - 1).
pub const T_SLOTS: u32 = 1024;
/// ... per direction (read, write, unknown: an io_uring_enter's batch) ...
pub const DIR_BASE: usize = 25;
pub const DIR_WORDS: usize = 18;
pub const DIRS: usize = 3;
pub const D_CALLS: usize = 0;
pub const D_IOS: usize = 1;
pub const D_ON: usize = 2;
pub const D_OFF: usize = 3;
pub const D_WAIT_R: usize = 4;
pub const D_WAIT_S: usize = 5;
pub const D_WAIT_D: usize = 6;
pub const D_REQS: usize = 7;
pub const D_Q2D: usize = 8;
pub const D_D2C: usize = 9;
pub const D_MERGES: usize = 10;
pub const D_SPLITS: usize = 11;
pub const D_RAWSYS: usize = 12;
pub const D_RAWOFF: usize = 13;
pub const D_BLKIN: usize = 14;
/// A stacked device's lower requests made for the direction's I/Os (by a worker a job thread
/// woke: a loop device's kworker over a file): their number, queued and device time (inside
/// the upper device's D_D2C, not a phase of their own).
pub const D_LREQS: usize = 15;
pub const D_LQ2D: usize = 16;
pub const D_LD2C: usize = 17;
/// ... and log2 histograms per direction and phase (bucket b: values in [2^b, 2^(b+1))).
pub const HIST_BASE: usize = DIR_BASE + DIRS * DIR_WORDS;
pub const PHASES: usize = 4;
pub const BUCKETS: usize = 64;
pub const H_SUBMIT_ON: usize = 0;
pub const H_SUBMIT_OFF: usize = 1;
pub const H_QUEUED: usize = 2;
pub const H_DEVICE: usize = 3;
pub const RING_BASE: usize = HIST_BASE + DIRS * PHASES * BUCKETS;
pub const RING: usize = 128;
/// More scratch of the current syscall: whether it is io_submit (its direction is its first
/// request's, or read from its first iocb at exit when it made none) and its off-CPU waits by
/// state in D_WAIT_R/S/D's order (added to its direction at exit).
pub const S_AIO: usize = RING_BASE + RING;
pub const S_WAITS: usize = S_AIO + 1;
/// io_uring: the kernel address of the thread's ring (`struct io_rings`, from
/// io_uring_create) and the completion-queue head last seen there: completions are reaped
/// when user space moves the head, read at each syscall the thread makes.
pub const G_RINGS: usize = S_WAITS + 3;
pub const G_CQHEAD: usize = G_RINGS + 1;
/// Threads that worked for this one (woken by it: io_uring workers, kworkers such as the
/// loop device's, other threads): CPU time of the runs its wakeups started and their number,
/// per kind (W_* order).
pub const G_WK_NS: usize = G_CQHEAD + 1;
pub const G_WK_RUNS: usize = G_WK_NS + W_KINDS;
/// The thread of this process that created this one (task_newtask): a job thread for the
/// helper threads of its engine (fiox's worker pool, glibc's POSIX AIO helpers), whose I/O
/// syscalls are then the job's.
pub const G_PARENT: usize = G_WK_RUNS + W_KINDS;
/// Scratch for block_io_start: the request's address, stored here as the typed pointer the
/// tracepoint passes and loaded back as a number to hash (the verifier refuses shifts of a
/// pointer, and a map word holds plain numbers).
pub const S_RQ: usize = G_PARENT + 1;
/// The marks' own words for completions reaped in windows (marks.rs): the window they are of
/// (its start), the I/Os its counted calls submitted, the I/Os submitted before it that are
/// still to be reaped (their completions are in no ring: the first reaps of a window return
/// them, and must not pair them with the window's), and the reap's I/Os in flight (scratch).
pub const M_WIN: usize = S_RQ + 1;
pub const M_WSUB: usize = M_WIN + 1;
pub const M_SKIP: usize = M_WSUB + 1;
pub const M_INFLIGHT: usize = M_SKIP + 1;
pub const WORDS: usize = M_INFLIGHT + 1;
/// Kinds of worker: io_uring's (iou-wrk-*, iou-sqp-*), the kernel's kworkers, any other.
pub const W_KINDS: usize = 3;
pub const W_URING: i32 = 0;
pub const W_KWORKER: i32 = 1;
pub const W_OTHER: i32 = 2;

/// A woken worker's slot (picked by pid): the worker, its kind, the thread that woke it,
/// whether its run on that thread's behalf is pending (1) until it next leaves the CPU, and
/// its CPU time (`se.sum_exec_runtime`) when woken: the run's CPU time is the difference.
pub const K_PID: usize = 0;
pub const K_KIND: usize = 1;
pub const K_WAKER: usize = 2;
pub const K_PENDING: usize = 3;
pub const K_RUNTIME: usize = 4;
/// Scratch: a request's address (as S_RQ, for a worker's request on a lower device).
pub const K_RQ: usize = 5;
pub const K_WORDS: usize = 6;
pub const K_SLOTS: u32 = 4096;

/// Kinds of syscall (S_KIND).
pub const K_OTHER: i32 = 0;
/// One I/O per call when it returns > 0 (pread, pwrite, read, write, preadv...).
pub const K_SYNC: i32 = 1;
/// Waits for completions (io_getevents, io_uring_enter without submissions).
pub const K_REAP: i32 = 2;
/// Submits as many I/Os as it returns (io_submit, io_uring_enter with submissions).
pub const K_BATCH: i32 = 3;

/// A block request's record, in the slot a hash of its address (`struct request *`) picks
/// (the address is kept to recognise it; a request whose slot another in-flight one took is
/// lost, and counted nowhere: rare at the queue depths measured, see docs/explain.md).
pub const R_TID: usize = 0;
pub const R_DIR: usize = 1;
pub const R_TQ: usize = 2;
pub const R_TD: usize = 3;
pub const R_SEQ: usize = 4;
pub const R_FLAG: usize = 5;
/// A readahead request (REQ_RAHEAD): no I/O of fiox's waits for it as such.
pub const R_RA: usize = 6;
pub const R_PTR: usize = 7;
/// A lower device's request (made by a worker for R_TID), counted in D_L* only.
pub const R_LOWER: usize = 8;
pub const R_WORDS: usize = 9;
/// Request slots (a power of two).
pub const R_SLOTS: u32 = 1 << 16;

/// The window word array (a map of one value, mapped by user space; the programs address it
/// directly): `C_OPEN` the open window's start while one is open, 0 while closed (the marks'
/// test, one load); `C_START` the latest window's start, set before its programs are
/// attached: a start stamp older than it was taken in an earlier window and never pairs with
/// an end seen now; `C_GEN` the window's number, for what holds no time (a woken worker's
/// pending run).
pub const C_OPEN: usize = 0;
pub const C_START: usize = 1;
pub const C_GEN: usize = 2;
pub const C_WORDS: usize = 3;

/// Byte offset of word `i` (as an instruction's offset field).
pub const fn w(i: usize) -> i16 {
    (i * 8) as i16
}
