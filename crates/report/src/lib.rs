//! Reports in fio 3.33's formats, one module per format: `normal` (the human text), `json` and
//! `json+`, `terse` (version 3), and fio's log files. Input is a [`fiox_stats::RunResult`].
#![forbid(unsafe_code)]
