//! io_uring against real files with each of fio's io_uring options.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod common;

use common::*;
use fiox_engine::{create, BufPool, EngineError, IoOp};
use fiox_job::spec::EngineOptions;

/// io_uring may be disabled (kernel.io_uring_disabled) or filtered (seccomp): the harness probes
/// it with io_uring_setup and records the skip with what it found. Where the kernel has it, the
/// engine must start.
fn available() -> bool {
    if !kernel_io_uring() {
        return false;
    }
    create(&job("io_uring", 4, false, EngineOptions::default())).expect("io_uring engine");
    true
}

fn opts(f: impl FnOnce(&mut EngineOptions)) -> EngineOptions {
    let mut o = EngineOptions::default();
    f(&mut o);
    o
}

#[test]
fn io_uring_vectored_and_nonvectored() {
    if !available() {
        return;
    }
    battery("io_uring", 1, opts(|o| o.nonvectored = 0));
    battery("io_uring", 8, opts(|o| o.nonvectored = 0));
    battery("io_uring", 8, opts(|o| o.nonvectored = 1));
    battery("io_uring", 8, EngineOptions::default());
}

#[test]
fn io_uring_fixedbufs_and_registerfiles() {
    if !available() {
        return;
    }
    battery("io_uring", 8, opts(|o| o.fixedbufs = true));
    battery("io_uring", 8, opts(|o| o.registerfiles = true));
    battery(
        "io_uring",
        4,
        opts(|o| {
            o.fixedbufs = true;
            o.registerfiles = true;
        }),
    );
}

#[test]
fn io_uring_fixedbufs_without_registration_is_a_clear_error() {
    if !available() {
        return;
    }
    let dir = need_disk("fixednoreg");
    let j = job("io_uring", 2, false, opts(|o| o.fixedbufs = true));
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let pool = BufPool::new(1, 4096, 4096).unwrap();
    let err = e
        .queue(0, &unit(IoOp::Read, 0, 4096, pool.slot(0)))
        .unwrap_err();
    assert!(err.to_string().contains("fixedbufs"), "{err}");
}

#[test]
fn io_uring_sqpoll_force_async_nowait() {
    if !available() {
        return;
    }
    match create(&job("io_uring", 4, false, opts(|o| o.sqthread_poll = true))) {
        Ok(_) => battery("io_uring", 4, opts(|o| o.sqthread_poll = true)),
        Err(e) => {
            assert!(e.to_string().contains("sqthread_poll"), "{e}");
            skip_for_kernel("io_uring SQPOLL", &e.to_string());
        }
    }
    let cpu0 = opts(|o| {
        o.sqthread_poll = true;
        o.sqthread_poll_cpu = Some(0);
    });
    if create(&job("io_uring", 4, false, cpu0.clone())).is_ok() {
        battery("io_uring", 4, cpu0);
    }
    battery("io_uring", 8, opts(|o| o.force_async = 2));
    let dir = need_disk("urnowait");
    let j = job("io_uring", 2, false, opts(|o| o.nowait = true));
    let mut e = create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let pool = BufPool::new(1, 4096, 4096).unwrap();
    let r = run(e.as_mut(), 2, &[unit(IoOp::Read, 0, 4096, pool.slot(0))]);
    let ok = [4096, -(libc::EAGAIN as i64), -(libc::EOPNOTSUPP as i64)];
    assert!(ok.contains(&r[0]), "{r:?}");
}

#[test]
fn io_uring_bad_sqpoll_cpu_names_the_option() {
    if !available() {
        return;
    }
    let bad = opts(|o| {
        o.sqthread_poll = true;
        o.sqthread_poll_cpu = Some(100_000);
    });
    let err = create(&job("io_uring", 4, false, bad))
        .err()
        .expect("cpu 100000 accepted");
    assert!(err.to_string().contains("sqthread_poll"), "{err}");
}

#[test]
fn io_uring_hipri_polls_or_is_refused_naming_the_option() {
    if !available() {
        return;
    }
    let dir = need_disk("urhipri");
    let o = opts(|o| o.hipri = true);
    let j = job("io_uring", 4, true, o);
    let mut e = match create(&j) {
        Ok(e) => e,
        Err(err) => {
            assert!(err.to_string().contains("hipri"), "{err}");
            skip_for_kernel("io_uring IOPOLL", &err.to_string());
            return;
        }
    };
    let (f, path) = match open_test_file(&dir.0, &j) {
        Ok(x) => x,
        Err(EngineError::DirectUnsupported(_)) => {
            let fs = format!("O_DIRECT on the filesystem of {}", dir.0.display());
            skip_for_kernel(&fs, "open(O_DIRECT) refused (EINVAL)");
            return;
        }
        Err(err) => panic!("{err}"),
    };
    if let Err(err) = e.add_file(&engine_file(&f, &path)) {
        let msg = err.to_string();
        assert!(
            msg.contains("hipri") && msg.contains("poll queues"),
            "{msg}"
        );
        skip_for_kernel("polled I/O (poll queues) on the test file's device", &msg);
        return;
    }
    let pool = BufPool::new(2, 4096, 4096).unwrap();
    let units = [
        unit(IoOp::Read, 0, 4096, pool.slot(0)),
        unit(IoOp::Read, 8192, 4096, pool.slot(1)),
    ];
    assert_eq!(run(e.as_mut(), 4, &units), vec![4096, 4096]);
}

#[test]
fn io_uring_files_and_buffers_can_be_registered_again() {
    if !available() {
        return;
    }
    let dir = need_disk("urrereg");
    let o = opts(|o| {
        o.fixedbufs = true;
        o.registerfiles = true;
    });
    let j = job("io_uring", 2, false, o);
    let mut e = fiox_engine::create(&j).unwrap();
    let (f, path) = open_test_file(&dir.0, &j).unwrap();
    e.add_file(&engine_file(&f, &path)).unwrap();
    let pool = BufPool::new(2, 4096, 4096).unwrap();
    e.register_buffers(&pool).unwrap();
    assert_eq!(
        run(e.as_mut(), 2, &[unit(IoOp::Read, 0, 4096, pool.slot(0))]),
        vec![4096]
    );
    // A second file after the table was registered, and a new pool.
    let path2 = dir.0.join("second");
    std::fs::write(&path2, vec![7u8; 8192]).unwrap();
    let f2 = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path2)
        .unwrap();
    e.add_file(&engine_file(&f2, &path2)).unwrap();
    let pool2 = BufPool::new(1, 4096, 4096).unwrap();
    e.register_buffers(&pool2).unwrap();
    let mut u = unit(IoOp::Read, 4096, 4096, pool2.slot(0));
    u.file = 1;
    assert_eq!(run(e.as_mut(), 2, &[u]), vec![4096]);
    assert!(pool2.slice(0).iter().all(|&b| b == 7));
}

/// The ring loop's submit may wait in the same system call (`Direct::submit_rw`'s `wait`,
/// for jobs without per-I/O clocks), read of an empty pipe: asked for one completion, the
/// call returns only after a thread has written to the pipe (it marks that it is about to),
/// and the reap that follows finds the completion without waiting; not asked, the call
/// returns with nothing written (the thread writes only when told, after it) and the reap
/// waits. Both ways the read completes whole.
#[test]
fn io_uring_direct_submit_waits_in_the_same_call_when_asked() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};
    if !available() {
        return;
    }
    for wait in [0, 1] {
        let mut e = create(&job("io_uring", 4, false, EngineOptions::default())).unwrap();
        let (rx, mut tx) = std::io::pipe().unwrap();
        let f = std::fs::File::from(std::os::fd::OwnedFd::from(rx));
        e.add_file(&engine_file(&f, std::path::Path::new("pipe")))
            .unwrap();
        assert!(e.direct().unwrap().direct_ok().unwrap(), "a plain ring");
        let pool = BufPool::new(1, 4096, 4096).unwrap();
        let io = fiox_engine::RingIo {
            id: 7,
            file: 0,
            offset: 0,
            buf: pool.span(0, 0, 64).unwrap(),
            write: false,
            ioprio: 0,
        };
        let (go, told) = mpsc::channel::<()>();
        let written = Arc::new(AtomicBool::new(false));
        let marked = Arc::clone(&written);
        let writer = std::thread::spawn(move || {
            if wait == 0 {
                told.recv().unwrap();
            } else {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            marked.store(true, Ordering::SeqCst);
            std::io::Write::write_all(&mut tx, &[5u8; 64]).unwrap();
        });
        let (k, failed) = e.direct().unwrap().submit_rw(&[io], wait);
        assert_eq!((k, failed), (1, false), "wait {wait}");
        let mut got = Vec::new();
        let polled = e
            .direct()
            .unwrap()
            .reap_with(0, 1, |id, res| got.push((id, res)));
        if wait == 1 {
            assert!(
                written.load(Ordering::SeqCst),
                "the submit returned before the write"
            );
            assert_eq!(polled, Some(1), "the completion is in the ring already");
        } else {
            assert_eq!(polled, Some(0), "nothing written, nothing completed");
            go.send(()).unwrap();
            let waited = e
                .direct()
                .unwrap()
                .reap_with(1, 1, |id, res| got.push((id, res)));
            assert_eq!(waited, Some(1));
        }
        assert_eq!(got, [(7, 64)], "wait {wait}");
        writer.join().unwrap();
    }
}
