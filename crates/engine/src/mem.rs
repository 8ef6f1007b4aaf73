//! The memory behind a job's I/O buffers, as fio's `mem=` has it: the heap (malloc), SysV
//! shared memory (shm, shmhuge), or a mapping (mmap, mmapshared, mmaphuge; anonymous or of a
//! file). Also `lockmem`: memory pinned with mlock(2) for as long as a job runs.
//!
//! A file named after `mem=mmap:` must not exist yet: fio truncates and overwrites it, which
//! would destroy a user's file; fiox creates it (O_EXCL) and removes it afterwards.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

use fiox_job::MemKind;

/// Where the memory came from, to give it back the same way.
enum Source {
    Heap(Layout),
    Map { file: Option<MapFile> },
    Shm,
}

/// One zeroed region of I/O memory (`len` bytes at `base`, page aligned unless on the heap
/// with a smaller alignment).
pub struct Region {
    pub(crate) base: NonNull<u8>,
    pub(crate) len: usize,
    source: Source,
}

// SAFETY: the region owns its memory exclusively; moving it between threads is fine.
unsafe impl Send for Region {}

/// What to allocate: the backing, its file (mmap kinds), and the huge page size.
#[derive(Debug, Clone)]
pub struct MemSpec {
    pub kind: MemKind,
    pub file: Option<String>,
    pub hugepage_size: usize,
}

impl Default for MemSpec {
    fn default() -> Self {
        MemSpec {
            kind: MemKind::Malloc,
            file: None,
            hugepage_size: 2 << 20,
        }
    }
}

impl Region {
    /// `len` bytes (> 0) aligned to `align` (a power of two; the kernel's backings are page
    /// aligned already). Huge backings are rounded up to the huge page size, as fio does.
    pub fn new(spec: &MemSpec, len: usize, align: usize) -> Result<Region, String> {
        let huge = matches!(spec.kind, MemKind::ShmHuge | MemKind::MmapHuge);
        let len = if huge {
            let h = spec.hugepage_size.max(1);
            len.checked_next_multiple_of(h)
                .ok_or_else(|| format!("{len} bytes of buffers overflow"))?
        } else {
            len
        };
        match spec.kind {
            MemKind::Malloc => heap(len, align),
            MemKind::Shm | MemKind::ShmHuge => shm(len, huge),
            MemKind::Mmap | MemKind::MmapShared | MemKind::MmapHuge => map(spec, len),
            MemKind::CudaMalloc => Err("mem=cudamalloc needs a CUDA GPU (not supported)".into()),
        }
    }
}

/// Buffers this large are mapped directly rather than taken from malloc.
const MAP_FROM: usize = 64 << 10;

fn heap(len: usize, align: usize) -> Result<Region, String> {
    // A job's buffers are zeroed memory that only its I/O touches. malloc's calloc memsets a
    // block it reuses from its arenas, and glibc serves ever larger blocks from them once a
    // large one was freed (its mmap threshold rises): 64 jobs' depth-64 read buffers then cost
    // 33 MB of RSS before any I/O. An anonymous mapping is zero pages until used.
    if len >= MAP_FROM && align <= page_size() {
        return map(&MemSpec::default(), len);
    }
    let layout = Layout::from_size_align(len.max(1), align).map_err(|e| e.to_string())?;
    // SAFETY: layout has a non-zero size.
    let p = unsafe { alloc_zeroed(layout) };
    let base =
        NonNull::new(p).ok_or_else(|| format!("cannot allocate {len} bytes for I/O buffers"))?;
    Ok(Region {
        base,
        len: layout.size(),
        source: Source::Heap(layout),
    })
}

fn shm(len: usize, huge: bool) -> Result<Region, String> {
    let mut flags = libc::IPC_CREAT | 0o600;
    if huge {
        flags |= libc::SHM_HUGETLB;
    }
    // SAFETY: plain syscall; IPC_PRIVATE makes a new segment only this process knows.
    let id = unsafe { libc::shmget(libc::IPC_PRIVATE, len, flags) };
    if id < 0 {
        let e = io::Error::last_os_error();
        return Err(format!("shmget of {len} bytes: {e}{}", huge_hint(huge, &e)));
    }
    // SAFETY: attach the segment just made anywhere the kernel chooses.
    let p = unsafe { libc::shmat(id, std::ptr::null(), 0) };
    let attach_err = io::Error::last_os_error();
    // The segment goes away once detached: nothing is left behind, even after a crash.
    // SAFETY: IPC_RMID on our own segment id; the buffer pointer is not used.
    unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
    if p as isize == -1 {
        return Err(format!("shmat: {attach_err}"));
    }
    let base = NonNull::new(p.cast::<u8>()).ok_or("shmat returned a null address")?;
    Ok(Region {
        base,
        len,
        source: Source::Shm,
    })
}

fn huge_hint(huge: bool, e: &io::Error) -> &'static str {
    match (huge, e.raw_os_error()) {
        (true, Some(libc::ENOMEM | libc::EINVAL)) => {
            " (no free huge pages of hugepage-size? see /proc/sys/vm/nr_hugepages)"
        }
        _ => "",
    }
}

fn map(spec: &MemSpec, len: usize) -> Result<Region, String> {
    let huge = spec.kind == MemKind::MmapHuge;
    let file = match &spec.file {
        Some(path) => Some(create_map_file(path, len, spec.kind)?),
        None => None,
    };
    let mut flags = match (&file, spec.kind) {
        (None, _) => libc::MAP_ANONYMOUS | libc::MAP_PRIVATE,
        (Some(_), MemKind::Mmap) => libc::MAP_PRIVATE,
        (Some(_), _) => libc::MAP_SHARED,
    };
    if huge && file.is_none() {
        flags |= libc::MAP_HUGETLB;
    }
    if file.is_none() && spec.kind == MemKind::MmapShared {
        flags = libc::MAP_ANONYMOUS | libc::MAP_SHARED;
    }
    let fd = file.as_ref().map_or(-1, |m| m.file.as_raw_fd());
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: a new mapping at an address the kernel picks; fd is open (or -1 for anonymous).
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, 0) };
    if p == libc::MAP_FAILED {
        let e = io::Error::last_os_error();
        if let Some(m) = &file {
            m.remove();
        }
        return Err(format!("mmap of {len} bytes: {e}{}", huge_hint(huge, &e)));
    }
    let base = NonNull::new(p.cast::<u8>()).ok_or("mmap returned a null address")?;
    Ok(Region {
        base,
        len,
        source: Source::Map { file },
    })
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).unwrap_or(4096)
}

/// Create the file of `mem=mmap:FILE` (it must not exist: see the module note) at `len` bytes.
fn create_map_file(path: &str, len: usize, kind: MemKind) -> Result<MapFile, String> {
    let exists = || {
        format!(
            "mem={}: '{path}' exists; fio would truncate and overwrite it, fiox does not \
             (name a file that does not exist yet)",
            kind_name(kind)
        )
    };
    let f = match fiox_guard::named::create_new(Path::new(path), fiox_guard::Layout::Complete) {
        Ok(Some(f)) => f,
        Ok(None) => return Err(exists()),
        Err(e) => return Err(format!("mem={}: {e}", kind_name(kind))),
    };
    let id = fiox_guard::Identity::of(&f.metadata().map_err(|e| e.to_string())?);
    let made = MapFile {
        file: f,
        path: PathBuf::from(path),
        id,
    };
    // hugetlbfs files take their size from the mapping (fio does not truncate them either).
    if kind != MemKind::MmapHuge {
        if let Err(e) = made.file.set_len(len as u64) {
            made.remove();
            return Err(format!("mem={}: sizing '{path}': {e}", kind_name(kind)));
        }
    }
    Ok(made)
}

/// The file behind a `mem=mmapshared:FILE` mapping, removed (if it is still the inode fiox
/// made) when the mapping goes.
struct MapFile {
    file: File,
    path: PathBuf,
    id: fiox_guard::Identity,
}

impl MapFile {
    fn remove(&self) {
        let _ = fiox_guard::named::remove_made(&self.path, &self.id);
    }
}

fn kind_name(kind: MemKind) -> &'static str {
    match kind {
        MemKind::Mmap => "mmap",
        MemKind::MmapShared => "mmapshared",
        _ => "mmaphuge",
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        match &self.source {
            // SAFETY: base was allocated with exactly this layout.
            Source::Heap(layout) => unsafe { dealloc(self.base.as_ptr(), *layout) },
            Source::Shm => {
                // SAFETY: base is the address shmat returned; detaching frees the segment.
                unsafe { libc::shmdt(self.base.as_ptr().cast()) };
            }
            Source::Map { file } => {
                // SAFETY: base/len describe exactly the mapping made in `map`.
                unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
                if let Some(m) = file {
                    m.remove();
                }
            }
        }
    }
}

/// `lockmem`: anonymous memory pinned with mlock(2) until dropped.
pub struct Pinned {
    base: NonNull<u8>,
    /// Bytes pinned (less than asked when the machine has too little memory; see `new`).
    pub len: usize,
}

/// Physical memory in bytes (0 if unknown).
fn phys_mem() -> u64 {
    // SAFETY: sysconf only reads system constants.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages.max(0) as u64).saturating_mul(size.max(0) as u64)
}

// SAFETY: only an address range owned by this value.
unsafe impl Send for Pinned {}

impl Pinned {
    /// Pin `len` bytes (> 0), at most the machine's memory less 128 MiB as fio allows (the
    /// pinned length is in `len`). Errors name mlock's errno (RLIMIT_MEMLOCK without root).
    pub fn new(len: usize) -> Result<Pinned, String> {
        let phys = phys_mem();
        let len = match phys.checked_sub(128 << 20) {
            Some(most) if phys > 0 && len as u64 + (128 << 20) > phys => most as usize,
            _ => len,
        };
        if len == 0 {
            return Err("lockmem: this machine has no memory to spare beyond 128 MiB".into());
        }
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        let flags = libc::MAP_ANONYMOUS | libc::MAP_PRIVATE;
        // SAFETY: a new anonymous mapping at an address the kernel picks.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, -1, 0) };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "lockmem: mmap of {len} bytes: {}",
                io::Error::last_os_error()
            ));
        }
        // SAFETY: p..p+len is the mapping just made.
        if unsafe { libc::mlock(p, len) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: unmapping the mapping just made.
            unsafe { libc::munmap(p, len) };
            return Err(format!(
                "lockmem: mlock of {len} bytes: {e} (raise the memlock limit, ulimit -l)"
            ));
        }
        let base = NonNull::new(p.cast::<u8>()).ok_or("mmap returned a null address")?;
        Ok(Pinned { base, len })
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: base/len is the locked mapping made in `new`; munmap also unlocks it.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

#[allow(clippy::disallowed_methods)] // tests build their own scratch files
#[cfg(test)]
mod tests {
    use super::*;

    /// Pages of `r` in memory (mincore).
    fn resident_pages(r: &Region) -> usize {
        let pages = r.len.div_ceil(page_size());
        let mut v = vec![0u8; pages];
        // SAFETY: base/len are a live mapping (page aligned: the large heap case maps); v has
        // one byte per page.
        let rc = unsafe { libc::mincore(r.base.as_ptr().cast(), r.len, v.as_mut_ptr()) };
        assert_eq!(rc, 0, "{}", io::Error::last_os_error());
        v.iter().filter(|&&b| b & 1 != 0).count()
    }

    #[test]
    fn large_heap_buffers_stay_untouched_until_used() {
        // Free a large block first, as a run's setup does: glibc then serves blocks up to its
        // size from the arena, and calloc writes every byte of them.
        drop(std::hint::black_box(vec![1u8; 8 << 20]));
        let r = Region::new(&MemSpec::default(), 1 << 20, 4096).unwrap();
        assert_eq!(resident_pages(&r), 0, "no page of the buffers was touched");
        // SAFETY: the region is 1 MiB of readable memory.
        let bytes = unsafe { std::slice::from_raw_parts(r.base.as_ptr(), r.len) };
        assert!(
            bytes.iter().step_by(4096).all(|&b| b == 0),
            "and it reads zero"
        );
    }

    fn spec(kind: MemKind, file: Option<String>) -> MemSpec {
        MemSpec {
            kind,
            file,
            ..MemSpec::default()
        }
    }

    /// The line of /proc/self/maps that holds `p`.
    fn maps_line(p: *const u8) -> String {
        let a = p as usize;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        maps.lines()
            .find(|l| {
                let r = l.split(' ').next().unwrap();
                let (lo, hi) = r.split_once('-').unwrap();
                let lo = usize::from_str_radix(lo, 16).unwrap();
                let hi = usize::from_str_radix(hi, 16).unwrap();
                (lo..hi).contains(&a)
            })
            .unwrap()
            .to_string()
    }

    #[test]
    fn each_backing_is_what_it_says() {
        let shm = Region::new(&spec(MemKind::Shm, None), 1 << 16, 4096).unwrap();
        assert!(maps_line(shm.base.as_ptr()).contains("SYSV"), "shm");
        let m = Region::new(&spec(MemKind::MmapShared, None), 1 << 16, 4096).unwrap();
        assert!(maps_line(m.base.as_ptr()).contains(" rw-s "), "shared");
        let m = Region::new(&spec(MemKind::Mmap, None), 1 << 16, 4096).unwrap();
        assert!(maps_line(m.base.as_ptr()).contains(" rw-p "), "private");
        let dir = std::env::temp_dir().join(format!("fiox-mem-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let path = dir.to_str().unwrap().to_string();
        let f = Region::new(&spec(MemKind::MmapShared, Some(path.clone())), 8192, 4096).unwrap();
        assert!(maps_line(f.base.as_ptr()).contains(&path));
        assert_eq!(std::fs::metadata(&dir).unwrap().len(), 8192);
        drop(f);
        assert!(!dir.exists(), "the file fiox made is removed");
    }

    #[test]
    fn an_existing_map_file_is_refused_and_kept() {
        let path = std::env::temp_dir().join(format!("fiox-mem-keep-{}", std::process::id()));
        std::fs::write(&path, b"user data").unwrap();
        let s = spec(MemKind::Mmap, Some(path.to_str().unwrap().into()));
        let e = Region::new(&s, 8192, 4096).err().unwrap();
        assert!(e.contains("exists"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"user data");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn huge_backings_round_up_or_say_why_not() {
        for kind in [MemKind::ShmHuge, MemKind::MmapHuge] {
            match Region::new(&spec(kind, None), 4096, 4096) {
                Ok(r) => assert_eq!(r.len, 2 << 20),
                // No huge pages reserved on this machine: the error says where to look.
                Err(e) => assert!(e.contains("nr_hugepages"), "{e}"),
            }
        }
    }

    #[test]
    fn lockmem_pins_pages() {
        let locked = || {
            let s = std::fs::read_to_string("/proc/self/status").unwrap();
            let l = s
                .lines()
                .find(|l| l.starts_with("VmLck:"))
                .unwrap()
                .to_string();
            l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap()
        };
        let before = locked();
        let p = Pinned::new(1 << 20).unwrap();
        assert!(locked() >= before + 1024, "VmLck grew by 1 MiB");
        drop(p);
    }
}
