//! `--vm=KEY=VALUE,...` on a fio command line: the run happens inside a QEMU guest
//! (fiox-testbed's vm module) on a virtio-blk disk the guest calls /dev/vda. This fiox boots
//! the guest, runs itself there with the same command line (without `--vm` and `--output`,
//! with `--allow-destructive=/dev/vda`: the disk is the guest's fresh scratch), relays the
//! guest fiox's stderr and exit status, and writes its report where this command line asks,
//! a JSON report with `fiox.env.vm` added (accelerator, kernel, QEMU's disk settings, the
//! guest's I/O scheduler, boot and run seconds) and, under TCG, a warning that the numbers
//! measure the emulator. `fiox.env.kernel` is the guest's: the guest fiox wrote it.

use crate::output::Out;
use anyhow::{bail, Context, Result};
use fiox_job::Invocation;
use fiox_testbed::vm::{self, Outcome, VmSpec};
use serde_json::{json, Value};

/// Run the invocation in a guest; returns the exit code.
pub fn run(args: &[String], inv: &Invocation) -> Result<i32> {
    // The guest's fiox cannot write the host's history (its root is the host's, read-only).
    if crate::history::plain_run_records(inv.settings.history) {
        anyhow::bail!(
            "--history (or FIOX_HISTORY=1) with --vm is not supported yet: write the result \
             with --output-format=json --output=FILE and record it with `fiox history import FILE`"
        );
    }
    let s = &inv.settings;
    if s.machine_memory.is_some() || s.machine_cpus.is_some() {
        bail!(
            "--vm with --machine-memory/--machine-cpus: the guest is the smaller machine; give \
             its memory= and cpus= in --vm instead"
        );
    }
    let spec = VmSpec::parse(s.vm.as_deref().unwrap_or("")).context("--vm")?;
    // A device as the guest's disk gets a host job's checks first, and stays claimed.
    let _claim = match &spec.disk {
        Some(dev) => fiox_runner::claim_for_guest(dev, s.allow_destructive, &s.allow_targets)
            .with_context(|| format!("--vm disk={}", dev.display()))?,
        None => None,
    };
    fiox_runner::install_signal_handlers().context("installing signal handlers")?;
    let fiox = std::env::current_exe().context("the fiox binary's path")?;
    let cwd = std::env::current_dir().context("the current directory")?;
    let env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "PATH" | "PWD" | "OLDPWD" | "SHLVL" | "_" | "HOME"
            )
        })
        .collect();
    let (args, inputs) = guest_inputs(guest_args(args), &cwd)?;
    let o = vm::run(&vm::Run {
        spec: &spec,
        fiox,
        args,
        cwd: cwd.clone(),
        env,
        inputs,
        interrupted: &fiox_runner::interrupted,
    })
    .context("--vm")?;
    if o.interrupted {
        fiox_guard::eprintln!("fiox: interrupted: the guest was stopped and its files removed");
        return Ok(130);
    }
    fiox_guard::eprint!("{}", o.stderr);
    let mut code = o.exit.unwrap_or(1);
    if let Err(e) = bring_back(&o.files, &cwd) {
        fiox_guard::eprintln!("fiox: --vm: {}", crate::output::error_text(&e));
        code = code.max(1);
    }
    let text = with_vm_section(&o, &spec);
    let out = Out::open(s.output.as_deref())?;
    out.write(&text)?;
    out.flush()?;
    if let Some(why) = out.failure() {
        fiox_guard::eprintln!("fiox: {why}");
        return Ok(1);
    }
    Ok(code)
}

/// Write the files the guest's fiox wrote in its working directory into this one, as a host
/// run would have: a new file is created (and marked as fiox's), an existing one replaced
/// only when it is fiox's own or a log fio writes under that name (the rules a host job's
/// logs follow), never a user's file.
fn bring_back(files: &[(std::path::PathBuf, Vec<u8>)], cwd: &std::path::Path) -> Result<()> {
    use fiox_guard::output::{self, Named};
    use std::path::Component;
    for (rel, bytes) in files {
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            bail!(
                "the guest wrote {}: not a path under the working directory",
                rel.display()
            );
        }
        let path = cwd.join(rel);
        output::write(&path, bytes, Named::Recognized(fio_output))
            .with_context(|| format!("bringing back {} from the guest", rel.display()))?;
    }
    Ok(())
}

/// A log or an I/O log fio writes (which a guest job's log replaces, as on the host).
fn fio_output(f: &mut std::fs::File) -> bool {
    use std::io::Seek;
    fiox_stats::log::is_fio_log(f) || (f.rewind().is_ok() && fiox_runner::is_fio_iolog(f))
}

/// The command line for the guest's fiox: this one without `--vm` and `--output` (the
/// report comes back on the guest's stdout), allowed to write the guest's disk.
fn guest_args(args: &[String]) -> Vec<String> {
    let mut out = vec![format!("--allow-destructive={}", vm::GUEST_DISK)];
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        match a.as_str() {
            "--vm" | "--output" => skip = true,
            _ if a.starts_with("--vm=") || a.starts_with("--output=") => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

/// Files handed to the guest: (name in its share, bytes).
type Inputs = Vec<(String, Vec<u8>)>;

/// Job files the guest cannot see where the host has them (below /dev, /run, /proc or /sys,
/// e.g. an experiment's results in /dev/shm: "cannot read job file"): each is handed to the
/// guest through its output share and its argument replaced by the guest's path. A job file
/// elsewhere is read by the guest where it is (its `include`s beside it).
fn guest_inputs(args: Vec<String>, cwd: &std::path::Path) -> Result<(Vec<String>, Inputs)> {
    let mut inputs = Vec::new();
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        let p = cwd.join(&a);
        let hidden = !a.starts_with('-')
            && p.is_file()
            && std::fs::canonicalize(&p).is_ok_and(|c| !vm::guest_sees(&c));
        if !hidden {
            out.push(a);
            continue;
        }
        let text = fiox_guard::input::read_text(&p, 1 << 20)
            .with_context(|| format!("--vm: job file {a}"))?;
        let base: String = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || ".-_".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let name = format!("{}-{base}", inputs.len());
        out.push(vm::guest_input(&name));
        inputs.push((name, text.into_bytes()));
    }
    Ok((out, inputs))
}

/// What the run's JSON says about its guest (`fiox.env.vm`).
pub fn vm_json(o: &Outcome, spec: &VmSpec) -> Value {
    let mut warnings = Vec::new();
    if o.accel == "tcg" {
        let why = o
            .kvm_refused
            .as_deref()
            .map_or("accel=tcg was asked for".to_string(), |w| {
                format!("KVM did not run the guest: {w}")
            });
        let w = fiox_stats::Warning::new(
            fiox_stats::WarningCode::VmTcg,
            format!("the guest ran under QEMU's TCG emulation ({why}): the numbers measure the emulator, not the virtio-blk path"),
        );
        warnings.push(json!({"code": w.code.code(), "message": w.message, "fix": w.fix}));
    }
    json!({
        "accel": o.accel,
        "kvm_refused": o.kvm_refused,
        "boot_retries": o.boot_retries,
        "kernel_cmdline": spec.kernel_cmdline,
        "kernel": o.kernel.as_ref().map(|k| k.release.clone()),
        "kernel_image": o.kernel.as_ref().map(|k| k.image.display().to_string()),
        "aio": spec.aio.name(),
        "cache": spec.cache,
        "memory_bytes": spec.memory,
        "cpus": spec.cpus,
        "queues": spec.queues,
        "iothread": spec.iothread,
        "sched": o.sched,
        "guest_loop": spec.guest_loop.map(|direct| json!({
            "direct_io": if direct { "on" } else { "off" },
            "loop": o.guest_loop,
            "loop_bytes": spec.loop_size,
        })),
        "disk": spec.disk.as_ref().map(|d| d.display().to_string()),
        "disk_bytes": if spec.disk.is_some() { Value::Null } else { json!(spec.disk_size) },
        "disk_dir": spec.disk_dir.display().to_string(),
        "boot_seconds": o.boot_seconds,
        "seconds": o.seconds,
        "qemu_args": o.qemu_args,
        "warnings": warnings,
    })
}

/// The guest fiox's report with the guest's description: in `fiox.env.vm` (and its
/// warnings in `fiox.warnings`) for a JSON report, as a closing block otherwise.
fn with_vm_section(o: &Outcome, spec: &VmSpec) -> String {
    let v = vm_json(o, spec);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    if let Ok(mut doc) = serde_json::from_str::<Value>(&text) {
        if doc.is_object() {
            if !doc["fiox"].is_object() {
                doc["fiox"] = json!({});
            }
            if !doc["fiox"]["env"].is_object() {
                doc["fiox"]["env"] = json!({});
            }
            if let Some(w) = doc["fiox"]["warnings"].as_array_mut() {
                w.extend(v["warnings"].as_array().cloned().unwrap_or_default());
            }
            doc["fiox"]["env"]["vm"] = v;
            return serde_json::to_string_pretty(&doc).unwrap_or(text) + "\n";
        }
    }
    if text.is_empty() {
        return text;
    }
    let mut s = text;
    s.push_str(&format!(
        "fiox vm: guest kernel {} under {}, disk aio={} cache={} sched {}, {} MiB, {} vCPUs\n",
        v["kernel"].as_str().unwrap_or("?"),
        o.accel,
        spec.aio.name(),
        spec.cache,
        o.sched.as_deref().unwrap_or("?"),
        spec.memory >> 20,
        spec.cpus
    ));
    for w in v["warnings"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "  {}: {} (fix: {})\n",
            w["code"].as_str().unwrap_or(""),
            w["message"].as_str().unwrap_or(""),
            w["fix"].as_str().unwrap_or("")
        ));
    }
    s
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // the test makes its scratch directory itself
mod tests {
    use super::*;

    /// Issue 45: a job file in /dev/shm (an experiment's results there) is handed to the guest
    /// through its share; one the guest sees where it is stays an argument as it was.
    #[test]
    fn job_files_the_guest_cannot_see_go_through_its_share() {
        let pid = std::process::id();
        let shm = std::path::PathBuf::from(format!("/dev/shm/fiox-vm-in-{pid}.fio"));
        let var = std::path::PathBuf::from(format!("/var/tmp/fiox-vm-in-{pid}.fio"));
        std::fs::write(&shm, "[a]\nrw=read\n").unwrap();
        std::fs::write(&var, "[b]\nrw=read\n").unwrap();
        let args = vec![
            "--name=x".to_string(),
            shm.display().to_string(),
            var.display().to_string(),
        ];
        let (out, inputs) = guest_inputs(args, std::path::Path::new("/")).unwrap();
        let name = format!("0-fiox-vm-in-{pid}.fio");
        assert_eq!(
            out,
            [
                "--name=x".to_string(),
                vm::guest_input(&name),
                var.display().to_string()
            ]
        );
        assert_eq!(inputs, vec![(name, b"[a]\nrw=read\n".to_vec())]);
        std::fs::remove_file(&shm).unwrap();
        std::fs::remove_file(&var).unwrap();
    }

    #[test]
    fn files_from_the_guest_replace_only_fio_logs_and_fiox_outputs() {
        let d = std::env::temp_dir().join(format!("fiox-vm-back-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("old_bw.1.log"), "10, 5, 0, 4096\n").unwrap();
        std::fs::write(d.join("notes.txt"), "the user's").unwrap();
        let f = |n: &str, b: &str| (std::path::PathBuf::from(n), b.as_bytes().to_vec());
        let ok = [
            f("new_bw.1.log", "1, 2, 0, 4096\n"),
            f("old_bw.1.log", "3, 4, 1, 4096\n"),
            f("sub/x.state", "s"),
        ];
        bring_back(&ok, &d).unwrap();
        let read = |n: &str| std::fs::read_to_string(d.join(n)).unwrap();
        assert_eq!(read("new_bw.1.log"), "1, 2, 0, 4096\n");
        assert_eq!(read("old_bw.1.log"), "3, 4, 1, 4096\n");
        assert_eq!(read("sub/x.state"), "s");
        // Written again (a second run): fiox's own outputs are replaced.
        bring_back(&[f("sub/x.state", "t")], &d).unwrap();
        assert_eq!(read("sub/x.state"), "t");
        // A user's file is not a log: refused, left as it was.
        let e = bring_back(&[f("notes.txt", "x")], &d).unwrap_err();
        assert!(format!("{e:#}").contains("notes.txt"), "{e:#}");
        assert_eq!(read("notes.txt"), "the user's");
        let e = bring_back(&[f("../escape", "x")], &d).unwrap_err();
        assert!(e.to_string().contains("not a path under"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_guest_gets_the_command_line_without_vm_and_output() {
        let a: Vec<String> = [
            "--vm",
            "aio=native",
            "--output=x.json",
            "--name=j",
            "--output",
            "y",
            "--vm=cache=none",
            "--rw=read",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            guest_args(&a),
            ["--allow-destructive=/dev/vda", "--name=j", "--rw=read"]
        );
    }
}
