//! Little-endian integers read from fixed-layout byte buffers: the on-medium block header
//! and the state files (fio's and fiox's). Callers pass slices whose length they checked.

/// The `u32` at byte `at` of `b`.
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

/// The `u64` at byte `at` of `b`.
pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}
