use super::*;
use std::io::Read;

/// The TS fio 3.33's server sent for a 64 MiB null-engine randread job (job1 of two, group 0).
fn fio_ts() -> Vec<u8> {
    let gz = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/fio-server-ts-randread.bin.gz"
    ))
    .unwrap();
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn the_offsets_read_fios_own_ts() {
    let b = fio_ts();
    assert_eq!(b.len(), TS_PDU);
    let s = ts_summary(&b).unwrap();
    assert_eq!(s.name, "job1");
    assert_eq!((s.thread_number, s.groupid), (1, 0));
    assert_eq!(s.clat_samples, [16384, 0, 0]);
    assert!(s.clat_mean[0] > 1.0 && s.clat_mean[0] < 1e6, "{s:?}");
    assert_eq!(s.total_io_u, [16384, 0, 0, 0]);
    assert_eq!(s.io_bytes, [64 << 20, 0, 0]);
    assert_eq!((s.kb_base, s.unit_base, s.sig_figs), (1024, 4, 4));
    assert_eq!(s.group_max_run, [3, 3, 0]);
}

fn job() -> (JobResult, GroupResult) {
    let mut j = JobResult {
        name: "fiox-job".into(),
        jobs: 1,
        runtime_ms: 1000,
        percentile_list: vec![1.0, 50.0, 99.0],
        clat_percentiles: true,
        ..JobResult::default()
    };
    for v in [100u64, 200, 300, 5000] {
        j.dirs.write.clat.add(v);
        j.dirs.write.lat.add(v + 10);
    }
    j.dirs.write.total_ios = 4;
    j.dirs.write.io_bytes = 4 * 4096;
    j.dirs.write.runtime_ms = 1000;
    let mut g = GroupResult {
        kb_base: 1024,
        ..GroupResult::default()
    };
    g.dirs.write.max_runtime_ms = 1000;
    g.dirs.write.io_bytes = 4 * 4096;
    (j, g)
}

#[test]
fn fiox_results_take_fios_layout() {
    let (j, g) = job();
    let b = ts_pdu(&j, 3, &g);
    assert_eq!(b.len(), TS_PDU);
    let s = ts_summary(&b).unwrap();
    assert_eq!(s.name, "fiox-job");
    assert_eq!(s.thread_number, 3);
    assert_eq!(s.clat_samples, [0, 4, 0]);
    assert_eq!(s.clat_mean[1], 1400.0);
    assert_eq!(s.total_io_u, [0, 4, 0, 0]);
    assert_eq!(s.io_bytes, [0, 16384, 0]);
    assert_eq!((s.kb_base, s.unit_base, s.sig_figs), (1024, 4, 4));
    assert_eq!(s.group_max_run, [0, 1000, 0]);
    // The write clat histogram (io_u_plat[FIO_CLAT][DDIR_WRITE]) has the four samples in
    // fio's buckets: 100 is exact, the others land in their log-linear buckets.
    let at = off::IO_U_PLAT + (3 + 1) * FIO_NBUCKETS * 8;
    let count = |i: usize| u64::from_le_bytes(b[at + i * 8..at + i * 8 + 8].try_into().unwrap());
    assert_eq!(count(100), 1);
    let total: u64 = (0..FIO_NBUCKETS).map(count).sum();
    assert_eq!(total, 4);
    // The percentile list as fio's server sends it (1.0 first).
    let p = off::PERCENTILE_LIST;
    assert_eq!(&b[p..p + 8], &1.0f64.to_bits().to_le_bytes());
}

#[test]
fn group_and_disk_payloads_have_fios_sizes() {
    let (_, g) = job();
    assert_eq!(group_stat(&g).len(), GROUP_STAT);
    let d = DiskResult {
        name: "nvme0n1".into(),
        io_ticks: 500,
        util: 50.0,
        slaves: vec![DiskResult {
            util: 70.0,
            ..DiskResult::default()
        }],
        ..DiskResult::default()
    };
    let b = du_pdu(&d, 2000);
    assert_eq!(b.len(), DU_PDU);
    // msec such that fio's client computes the same 50% utilisation.
    let msec = u64::from_le_bytes(b[64 + 80..64 + 88].try_into().unwrap());
    assert_eq!(msec, 1000);
    // One slave, its utilisation as the aggregate's max_util.
    assert_eq!(&b[152 + 80..152 + 84], &1u32.to_le_bytes());
    assert_eq!(&b[240..248], &70.0f64.to_bits().to_le_bytes());
}

#[test]
fn a_short_ts_is_an_error() {
    assert!(ts_summary(&fio_ts()[..1000]).is_err());
}

#[test]
fn fios_own_ts_decodes_into_a_result() {
    let (j, g) = decode_ts(&fio_ts()).unwrap();
    assert_eq!(j.name, "job1");
    assert_eq!(j.groupid, 0);
    assert_eq!(j.dirs.read.clat.n, 16384);
    assert_eq!(j.dirs.read.clat.hist.count(), 16384, "fio's clat histogram");
    assert_eq!(j.dirs.read.total_ios, 16384);
    assert_eq!(j.dirs.read.io_bytes, 64 << 20);
    assert_eq!(j.percentile_list.len(), 17, "fio's default list");
    assert!(j.clat_percentiles);
    assert_eq!(j.iodepth, 1);
    assert_eq!(j.sig_figs, 4);
    assert_eq!((g.kb_base, g.unit_base), (1024, 0));
    assert_eq!(g.dirs.read.max_runtime_ms, 3);
    assert_eq!(g.dirs.read.io_bytes, 64 << 20);
}
