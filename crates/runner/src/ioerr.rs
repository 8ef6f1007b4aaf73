//! fio-style descriptions of failed I/Os: the operation, errno text and name, file, offset and
//! length (`io_u error on file F: No space left on device (ENOSPC): write offset=O, length=L`).

/// The operation of an I/O unit direction (0 read, 1 write, 2 trim, else a sync).
pub fn op_name(ddir: u8, data_only_sync: bool) -> &'static str {
    match ddir {
        0 => "read",
        1 => "write",
        2 => "trim",
        _ if data_only_sync => "fdatasync",
        _ => "fsync",
    }
}

/// The description of a failed I/O of `len` bytes at `offset` of `path`.
pub fn describe(op: &str, errno: i32, path: Option<&str>, offset: u64, len: u32) -> String {
    let err = std::io::Error::from_raw_os_error(errno);
    format!(
        "io_u error on file {}: {} ({}): {op} offset={offset}, length={len}",
        path.unwrap_or("?"),
        strip_os_error(&err),
        fiox_engine::errno_name(errno),
    )
}

/// `Input/output error` without std's ` (os error 5)` suffix.
fn strip_os_error(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_errno_file_and_position() {
        let d = describe("write", libc::ENOSPC, Some("/f"), 8192, 4096);
        assert_eq!(
            d,
            "io_u error on file /f: No space left on device (ENOSPC): write offset=8192, \
             length=4096"
        );
        assert_eq!(op_name(3, true), "fdatasync");
    }
}
