//! `fiox testbed up|list|down|cleanup`: named test targets that outlive the command (loop
//! devices with direct I/O on or off, tmpfs, ramfs, mkfs'd filesystems on a fiox loop device),
//! recorded in a state directory so `down` and `cleanup` (after a kill -9) remove exactly what
//! fiox made. The work is fiox-testbed's `managed` module; this file parses switches and prints.

use anyhow::Result;
use fiox_testbed::managed::{self, Record, Skipped, Spec};

/// `fiox testbed`'s command line.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "KIND: loop, tmpfs, ramfs, fs (mkfs on a fiox loop device) or slow (a \
FUSE file with a per-request delay and error rate, served by a fiox process). `up --hold` keeps \
it only until Ctrl-C (a kill -9 leaves it to `cleanup`)."
)]
pub struct TestbedArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Make a named testbed and print "NAME KIND TARGET key=value..."
    Up(UpArgs),
    /// List the testbeds, one line each
    List,
    /// Remove the named testbeds
    Down {
        /// Testbeds to remove
        #[arg(value_name = "NAME", required_unless_present = "all")]
        names: Vec<String>,
        /// Remove every testbed
        #[arg(long, conflicts_with = "names")]
        all: bool,
    },
    /// Remove the testbeds whose owner is gone (after a kill -9)
    Cleanup,
    /// Serve a slow testbed's FUSE file (started by `up slow`)
    #[command(hide = true)]
    ServeSlow(SpecKeys),
}

/// `testbed up`'s switches.
#[derive(Debug, clap::Args)]
struct UpArgs {
    /// What to make
    #[arg(value_name = "KIND", value_parser = ["loop", "tmpfs", "ramfs", "fs", "slow"])]
    kind: String,
    /// Name of the testbed to make
    #[arg(long, value_name = "N")]
    name: Option<String>,
    /// Keep it only until Ctrl-C
    #[arg(long)]
    hold: bool,
    #[command(flatten)]
    keys: SpecKeys,
}

/// The keys of a testbed spec (fiox-testbed's `Spec::from_pairs` checks the values).
#[derive(Debug, clap::Args)]
struct SpecKeys {
    /// Size (default 1g; slow: 64m)
    #[arg(long, value_name = "SIZE")]
    size: Option<String>,
    /// loop, fs: the loop device's direct I/O
    #[arg(long = "direct_io", alias = "direct-io", alias = "dio", value_name = "on|off",
          value_parser = ["on", "off", "1", "0", "true", "false", "yes", "no"])]
    direct_io: Option<String>,
    /// loop, fs: logical block size, 512..4096
    #[arg(
        long = "block_size",
        alias = "block-size",
        alias = "bs",
        value_name = "BYTES"
    )]
    block_size: Option<String>,
    /// Where the backing file or mount point goes
    #[arg(long, value_name = "DIR")]
    dir: Option<String>,
    /// fs: the filesystem to make
    #[arg(long, value_name = "FS", value_parser = ["ext4", "xfs", "btrfs"])]
    fs: Option<String>,
    /// fs: options for mkfs (split at spaces)
    #[arg(
        long = "mkfs_options",
        alias = "mkfs-options",
        value_name = "OPTS",
        allow_hyphen_values = true
    )]
    mkfs_options: Option<String>,
    /// fs: mount options
    #[arg(long = "mount_options", alias = "mount-options", value_name = "OPTS")]
    mount_options: Option<String>,
    /// slow: delay of each request in microseconds
    #[arg(long = "delay_us", alias = "delay-us", value_name = "US")]
    delay_us: Option<String>,
    /// slow: share of requests failing with EIO, 0..1
    #[arg(long = "error_rate", alias = "error-rate", value_name = "SHARE")]
    error_rate: Option<String>,
}

impl SpecKeys {
    /// The keys given, as `Spec::from_pairs` takes them.
    fn pairs(&self) -> Vec<(String, String)> {
        let keys = [
            ("size", &self.size),
            ("direct_io", &self.direct_io),
            ("block_size", &self.block_size),
            ("dir", &self.dir),
            ("fs", &self.fs),
            ("mkfs_options", &self.mkfs_options),
            ("mount_options", &self.mount_options),
            ("delay_us", &self.delay_us),
            ("error_rate", &self.error_rate),
        ];
        keys.into_iter()
            .filter_map(|(k, v)| Some((k.to_string(), v.clone()?)))
            .collect()
    }
}

/// Entry point; returns the exit code.
pub fn main(args: TestbedArgs) -> Result<i32> {
    match args.action {
        Action::Up(up_args) => up(up_args),
        Action::ServeSlow(keys) => serve_slow(&keys),
        Action::List => {
            let listing = managed::list()?;
            for r in &listing.records {
                fiox_guard::println!("{}", describe(r));
            }
            Ok(report_skipped(&listing.skipped))
        }
        Action::Down { names, all } => down(names, all),
        Action::Cleanup => {
            let report = managed::cleanup()?;
            for n in &report.removed {
                fiox_guard::println!("fiox: testbed {n} removed (its owner is gone)");
            }
            for (n, e) in &report.failed {
                fiox_guard::eprintln!(
                    "fiox: testbed {n}: {e} (its record stays; `fiox testbed cleanup` retries)"
                );
            }
            let skipped = report_skipped(&report.skipped);
            Ok(if report.failed.is_empty() { skipped } else { 1 })
        }
    }
}

/// Print the records skipped (malformed, not fiox's, tampered) on stderr; 1 if there were any.
fn report_skipped(skipped: &[Skipped]) -> i32 {
    for s in skipped {
        fiox_guard::eprintln!("fiox: {s}");
    }
    i32::from(!skipped.is_empty())
}

/// `down NAME...` or `down --all`: each one tried, a failure does not stop the others.
fn down(names: Vec<String>, all: bool) -> Result<i32> {
    let mut code = 0;
    let names: Vec<String> = if all {
        let listing = managed::list()?;
        code = report_skipped(&listing.skipped);
        listing.records.into_iter().map(|r| r.name).collect()
    } else {
        names
    };
    for n in names {
        match managed::down(&n) {
            Ok(()) => fiox_guard::println!("fiox: testbed {n} removed"),
            Err(e) => {
                fiox_guard::eprintln!("fiox: testbed {n}: {e}");
                code = 1;
            }
        }
    }
    Ok(code)
}

fn up(args: UpArgs) -> Result<i32> {
    let hold = args.hold;
    let mut spec = Spec::from_pairs(&args.kind, &args.keys.pairs())?;
    spec.server = Some(std::env::current_exe()?);
    if hold {
        // Installed before anything is made: Ctrl-C during `up` still reaches the teardown.
        fiox_runner::install_signal_handlers()?;
    }
    let rec = managed::up(&spec, args.name.as_deref(), !hold)?;
    fiox_guard::println!("{}", describe(&rec));
    if hold {
        while !fiox_runner::interrupted() {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        managed::down(&rec.name)?;
        fiox_guard::println!("fiox: testbed {} removed", rec.name);
    }
    Ok(0)
}

/// `testbed serve-slow --size=N --delay_us=N --error_rate=R` (started by `up slow`): serve a
/// FaultFs file, print "ready MOUNT FILE DEV INO BTIME MNT_ID" (the mount point's identity and
/// the mount's id, for the record), and unmount it on SIGTERM or SIGINT. A failure is printed
/// on stdout too: the maker reads only stdout, and shows it.
fn serve_slow(keys: &SpecKeys) -> Result<i32> {
    let fs = match start_slow(keys) {
        Ok(fs) => fs,
        Err(e) => {
            fiox_guard::println!("error: {}", crate::output::error_text(&e));
            return Err(e);
        }
    };
    let (id, mnt_id) = fs.identity();
    let (dev, ino) = id.dev_ino();
    let btime = id.btime().map_or("-".to_string(), |b| b.to_string());
    fiox_guard::println!(
        "ready {} {} {dev} {ino} {btime} {mnt_id}",
        fs.mount_point().display(),
        fs.file_path().display()
    );
    while !fiox_runner::interrupted() {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    fs.unmount()?;
    Ok(0)
}

fn start_slow(keys: &SpecKeys) -> Result<fiox_testbed::FaultFs> {
    use fiox_testbed::{FaultFs, FaultFsOptions};
    let spec = Spec::from_pairs("slow", &keys.pairs())?;
    fiox_runner::install_signal_handlers()?;
    Ok(FaultFs::mount(FaultFsOptions {
        file_name: "slow.dat".into(),
        size: spec.size,
        delay: std::time::Duration::from_micros(spec.delay_us),
        error_rate: spec.error_rate,
        ..FaultFsOptions::default()
    })?)
}

/// "NAME KIND TARGET key=value..." on one line.
fn describe(r: &Record) -> String {
    let mut s = format!("{} {} {}", r.name, r.kind, r.target.display());
    for (k, v) in &r.info {
        s.push_str(&format!(" {k}={v}"));
    }
    if r.info.get("state").is_some_and(|v| v == "removing") {
        s.push_str(&format!(
            " (removal failed partway: `fiox testbed down {}` tries again)",
            r.name
        ));
    } else if !r.ready {
        s.push_str(" (incomplete)");
    }
    if r.orphaned() {
        s.push_str(" (owner gone: `fiox testbed cleanup` removes it)");
    }
    s
}
