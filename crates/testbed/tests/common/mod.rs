//! Shared by the integration tests: set up one of every resource and check that none is
//! left afterwards.

/// The workspace's test harness for what a test needs from the machine (tests/harness/need.rs).
#[path = "../../../../tests/harness/need.rs"]
pub mod need;

use fiox_testbed::loopdev::loops_backed_by;
use fiox_testbed::probe::mount_entries;
use fiox_testbed::{Ext4Image, LoopDevice, LoopOptions, TempDir, TmpfsMount};
#[cfg(feature = "faultfs")]
use fiox_testbed::{FaultFs, FaultFsOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Every resource kind the crate makes, kept alive together.
pub struct Everything {
    pub ext4: Ext4Image,
    pub tmpfs: TmpfsMount,
    #[cfg(feature = "faultfs")]
    pub fuse: Option<FaultFs>,
    pub plain_loop: LoopDevice,
    pub dir: TempDir,
}

/// What must be gone afterwards.
#[derive(Debug, Default)]
pub struct Traces {
    pub backing_files: Vec<PathBuf>,
    pub paths: Vec<PathBuf>,
}

impl Everything {
    pub fn new() -> Everything {
        let dir = TempDir::new("everything").unwrap();
        let img = dir.path().join("plain.img");
        std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
        let plain_loop = LoopDevice::attach(&img, &LoopOptions::default()).unwrap();
        let mut ext4 = Ext4Image::create(16 << 20).unwrap();
        ext4.mount().unwrap();
        let tmpfs = TmpfsMount::new(1 << 20).unwrap();
        #[cfg(feature = "faultfs")]
        let fuse = need::kernel_device("/dev/fuse", "FUSE")
            .then(|| FaultFs::mount(FaultFsOptions::default()).unwrap());
        Everything {
            ext4,
            tmpfs,
            #[cfg(feature = "faultfs")]
            fuse,
            plain_loop,
            dir,
        }
    }

    pub fn traces(&self) -> Traces {
        #[cfg(feature = "faultfs")]
        let fuse_dir = self.fuse.as_ref().map(|f| f.mount_point().to_path_buf());
        #[cfg(not(feature = "faultfs"))]
        let fuse_dir: Option<PathBuf> = None;
        let paths = [
            self.dir.path().to_path_buf(),
            self.ext4.image().parent().unwrap().to_path_buf(),
            self.ext4.mount_point().unwrap().to_path_buf(),
            self.tmpfs.path().to_path_buf(),
        ];
        Traces {
            backing_files: vec![
                self.plain_loop.backing_file().to_path_buf(),
                self.ext4.image().canonicalize().unwrap(),
            ],
            paths: paths.into_iter().chain(fuse_dir).collect(),
        }
    }
}

impl Traces {
    /// Lines `KIND path` a child process prints so its parent can check.
    pub fn to_lines(&self) -> Vec<String> {
        let b = self
            .backing_files
            .iter()
            .map(|p| format!("TESTBED backing {}", p.display()));
        let p = self
            .paths
            .iter()
            .map(|p| format!("TESTBED path {}", p.display()));
        b.chain(p).collect()
    }

    pub fn from_lines<'a>(lines: impl Iterator<Item = &'a str>) -> Traces {
        let mut t = Traces::default();
        for l in lines {
            if let Some(p) = l.strip_prefix("TESTBED backing ") {
                t.backing_files.push(p.into());
            } else if let Some(p) = l.strip_prefix("TESTBED path ") {
                t.paths.push(p.into());
            }
        }
        t
    }

    /// Panics naming whatever is left: a bound loop device, a mount, a path.
    pub fn assert_all_gone(&self) {
        for b in &self.backing_files {
            assert!(
                eventually(|| loops_backed_by(b).is_empty()),
                "loop device still bound to {}: {:?}",
                b.display(),
                loops_backed_by(b)
            );
        }
        for p in &self.paths {
            let mounted = || {
                mount_entries()
                    .unwrap()
                    .iter()
                    .any(|m| Path::new(&m.mount_point).starts_with(p))
            };
            assert!(eventually(|| !mounted()), "still mounted: {}", p.display());
            assert!(!p.exists(), "still exists: {}", p.display());
        }
    }
}

/// Poll for up to 10 s (kernel teardown can lag a close); never asserts a duration.
pub fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    while !cond() {
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// Why the integration tests cannot run here, if they cannot.
pub fn supported() -> bool {
    need::require_tool("mkfs.ext4");
    need::loop_devices() && need::kernel_filesystem("tmpfs") && need::kernel_filesystem("ext4")
}
