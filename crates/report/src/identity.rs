//! The name fiox gives itself in its reports and in `--version`. By default that is fiox's own
//! (`fiox-0.1.0`). Programs written for fio check fio's version before they run it (bench-fio
//! wants `fio-3` in `fio --version`, KDiskMark wants the text to begin with `fio-`), so when
//! fiox stands in fio's place (run under the name `fio`, or with `FIOX_AS_FIO=1`: the binary
//! decides, once, before any report) it says `fio-3.33 (fiox 0.1.0)`: the fio release whose
//! job language and outputs it follows first, then its own identity, which stays visible. No
//! dash after fio's release: pbench-fio takes the text after the *last* `-` as the version
//! (`fio-3.33 (fiox-0.1.0)` read as `0.1.0)` and failed its check for fio 3.21 or newer).

use std::sync::atomic::{AtomicBool, Ordering};

/// The fio release fiox follows (its job language, outputs and exit codes).
pub const FIO_VERSION: &str = "3.33";

/// Whether fiox presents itself as fio (see the module's text).
static AS_FIO: AtomicBool = AtomicBool::new(false);

/// Present fiox as fio (`on`) or as itself in every later version line.
pub fn present_as_fio(on: bool) {
    AS_FIO.store(on, Ordering::Relaxed);
}

/// fiox's own identity, `fiox-0.1.0`.
pub fn fiox_identity() -> String {
    format!("fiox-{}", env!("CARGO_PKG_VERSION"))
}

/// The line `--version` prints and the reports carry where fio puts `fio-3.33` (JSON's
/// `fio version`, terse field 2, the normal header): fiox's identity, preceded by fio's
/// release when fiox presents itself as fio.
pub fn version_line() -> String {
    line(AS_FIO.load(Ordering::Relaxed))
}

/// The version line as fio (`as_fio`) or as fiox.
fn line(as_fio: bool) -> String {
    if as_fio {
        format!("fio-{FIO_VERSION} (fiox {})", env!("CARGO_PKG_VERSION"))
    } else {
        fiox_identity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_fio_the_line_begins_with_fios_release_and_keeps_fioxs() {
        // The process-wide flag stays off here: other tests read the default line.
        assert_eq!(version_line(), fiox_identity());
        let l = line(true);
        let v = env!("CARGO_PKG_VERSION");
        assert_eq!(l, format!("fio-{FIO_VERSION} (fiox {v})"));
        // pbench-fio's `${out##*-}`: what follows the last dash begins with fio's release.
        assert!(
            l.rsplit('-').next().unwrap().starts_with(FIO_VERSION),
            "{l}"
        );
    }
}
