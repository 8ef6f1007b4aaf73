//! Workload generation, pure and seeded: which direction, file, offset and length each I/O
//! has (sequential with `:N` holes, random with a random map or without, lfsr, zipf/pareto/
//! normal/zoned distributions, bs/bsrange/bssplit/blockalign, rwmixread), and what a write
//! buffer contains (refill, zero, scramble, compressible, pattern). No I/O, no clocks, no unsafe.
#![forbid(unsafe_code)]
