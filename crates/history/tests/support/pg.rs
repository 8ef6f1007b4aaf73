//! A real PostgreSQL server for a test: a cluster in a temporary directory (initdb, pg_ctl of
//! Debian's postgresql package), listening on a free loopback port and a Unix socket in that
//! directory only, fsync off, trust authentication for its one user `fiox`. PostgreSQL refuses
//! to run as root, so as root the directory belongs to the `postgres` user and the programs
//! run as that user (runuser). The server is stopped (`pg_ctl stop -m immediate`) and its
//! directory removed when the [`Server`] is dropped, a failed assertion included.

// Shared by crates/history/tests/store.rs and tests/history.rs, which use different parts.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

pub struct Server {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    /// The user the programs run as (None: as this process).
    user: Option<String>,
}

/// The newest /usr/lib/postgresql/N/bin holding initdb and pg_ctl.
fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

/// The uid and gid of `user` (from /etc/passwd).
fn ids_of(user: &str) -> Option<(u32, u32)> {
    let text = std::fs::read_to_string("/etc/passwd").ok()?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&user) && f.len() > 3)
            .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
    })
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

impl Server {
    /// Start a server for test `name`; None (after saying why) when PostgreSQL is missing.
    pub fn start(name: &str) -> Option<Server> {
        let Some(bin) = bin_dir() else {
            eprintln!(
                "skipped: no PostgreSQL server programs (/usr/lib/postgresql/*/bin/initdb); \
                 install the Debian package postgresql"
            );
            return None;
        };
        let dir = std::env::temp_dir().join(format!("fiox-pg-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        let user = if is_root() {
            let (uid, gid) = ids_of("postgres").expect("the postgres user (package postgresql)");
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
            Some("postgres".to_string())
        } else {
            None
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let s = Server {
            dir,
            bin,
            port,
            user,
        };
        let data = s.data();
        s.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "fiox",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        let opts = format!(
            "-c fsync=off -c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories={}",
            s.port,
            s.dir.display()
        );
        let log = s.dir.join("log").display().to_string();
        s.run(
            "pg_ctl",
            &[
                "-D", &data, "-l", &log, "-o", &opts, "-w", "-t", "60", "start",
            ],
        );
        Some(s)
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    /// Run a PostgreSQL program (as the server's user); panics with its output on failure.
    fn run(&self, prog: &str, args: &[&str]) -> bool {
        let path = self.bin.join(prog);
        let out = match &self.user {
            Some(u) => Command::new("runuser")
                .args(["-u", u, "--"])
                .arg(&path)
                .args(args)
                .current_dir(&self.dir)
                .output(),
            None => Command::new(&path).args(args).output(),
        }
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let ok = out.status.success();
        if !ok && prog != "pg_ctl" {
            panic!(
                "{prog} {args:?}: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            ok || args.last() == Some(&"stop"),
            "{prog} {args:?}: {}\n{}\nlog: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
        );
        ok
    }

    /// The URL of its `postgres` database.
    pub fn url(&self) -> PathBuf {
        PathBuf::from(format!(
            "postgresql://fiox@127.0.0.1:{}/postgres",
            self.port
        ))
    }

    /// A client of its own, for what a test must do around fiox.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url().to_string_lossy(), postgres::NoTls).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let data = self.data();
        self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
