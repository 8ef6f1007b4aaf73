//! Aligned I/O buffers: one allocation split into equal, aligned slots, preallocated before the
//! job starts so the hot path never allocates. Alignment satisfies O_DIRECT (page size by
//! default); fio's `iomem_align` moves the first slot that many bytes past the boundary, and
//! `mem=` picks the memory behind them (see [`crate::mem`]).

use crate::mem::{MemSpec, Region};
use std::ptr::NonNull;

/// A pointer to one buffer slot. Copyable so it can travel inside an `IoUnit`; it stays valid for
/// as long as the [`BufPool`] it came from is alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufPtr(NonNull<u8>);

// SAFETY: a BufPtr is only an address; access goes through the pool's owner (the job thread) or
// through an engine that the owner handed the unit to, never concurrently to the same slot.
unsafe impl Send for BufPtr {}

impl BufPtr {
    pub fn as_ptr(self) -> *mut u8 {
        self.0.as_ptr()
    }
    /// A dangling pointer for units that carry no data (fsync).
    pub fn none() -> Self {
        BufPtr(NonNull::dangling())
    }
    /// The address `by` bytes further into the same slot (the runner re-issues the remainder
    /// of a short I/O from there). `by` must stay within the slot this pointer came from.
    // Not `ops::Add`: offsetting a buffer pointer is not arithmetic on buffers.
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, by: usize) -> Self {
        // wrapping_add is safe pointer arithmetic; an in-slot offset of a non-null base is
        // non-null, and a (buggy) wrap to null falls back to the base.
        BufPtr(NonNull::new(self.0.as_ptr().wrapping_add(by)).unwrap_or(self.0))
    }
}

/// `count` slots of `slot_size` bytes, each aligned to `align` (plus the pool's offset).
pub struct BufPool {
    base: NonNull<u8>,
    slot: usize,
    count: usize,
    /// Owns the memory; `base` points into it.
    _region: Region,
}

// SAFETY: the pool owns its allocation exclusively; moving it between threads is fine.
unsafe impl Send for BufPool {}

impl BufPool {
    /// Allocate zeroed slots from the heap. `align` must be a power of two; `slot_size` is
    /// rounded up to it.
    pub fn new(count: usize, slot_size: usize, align: usize) -> Result<Self, String> {
        Self::new_in(&MemSpec::default(), count, slot_size, align, 0)
    }

    /// Allocate zeroed slots from `mem`, the first one `offset` bytes past an `align`
    /// boundary (fio's `iomem_align`), the others following at the slot size.
    pub fn new_in(
        mem: &MemSpec,
        count: usize,
        slot_size: usize,
        align: usize,
        offset: usize,
    ) -> Result<Self, String> {
        if !align.is_power_of_two() {
            return Err(format!("buffer alignment {align} is not a power of two"));
        }
        let slot = slot_size.max(1).div_ceil(align) * align;
        let total = slot
            .checked_mul(count.max(1))
            .and_then(|t| t.checked_add(offset))
            .ok_or_else(|| format!("buffer pool of {count} x {slot} bytes overflows"))?;
        let region = Region::new(mem, total, align)?;
        // Kernel backings are page aligned; a larger `align` is met by the heap's layout only.
        if !(region.base.as_ptr() as usize).is_multiple_of(align) {
            return Err(format!("mem backing is not aligned to {align} bytes"));
        }
        // SAFETY: offset < total <= the region's length, so the pointer stays inside it.
        let base = unsafe { NonNull::new_unchecked(region.base.as_ptr().add(offset)) };
        Ok(BufPool {
            base,
            slot,
            count: count.max(1),
            _region: region,
        })
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn slot_size(&self) -> usize {
        self.slot
    }

    /// Pointer to slot `i`. Panics if `i` is out of range (a runner bug, not an input error).
    #[inline]
    pub fn ptr(&self, i: usize) -> BufPtr {
        assert!(i < self.count, "buffer slot {i} out of {}", self.count);
        // SAFETY: i < count, so the offset stays inside the allocation.
        BufPtr(unsafe { NonNull::new_unchecked(self.base.as_ptr().add(i * self.slot)) })
    }

    /// Mutable view of slot `i` (for filling write data or checking read data).
    pub fn slice_mut(&mut self, i: usize) -> &mut [u8] {
        let p = self.ptr(i).as_ptr();
        // SAFETY: the slot lies inside our allocation and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(p, self.slot) }
    }

    pub fn slice(&self, i: usize) -> &[u8] {
        let p = self.ptr(i).as_ptr();
        // SAFETY: the slot lies inside our allocation; shared borrow of self.
        unsafe { std::slice::from_raw_parts(p, self.slot) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut p = BufPool::new(4, 1000, 4096).unwrap();
        assert_eq!(p.slot_size(), 4096);
        for i in 0..4 {
            assert_eq!(p.ptr(i).as_ptr() as usize % 4096, 0);
            p.slice_mut(i).fill(i as u8);
        }
        for i in 0..4 {
            assert!(p.slice(i).iter().all(|&b| b == i as u8));
        }
    }

    #[test]
    fn iomem_align_offsets_the_first_slot() {
        let spec = MemSpec {
            kind: fiox_job::MemKind::Shm,
            ..MemSpec::default()
        };
        let mut p = BufPool::new_in(&spec, 2, 4096, 4096, 512).unwrap();
        assert_eq!(p.ptr(0).as_ptr() as usize % 4096, 512);
        assert_eq!(p.ptr(1).as_ptr() as usize % 4096, 512);
        p.slice_mut(1).fill(7);
        assert!(p.slice(1).iter().all(|&b| b == 7));
    }

    #[test]
    fn bad_alignment_is_an_error() {
        assert!(BufPool::new(1, 10, 3).is_err());
    }
}
