//! fio's pmemblk file names: `path[,bsize,fsizemib]`. The two numbers, when both are given,
//! are the pool's block size in bytes and the size in MiB of the file to create when it is
//! missing (libpmemblk's gross size: its metadata takes some of it). fio reads them from the
//! end of the name and, when they do not parse as two positive numbers, takes the whole name
//! as the path; fiox does the same for a name that does not look like an attempt at the form,
//! and says what is wrong with one that does (a trailing number, as in `pool,4096` or
//! `pool,abc,1024`), since fio would only fail later, looking for a file of that whole name.

use std::fmt;

/// A pmemblk file name split into the pool's path and the sizes to create it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolName {
    /// The pool file's path (the name without its sizes).
    pub path: String,
    /// Block size (bytes) and file size (bytes) to create the pool with, when both are given.
    pub create: Option<PoolSizes>,
}

/// The sizes a pmemblk file name gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSizes {
    /// The pool's block size in bytes.
    pub bsize: u64,
    /// The pool file's size in bytes (the name gives MiB).
    pub file_bytes: u64,
}

/// Why a pmemblk file name that ends like `,bsize,fsizemib` cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolNameError {
    /// The name as given.
    pub name: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for PoolNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "filename={}: {}; ioengine=pmemblk takes filename=path[,bsize,fsizemib] (block size \
             in bytes, pool file size in MiB, both positive), e.g. /mnt/pmem0/pool,4096,1024",
            self.name, self.reason
        )
    }
}

impl std::error::Error for PoolNameError {}

/// A positive decimal number of ASCII digits, or None.
fn number(s: &str) -> Option<Result<u64, ()>> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.parse::<u64>().map_err(|_| ()))
}

impl PoolName {
    /// Split `name` as fio's pmemblk engine does (see the module's note).
    pub fn parse(name: &str) -> Result<PoolName, PoolNameError> {
        let whole = || PoolName {
            path: name.to_string(),
            create: None,
        };
        let bad = |reason: String| PoolNameError {
            name: name.to_string(),
            reason,
        };
        let Some((rest, last)) = name.rsplit_once(',') else {
            return Ok(whole());
        };
        let fsize = match number(last) {
            // Not a number: a path with a comma in it, as fio reads it.
            None => return Ok(whole()),
            Some(Err(())) => return Err(bad(format!("fsizemib {last} is too large"))),
            Some(Ok(0)) => return Err(bad("fsizemib is 0".into())),
            Some(Ok(n)) => n,
        };
        let Some((path, bs)) = rest.rsplit_once(',') else {
            return Err(bad(format!("{last} alone: bsize and fsizemib go together")));
        };
        let bsize = match number(bs) {
            None if bs.is_empty() => return Err(bad("bsize is missing".into())),
            None => return Err(bad(format!("bsize {bs} is not a number of bytes"))),
            Some(Err(())) => return Err(bad(format!("bsize {bs} is too large"))),
            Some(Ok(0)) => return Err(bad("bsize is 0".into())),
            Some(Ok(n)) => n,
        };
        if path.is_empty() {
            return Err(bad("the path is missing".into()));
        }
        let file_bytes = fsize
            .checked_mul(1 << 20)
            .ok_or_else(|| bad(format!("fsizemib {fsize} is too large")))?;
        Ok(PoolName {
            path: path.to_string(),
            create: Some(PoolSizes { bsize, file_bytes }),
        })
    }

    /// The pool's path in `name`: the name without its sizes, or the whole name where it
    /// cannot be read (as fio takes it).
    pub fn path_of(name: &str) -> String {
        PoolName::parse(name).map_or_else(|_| name.to_string(), |p| p.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sized(path: &str, bsize: u64, mib: u64) -> PoolName {
        PoolName {
            path: path.into(),
            create: Some(PoolSizes {
                bsize,
                file_bytes: mib << 20,
            }),
        }
    }

    #[test]
    fn the_sizes_come_off_the_end_of_the_name() {
        assert_eq!(
            PoolName::parse("/pmem0/fio-test,4096,1024"),
            Ok(sized("/pmem0/fio-test", 4096, 1024))
        );
        // Commas in the path stay in the path.
        assert_eq!(PoolName::parse("a,b,512,32"), Ok(sized("a,b", 512, 32)));
        for plain in ["/pmem0/pool", "a,b", "pool,4096,x1", ""] {
            assert_eq!(
                PoolName::parse(plain),
                Ok(PoolName {
                    path: plain.into(),
                    create: None
                }),
                "{plain}"
            );
        }
        assert_eq!(PoolName::path_of("p,4096,16"), "p");
        assert_eq!(PoolName::path_of("p,abc,16"), "p,abc,16");
    }

    #[test]
    fn a_broken_size_is_an_error_naming_the_option() {
        let cases = [
            ("pool,abc,1024", "bsize abc is not a number"),
            ("pool,,1024", "bsize is missing"),
            ("pool,0,1024", "bsize is 0"),
            ("pool,4096,0", "fsizemib is 0"),
            ("pool,4096", "bsize and fsizemib go together"),
            (",4096,16", "the path is missing"),
            ("pool,4096,99999999999999999999", "too large"),
            ("pool,4096,17592186044416", "too large"),
            ("pool,99999999999999999999,16", "too large"),
        ];
        for (name, why) in cases {
            let e = PoolName::parse(name).unwrap_err();
            let msg = e.to_string();
            assert!(msg.starts_with(&format!("filename={name}: ")), "{msg}");
            assert!(
                msg.contains(why) && msg.contains("path[,bsize,fsizemib]"),
                "{msg}"
            );
        }
    }
}
