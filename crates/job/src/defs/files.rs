//! File and device options: names, counts, sizes, creation, layout and cache handling.

use super::{Category as C, Kind as K, OptDef};
use crate::value;
use crate::{FadviseHint, FallocateMode, FileServiceType, LockFile};

pub(super) static OPTS: &[OptDef] = &[
    OptDef::new("filename", K::Complex("name[:name...] (\\: for a literal colon)"), C::Files, "File or device names to use", |j, v| {
        let names = value::split_colon_list(v.raw.trim());
        if names.is_empty() {
            return Err("no file name given".into());
        }
        j.files.filenames = names;
        Ok(())
    })
    .long("A `:`-separated list of files or block devices shared by the job's clones; write `\\:` for a colon inside a name. Without it, names come from filename_format."),
    OptDef::new("directory", K::Complex("dir[:dir...]"), C::Files, "Directory (or directories) for the job's files", |j, v| {
        let dirs = value::split_colon_list(v.raw.trim());
        if dirs.is_empty() {
            return Err("no directory given".into());
        }
        j.files.directories = dirs;
        Ok(())
    })
    .long("Files are created in this directory; with several `:`-separated directories each clone's generated files go into one of them, round-robin by its `$jobnum` (as fio), and `filename=` files into the first."),
    OptDef::new("opendir", K::Str, C::Files, "Use every regular file under this directory, recursively", |j, v| {
        let dir = v.str();
        if dir.is_empty() {
            return Err("no directory given".into());
        }
        let mut found = Vec::new();
        add_dir_files(dir, &mut found)?;
        // fio's add_dir_files: the files join those named so far, and are the job's files.
        j.notes.push(format!("opendir added {} files", found.len()));
        j.files.filenames.append(&mut found);
        j.files.nrfiles = (j.files.filenames.len() as u32).max(1);
        Ok(())
    })
    .long("Read when the option is parsed, as fio: each regular file found (in directory order, not following symbolic links) is one of the job's files, after any filename= given before it; fiox notes how many were added. A directory that cannot be read is an error."),
    OptDef::new("sync_file_range", K::Complex("wait_before,write,wait_after[:N]"), C::Files, "sync_file_range(2) every N writes (default 1)", |j, v| {
        let (words, n) = match v.str().split_once(':') {
            Some((w, n)) => {
                let n: u64 = n.trim().parse().map_err(|_| format!("'{n}' is not a number of writes"))?;
                (w, n)
            }
            None => (v.str(), 1),
        };
        let mut flags = 0;
        for w in words.split(',').map(str::trim) {
            flags |= match w {
                "wait_before" => 1,
                "write" => 2,
                "wait_after" => 4,
                _ => return Err(format!("'{w}' is not one of wait_before, write, wait_after")),
            };
        }
        j.files.sync_file_range = (n > 0).then_some((flags, n));
        Ok(())
    })
    .long("As fio: every N writes (counting the job's writes issued), sync_file_range(2) over the range of the current file written since the last sync, with SYNC_FILE_RANGE_WAIT_BEFORE, _WRITE, _WAIT_AFTER as named. fsync= and fdatasync= take precedence when also given."),
    OptDef::new("write_hint", K::Choice(&["none", "short", "medium", "long", "extreme"]), C::Files, "Expected life time of the data written (fcntl write hint)", |j, v| {
        // fio's RWH_WRITE_LIFE_* numbers.
        j.files.write_hint = Some(match v.choice()?.as_str() {
            "none" => 1,
            "short" => 2,
            "medium" => 3,
            "long" => 4,
            _ => 5,
        });
        Ok(())
    })
    .long("Set on every file at open with fcntl(2), as fio: F_SET_RW_HINT (on the inode) for buffered jobs, F_SET_FILE_RW_HINT (on the open file) with direct=1. Kernels since 5.18 no longer know the latter: such a job fails with EINVAL, as fio's does."),
    OptDef::new("filename_format", K::Str, C::Files, "Pattern for generated file names ($jobname, $jobnum, $filenum)", |j, v| {
        if v.str().is_empty() {
            return Err("the format cannot be empty".into());
        }
        j.files.filename_format = v.str().to_string();
        Ok(())
    })
    .def("$jobname.$jobnum.$filenum")
    .long("Used when filename= is not given; `$jobname` is the job name, `$jobnum` the clone number (fio's: 0 for the job, then its clones counting down from numjobs-1), `$filenum` the file number within the job."),
    OptDef::new("nrfiles", K::Int, C::Files, "Number of files per job", |j, v| {
        j.files.nrfiles = v.u32()?;
        Ok(())
    })
    .alias(&["nr_files"])
    .def("1")
    .range(1, 1 << 20),
    OptDef::new("openfiles", K::Int, C::Files, "Keep at most this many files open at once", |j, v| {
        j.files.openfiles = v.u32()?;
        Ok(())
    })
    .range(0, 1 << 20)
    .long("0 (default) keeps all of the job's files open."),
    OptDef::new("file_service_type", K::Choice(&["random", "roundrobin", "sequential", "zipf", "pareto", "normal", "gauss"]), C::Files, "How the next file is chosen (random|roundrobin|sequential[:N], zipf|pareto|normal:x)", |j, v| {
        j.files.file_service_type = parse_file_service(&v.choice()?)?;
        Ok(())
    })
    .def("roundrobin")
    .long("`:N` switches files every N I/Os; zipf/pareto/normal take their distribution parameter after the colon."),
    OptDef::new("filesize", K::Complex("size or size range a-b"), C::Files, "Size of each file (a range picks per file)", |j, v| {
        let (a, b) = value::split_range(v.raw);
        let lo = value::parse_size(a, v.kb_base)?;
        let hi = value::parse_size(b, v.kb_base)?;
        if lo == 0 {
            return Err("file size must be at least 1 byte".into());
        }
        if hi < lo {
            return Err(format!("range end {hi} is below its start {lo}"));
        }
        j.files.filesize = Some((lo, hi));
        Ok(())
    }),
    OptDef::new("create_on_open", K::Bool, C::Files, "Create files when first opened for I/O, not up front", |j, v| {
        j.files.create_on_open = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("create_serialize", K::Bool, C::Files, "Lay out the files of jobs one job at a time", |j, v| {
        j.files.create_serialize = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("create_fsync", K::Bool, C::Files, "fsync each file after laying it out", |j, v| {
        j.files.create_fsync = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("unlink", K::Bool, C::Files, "Delete the job's files when it finishes", |j, v| {
        j.files.unlink = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("unlink_each_loop", K::Bool, C::Files, "Delete the job's files between loops", |j, v| {
        j.files.unlink_each_loop = v.bool()?;
        Ok(())
    })
    .def("0")
    .long("Before each loop after the first (`loops=`), the job's files are closed and removed, then created again by the loop's first open, as fio does; only files fiox created are removed (a read job whose file was removed fails with ENOENT, as in fio)."),
    OptDef::new("ioscheduler", K::Str, C::Files, "Switch the disks of the job's files to this I/O scheduler", |j, v| {
        let s = v.str();
        if s.is_empty() {
            return Err("needs a scheduler name (e.g. mq-deadline, none)".into());
        }
        j.ioscheduler = Some(s.to_string());
        Ok(())
    })
    .long("As fio, before the job's I/O; unlike fio, the previous scheduler is put back when the job ends."),
    OptDef::new("create_only", K::Bool, C::Files, "Only lay out the files; do no I/O", |j, v| {
        j.files.create_only = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("allow_file_create", K::Bool, C::Files, "Allow creating files that do not exist", |j, v| {
        j.files.allow_file_create = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("fallocate", K::Choice(&["none", "native", "posix", "keep", "truncate", "0", "1"]), C::Files, "How files are preallocated when laid out", |j, v| {
        j.files.fallocate = match v.choice()?.as_str() {
            "none" | "0" => FallocateMode::None,
            "posix" | "1" => FallocateMode::Posix,
            "keep" => FallocateMode::Keep,
            "truncate" => FallocateMode::Truncate,
            _ => FallocateMode::Native,
        };
        Ok(())
    })
    .def("native")
    .long("`0` is an old spelling of none and `1` of posix."),
    OptDef::new("pre_read", K::Bool, C::Files, "Read the files into the page cache before starting", |j, v| {
        j.files.pre_read = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("invalidate", K::Bool, C::Files, "Drop the files' page cache before the job", |j, v| {
        j.files.invalidate = v.bool()?;
        Ok(())
    })
    .def("1"),
    OptDef::new("fadvise_hint", K::Choice(&["0", "1", "random", "sequential", "noreuse"]), C::Files, "posix_fadvise access hint for every file: 1 = the job's pattern", |j, v| {
        j.files.fadvise_hint = match v.choice()?.as_str() {
            "0" => FadviseHint::None,
            "random" => FadviseHint::Random,
            "sequential" => FadviseHint::Sequential,
            "noreuse" => FadviseHint::NoReuse,
            _ => FadviseHint::Pattern,
        };
        Ok(())
    })
    .def("1")
    .long("Given to each regular file and block device when it is opened, over the job's region: 1 gives POSIX_FADV_RANDOM to random jobs and POSIX_FADV_SEQUENTIAL to the others (so a random buffered job gets no readahead), random/sequential force one, noreuse gives POSIX_FADV_NOREUSE (fio 3.35+), 0 gives none (and the mmap engine then skips its madvise)."),
    OptDef::new("overwrite", K::Bool, C::Files, "Write the whole file before a write job so writes overwrite", |j, v| {
        j.files.overwrite = v.bool()?;
        Ok(())
    })
    .def("0"),
    OptDef::new("allow_mounted_write", K::Bool, C::Files, "Allow writes to a device that holds a mounted file system", |j, v| {
        j.files.allow_mounted_write = v.bool()?;
        Ok(())
    })
    .def("0")
    .long(
        "fiox refuses to write to a block device that is mounted, held by another device or \
         open exclusively elsewhere (O_EXCL), or that holds a file system, RAID, encryption or \
         partition signature (libblkid's list; every kernel-listed partition is probed too), to \
         a loop device over a file fiox did not create, to a regular file that backs a loop \
         device or holds such a signature, and over existing bytes of a regular file it did not \
         create (files fiox lays out carry the xattr user.fiox.created, bound to that inode: a \
         copy does not count). Setting this option (or the --allow-destructive switch) allows \
         all of these.",
    ),
    OptDef::new("lockfile", K::Choice(&["none", "exclusive", "readwrite"]), C::Files, "File locking during I/O: each I/O locks its file against the job's other clones", |j, v| {
        j.files.lockfile = match v.choice()?.as_str() {
            "exclusive" => LockFile::Exclusive,
            "readwrite" => LockFile::ReadWrite,
            _ => LockFile::None,
        };
        Ok(())
    })
    .def("none"),
    OptDef::new("fill_device", K::Bool, C::Files, "Write until the device or file system is full", |j, v| {
        j.files.fill_device = v.bool()?;
        Ok(())
    })
    .alias(&["fill_fs"])
    .def("0")
    .long("Without `size=` a regular file's region is unlimited (fio's size=-1) and nothing is preallocated; a write failing with ENOSPC or EDQUOT ends the job without error, as in fio. A read-only workload first fills its file (written until the file system is full) and then reads what it holds; sequential rw fills its file, then reads it and writes on past its end until ENOSPC (a read past the end first fails with EIO, as in fio); overwrite=1 lays the file out first, then writes past its end; a verifying job verifies nothing after the fill (fio terminates it) but saves its verify state. Random mixed workloads (fio 3.33 cannot allocate their random map), trims and read-only workloads that verify are refused when run."),
    OptDef::new("file_append", K::Bool, C::Files, "Start I/O at the end of each file", |j, v| {
        j.files.file_append = v.bool()?;
        Ok(())
    })
    .def("0"),
];

fn parse_file_service(s: &str) -> Result<FileServiceType, String> {
    let (head, arg) = match s.split_once(':') {
        Some((h, a)) => (h, Some(a)),
        None => (s, None),
    };
    let count = |a: Option<&str>| -> Result<u32, String> {
        match a {
            None => Ok(1),
            Some(a) => a
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("'{a}' is not a positive I/O count")),
        }
    };
    let param = |a: Option<&str>| -> Result<f64, String> {
        a.ok_or_else(|| format!("{head} needs a parameter ({head}:x)"))
            .and_then(value::parse_float)
    };
    Ok(match head {
        "random" => FileServiceType::Random(count(arg)?),
        "roundrobin" => FileServiceType::RoundRobin(count(arg)?),
        "sequential" => FileServiceType::Sequential(count(arg)?),
        "zipf" => FileServiceType::Zipf(param(arg)?),
        "pareto" => FileServiceType::Pareto(param(arg)?),
        _ => FileServiceType::Gauss(param(arg)?),
    })
}

/// fio's `recurse_dir`: every regular file under `dir` (directory order; symbolic links and
/// other kinds skipped), named `dir/name` as fio names them.
fn add_dir_files(dir: &str, out: &mut Vec<String>) -> Result<(), String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("opendir({dir}): {e}"))?;
    for entry in rd {
        let entry = entry.map_err(|e| format!("opendir({dir}): {e}"))?;
        let path = format!("{dir}/{}", entry.file_name().to_string_lossy());
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            // Gone since the listing: fio skips it too.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("stat {path}: {e}")),
        };
        if meta.is_file() {
            out.push(path);
        } else if meta.is_dir() {
            add_dir_files(&path, out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
pub(super) use tests::CASES;

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::super::testutil::{run, Case};
    use super::*;

    pub static CASES: &[Case] = &[
        (
            "filename",
            "/dev/sda",
            Some(|j| j.files.filenames == vec!["/dev/sda"]),
        ),
        (
            "filename",
            r"a:b\:c",
            Some(|j| j.files.filenames == vec!["a", "b:c"]),
        ),
        ("filename", "", None),
        ("opendir", "/nonexistent-fiox-dir", None),
        ("opendir", "", None),
        (
            "write_hint",
            "short",
            Some(|j| j.files.write_hint == Some(2)),
        ),
        (
            "write_hint",
            "extreme",
            Some(|j| j.files.write_hint == Some(5)),
        ),
        ("write_hint", "forever", None),
        (
            "sync_file_range",
            "wait_before,write:8",
            Some(|j| j.files.sync_file_range == Some((3, 8))),
        ),
        (
            "sync_file_range",
            "wait_after",
            Some(|j| j.files.sync_file_range == Some((4, 1))),
        ),
        ("sync_file_range", "flush:2", None),
        ("sync_file_range", "write:x", None),
        (
            "directory",
            "/mnt/a:/mnt/b",
            Some(|j| j.files.directories == vec!["/mnt/a", "/mnt/b"]),
        ),
        (
            "filename_format",
            "f.$jobnum",
            Some(|j| j.files.filename_format == "f.$jobnum"),
        ),
        ("nrfiles", "8", Some(|j| j.files.nrfiles == 8)),
        ("nr_files", "0", None),
        ("openfiles", "2", Some(|j| j.files.openfiles == 2)),
        (
            "file_service_type",
            "random:4",
            Some(|j| j.files.file_service_type == FileServiceType::Random(4)),
        ),
        (
            "file_service_type",
            "zipf:1.2",
            Some(|j| j.files.file_service_type == FileServiceType::Zipf(1.2)),
        ),
        (
            "file_service_type",
            "sequential",
            Some(|j| j.files.file_service_type == FileServiceType::Sequential(1)),
        ),
        ("file_service_type", "roundrobin:0", None),
        ("file_service_type", "lottery", None),
        (
            "filesize",
            "1m",
            Some(|j| j.files.filesize == Some((1 << 20, 1 << 20))),
        ),
        (
            "filesize",
            "1m-2m",
            Some(|j| j.files.filesize == Some((1 << 20, 2 << 20))),
        ),
        ("filesize", "2m-1m", None),
        ("create_on_open", "1", Some(|j| j.files.create_on_open)),
        ("create_serialize", "0", Some(|j| !j.files.create_serialize)),
        ("create_fsync", "0", Some(|j| !j.files.create_fsync)),
        ("unlink", "1", Some(|j| j.files.unlink)),
        ("create_only", "1", Some(|j| j.files.create_only)),
        (
            "ioscheduler",
            "mq-deadline",
            Some(|j| j.ioscheduler.as_deref() == Some("mq-deadline")),
        ),
        (
            "unlink_each_loop",
            "1",
            Some(|j| j.files.unlink_each_loop && j.unsupported.is_empty()),
        ),
        (
            "unlink_each_loop",
            "0",
            Some(|j| !j.files.unlink_each_loop && j.unsupported.is_empty()),
        ),
        (
            "allow_file_create",
            "0",
            Some(|j| !j.files.allow_file_create),
        ),
        (
            "fallocate",
            "none",
            Some(|j| j.files.fallocate == FallocateMode::None),
        ),
        (
            "fallocate",
            "1",
            Some(|j| j.files.fallocate == FallocateMode::Posix),
        ),
        ("fallocate", "maybe", None),
        ("pre_read", "1", Some(|j| j.files.pre_read)),
        ("invalidate", "0", Some(|j| !j.files.invalidate)),
        (
            "fadvise_hint",
            "0",
            Some(|j| j.files.fadvise_hint == FadviseHint::None),
        ),
        (
            "fadvise_hint",
            "1",
            Some(|j| j.files.fadvise_hint == FadviseHint::Pattern),
        ),
        (
            "fadvise_hint",
            "random",
            Some(|j| j.files.fadvise_hint == FadviseHint::Random),
        ),
        (
            "fadvise_hint",
            "sequential",
            Some(|j| j.files.fadvise_hint == FadviseHint::Sequential),
        ),
        ("fadvise_hint", "2", None),
        ("overwrite", "1", Some(|j| j.files.overwrite)),
        (
            "allow_mounted_write",
            "1",
            Some(|j| j.files.allow_mounted_write),
        ),
        (
            "lockfile",
            "none",
            Some(|j| j.files.lockfile == LockFile::None),
        ),
        (
            "lockfile",
            "exclusive",
            Some(|j| j.files.lockfile == LockFile::Exclusive),
        ),
        (
            "lockfile",
            "readwrite",
            Some(|j| j.files.lockfile == LockFile::ReadWrite && j.unsupported.is_empty()),
        ),
        ("lockfile", "sideways", None),
        (
            "fill_device",
            "1",
            Some(|j| j.files.fill_device && j.unsupported.is_empty()),
        ),
        ("fill_fs", "1", Some(|j| j.files.fill_device)),
        ("file_append", "1", Some(|j| j.files.file_append)),
    ];

    #[test]
    fn file_options() {
        run(CASES);
    }

    /// opendir: regular files at any depth, after the names given before; links skipped.
    #[test]
    fn opendir_adds_the_files_under_the_directory() {
        let base = std::env::temp_dir().join(format!("fiox-opendir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("sub/deeper")).unwrap();
        std::fs::write(base.join("a"), b"x").unwrap();
        std::fs::write(base.join("sub/deeper/c"), b"x").unwrap();
        std::os::unix::fs::symlink("a", base.join("link")).unwrap();
        let dir = base.display().to_string();
        let mut j = crate::JobSpec::default();
        let def = super::super::lookup("filename").unwrap();
        let v = super::super::Val {
            raw: "first",
            kb_base: 1024,
            def,
        };
        (def.apply)(&mut j, &v).unwrap();
        let def = super::super::lookup("opendir").unwrap();
        let v = super::super::Val {
            raw: &dir,
            kb_base: 1024,
            def,
        };
        let r = (def.apply)(&mut j, &v);
        let _ = std::fs::remove_dir_all(&base);
        r.unwrap();
        let mut found = j.files.filenames[1..].to_vec();
        found.sort();
        assert_eq!(j.files.filenames[0], "first");
        assert_eq!(found, [format!("{dir}/a"), format!("{dir}/sub/deeper/c")]);
        assert_eq!(j.files.nrfiles, 3);
        assert_eq!(j.notes, ["opendir added 2 files"]);
    }
}
