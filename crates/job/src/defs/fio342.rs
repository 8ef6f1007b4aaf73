//! Options fio added after 3.33, up to fio 3.42 (fdp and data placement, sprandom, the PI and
//! metadata options of io_uring_cmd/xnvme, libblkio's engine options, verify_write_sequence,
//! num_range, ...; write_mode's row is fio master's, in [`super::fio_master`]): fiox parses and checks them like the fio 3.33 options of
//! [`super::fio_only`] and refuses a job that uses one as "not supported yet". The table is the
//! output of `crates/job/tools/gen_fio_only.py` on fio 3.42's source, keeping the options fio
//! 3.33 did not have (facts only: name, type, range, choices, owning engines).

use super::fio_only::known;
use super::{Category as C, Kind as K, OptDef};

/// fio 3.42's options that fio 3.33 did not have, sorted by name.
pub static OPTS: &[OptDef] = &[
    known("apptag", K::Int, C::Engine).engines(&["io_uring", "io_uring_cmd", "xnvme"]),
    known("apptag_mask", K::Int, C::Engine).engines(&["io_uring", "io_uring_cmd", "xnvme"]),
    known(
        "dataplacement",
        K::Choice(&["none", "fdp", "streams"]),
        C::Io,
    )
    .alias(&["data_placement"]),
    known("deac", K::Bool, C::Engine).engines(&["io_uring", "io_uring_cmd"]),
    known("dp_scheme", K::Str, C::Io),
    known("fdp", K::Bool, C::Io),
    known(
        "filetype",
        K::Choice(&["none", "file", "block", "char"]),
        C::Files,
    ),
    known(
        "http_object_mode",
        K::Choice(&["block", "range"]),
        C::Engine,
    )
    .engines(&["http"]),
    known("http_s3_security_token", K::Str, C::Engine).engines(&["http"]),
    known("libblkio_driver", K::Str, C::Engine).engines(&["libblkio"]),
    known(
        "libblkio_force_enable_completion_eventfd",
        K::Bool,
        C::Engine,
    )
    .engines(&["libblkio"]),
    known("libblkio_num_entries", K::Int, C::Engine)
        .range(1, i64::MAX)
        .engines(&["libblkio"]),
    known("libblkio_path", K::Str, C::Engine).engines(&["libblkio"]),
    known("libblkio_pre_connect_props", K::Str, C::Engine).engines(&["libblkio"]),
    known("libblkio_pre_start_props", K::Str, C::Engine).engines(&["libblkio"]),
    known("libblkio_queue_size", K::Int, C::Engine)
        .range(1, i64::MAX)
        .engines(&["libblkio"]),
    known("libblkio_vectored", K::Bool, C::Engine).engines(&["libblkio"]),
    known(
        "libblkio_wait_mode",
        K::Choice(&["block", "eventfd", "loop"]),
        C::Engine,
    )
    .engines(&["libblkio"]),
    known("libblkio_write_zeroes_on_trim", K::Bool, C::Engine).engines(&["libblkio"]),
    known("md_per_io_size", K::Int, C::Engine).engines(&["io_uring", "io_uring_cmd", "xnvme"]),
    known("num_range", K::Int, C::Io),
    known("pi_act", K::Bool, C::Engine).engines(&["io_uring", "io_uring_cmd", "xnvme"]),
    known("pi_chk", K::Str, C::Engine).engines(&["io_uring", "io_uring_cmd", "xnvme"]),
    known(
        "plid_select",
        K::Choice(&["random", "roundrobin", "scheme"]),
        C::Io,
    )
    .alias(&["fdp_pli_select"]),
    known("plids", K::Str, C::Io).alias(&["fdp_pli"]),
    known("rbd_encryption_format", K::Str, C::Engine).engines(&["rbd"]),
    known("rbd_encryption_passphrase", K::Str, C::Engine).engines(&["rbd"]),
    known("recover_zbd_write_error", K::Bool, C::Io),
    known("spr_cs", K::Int, C::Io),
    known("spr_num_regions", K::Int, C::Io),
    known("spr_op", K::Complex("list of numbers"), C::Io),
    known("sprandom", K::Bool, C::Io),
    known("verify_mode", K::Choice(&["read", "compare"]), C::Engine)
        .engines(&["io_uring", "io_uring_cmd"]),
    known("verify_pattern_interval", K::Int, C::Io),
    known("write_zone_remainder", K::Bool, C::Io),
    known("xnvme_dev_subnqn", K::Str, C::Engine).engines(&["xnvme"]),
    known("xnvme_mem", K::Str, C::Engine).engines(&["xnvme"]),
];
