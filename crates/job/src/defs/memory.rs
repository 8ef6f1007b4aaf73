//! I/O buffer memory: where the buffers come from (`mem`/`iomem`), how the first one is
//! aligned (`iomem_align`), the huge page size that huge backings round to, and `lockmem`
//! (memory pinned with mlock(2) to leave the page cache less room), as fio 3.33 has them.

use super::{Category as C, Kind as K, OptDef};
use crate::MemKind;

pub(super) static OPTS: &[OptDef] = &[
    OptDef::new(
        "mem",
        K::Choice(&["malloc", "shm", "shmhuge", "mmap", "mmapshared", "mmaphuge", "cudamalloc"]),
        C::Buffers,
        "Backing of the I/O buffers",
        |j, v| {
            let word = v.choice()?;
            let (head, _) = word.split_once(':').unwrap_or((&word, ""));
            // The path keeps its case: take it from the raw value, not the lowercased word.
            let path = v.raw.trim().split_once(':').map(|(_, p)| p.to_string());
            j.buffers.mem = match head {
                "malloc" => MemKind::Malloc,
                "shm" => MemKind::Shm,
                "shmhuge" => MemKind::ShmHuge,
                "mmap" => MemKind::Mmap,
                "mmapshared" => MemKind::MmapShared,
                "mmaphuge" => MemKind::MmapHuge,
                _ => MemKind::CudaMalloc,
            };
            let mmap = matches!(j.buffers.mem, MemKind::Mmap | MemKind::MmapShared | MemKind::MmapHuge);
            j.buffers.mmapfile = path.filter(|p| mmap && !p.is_empty());
            super::forget(j, "mem");
            if j.buffers.mem == MemKind::CudaMalloc {
                super::record_value(j, "mem", v.raw, "GPU memory: needs a CUDA GPU and the rdma engine");
            }
            Ok(())
        },
    )
    .alias(&["iomem"])
    .def("malloc")
    .long("`mmap`, `mmapshared` and `mmaphuge` take a file after a colon (`mmaphuge:/hugetlbfs/file`); without one, `mmaphuge` maps anonymous huge pages. `shmhuge`/`mmaphuge` need free huge pages (/proc/sys/vm/nr_hugepages)."),
    OptDef::new("iomem_align", K::Int, C::Buffers, "Offset of the first I/O buffer from a page boundary", |j, v| {
        j.buffers.mem_align = v.u64()?;
        Ok(())
    })
    .alias(&["mem_align"])
    .range(0, i64::MAX)
    .def("0")
    .long("As fio: the first buffer starts this many bytes past a page boundary; the others follow it at the block size."),
    OptDef::new("hugepage-size", K::Size, C::Buffers, "Huge page size that shmhuge/mmaphuge round up to", |j, v| {
        let n = v.size()?;
        if n == 0 || !n.is_power_of_two() {
            return Err(format!("{n} is not a power of two (use e.g. 2m or 1g)"));
        }
        j.buffers.hugepage_size = n;
        Ok(())
    })
    .def("2m"),
    OptDef::new("lockmem", K::Size, C::Buffers, "Pin this much memory with mlock(2) per job", |j, v| {
        j.buffers.lockmem = v.size()?;
        Ok(())
    })
    .def("0")
    .long("Simulates a machine with less memory: the pinned pages are not available to the page cache while the job runs."),
];

#[cfg(test)]
pub(super) mod tests {
    use super::super::testutil::*;
    use crate::MemKind;

    pub static CASES: &[Case] = &[
        (
            "mem",
            "malloc",
            Some(|j| j.buffers.mem == MemKind::Malloc && j.unsupported.is_empty()),
        ),
        ("iomem", "shm", Some(|j| j.buffers.mem == MemKind::Shm)),
        (
            "mem",
            "shmhuge",
            Some(|j| j.buffers.mem == MemKind::ShmHuge),
        ),
        (
            "mem",
            "mmap",
            Some(|j| j.buffers.mem == MemKind::Mmap && j.buffers.mmapfile.is_none()),
        ),
        (
            "mem",
            "mmapshared:/tmp/Buf",
            Some(|j| {
                j.buffers.mem == MemKind::MmapShared
                    && j.buffers.mmapfile.as_deref() == Some("/tmp/Buf")
            }),
        ),
        (
            "mem",
            "mmaphuge:/huge/f",
            Some(|j| j.buffers.mmapfile.as_deref() == Some("/huge/f")),
        ),
        (
            "mem",
            "cudamalloc",
            Some(|j| j.unsupported[0].option == "mem"),
        ),
        ("mem", "sbrk", None),
        ("iomem_align", "512", Some(|j| j.buffers.mem_align == 512)),
        ("mem_align", "-1", None),
        (
            "hugepage-size",
            "1g",
            Some(|j| j.buffers.hugepage_size == 1 << 30),
        ),
        ("hugepage-size", "3m", None),
        ("lockmem", "1m", Some(|j| j.buffers.lockmem == 1 << 20)),
    ];

    #[test]
    fn memory_options() {
        run(CASES);
    }
}
