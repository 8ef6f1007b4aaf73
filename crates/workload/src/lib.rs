//! Workload generation, pure and seeded: which direction, file, offset and length each I/O
//! has (sequential with `:N` holes, random with a random map or without, lfsr, zipf/pareto/
//! normal/zoned distributions, bs/bsrange/bssplit/blockalign, rwmixread), and what a write
//! buffer contains (refill, zero, scramble, compressible, pattern). No I/O, no clocks, no unsafe.
//!
//! Everything reproduces fio 3.33's generators bit for bit where fio is deterministic (same
//! seeds, same Tausworthe streams, same scaling arithmetic), so a job yields the same I/O
//! sequence, counts and bytes as fio's `write_iolog` shows for it.
#![forbid(unsafe_code)]

mod buffer;
mod cfg;
mod dist;
mod error;
mod fastfill;
mod files;
mod gen;
mod lfsr;
mod ops;
mod rand;
mod randmap;
mod seeds;
mod trimpick;

pub use buffer::BufferFiller;
pub use error::WorkloadError;
pub use files::split_size;
pub use gen::{FileExtent, GenOptions, Generator, IoReq, RandNote};
pub use seeds::{Seeds, Stream, FIO_RANDSEED};
pub use trimpick::TrimPicker;

#[cfg(test)]
mod tests;
