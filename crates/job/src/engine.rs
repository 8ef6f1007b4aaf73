//! The engines fiox implements, as one table ([`Engine`]): each engine's `ioengine=` name,
//! its aliases, its help line and its kind (queued, one syscall per I/O on the job's thread,
//! diskless, tied to the job's thread). A job's `ioengine=` is parsed once into an
//! [`IoEngineName`] (the name as fio prints it, with the [`Engine`] it names), and every
//! other crate asks the enum, never the string (`tests/repo.rs` checks it).

use std::fmt;

/// What an engine is: the table's columns after the name and the help line.
#[derive(Clone, Copy)]
struct Kind {
    /// `iodepth` queues I/O (kernel or thread-pool asynchronous submission).
    queued: bool,
    /// One file syscall per I/O, on the job's own thread (the sync family).
    sync: bool,
    /// fio's FIO_DISKLESSIO: the engine touches no disk.
    diskless: bool,
    /// Needs the job's own thread (tied to opens, or sets the job's thinktime), so
    /// `io_submit_mode=offload` cannot wrap it.
    inline_only: bool,
}

const PLAIN: Kind = Kind {
    queued: false,
    sync: false,
    diskless: false,
    inline_only: false,
};
const SYNC: Kind = Kind {
    sync: true,
    ..PLAIN
};
const QUEUED: Kind = Kind {
    queued: true,
    ..PLAIN
};
const DISKLESS: Kind = Kind {
    diskless: true,
    ..PLAIN
};
const INLINE: Kind = Kind {
    inline_only: true,
    ..PLAIN
};
const DISKLESS_INLINE: Kind = Kind {
    diskless: true,
    inline_only: true,
    ..PLAIN
};

/// The table: `Variant = "name" [aliases], KIND, "help line";`, in the order of fiox's help.
macro_rules! engines {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal [$($alias:literal),*], $kind:expr, $about:literal;)*) => {
        /// An engine fiox implements.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Engine {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Engine {
            /// Every engine, in the table's order.
            pub const ALL: &'static [Engine] = &[$(Engine::$variant,)*];

            /// The engine's `ioengine=` name as fio prints it (`guasi` for `threads`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Engine::$variant => $name,)*
                }
            }

            /// Other names `ioengine=` takes for the engine.
            pub const fn aliases(self) -> &'static [&'static str] {
                match self {
                    $(Engine::$variant => &[$($alias),*],)*
                }
            }

            /// The help line (`--enghelp`, the man page).
            pub const fn about(self) -> &'static str {
                match self {
                    $(Engine::$variant => $about,)*
                }
            }

            const fn kind(self) -> Kind {
                match self {
                    $(Engine::$variant => $kind,)*
                }
            }
        }
    };
}

engines! {
    Sync = "sync" [], SYNC, "read(2)/write(2) with lseek(2)";
    Psync = "psync" [], SYNC, "pread(2)/pwrite(2) (default)";
    Vsync = "vsync" [], SYNC, "readv(2)/writev(2) with lseek(2)";
    Pvsync = "pvsync" [], SYNC, "preadv(2)/pwritev(2)";
    Pvsync2 = "pvsync2" [], SYNC, "preadv2(2)/pwritev2(2) with RWF_* flags";
    Mmap = "mmap" [], PLAIN, "memory-mapped file copies";
    Null = "null" [], DISKLESS, "no I/O at all, for measuring overhead";
    Libaio = "libaio" [], QUEUED, "Linux native AIO (asynchronous only with direct=1)";
    IoUring = "io_uring" [], QUEUED, "Linux io_uring";
    Posixaio = "posixaio" [], QUEUED, "POSIX aio_read/aio_write";
    Guasi = "guasi" ["threads"], QUEUED, "fiox thread-pool engine (alias: threads)";
    Falloc = "falloc" [], PLAIN,
        "fallocate(2) per I/O: read keeps the size, write extends, trim punches";
    Ftruncate = "ftruncate" [], PLAIN, "ftruncate(2) to each write's offset";
    Filecreate = "filecreate" [], DISKLESS_INLINE, "times open(2) with O_CREAT of each file";
    Filestat = "filestat" [], INLINE,
        "times stat(2)/lstat(2)/statx(2) of each file (stat_type)";
    Filedelete = "filedelete" [], INLINE, "times unlink(2) of each file";
    Dircreate = "dircreate" [], DISKLESS_INLINE, "times mkdir(2) of each directory (fio 3.42)";
    Dirstat = "dirstat" [], DISKLESS_INLINE,
        "times stat(2)/lstat(2)/statx(2) of each directory made at setup (stat_type)";
    Dirdelete = "dirdelete" [], DISKLESS_INLINE, "times rmdir(2) of each directory made at setup";
    PageFault = "page_fault" [], DISKLESS,
        "I/O copies into an anonymous mapping of size bytes, no file (fio 3.42)";
    Cpuio = "cpuio" [], DISKLESS_INLINE,
        "burns CPU (cpuload percent of one CPU) instead of doing I/O";
    Exec = "exec" [], DISKLESS_INLINE, "runs a program for the job's runtime, then stops it";
    Splice = "splice" [], PLAIN, "splice(2)/vmsplice(2) through a pipe";
    Net = "net" [], DISKLESS_INLINE,
        "TCP, UDP or unix-socket transfer between a listening job and a sending job";
    Netsplice = "netsplice" [], DISKLESS_INLINE, "net, moving TCP data with splice(2)/vmsplice(2)";
    E4defrag = "e4defrag" [], PLAIN, "ext4 online defragmentation (EXT4_IOC_MOVE_EXT) per write";
    Pmemblk = "pmemblk" [], DISKLESS,
        "blocks of a PMDK pool (libpmemblk): filename=path,bsize,fsizemib, needs thread=1";
}

impl Engine {
    /// The engine `ioengine=name` names: its name or an alias, case-insensitive, blanks
    /// around it ignored.
    pub fn parse(name: &str) -> Option<Engine> {
        let name = name.trim();
        Engine::ALL.iter().copied().find(|e| {
            e.name().eq_ignore_ascii_case(name)
                || e.aliases().iter().any(|a| a.eq_ignore_ascii_case(name))
        })
    }

    /// `iodepth` queues I/O (libaio, io_uring, posixaio, guasi); the sync engines ignore it
    /// and `null` completes at once by design.
    pub const fn is_queued(self) -> bool {
        self.kind().queued
    }

    /// One file syscall per I/O, each on the job's own thread (sync, psync, vsync, pvsync,
    /// pvsync2). For those a private file table saves the kernel's reference count on every
    /// call (see the runner's `fdtable`); engines that hand file numbers to threads shared by
    /// the whole process (glibc's posixaio pool) must never get one.
    pub const fn is_sync(self) -> bool {
        self.kind().sync
    }

    /// fio's FIO_DISKLESSIO engines among fiox's: they touch no disk, so the runner neither
    /// lays out their files nor watches disks for them.
    pub const fn is_diskless(self) -> bool {
        self.kind().diskless
    }

    /// The engine needs the job's own thread (its work is tied to opens, or it sets the job's
    /// thinktime), so `io_submit_mode=offload` cannot wrap it.
    pub const fn is_inline_only(self) -> bool {
        self.kind().inline_only
    }

    /// fio's FIO_SYNCIO engines: the sync family, mmap and pmemblk (fio's null engine is not
    /// one: fio queues it at any depth).
    pub const fn is_fio_syncio(self) -> bool {
        self.is_sync() || matches!(self, Engine::Mmap | Engine::Pmemblk)
    }

    /// The file-operation engines (fio times the operation on each file, not the I/Os).
    pub const fn is_file_op(self) -> bool {
        matches!(
            self,
            Engine::Filecreate
                | Engine::Filestat
                | Engine::Filedelete
                | Engine::Dircreate
                | Engine::Dirstat
                | Engine::Dirdelete
        )
    }

    /// The network engines (net, netsplice).
    pub const fn is_net(self) -> bool {
        matches!(self, Engine::Net | Engine::Netsplice)
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A job's `ioengine=`: the name as fio prints it (canonical for fiox's engines, as written
/// for a fio engine fiox lacks) and the [`Engine`] it names, parsed once when it is set.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IoEngineName {
    name: String,
    engine: Option<Engine>,
}

impl IoEngineName {
    /// The name as stored (what reports print).
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The engine, or `None` for a name that is no engine of fiox's (a fio engine fiox lacks).
    pub fn engine(&self) -> Option<Engine> {
        self.engine
    }

    /// Whether it names `e`.
    pub fn is(&self, e: Engine) -> bool {
        self.engine == Some(e)
    }

    /// For a fio engine fiox lacks: whether fio queues its reads and writes
    /// ([`crate::defs::unsupported::QUEUED_IN_FIO`]). False for fiox's own engines (ask
    /// [`Engine::is_queued`]).
    pub fn lacked_engine_queues(&self) -> bool {
        self.engine.is_none()
            && crate::defs::unsupported::QUEUED_IN_FIO.contains(&self.name.as_str())
    }

    /// Whether it names an engine with property `p` (e.g. [`Engine::is_diskless`]).
    pub fn has(&self, p: fn(Engine) -> bool) -> bool {
        self.engine.is_some_and(p)
    }
}

impl From<&str> for IoEngineName {
    fn from(name: &str) -> Self {
        IoEngineName {
            name: name.to_string(),
            engine: Engine::parse(name),
        }
    }
}

impl From<String> for IoEngineName {
    fn from(name: String) -> Self {
        let engine = Engine::parse(&name);
        IoEngineName { name, engine }
    }
}

impl From<Engine> for IoEngineName {
    fn from(e: Engine) -> Self {
        IoEngineName {
            name: e.name().to_string(),
            engine: Some(e),
        }
    }
}

impl fmt::Display for IoEngineName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_parse_case_insensitively() {
        for (i, e) in Engine::ALL.iter().enumerate() {
            assert_eq!(Engine::parse(e.name()), Some(*e));
            assert_eq!(
                Engine::parse(&format!(" {} ", e.name().to_uppercase())),
                Some(*e)
            );
            assert!(Engine::ALL[..i].iter().all(|o| o.name() != e.name()));
        }
        assert_eq!(Engine::parse("Threads"), Some(Engine::Guasi));
        assert_eq!(Engine::parse("rbd"), None);
        let n = IoEngineName::from(" PSync");
        assert_eq!((n.as_str(), n.engine()), (" PSync", Some(Engine::Psync)));
        assert!(n.has(Engine::is_sync) && !n.has(Engine::is_diskless));
    }

    /// The kinds as the lists they replace had them.
    #[test]
    fn kinds_are_the_old_lists() {
        let names = |p: fn(Engine) -> bool| -> Vec<&str> {
            Engine::ALL
                .iter()
                .filter(|e| p(**e))
                .map(|e| e.name())
                .collect()
        };
        assert_eq!(
            names(Engine::is_queued),
            ["libaio", "io_uring", "posixaio", "guasi"]
        );
        assert_eq!(
            names(Engine::is_sync),
            ["sync", "psync", "vsync", "pvsync", "pvsync2"]
        );
        let mut diskless = names(Engine::is_diskless);
        diskless.sort_unstable();
        let mut old = [
            "null",
            "cpuio",
            "exec",
            "filecreate",
            "net",
            "netsplice",
            "dircreate",
            "dirstat",
            "dirdelete",
            "page_fault",
            "pmemblk",
        ];
        old.sort_unstable();
        assert_eq!(diskless, old);
        assert_eq!(
            names(Engine::is_inline_only),
            [
                "filecreate",
                "filestat",
                "filedelete",
                "dircreate",
                "dirstat",
                "dirdelete",
                "cpuio",
                "exec",
                "net",
                "netsplice"
            ]
        );
    }
}
