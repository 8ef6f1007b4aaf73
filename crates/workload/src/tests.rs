//! Generator tests against fio 3.33: the fixtures under `tests/fixtures` are fio's own
//! `write_iolog` output for each case (regenerate with `tests/fixtures/gen.sh`), and each test
//! builds the same job as a `JobSpec` and requires the identical I/O sequence.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

use fiox_job::{
    BsSpec, Ddir, FileServiceType, JobSpec, PerDir, RandomDistribution, RandomGenerator, RwMode,
    RwSpec, SizeSpec, Zone,
};

use crate::{FileExtent, GenOptions, Generator, IoReq};

const K: u64 = 1024;

fn job(mode: RwMode, size: u64) -> JobSpec {
    JobSpec {
        rw: RwSpec { mode, n: 0 },
        size: Some(SizeSpec::Bytes(size)),
        ..JobSpec::default()
    }
}

fn one_file(size: u64) -> Vec<FileExtent> {
    vec![FileExtent { offset: 0, size }]
}

/// Run every pass fio would run (no time limit) and collect the I/Os.
fn run_all(g: &mut Generator) -> Vec<IoReq> {
    let mut out = Vec::new();
    loop {
        while let Some(io) = g.next() {
            out.push(io);
            assert!(out.len() < 10_000_000, "runaway generator");
        }
        if !g.another_pass() {
            return out;
        }
        g.restart();
    }
}

fn gen(j: &JobSpec, files: &[FileExtent], io_bytes: u64) -> Vec<IoReq> {
    let mut g = Generator::new(j, files, io_bytes).expect("generator");
    run_all(&mut g)
}

fn fixture(name: &str) -> Vec<IoReq> {
    let path = format!("{}/tests/fixtures/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let ddir = match f[0] {
                "read" => Ddir::Read,
                "write" => Ddir::Write,
                _ => Ddir::Trim,
            };
            IoReq {
                ddir,
                file: f[1].parse().unwrap(),
                offset: f[2].parse().unwrap(),
                len: f[3].parse().unwrap(),
            }
        })
        .collect()
}

fn assert_same(name: &str, got: &[IoReq]) {
    let want = fixture(name);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{name}: I/O #{i} differs from fio");
    }
    assert_eq!(got.len(), want.len(), "{name}: I/O count differs from fio");
}

fn bytes(ios: &[IoReq]) -> u64 {
    ios.iter().map(|i| i.len as u64).sum()
}

#[test]
fn randread_matches_fio_sequence() {
    let got = gen(&job(RwMode::RandRead, 64 * K), &one_file(64 * K), 64 * K);
    assert_same("randread_64k", &got);
    let got = gen(
        &job(RwMode::RandRead, 1024 * K),
        &one_file(1024 * K),
        1024 * K,
    );
    assert_eq!(got.len(), 256);
    assert_eq!(bytes(&got), 1 << 20);
    assert_same("randread_1m", &got);
}

#[test]
fn random_map_visits_each_block_exactly_once() {
    let got = gen(
        &job(RwMode::RandWrite, 4096 * K),
        &one_file(4096 * K),
        4096 * K,
    );
    let mut seen = vec![0u8; 1024];
    for io in &got {
        assert_eq!(io.len, 4096);
        seen[(io.offset / 4096) as usize] += 1;
    }
    assert!(seen.iter().all(|&n| n == 1));
}

#[test]
fn sequential_read_stops_before_partial_block() {
    // fio does not issue a short final I/O: 10k with 4k blocks is two reads.
    let got = gen(&job(RwMode::Read, 10 * K), &one_file(10 * K), 10 * K);
    assert_same("read_10k", &got);
    let got = gen(&job(RwMode::Read, 1024 * K), &one_file(1024 * K), 1024 * K);
    assert_eq!(got.len(), 256);
    assert!(got
        .iter()
        .enumerate()
        .all(|(i, io)| io.offset == i as u64 * 4096));
}

#[test]
fn sequential_holes_skip_and_wrap_like_fio() {
    let mut j = job(RwMode::Read, 64 * K);
    j.rw.n = 8 * K;
    let got = gen(&j, &one_file(64 * K), 64 * K);
    assert_same("read_holes", &got);
}

#[test]
fn randrw_mix_matches_fio() {
    let mut j = job(RwMode::RandRw, 256 * K);
    j.rwmixread = 70;
    let got = gen(&j, &one_file(256 * K), 256 * K);
    assert_same("randrw_70", &got);
    let mut j = job(RwMode::ReadWrite, 256 * K);
    j.rwmixread = 30;
    assert_same("rw_30", &gen(&j, &one_file(256 * K), 256 * K));
}

#[test]
fn randseed_changes_mix_but_randrepeat_pins_offsets_stream() {
    let mut j = job(RwMode::RandRw, 256 * K);
    j.rand.randseed = 1234;
    assert_same("randseed1234", &gen(&j, &one_file(256 * K), 256 * K));
}

#[test]
fn bsrange_matches_fio() {
    let mut j = job(RwMode::RandRead, 256 * K);
    j.bs = PerDir::all(BsSpec {
        min: 4 * K,
        max: 16 * K,
        split: Vec::new(),
    });
    let got = gen(&j, &one_file(256 * K), 256 * K);
    assert_same("bsrange", &got);
    assert_eq!(bytes(&got), 256 * K);
}

fn bssplit_job(mode: RwMode) -> JobSpec {
    let mut j = job(mode, 1024 * K);
    j.bs = PerDir::all(BsSpec {
        min: 4 * K,
        max: 64 * K,
        split: vec![(4 * K, 50), (16 * K, 30), (64 * K, 20)],
    });
    j
}

#[test]
fn bssplit_matches_fio() {
    let got = gen(
        &bssplit_job(RwMode::RandWrite),
        &one_file(1024 * K),
        1024 * K,
    );
    assert_same("bssplit", &got);
    let got = gen(&bssplit_job(RwMode::Write), &one_file(1024 * K), 1024 * K);
    assert_same("bssplit_seq", &got);
    assert_eq!(bytes(&got), 1024 * K);
}

#[test]
fn random_with_sequential_runs() {
    let mut j = job(RwMode::RandRead, 128 * K);
    j.rw.n = 4;
    assert_same("randread_seq4", &gen(&j, &one_file(128 * K), 128 * K));
}

#[test]
fn generators_match_fio() {
    let mut j = job(RwMode::RandRead, 256 * K);
    j.rand.generator = RandomGenerator::Lfsr;
    assert_same("lfsr", &gen(&j, &one_file(256 * K), 256 * K));
    j.rand.generator = RandomGenerator::Tausworthe64;
    assert_same("taus64", &gen(&j, &one_file(256 * K), 256 * K));
}

#[test]
fn norandommap_may_repeat() {
    let mut j = job(RwMode::RandRead, 128 * K);
    j.rand.norandommap = true;
    let got = gen(&j, &one_file(128 * K), 128 * K);
    assert_same("norandommap", &got);
    let mut offs: Vec<u64> = got.iter().map(|i| i.offset).collect();
    offs.sort_unstable();
    offs.dedup();
    assert!(offs.len() < got.len(), "norandommap repeated some block");
}

#[test]
fn zoned_matches_fio() {
    let mut j = job(RwMode::RandRead, 1024 * K);
    let zones = vec![
        Zone {
            access_pct: 60.0,
            size: 10.0,
        },
        Zone {
            access_pct: 30.0,
            size: 20.0,
        },
        Zone {
            access_pct: 10.0,
            size: 70.0,
        },
    ];
    j.rand.distribution = RandomDistribution::Zoned(PerDir::all(zones));
    let got = gen(&j, &one_file(1024 * K), 1024 * K);
    assert_same("zoned", &got);
    // 60% of accesses in the first 10% of the file, on this fixed seed.
    let hot = got.iter().filter(|i| i.offset < 1024 * K / 10).count();
    assert!((140..=170).contains(&hot), "{hot} of 256 in the hot zone");
}

fn dist_job(d: RandomDistribution) -> Vec<IoReq> {
    let mut j = job(RwMode::RandRead, 1024 * K);
    j.rand.distribution = d;
    let opts = GenOptions {
        file_names: Some(vec!["/tmp/fiox-wl-fixture".to_string()]),
        ..GenOptions::default()
    };
    let mut g = Generator::with_options(&j, &one_file(1024 * K), 1024 * K, &opts).unwrap();
    run_all(&mut g)
}

#[test]
fn zipf_pareto_normal_match_fio() {
    assert_same("normal", &dist_job(RandomDistribution::Normal(10.0)));
    assert_same("pareto", &dist_job(RandomDistribution::Pareto(0.3)));
    let z = dist_job(RandomDistribution::Zipf(1.2));
    assert_same("zipf", &z);
    let mut counts = std::collections::HashMap::new();
    for io in &z {
        *counts.entry(io.offset).or_insert(0u32) += 1;
    }
    assert!(counts.values().any(|&c| c >= 10), "zipf has a hot block");
}

fn three_files() -> Vec<FileExtent> {
    vec![
        FileExtent {
            offset: 0,
            size: 32 * K,
        };
        3
    ]
}

#[test]
fn file_service_types_match_fio() {
    let mut j = job(RwMode::Read, 96 * K);
    j.files.nrfiles = 3;
    assert_same("nrfiles3", &gen(&j, &three_files(), 96 * K));
    let mut j = job(RwMode::RandRead, 96 * K);
    j.files.nrfiles = 3;
    j.files.file_service_type = FileServiceType::Random(1);
    assert_same("nrfiles3_rand", &gen(&j, &three_files(), 96 * K));
    let mut j = job(RwMode::RandWrite, 96 * K);
    j.files.nrfiles = 3;
    j.files.file_service_type = FileServiceType::Sequential(1);
    assert_same("nrfiles3_seq", &gen(&j, &three_files(), 96 * K));
}

#[test]
fn trimwrite_alternates() {
    let got = gen(&job(RwMode::TrimWrite, 64 * K), &one_file(64 * K), 64 * K);
    assert_same("trimwrite", &got);
}

#[test]
fn percentage_random_matches_fio() {
    let mut j = job(RwMode::RandRead, 256 * K);
    j.rand.percentage_random = PerDir::all(50);
    assert_same("perc_rand50", &gen(&j, &one_file(256 * K), 256 * K));
}

#[test]
fn loops_repeat_the_same_offsets() {
    let mut j = job(RwMode::RandRead, 64 * K);
    j.timing.loops = 2;
    let got = gen(&j, &one_file(64 * K), 64 * K);
    assert_same("loops2", &got);
    assert_eq!(got[..16], got[16..]);
}

#[test]
fn number_ios_caps_the_count() {
    let mut j = job(RwMode::RandRead, 1024 * K);
    j.number_ios = Some(10);
    assert_same("number_ios", &gen(&j, &one_file(1024 * K), 1024 * K));
}

#[test]
fn io_size_larger_than_size_runs_extra_passes() {
    let mut j = job(RwMode::RandRead, 64 * K);
    j.io_size = Some(SizeSpec::Bytes(256 * K));
    assert_same("io_size", &gen(&j, &one_file(64 * K), 256 * K));
}

#[test]
fn blockalign_turns_off_the_map() {
    let mut j = job(RwMode::RandRead, 64 * K);
    j.blockalign = PerDir::all(Some(512));
    assert_same("blockalign", &gen(&j, &one_file(64 * K), 64 * K));
}

#[test]
fn per_direction_block_sizes() {
    let mut j = job(RwMode::RandRw, 256 * K);
    j.bs = PerDir {
        read: BsSpec::fixed(4 * K),
        write: BsSpec::fixed(16 * K),
        trim: BsSpec::fixed(16 * K),
    };
    assert_same("bs_rw_diff", &gen(&j, &one_file(256 * K), 256 * K));
}

#[test]
fn extent_offset_is_added() {
    let j = job(RwMode::RandRead, 64 * K);
    let files = vec![FileExtent {
        offset: 32 * K,
        size: 64 * K,
    }];
    assert_same("offset", &gen(&j, &files, 64 * K));
}

/// A time_based run: restart whenever a pass ends, keep the first `n` I/Os.
fn gen_time_based(j: &JobSpec, files: &[FileExtent], io_bytes: u64, n: usize) -> Vec<IoReq> {
    let mut g = Generator::new(j, files, io_bytes).unwrap();
    let mut out = Vec::new();
    while out.len() < n {
        match g.next() {
            Some(io) => out.push(io),
            None => {
                assert!(g.another_pass(), "time_based always continues");
                g.restart();
            }
        }
    }
    out
}

fn time_based(mut j: JobSpec) -> JobSpec {
    j.timing.time_based = true;
    j
}

#[test]
fn time_based_wraps_like_fio() {
    let files = one_file(16 * K);
    let j = time_based(job(RwMode::RandRead, 16 * K));
    assert_same("tb_randread", &gen_time_based(&j, &files, 16 * K, 200));
    let j = time_based(job(RwMode::Read, 16 * K));
    assert_same("tb_read", &gen_time_based(&j, &files, 16 * K, 200));
    let mut j = time_based(job(RwMode::RandRead, 16 * K));
    j.rand.generator = RandomGenerator::Lfsr;
    assert_same("tb_lfsr", &gen_time_based(&j, &files, 16 * K, 200));
    let mut j = time_based(job(RwMode::Read, 16 * K));
    j.files.nrfiles = 2;
    let two = vec![
        FileExtent {
            offset: 0,
            size: 8 * K
        };
        2
    ];
    assert_same("tb_read_2files", &gen_time_based(&j, &two, 16 * K, 200));
}

#[test]
fn zoned_abs_matches_fio() {
    let mut j = job(RwMode::RandRead, 1024 * K);
    let zones = vec![
        Zone {
            access_pct: 60.0,
            size: (128 * K) as f64,
        },
        Zone {
            access_pct: 40.0,
            size: (896 * K) as f64,
        },
    ];
    j.rand.distribution = RandomDistribution::ZonedAbs(PerDir::all(zones));
    let got = gen(&j, &one_file(1024 * K), 1024 * K);
    assert_same("zoned_abs", &got);
    let hot = got.iter().filter(|i| i.offset < 128 * K).count();
    assert!((140..=170).contains(&hot), "{hot} of 256 in the first 128k");
}

#[test]
fn more_file_service_types_match_fio() {
    let mut j = job(RwMode::RandRead, 256 * K);
    j.files.nrfiles = 4;
    j.files.file_service_type = FileServiceType::Zipf(1.2);
    let four = vec![
        FileExtent {
            offset: 0,
            size: 64 * K
        };
        4
    ];
    assert_same("fst_zipf", &gen(&j, &four, 256 * K));
    let mut j = job(RwMode::Read, 96 * K);
    j.files.nrfiles = 3;
    j.files.file_service_type = FileServiceType::RoundRobin(2);
    assert_same("rr2", &gen(&j, &three_files(), 96 * K));
}

#[test]
fn trims_match_fio() {
    assert_same(
        "randtrim",
        &gen(&job(RwMode::RandTrim, 64 * K), &one_file(64 * K), 64 * K),
    );
    assert_same(
        "trim",
        &gen(&job(RwMode::Trim, 64 * K), &one_file(64 * K), 64 * K),
    );
}

fn range(min: u64, max: u64) -> PerDir<BsSpec> {
    PerDir::all(BsSpec {
        min,
        max,
        split: Vec::new(),
    })
}

#[test]
fn odd_and_unaligned_block_ranges_match_fio() {
    let mut j = job(RwMode::RandWrite, 256 * K);
    j.bs = range(3 * K, 10 * K);
    let got = gen(&j, &one_file(256 * K), 256 * K);
    // Multiples of the minimum, except the cap: fio clamps to max after aligning.
    assert!(got
        .iter()
        .all(|io| matches!(io.len, 3072 | 6144 | 9216 | 10240)));
    assert_same("bsrange_odd", &got);
    let mut j = job(RwMode::RandRead, 256 * K);
    j.bs = range(K, 9 * K);
    j.bs_unaligned = true;
    assert_same("bs_unaligned", &gen(&j, &one_file(256 * K), 256 * K));
}

#[test]
fn filesize_range_sizes_and_sequence_match_fio() {
    let mut j = job(RwMode::Read, 0);
    j.size = None;
    j.files.nrfiles = 4;
    j.files.filesize = Some((16 * K, 64 * K));
    let sizes = crate::split_size(&j, 4, None, j.rand.randseed);
    let files: Vec<FileExtent> = sizes
        .iter()
        .map(|s| FileExtent {
            offset: 0,
            size: s.unwrap(),
        })
        .collect();
    let total = files.iter().map(|f| f.size).sum();
    let got = gen(&j, &files, total);
    assert_same("filesize_range", &got);
}

#[test]
fn mixed_modes_with_runs_and_loops_match_fio() {
    let mut j = job(RwMode::RandRw, 256 * K);
    j.rw.n = 3;
    assert_same("randrw_seq3", &gen(&j, &one_file(256 * K), 256 * K));
    let mut j = job(RwMode::RandRw, 64 * K);
    j.timing.loops = 3;
    assert_same("loops3_randrw", &gen(&j, &one_file(64 * K), 64 * K));
}

#[test]
fn norandommap_write_uses_io_size_budget() {
    let mut j = job(RwMode::RandWrite, 64 * K);
    j.rand.norandommap = true;
    j.io_size = Some(SizeSpec::Bytes(128 * K));
    let got = gen(&j, &one_file(64 * K), 128 * K);
    assert_eq!(bytes(&got), 128 * K);
    assert_same("nomap_io_size", &got);
}

#[test]
fn holes_with_block_range_match_fio() {
    let mut j = job(RwMode::Write, 256 * K);
    j.bs = range(4 * K, 16 * K);
    j.rw.n = 4 * K;
    assert_same("write_holes_bsr", &gen(&j, &one_file(256 * K), 256 * K));
}

#[test]
fn second_job_has_its_own_streams() {
    let mut j = job(RwMode::RandRw, 64 * K);
    j.index = 1;
    let got = gen(&j, &one_file(64 * K), 64 * K);
    assert_same("second_job", &got);
    let first = gen(&job(RwMode::RandRw, 64 * K), &one_file(64 * K), 64 * K);
    assert_ne!(got, first);
}

/// fio 3.33 with psync on an existing 64k file and `size=10k`: the third 4k read overhangs
/// the 10k region because the file is larger (fio checks I/O ends against the real size).
#[test]
fn real_file_size_allows_overhang_as_fio() {
    let files = one_file(10 * K);
    let opts = GenOptions {
        real_sizes: Some(vec![64 * K]),
        ..GenOptions::default()
    };
    let mut g = Generator::with_options(&job(RwMode::Read, 10 * K), &files, 10 * K, &opts).unwrap();
    let offs: Vec<(u64, u32)> = run_all(&mut g).iter().map(|i| (i.offset, i.len)).collect();
    assert_eq!(offs, vec![(0, 4096), (4096, 4096), (8192, 4096)]);
    let mut j = job(RwMode::RandRead, 10 * K);
    j.bs = range(4 * K, 8 * K);
    let mut g = Generator::with_options(&j, &files, 10 * K, &opts).unwrap();
    let offs: Vec<(u64, u32)> = run_all(&mut g).iter().map(|i| (i.offset, i.len)).collect();
    assert_eq!(offs, vec![(0, 4096), (4096, 4096)]);
}

#[test]
fn bad_jobs_are_errors_not_panics() {
    use crate::WorkloadError as E;
    let j = job(RwMode::Read, 64 * K);
    assert_eq!(Generator::new(&j, &[], 64 * K).unwrap_err(), E::NoFiles);
    let mut z = j.clone();
    z.bs = PerDir::all(BsSpec::fixed(0));
    assert!(matches!(
        Generator::new(&z, &one_file(64 * K), 64 * K).unwrap_err(),
        E::ZeroBlockSize { .. }
    ));
    let mut inv = j.clone();
    inv.bs = range(16 * K, 4 * K);
    assert!(matches!(
        Generator::new(&inv, &one_file(64 * K), 64 * K).unwrap_err(),
        E::BadBlockRange { .. }
    ));
    let mut big = j.clone();
    big.bs = PerDir::all(BsSpec::fixed(128 * K));
    assert!(matches!(
        Generator::new(&big, &one_file(64 * K), 64 * K).unwrap_err(),
        E::BlockSizeTooLarge { .. }
    ));
    let mut zones = job(RwMode::RandRead, 64 * K);
    let bad = vec![Zone {
        access_pct: 50.0,
        size: 100.0,
    }];
    zones.rand.distribution = RandomDistribution::Zoned(PerDir::all(bad));
    let e = Generator::new(&zones, &one_file(64 * K), 64 * K).unwrap_err();
    assert!(e.to_string().contains("add up to 50"), "{e}");
    let mut abs = job(RwMode::RandRead, 64 * K);
    let far = vec![Zone {
        access_pct: 100.0,
        size: (128 * K) as f64,
    }];
    abs.rand.distribution = RandomDistribution::ZonedAbs(PerDir::all(far));
    assert!(matches!(
        Generator::new(&abs, &one_file(64 * K), 64 * K).unwrap_err(),
        E::BadZones { .. }
    ));
    let mut zipf = job(RwMode::RandRead, 64 * K);
    zipf.rand.distribution = RandomDistribution::Zipf(1.0);
    assert!(matches!(
        Generator::new(&zipf, &one_file(64 * K), 64 * K).unwrap_err(),
        E::BadDistribution(_)
    ));
    assert_eq!(
        Generator::new(&j, &one_file(64 * K), 0).unwrap_err(),
        E::NothingToDo
    );
    let opts = GenOptions {
        file_names: Some(vec![]),
        ..GenOptions::default()
    };
    assert!(matches!(
        Generator::with_options(&j, &one_file(64 * K), 64 * K, &opts).unwrap_err(),
        E::FileListMismatch(1, 0)
    ));
}

#[test]
fn randrepeat_off_follows_the_supplied_seed() {
    let mut j = job(RwMode::RandRw, 256 * K);
    j.rand.randrepeat = false;
    let files = one_file(256 * K);
    let with = |seed| {
        let opts = GenOptions {
            seed: Some(seed),
            ..GenOptions::default()
        };
        let mut g = Generator::with_options(&j, &files, 256 * K, &opts).unwrap();
        assert_eq!(g.seed(), seed);
        run_all(&mut g)
    };
    let a = with(11);
    assert_eq!(a, with(11), "same seed, same sequence");
    let b = with(12);
    let a_offs: Vec<u64> = a.iter().map(|i| i.offset).collect();
    let b_offs: Vec<u64> = b.iter().map(|i| i.offset).collect();
    assert_ne!(
        a_offs, b_offs,
        "without randrepeat the seed moves offsets too"
    );
    assert_eq!(bytes(&a), 256 * K);
    assert_eq!(bytes(&b), 256 * K);
}

#[test]
fn exact_counts_for_common_shapes() {
    for (mode, bs, size, ios) in [
        (RwMode::Read, 4 * K, 1024 * K, 256),
        (RwMode::Write, 64 * K, 1024 * K, 16),
        (RwMode::RandRead, 8 * K, 1024 * K, 128),
        (RwMode::RandWrite, 4 * K, 512 * K, 128),
        (RwMode::RandRw, 4 * K, 1024 * K, 256),
        (RwMode::ReadWrite, 16 * K, 1024 * K, 64),
        (RwMode::TrimWrite, 4 * K, 64 * K, 32),
    ] {
        let mut j = job(mode, size);
        j.bs = PerDir::all(BsSpec::fixed(bs));
        let got = gen(&j, &one_file(size), size);
        assert_eq!(got.len(), ios, "{mode:?} bs={bs} size={size}");
        let data: u64 = got
            .iter()
            .filter(|i| i.ddir != Ddir::Trim || mode == RwMode::RandTrim)
            .map(|i| i.len as u64)
            .sum();
        assert_eq!(data, size, "{mode:?} bytes");
        assert!(got.iter().all(|i| i.offset + i.len as u64 <= size));
    }
}

#[test]
fn empty_file_is_skipped_like_fio() {
    let files = vec![
        FileExtent { offset: 0, size: 0 },
        FileExtent {
            offset: 0,
            size: 64 * K,
        },
    ];
    for dist in [RandomDistribution::Random, RandomDistribution::Zipf(1.2)] {
        let mut j = job(RwMode::RandRead, 64 * K);
        j.files.nrfiles = 2;
        j.rand.distribution = dist;
        let got = gen(&j, &files, 64 * K);
        assert_eq!(bytes(&got), 64 * K);
        assert!(got.iter().all(|io| io.file == 1));
    }
}

#[test]
fn rate_pick_overrides_and_sticks() {
    let j = job(RwMode::RandRw, 256 * K);
    let mut g = Generator::new(&j, &one_file(256 * K), 256 * K).unwrap();
    let mut all = Vec::new();
    while let Some(io) = g.next_rated(|_| Ddir::Write) {
        all.push(io);
    }
    assert_eq!(all.len(), 64);
    assert!(all.iter().all(|io| io.ddir == Ddir::Write));
    // identity pick is plain next()
    let a = gen(&j, &one_file(256 * K), 256 * K);
    let mut g = Generator::new(&j, &one_file(256 * K), 256 * K).unwrap();
    let mut b = Vec::new();
    while let Some(io) = g.next_rated(|d| d) {
        b.push(io);
    }
    assert_eq!(a, b);
}

#[test]
fn ramp_over_restarts_issue_counts() {
    let mut j = job(RwMode::RandRead, 1024 * K);
    j.number_ios = Some(10);
    let mut g = Generator::new(&j, &one_file(1024 * K), 1024 * K).unwrap();
    let mut n = 0;
    while g.next().is_some() {
        n += 1;
        if n == 5 {
            g.ramp_over();
            assert_eq!(g.issued(), [0, 0, 0]);
        }
    }
    // fio counts number_ios from the end of the ramp
    assert_eq!(n, 15);
    assert_eq!(g.issued_bytes()[0], 15 * 4096);
}

/// fio 3.33 (checked with the null engine at QD1 and libaio at QD4): a sync engine's pass
/// is not cut at `size` bytes, so a norandommap pass runs on to the loops limit without
/// reseeding; a queueing engine ends the pass at `size` and the reseeded second loop repeats.
#[test]
fn pass_end_depends_on_engine_completion() {
    let mut j = job(RwMode::RandRead, 64 * K);
    j.rand.norandommap = true;
    j.timing.loops = 2;
    let sync = gen(&j, &one_file(64 * K), 64 * K);
    assert_eq!(sync.len(), 32);
    assert_ne!(sync[..16], sync[16..]);
    j.ioengine = "libaio".into();
    j.iodepth = 4;
    let queued = gen(&j, &one_file(64 * K), 64 * K);
    assert_eq!(queued.len(), 32);
    assert_eq!(queued[..16], queued[16..]);
    assert_eq!(sync[..16], queued[..16]);
}

#[test]
fn verify_jobs_draw_write_sizes_from_the_read_stream() {
    let mut j = job(RwMode::RandWrite, 128 * K);
    j.bs = range(4 * K, 16 * K);
    j.verify.method = fiox_job::VerifyMethod::Crc32c;
    let got = gen(&j, &one_file(128 * K), 128 * K);
    assert_same("verify_writes", &got);
    j.verify.method = fiox_job::VerifyMethod::None;
    assert_ne!(gen(&j, &one_file(128 * K), 128 * K), got);
}

/// Jobs the plain random path takes: the three directions, no map, lfsr, the 64-bit
/// generator, io_size beyond the file, loops, block alignment, number_ios.
fn plain_path_jobs() -> Vec<JobSpec> {
    let mut cases = Vec::new();
    for mode in [RwMode::RandRead, RwMode::RandWrite, RwMode::RandTrim] {
        cases.push(job(mode, 64 * K));
    }
    let mut j = job(RwMode::RandRead, 64 * K);
    j.rand.norandommap = true;
    cases.push(j.clone());
    j.rand.norandommap = false;
    j.rand.generator = RandomGenerator::Lfsr;
    cases.push(j.clone());
    j.rand.generator = RandomGenerator::Tausworthe64;
    cases.push(j.clone());
    let mut j = job(RwMode::RandRead, 64 * K);
    j.io_size = Some(SizeSpec::Bytes(200 * K));
    cases.push(j.clone());
    j.timing.loops = 3;
    cases.push(j);
    let mut j = job(RwMode::RandRead, 64 * K);
    j.blockalign = PerDir::all(Some(512));
    cases.push(j);
    let mut j = job(RwMode::RandWrite, 64 * K);
    j.number_ios = Some(7);
    cases.push(j.clone());
    j.timing.loops = 3;
    cases.push(j);
    let mut j = job(RwMode::RandTrim, 64 * K);
    j.number_ios = Some(40);
    j.io_size = Some(SizeSpec::Bytes(100 * K));
    j.timing.loops = 2;
    cases.push(j);
    cases
}

/// The plain random path (`Generator::fill_fast`) yields exactly what the general path
/// yields for every job it takes: both run side by side, time_based wrap-arounds, extra
/// passes, offsets, lfsr, the 64-bit generator, no map and the three directions included.
#[test]
fn plain_random_path_matches_the_general_path() {
    let cases = plain_path_jobs();
    let files = vec![FileExtent {
        offset: 12 * K,
        size: 60 * K,
    }];
    for (i, j) in cases.iter().enumerate() {
        let fast = Generator::new(j, &files, 60 * K).unwrap();
        assert!(fast.fast.is_some(), "case {i} takes the plain path");
        let mut general = fast.clone();
        general.fast = None;
        assert_eq!(
            run_all(&mut fast.clone()),
            run_all(&mut general),
            "case {i}"
        );
        // time_based: passes restart and the file wraps inside a pass.
        let tb = time_based(j.clone());
        let mut a = Generator::new(&tb, &files, 60 * K).unwrap();
        let mut b = a.clone();
        b.fast = None;
        for n in 0..400 {
            let (x, y) = (a.next(), b.next());
            assert_eq!(x, y, "time_based case {i}, I/O {n}");
            assert_eq!(a.take_wrapped(), b.take_wrapped(), "case {i}, I/O {n}");
            if x.is_none() {
                assert_eq!(a.another_pass(), b.another_pass());
                a.restart();
                b.restart();
            }
        }
    }
    // Jobs outside its conditions take the general path.
    let mut j = job(RwMode::RandRw, 64 * K);
    assert!(Generator::new(&j, &files, 60 * K).unwrap().fast.is_none());
    j.rw.mode = RwMode::RandRead;
    j.rw.n = 4;
    assert!(Generator::new(&j, &files, 60 * K).unwrap().fast.is_none());
    j.rw.n = 0;
    j.bs = range(4 * K, 16 * K);
    assert!(Generator::new(&j, &files, 60 * K).unwrap().fast.is_none());
}

/// `next_batch` yields exactly what `next` yields one by one, in batches of every size, for
/// the jobs of the plain random path (limits of bytes, I/Os and passes, loops, time_based
/// wrap-arounds, a map that fills) and nothing for the others, which go on with `next`.
#[test]
fn next_batch_yields_what_next_yields() {
    let mut cases = plain_path_jobs();
    // Without a map the byte limits, not the file's end, stop the pass: the batch's room.
    let mut j = job(RwMode::RandRead, 64 * K);
    j.rand.norandommap = true;
    j.io_size = Some(SizeSpec::Bytes(200 * K));
    cases.push(j.clone());
    j.timing.loops = 3;
    cases.push(j);
    // A byte budget that ends inside a block, and (below) a file whose end cuts a block:
    // the batch fill's block limit against `fill_fast`'s byte bounds.
    let mut j = job(RwMode::RandRead, 64 * K);
    j.io_size = Some(SizeSpec::Bytes(30 * K + 100));
    cases.push(j);
    cases.push(job(RwMode::RandRw, 64 * K)); // not on the plain path: batches of 0
    let extents = [(12 * K, 60 * K), (12 * K, 62 * K + 512), (0, 5 * K + 512)];
    for (i, j) in cases.iter().enumerate() {
        for ((offset, size), tb) in extents.iter().flat_map(|e| [(*e, false), (*e, true)]) {
            let files = vec![FileExtent { offset, size }];
            let j = if tb { time_based(j.clone()) } else { j.clone() };
            let one = Generator::new(&j, &files, offset + size).unwrap();
            let plain = one.fast.is_some();
            let a = one_by_one(one.clone(), 400);
            let (b, batches) = in_batches(one, a.len());
            assert_eq!(a, b, "case {i}, extent {size} at {offset}, time_based {tb}");
            // (A pass of one block opens its file with `next`: no batch follows.)
            if size > 8 * K {
                assert_eq!(
                    batches > 0,
                    plain,
                    "case {i}: batches only on the plain path"
                );
            }
        }
    }
}

/// A request with the file wrap it caused (None: a pass's end).
type Event = (Option<IoReq>, Option<u32>);

/// One `next` of `g` into `out`, a new pass started at a pass's end; false when no pass
/// follows.
fn step(g: &mut Generator, out: &mut Vec<Event>) -> bool {
    let x = g.next();
    out.push((x, g.take_wrapped()));
    if x.is_none() {
        if !g.another_pass() {
            return false;
        }
        g.restart();
    }
    true
}

/// Up to `max` events of `g` driven by `next`.
fn one_by_one(mut g: Generator, max: usize) -> Vec<Event> {
    let mut a = Vec::new();
    while a.len() < max && step(&mut g, &mut a) {}
    a
}

/// `one_by_one` with `next_batch` in batches of 1 to 7 (and `next` where it yields none);
/// also how many batches yielded something.
fn in_batches(mut g: Generator, max: usize) -> (Vec<Event>, usize) {
    let (mut b, mut batches, mut size) = (Vec::new(), 0, 0);
    while b.len() < max {
        size = size % 7 + 1;
        let mut out = Vec::new();
        let got = g.next_batch(&mut out, size);
        assert_eq!(got, out.len());
        assert!(got <= size);
        batches += usize::from(got > 0);
        let last = got.saturating_sub(1);
        for (k, r) in out.into_iter().enumerate() {
            let wrapped = if k == last { g.take_wrapped() } else { None };
            b.push((Some(r), wrapped));
        }
        if got == 0 && !step(&mut g, &mut b) {
            break;
        }
    }
    b.truncate(max);
    (b, batches)
}

/// The divisor's `div` and `div_ceil` are the integer quotients, shifted or divided.
#[test]
fn divisor_divides_as_the_integers_do() {
    use crate::cfg::Divisor;
    for d in [1u64, 3, 512, 1000, 4096, 65536, 1 << 40] {
        let by = Divisor::new(d);
        for x in [0, 1, d - 1, d, d + 1, 3 * d + 7, u64::MAX - 1, u64::MAX] {
            assert_eq!(by.div(x), x / d, "{x} / {d}");
            assert_eq!(by.div_ceil(x), x.div_ceil(d), "{x} div_ceil {d}");
        }
    }
}
