//! The C library's `strerror` text for errno values, which fio prints in its `errors` line
//! (`first_error=5/<Input/output error>`). A fixed table of Linux/glibc messages keeps the
//! report crate free of unsafe FFI; unknown numbers read `Unknown error N` as glibc prints them.

/// glibc's message for `errno`.
pub fn strerror(errno: i32) -> String {
    let known = match errno {
        0 => "Success",
        1 => "Operation not permitted",
        2 => "No such file or directory",
        3 => "No such process",
        4 => "Interrupted system call",
        5 => "Input/output error",
        6 => "No such device or address",
        7 => "Argument list too long",
        8 => "Exec format error",
        9 => "Bad file descriptor",
        10 => "No child processes",
        11 => "Resource temporarily unavailable",
        12 => "Cannot allocate memory",
        13 => "Permission denied",
        14 => "Bad address",
        15 => "Block device required",
        16 => "Device or resource busy",
        17 => "File exists",
        18 => "Invalid cross-device link",
        19 => "No such device",
        20 => "Not a directory",
        21 => "Is a directory",
        22 => "Invalid argument",
        23 => "Too many open files in system",
        24 => "Too many open files",
        25 => "Inappropriate ioctl for device",
        26 => "Text file busy",
        27 => "File too large",
        28 => "No space left on device",
        29 => "Illegal seek",
        30 => "Read-only file system",
        31 => "Too many links",
        32 => "Broken pipe",
        33 => "Numerical argument out of domain",
        34 => "Numerical result out of range",
        61 => "No data available",
        62 => "Timer expired",
        74 => "Bad message",
        75 => "Value too large for defined data type",
        84 => "Invalid or incomplete multibyte or wide character",
        95 => "Operation not supported",
        103 => "Software caused connection abort",
        110 => "Connection timed out",
        117 => "Structure needs cleaning",
        121 => "Remote I/O error",
        122 => "Disk quota exceeded",
        123 => "No medium found",
        124 => "Wrong medium type",
        125 => "Operation canceled",
        _ => return format!("Unknown error {errno}"),
    };
    known.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_errors() {
        assert_eq!(strerror(5), "Input/output error");
        assert_eq!(strerror(28), "No space left on device");
        assert_eq!(strerror(4242), "Unknown error 4242");
    }
}
