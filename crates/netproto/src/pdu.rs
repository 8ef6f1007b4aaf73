//! The small payloads of fio 3.33's protocol, laid out as its `server.h` structures (with the
//! C compiler's padding where a structure is not packed).

use crate::wire::{cstr, Get, Put};
use crate::ProtoError;

/// `FIO_PROBE_FLAG_ZLIB`: the peer can inflate zlib-compressed logs.
pub const PROBE_FLAG_ZLIB: u64 = 1;
/// fio's log levels (`FIO_LOG_*`), carried by TEXT.
pub const LOG_INFO: u32 = 1;
pub const LOG_ERR: u32 = 2;

/// `cmd_client_probe_pdu`: the client's flags and the address it used for the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub flags: u64,
    pub server: String,
}

impl Probe {
    pub fn decode(b: &[u8]) -> Result<Probe, ProtoError> {
        let mut g = Get::new(b, "PROBE");
        Ok(Probe {
            flags: g.u64()?,
            server: g.text(128)?,
        })
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Put::default();
        p.u64(self.flags);
        p.text(&self.server, 128);
        p.buf
    }
}

/// `cmd_probe_reply_pdu`: who the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeReply {
    pub hostname: String,
    pub bigendian: bool,
    pub version: String,
    /// fio's `os_*` number (Linux: 1) and `arch_*` number (x86-64: 1, aarch64: 13).
    pub os: u8,
    pub arch: u8,
    /// Bytes per pointer.
    pub bpp: u8,
    pub cpus: u32,
    pub flags: u64,
}

impl ProbeReply {
    /// This machine's reply: `version` is what the client prints as `fio=`.
    pub fn local(hostname: &str, version: &str, cpus: u32, flags: u64) -> ProbeReply {
        ProbeReply {
            hostname: hostname.to_string(),
            bigendian: cfg!(target_endian = "big"),
            version: version.to_string(),
            os: 1,
            arch: if cfg!(target_arch = "x86_64") {
                1
            } else if cfg!(target_arch = "aarch64") {
                13
            } else {
                14 // arch_generic
            },
            bpp: std::mem::size_of::<usize>() as u8,
            cpus,
            flags,
        }
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Put::with_capacity(112);
        p.text(&self.hostname, 64);
        p.u8(self.bigendian as u8);
        p.text(&self.version, 32);
        p.u8(self.os);
        p.u8(self.arch);
        p.u8(self.bpp);
        p.u32(self.cpus);
        p.u64(self.flags);
        p.buf
    }
    pub fn decode(b: &[u8]) -> Result<ProbeReply, ProtoError> {
        let mut g = Get::new(b, "PROBE reply");
        let hostname = g.text(64)?;
        let bigendian = g.u8()? != 0;
        let version = g.text(32)?;
        let (os, arch, bpp) = (g.u8()?, g.u8()?, g.u8()?);
        Ok(ProbeReply {
            hostname,
            bigendian,
            version,
            os,
            arch,
            bpp,
            cpus: g.u32()?,
            flags: g.u64()?,
        })
    }
}

/// `cmd_job_pdu`: a job file's text. fio's client sends the file plus room for variable
/// expansion (`buf_len` counts that room): the text ends at the first NUL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobText {
    pub text: String,
    pub client_type: u32,
}

impl JobText {
    pub fn decode(b: &[u8]) -> Result<JobText, ProtoError> {
        let mut g = Get::new(b, "JOB");
        let len = g.u32()? as usize;
        let client_type = g.u32()?;
        let rest = g.rest();
        // A buf_len past the payload is fio's client's own slack: take what arrived.
        let text = cstr(&rest[..len.min(rest.len())]);
        Ok(JobText { text, client_type })
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Put::default();
        p.u32(self.text.len() as u32 + 1);
        p.u32(self.client_type);
        p.bytes(self.text.as_bytes());
        p.u8(0);
        p.buf
    }
}

/// `cmd_line_pdu`: the client's command line (`fio --client=H --name=x ...`), as argv with
/// the program name first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobLine {
    pub args: Vec<String>,
    pub client_type: u16,
}

impl JobLine {
    pub fn decode(b: &[u8]) -> Result<JobLine, ProtoError> {
        let mut g = Get::new(b, "JOBLINE");
        let lines = g.u16()?;
        let client_type = g.u16()?;
        let mut args = Vec::new();
        for _ in 0..lines {
            let len = g.u16()? as usize;
            args.push(cstr(g.bytes(len)?));
        }
        Ok(JobLine { args, client_type })
    }
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Put::default();
        p.u16(self.args.len() as u16);
        p.u16(self.client_type);
        for a in &self.args {
            p.u16(a.len() as u16 + 1);
            p.bytes(a.as_bytes());
            p.u8(0);
        }
        p.buf
    }
}

/// `cmd_load_file_pdu`: a job file on the server's side (`--remote-config`).
pub fn decode_load_file(b: &[u8]) -> Result<String, ProtoError> {
    let mut g = Get::new(b, "LOAD_FILE");
    let len = g.u16()? as usize;
    let _client_type = g.u16()?;
    let rest = g.rest();
    Ok(cstr(&rest[..len.min(rest.len())]))
}

/// `cmd_start_pdu`: how many jobs were set up and how many results (TS) will follow.
pub fn start(jobs: u32, stat_outputs: u32) -> Vec<u8> {
    let mut p = Put::default();
    p.u32(jobs);
    p.u32(stat_outputs);
    p.buf
}

/// `cmd_end_pdu` (sent as STOP): the run's error and the signal that stopped it.
pub fn end(error: u32, signal: u32) -> Vec<u8> {
    let mut p = Put::default();
    p.u32(error);
    p.u32(signal);
    p.buf
}

/// `cmd_text_pdu`: output lines, as the client prints them (`<host> ` before each).
pub fn text(level: u32, s: &str, now: std::time::SystemTime) -> Vec<u8> {
    let t = now
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut p = Put::with_capacity(24 + s.len());
    p.u32(level);
    p.u32(s.len() as u32);
    p.u64(t.as_secs());
    p.u64(t.subsec_micros() as u64);
    p.bytes(s.as_bytes());
    p.buf
}

/// The text of a TEXT payload.
pub fn decode_text(b: &[u8]) -> Result<(u32, String), ProtoError> {
    let mut g = Get::new(b, "TEXT");
    let level = g.u32()?;
    let len = g.u32()? as usize;
    g.skip(16)?;
    let rest = g.rest();
    Ok((
        level,
        String::from_utf8_lossy(&rest[..len.min(rest.len())]).into_owned(),
    ))
}

/// `cmd_job_option`: one option of the job file, for the client's JSON `job options`
/// (`global`: a `[global]` option; else `index`: the result it belongs to).
pub fn job_option(global: bool, index: u32, name: &str, value: &str) -> Vec<u8> {
    let truncated = name.len() >= 64 || value.len() >= 128;
    let mut p = Put::with_capacity(200);
    p.u16(global as u16);
    p.u16(truncated as u16);
    p.u32(if global { 0 } else { index });
    p.text(name, 64);
    p.text(value, 128);
    p.buf
}

/// `jobs_eta`: the run's progress for the client's ETA line. Rates per direction (read,
/// write, trim) in bytes/s and I/Os per second.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Eta {
    pub nr_running: u32,
    pub nr_setting_up: u32,
    pub nr_pending: u32,
    pub files_open: u32,
    pub rate: [u64; 3],
    pub iops: [u32; 3],
    pub elapsed_sec: u64,
    pub eta_sec: u64,
    pub kb_base_pow2: bool,
    pub unit_base: u32,
    pub sig_figs: u32,
    /// One state letter per job (fio's `run_str`: `R` running, `_` done, ...).
    pub run_str: String,
}

impl Eta {
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Put::with_capacity(172 + self.run_str.len());
        p.u32(self.nr_running);
        p.u32(0); // nr_ramp
        p.u32(self.nr_pending);
        p.u32(self.nr_setting_up);
        p.u64s(&[0; 3]); // m_rate: the rate limits (rate_min) fiox reports nothing for
        p.u64s(&[0; 3]); // t_rate
        p.u64s(&self.rate);
        for _ in 0..6 {
            p.u32(0); // m_iops, t_iops
        }
        for v in self.iops {
            p.u32(v);
        }
        p.u32(0); // pad
        p.u64(self.elapsed_sec);
        p.u64(self.eta_sec);
        p.u32(self.kb_base_pow2 as u32);
        p.u32(self.unit_base);
        p.u32(self.sig_figs);
        p.u32(self.files_open);
        p.u32(self.run_str.len() as u32);
        p.u32(0); // pad2
        p.bytes(self.run_str.as_bytes());
        p.u8(0); // the client copies run_str with strcpy: it must end
        p.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_reply_is_fios_112_bytes() {
        let r = ProbeReply::local("host", "fio-3.33", 2, 0);
        let b = r.encode();
        assert_eq!(b.len(), 112);
        assert_eq!(ProbeReply::decode(&b).unwrap(), r);
        // cpus at 100, flags at 104 (the compiler's padding in cmd_probe_reply_pdu).
        assert_eq!(&b[100..104], &2u32.to_le_bytes());
    }

    #[test]
    fn job_text_ends_at_the_nul_and_survives_a_lying_length() {
        let mut b = Vec::new();
        b.extend_from_slice(&9000u32.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(b"[j]\nrw=read\n\0garbage");
        let j = JobText::decode(&b).unwrap();
        assert_eq!(j.text, "[j]\nrw=read\n");
        assert!(JobText::decode(&b[..5]).is_err());
    }

    #[test]
    fn job_line_round_trips_and_a_short_one_is_an_error() {
        let l = JobLine {
            args: vec!["fio".into(), "--name=x".into(), "--ioengine=null".into()],
            client_type: 1,
        };
        let b = l.encode();
        assert_eq!(JobLine::decode(&b).unwrap(), l);
        assert!(JobLine::decode(&b[..b.len() - 3]).is_err());
        // A line count far beyond the payload is an error, not a huge allocation.
        let mut b = vec![0xff, 0xff, 0, 0];
        b.extend_from_slice(&[0xff, 0xff]);
        assert!(JobLine::decode(&b).is_err());
    }

    #[test]
    fn eta_and_job_option_have_fios_sizes() {
        let e = Eta {
            run_str: "RR".into(),
            ..Eta::default()
        };
        assert_eq!(e.encode().len(), 168 + 3);
        assert_eq!(job_option(true, 0, "bs", "4k").len(), 200);
        assert_eq!(
            text(LOG_INFO, "hi\n", std::time::SystemTime::now()).len(),
            27
        );
    }
}
