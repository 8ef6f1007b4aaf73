//! Messages on stdout and stderr that never panic. Rust's `println!` and `eprintln!` panic when
//! the write fails: stderr redirected to a file on a full disk, stdout into a closed pipe. A run
//! would then end with exit status 101 and its results lost in the middle of its work (issue
//! 43's N9: a root filesystem filled for a moment, fiox's error messages about it panicked).
//! fio ignores such write errors, and so do these: `fiox_guard::eprintln!`,
//! `fiox_guard::eprint!`, `fiox_guard::println!` and `fiox_guard::print!` take the same
//! arguments as std's and lose the message instead. Reports go through their own writers,
//! which return the error (a report that cannot be written is the run's error, said once).
//! tests/repo.rs checks that no source outside tests uses std's.

use std::fmt::Arguments;
use std::io::Write;

/// Write to stderr, ignoring a failure.
pub fn stderr(args: Arguments) {
    let _ = std::io::stderr().write_fmt(args);
}

/// Write to stdout, ignoring a failure.
pub fn stdout(args: Arguments) {
    let _ = std::io::stdout().write_fmt(args);
}

/// std's `eprintln!`, but a failed write is ignored (see the module).
#[macro_export]
macro_rules! eprintln {
    () => {
        $crate::console::stderr(format_args!("\n"))
    };
    ($($t:tt)+) => {
        $crate::console::stderr(format_args!("{}\n", format_args!($($t)+)))
    };
}

/// std's `eprint!`, but a failed write is ignored.
#[macro_export]
macro_rules! eprint {
    ($($t:tt)+) => {
        $crate::console::stderr(format_args!($($t)+))
    };
}

/// std's `println!`, but a failed write is ignored.
#[macro_export]
macro_rules! println {
    () => {
        $crate::console::stdout(format_args!("\n"))
    };
    ($($t:tt)+) => {
        $crate::console::stdout(format_args!("{}\n", format_args!($($t)+)))
    };
}

/// std's `print!`, but a failed write is ignored.
#[macro_export]
macro_rules! print {
    ($($t:tt)+) => {
        $crate::console::stdout(format_args!($($t)+))
    };
}
