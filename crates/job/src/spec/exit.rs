//! How a job meets errors and ends: `continue_on_error`, the errors it ignores, and the
//! jobs `exitall` ends with it (`exit_what`).

use super::io::PerDir;

/// `continue_on_error=` kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContinueOnError {
    None,
    Read,
    Write,
    Io,
    Verify,
    All,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorSpec {
    pub continue_on_error: ContinueOnError,
    /// `ignore_error=` per direction: errno values (names resolved by the parser).
    pub ignore_error: PerDir<Vec<i32>>,
    pub exitall: bool,
    pub exitall_on_error: bool,
    /// `error_dump`: print each I/O error a job survives (fio's `__io_u_log_error`; fatal
    /// errors are always printed).
    pub error_dump: bool,
    /// `exit_what`: which jobs a finishing job stops when `exitall` is set.
    pub exit_what: ExitWhat,
}

/// fio's `exit_what`: the jobs `exitall` terminates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitWhat {
    /// The jobs of the finishing job's group (fio's default).
    #[default]
    Group,
    /// Every job running now, in any group; later stonewalled groups still run.
    Stonewall,
    /// Every job, including those not started yet.
    All,
}
