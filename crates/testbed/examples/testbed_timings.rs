//! Measures what the test targets cost: setup+teardown time of each resource kind, and a
//! quick look at the seed-001 question (reading a loop device whose backing file is read
//! buffered vs with direct I/O), plus FaultFs's per-request overhead. Run as root:
//! `cargo run --release -p fiox-testbed --example testbed_timings`.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_testbed::{
    cleanup_on_signals, Ext4Image, FaultFs, FaultFsOptions, LoopDevice, LoopOptions, TempDir,
    TmpfsMount,
};
use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time_n(n: usize, mut f: impl FnMut()) -> Duration {
    median(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn setup_costs(dir: &TempDir) -> fiox_testbed::Result<()> {
    let img = dir.path().join("setup.img");
    std::fs::File::create(&img)
        .and_then(|f| f.set_len(64 << 20))
        .map_err(|e| fiox_testbed::TestbedError::Invalid(e.to_string()))?;
    let t = time_n(10, || {
        drop(LoopDevice::attach(&img, &LoopOptions::default()).unwrap())
    });
    println!("loop attach+detach          median {t:?}");
    let t = time_n(10, || drop(TmpfsMount::new(16 << 20).unwrap()));
    println!("tmpfs mount+unmount         median {t:?}");
    let t = time_n(5, || {
        let mut e = Ext4Image::create(64 << 20).unwrap();
        e.mount().unwrap();
    });
    println!("ext4 64 MiB mkfs+mount+all  median {t:?}");
    let t = time_n(10, || {
        drop(FaultFs::mount(FaultFsOptions::default()).unwrap())
    });
    println!("FaultFs mount+unmount       median {t:?}");
    Ok(())
}

fn drop_caches() {
    let _ = std::fs::write("/proc/sys/vm/drop_caches", "3");
}

/// Read the whole device with O_DIRECT in 1 MiB requests; MiB/s.
fn read_device(dev: &LoopDevice, bytes: u64) -> f64 {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(dev.path())
        .unwrap();
    let mut raw = vec![0u8; 2 << 20];
    let skip = raw.as_ptr().align_offset(4096);
    let buf = &mut raw[skip..skip + (1 << 20)];
    let t = Instant::now();
    let mut off = 0;
    while off < bytes {
        off += f.read_at(buf, off).unwrap() as u64;
    }
    bytes as f64 / (1 << 20) as f64 / t.elapsed().as_secs_f64()
}

fn loop_modes(dir: &TempDir) {
    let size = 512u64 << 20;
    let img = dir.path().join("dio.img");
    let data = vec![0x5Au8; 1 << 20];
    let f = std::fs::File::create(&img).unwrap();
    for i in 0..size >> 20 {
        f.write_all_at(&data, i << 20).unwrap();
    }
    f.sync_all().unwrap();
    for dio in [false, true] {
        let opts = LoopOptions {
            direct_io: dio,
            block_size: Some(4096),
            ..LoopOptions::default()
        };
        let dev = LoopDevice::attach(&img, &opts).unwrap();
        drop_caches();
        let cold = read_device(&dev, size);
        let warm = read_device(&dev, size);
        println!(
            "loop dio={} seq read 1 MiB O_DIRECT: cold {cold:.0} MiB/s, second pass {warm:.0} MiB/s",
            dev.direct_io().unwrap() as u8
        );
    }
}

fn faultfs_overhead() {
    let fs = FaultFs::mount(FaultFsOptions {
        size: 64 << 20,
        ..FaultFsOptions::default()
    })
    .unwrap();
    let f = std::fs::File::open(fs.file_path()).unwrap();
    let mut buf = vec![0u8; 4096];
    let n = 20_000u64;
    let t = Instant::now();
    for i in 0..n {
        f.read_at(&mut buf, (i * 4096) % (64 << 20)).unwrap();
    }
    let per = t.elapsed() / n as u32;
    println!("FaultFs 4 KiB read (direct_io mode): {per:?} per request");
}

fn main() -> fiox_testbed::Result<()> {
    fiox_testbed::loop_support()?;
    cleanup_on_signals()?;
    let dir = TempDir::new_in(std::path::Path::new("/tmp"), "timings")?;
    setup_costs(&dir)?;
    loop_modes(&dir);
    faultfs_overhead();
    Ok(())
}
