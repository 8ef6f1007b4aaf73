//! Engines whose I/O is a file operation rather than a data transfer: fio's `filecreate`,
//! `filestat`, `filedelete` and their directory twins (`ops`), `falloc` (fallocate(2)),
//! `ftruncate` (ftruncate(2)) and `e4defrag` (ext4's EXT4_IOC_MOVE_EXT into a donor file).

pub(crate) mod e4defrag;
pub(crate) mod falloc;
pub(crate) mod ftruncate;
pub(crate) mod ops;
