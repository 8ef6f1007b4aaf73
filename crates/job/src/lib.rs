//! fio's job language: one option table drives parsing of job files and command lines,
//! validation, `--cmdhelp`, `--enghelp` and `docs/options.md`; resolution turns the parsed
//! sections into typed [`JobSpec`]s that the rest of fiox consumes.
#![forbid(unsafe_code)]

pub mod spec;

pub use spec::*;
