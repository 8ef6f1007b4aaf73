//! What the guard knows of an inode before it acts on it: its identity (device, inode number,
//! birth time), the mount it is on, its type, owner and size, all from one statx(2) made on a
//! directory descriptor without following a symbolic link. Two paths name the same thing only
//! if their identities match; a removal or replacement is made only after the thing at the
//! name proves to be the one fiox recorded.

use std::os::unix::fs::MetadataExt;

/// A file's identity: device, inode number and birth time (when the filesystem records one,
/// so an inode number reused by a later file does not match).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Identity {
    dev: u64,
    ino: u64,
    /// Nanoseconds since the epoch.
    btime: Option<i128>,
}

impl Identity {
    /// The identity of an open file's metadata (std's metadata is statx too).
    pub fn of(m: &std::fs::Metadata) -> Identity {
        let btime = m
            .created()
            .ok()
            .map(|t| match t.duration_since(std::time::UNIX_EPOCH) {
                Ok(d) => d.as_nanos() as i128,
                Err(e) => -(e.duration().as_nanos() as i128),
            });
        Identity {
            dev: m.dev(),
            ino: m.ino(),
            btime,
        }
    }

    /// Device and inode number (what the kernel reports for a loop device's backing file).
    pub fn dev_ino(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// Birth time in nanoseconds since the epoch, where the filesystem keeps one.
    pub fn btime(&self) -> Option<i128> {
        self.btime
    }

    /// An identity rebuilt from a record (e.g. a testbed's state file).
    pub fn from_parts(dev: u64, ino: u64, btime: Option<i128>) -> Identity {
        Identity { dev, ino, btime }
    }
}

/// The kind of thing at a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    Block,
    Char,
    Fifo,
    Socket,
}

impl Kind {
    /// What a person calls it, with its article ("a symbolic link").
    pub fn noun(self) -> &'static str {
        match self {
            Kind::File => "a file",
            Kind::Dir => "a directory",
            Kind::Symlink => "a symbolic link",
            Kind::Block => "a block device",
            Kind::Char => "a character device",
            Kind::Fifo => "a FIFO",
            Kind::Socket => "a socket",
        }
    }
}

/// `uid N (name)`, the name from /etc/passwd where it has one: who owns an object in fiox's
/// way, in words a person can act on.
pub fn owner_words(uid: u32) -> String {
    let name = std::fs::read_to_string("/etc/passwd").ok().and_then(|t| {
        t.lines().find_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            (f.nth(1)? == uid.to_string()).then(|| name.to_string())
        })
    });
    match name {
        Some(n) => format!("uid {uid} ({n})"),
        None => format!("uid {uid}"),
    }
}

/// One statx of a name (or a descriptor), never following a symbolic link.
#[derive(Debug, Clone, Copy)]
pub struct Stat {
    pub id: Identity,
    pub kind: Kind,
    pub uid: u32,
    pub mode: u32,
    pub size: u64,
    pub nlink: u32,
    /// The mount the inode is on (statx STX_MNT_ID), where the kernel reports one: a bind
    /// mount of the same filesystem has the same device but another mount id.
    pub mnt_id: Option<u64>,
    /// The inode is the root of a mount.
    pub mount_root: bool,
}

impl Stat {
    pub(crate) fn from_statx(st: &libc::statx) -> Stat {
        let btime = (st.stx_mask & crate::sys::STATX_BTIME != 0)
            .then(|| st.stx_btime.tv_sec as i128 * 1_000_000_000 + st.stx_btime.tv_nsec as i128);
        let kind = match u32::from(st.stx_mode) & libc::S_IFMT {
            libc::S_IFREG => Kind::File,
            libc::S_IFDIR => Kind::Dir,
            libc::S_IFLNK => Kind::Symlink,
            libc::S_IFBLK => Kind::Block,
            libc::S_IFCHR => Kind::Char,
            libc::S_IFIFO => Kind::Fifo,
            _ => Kind::Socket,
        };
        let mount_root = st.stx_attributes_mask & crate::sys::STATX_ATTR_MOUNT_ROOT != 0
            && st.stx_attributes & crate::sys::STATX_ATTR_MOUNT_ROOT != 0;
        Stat {
            id: Identity {
                dev: libc::makedev(st.stx_dev_major, st.stx_dev_minor),
                ino: st.stx_ino,
                btime,
            },
            kind,
            uid: st.stx_uid,
            mode: u32::from(st.stx_mode) & 0o7777,
            size: st.stx_size,
            nlink: st.stx_nlink,
            mnt_id: (st.stx_mask & crate::sys::STATX_MNT_ID != 0).then_some(st.stx_mnt_id),
            mount_root,
        }
    }

    /// The device number of a block or character device node.
    pub fn rdev(st: &libc::statx) -> u64 {
        libc::makedev(st.stx_rdev_major, st.stx_rdev_minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn statx_and_std_metadata_agree_on_identity() {
        let f = std::fs::File::open("/proc/self/exe").unwrap();
        let st = crate::sys::statx(f.as_fd(), std::ffi::OsStr::new("")).unwrap();
        let s = Stat::from_statx(&st);
        assert_eq!(s.id, Identity::of(&f.metadata().unwrap()));
        assert_eq!(s.kind, Kind::File);
        assert!(s.mnt_id.is_some(), "kernel 5.8+ reports a mount id");
    }
}
