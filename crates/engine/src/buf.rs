//! Aligned I/O buffers: one allocation split into equal, aligned slots, preallocated before the
//! job starts so the hot path never allocates. Alignment satisfies O_DIRECT (page size by
//! default); fio's `iomem_align` moves the first slot that many bytes past the boundary, and
//! `mem=` picks the memory behind them (see [`crate::mem`]).

use crate::mem::{MemSpec, Region};
use std::ptr::NonNull;

/// A range of one buffer slot that an I/O moves data into or out of: the address and the
/// length together, proven inside the slot when the span was made ([`BufPool::slot`],
/// [`BufSpan::sub`]), so what an engine hands the kernel never reaches past the buffer
/// (issue 39: a 6,666-byte read into a 4,096-byte slot corrupted the heap). Copyable so it can
/// travel inside an [`IoUnit`](crate::IoUnit); the memory stays valid for as long as the
/// [`BufPool`] it came from is alive (the runner reaps every I/O before dropping its pool).
/// Safe code cannot make one from a raw pointer: [`BufSpan::from_raw_parts`] is `unsafe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufSpan {
    ptr: NonNull<u8>,
    len: u32,
}

// SAFETY: a BufSpan is only an address and a length; access goes through the pool's owner
// (the job thread) or through an engine that the owner handed the unit to, never concurrently
// to the same slot.
unsafe impl Send for BufSpan {}

impl BufSpan {
    /// No data: units that move no bytes (fsync, trim, the null engine's units).
    pub const fn empty() -> Self {
        BufSpan {
            ptr: NonNull::dangling(),
            len: 0,
        }
    }

    /// A span over memory that is not a pool's (an engine's own pipe or bounce buffer, a test's
    /// array).
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes for as long as any copy of the
    /// span (or an I/O made from it) is in use, and not accessed otherwise meanwhile.
    pub unsafe fn from_raw_parts(ptr: NonNull<u8>, len: u32) -> Self {
        BufSpan { ptr, len }
    }

    /// The start of the span: valid for [`BufSpan::len`] bytes (none for an empty span).
    #[inline(always)]
    pub fn as_ptr(self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    #[inline(always)]
    pub fn len(self) -> u32 {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The `len` bytes `start` bytes into this span (the remainder of a short I/O, a verify
    /// read shorter than the slot), or None when they do not lie inside it.
    #[inline(always)]
    pub fn sub(self, start: u32, len: u32) -> Option<BufSpan> {
        let end = start.checked_add(len)?;
        if end > self.len {
            return None;
        }
        // SAFETY: start <= end <= self.len, so the address stays inside (or one past) the span
        // this one was proven against; a non-null base plus an in-bounds offset is non-null.
        let ptr = unsafe { NonNull::new_unchecked(self.ptr.as_ptr().add(start as usize)) };
        Some(BufSpan { ptr, len })
    }

    /// The first `len` bytes (see [`BufSpan::sub`]).
    #[inline(always)]
    pub fn prefix(self, len: u32) -> Option<BufSpan> {
        self.sub(0, len)
    }
}

/// A span over a test's own array.
///
/// # Safety
/// As [`BufSpan::from_raw_parts`]: `b` must outlive every I/O made from the span.
#[cfg(test)]
pub(crate) unsafe fn span_of(b: &mut [u8]) -> BufSpan {
    let ptr = NonNull::new(b.as_mut_ptr()).unwrap_or(NonNull::dangling());
    // SAFETY: the caller keeps `b` alive and otherwise untouched while the span is used.
    unsafe { BufSpan::from_raw_parts(ptr, b.len() as u32) }
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
        if u32::try_from(slot).is_err() {
            return Err(format!(
                "I/O buffers of {slot} bytes: fiox's I/Os are at most 4 GiB - 1 bytes"
            ));
        }
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

    /// Slot `i`, whole. Panics if `i` is out of range (a runner bug, not an input error).
    #[inline(always)]
    pub fn slot(&self, i: usize) -> BufSpan {
        assert!(i < self.count, "buffer slot {i} out of {}", self.count);
        // SAFETY: i < count, so the offset stays inside the allocation.
        let ptr = unsafe { NonNull::new_unchecked(self.base.as_ptr().add(i * self.slot)) };
        // The pool refuses slots of 4 GiB or more (`new_in`), so the length fits.
        BufSpan {
            ptr,
            len: self.slot as u32,
        }
    }

    /// `len` bytes `start` bytes into slot `i`, or None when they do not fit in the slot: the
    /// one check between a unit's length and the memory it names.
    #[inline(always)]
    pub fn span(&self, i: usize, start: u32, len: u32) -> Option<BufSpan> {
        self.slot(i).sub(start, len)
    }

    /// Mutable view of slot `i` (for filling write data or checking read data).
    pub fn slice_mut(&mut self, i: usize) -> &mut [u8] {
        let p = self.slot(i).as_ptr();
        // SAFETY: the slot lies inside our allocation and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(p, self.slot) }
    }

    pub fn slice(&self, i: usize) -> &[u8] {
        let p = self.slot(i).as_ptr();
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
            assert_eq!(p.slot(i).as_ptr() as usize % 4096, 0);
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
        assert_eq!(p.slot(0).as_ptr() as usize % 4096, 512);
        assert_eq!(p.slot(1).as_ptr() as usize % 4096, 512);
        p.slice_mut(1).fill(7);
        assert!(p.slice(1).iter().all(|&b| b == 7));
    }

    /// Issue 39: a span never reaches past its slot, whatever start and length are asked.
    #[test]
    fn spans_stay_inside_their_slot() {
        let p = BufPool::new(2, 4096, 4096).unwrap();
        assert_eq!(p.slot(1).len(), 4096);
        assert!(p.span(0, 0, 4096).is_some());
        assert!(p.span(0, 0, 6666).is_none(), "the read of issue 39");
        assert!(p.span(0, 4096, 1).is_none());
        assert!(p.span(0, u32::MAX, 2).is_none(), "no overflow");
        let tail = p.span(1, 1000, 3096).unwrap();
        assert_eq!(tail.as_ptr() as usize - p.slot(1).as_ptr() as usize, 1000);
        assert!(tail.sub(3000, 97).is_none());
        assert_eq!(tail.sub(3000, 96).unwrap().len(), 96);
        assert!(BufSpan::empty().is_empty());
    }

    #[test]
    fn bad_alignment_is_an_error() {
        assert!(BufPool::new(1, 10, 3).is_err());
    }
}
