use super::*;
use crate::frame::{decode_all, encode};
use std::io::Read;
use std::os::unix::net::UnixStream;

#[test]
fn listen_forms_are_fios_with_loopback_by_default() {
    let lo4 = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
    assert_eq!(parse_listen(None).unwrap(), Listen::Tcp(lo4, 8765));
    assert_eq!(parse_listen(Some(":9000")).unwrap(), Listen::Tcp(lo4, 9000));
    assert_eq!(
        parse_listen(Some("ip:127.0.0.1,18765")).unwrap(),
        Listen::Tcp(lo4, 18765)
    );
    assert_eq!(
        parse_listen(Some("0.0.0.0")).unwrap(),
        Listen::Tcp("0.0.0.0".parse().unwrap(), 8765)
    );
    assert_eq!(
        parse_listen(Some("ip6:::1,8000")).unwrap(),
        Listen::Tcp("::1".parse().unwrap(), 8000)
    );
    assert_eq!(
        parse_listen(Some("sock:/tmp/x.sock")).unwrap(),
        Listen::Unix("/tmp/x.sock".into())
    );
    for bad in [
        "ip:127.0.0.1,0",
        "ip:127.0.0.1,70000",
        ":x",
        "sock:",
        "ip:::1",
    ] {
        assert!(parse_listen(Some(bad)).is_err(), "{bad}");
    }
}

struct Fake {
    stopped: Arc<std::sync::atomic::AtomicBool>,
}

struct FakeRun;

impl PreparedRun for FakeRun {
    fn run(self: Box<Self>, out: &Outbox, eta: &EtaCell) -> Finished {
        out.text(pdu::LOG_INFO, "Starting 1 process\n").unwrap();
        eta.lock().unwrap().nr_running = 1;
        Finished {
            global_options: vec![("bs".into(), "4k".into())],
            results: vec![(vec![7; 10], vec![("rw".into(), "read".into())])],
            groups: vec![vec![8; 4]],
            disks: vec![],
            logs: vec![],
            error: 0,
            signal: 0,
            normal: true,
        }
    }
}

impl Backend for Fake {
    fn identity(&self) -> (String, String, u32) {
        ("fakehost".into(), "fio-3.33".into(), 4)
    }
    fn prepare(&mut self, input: JobInput) -> Result<Prepared, String> {
        match input.file {
            JobFile::Text(t) if t.contains("[bad]") => Err("job.fio:1: bad job".into()),
            JobFile::None => Ok(Prepared {
                jobs: 0,
                stat_outputs: 0,
                lines: vec![],
                run: None,
            }),
            _ => Ok(Prepared {
                jobs: 1,
                stat_outputs: 1,
                lines: vec![format!("j: (g=0): rw=read {}\n", input.args.join(" "))],
                run: Some(Box::new(FakeRun)),
            }),
        }
    }
    fn stop(&self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Send `msgs` as a client would, then read everything the server says until it closes.
fn talk(msgs: &[(Opcode, Vec<u8>)]) -> (Result<Ended, ProtoError>, Vec<Message>) {
    let (a, mut b) = UnixStream::pair().unwrap();
    let t = std::thread::spawn(move || {
        let mut fake = Fake {
            stopped: Default::default(),
        };
        serve(Box::new(a), &mut fake)
    });
    for (op, p) in msgs {
        b.write_all(&encode(*op, 0, 5, p)).unwrap();
    }
    let mut got = Vec::new();
    b.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = b.read_to_end(&mut got);
    drop(b);
    let r = t.join().unwrap();
    let (msgs, err) = decode_all(&got);
    assert!(err.is_none(), "{err:?}");
    (r, msgs)
}

fn job(text: &str) -> Vec<u8> {
    pdu::JobText {
        text: text.into(),
        client_type: 1,
    }
    .encode()
}

fn probe() -> Vec<u8> {
    pdu::Probe {
        flags: 1,
        server: "127.0.0.1".into(),
    }
    .encode()
}

#[test]
fn a_client_gets_fios_conversation() {
    let (r, msgs) = talk(&[
        (Opcode::Probe, probe()),
        (Opcode::Job, job("[j]\nrw=read\n")),
        (Opcode::Run, vec![]),
    ]);
    assert_eq!(r.unwrap(), Ended::Done);
    let ops: Vec<Opcode> = msgs.iter().map(|m| m.op).collect();
    use Opcode::*;
    assert_eq!(
        ops,
        [Probe, Text, Start, Text, JobOpt, JobOpt, Ts, Gs, Text, Stop, Quit]
    );
    // The probe reply carries the asker's tag and says no zlib.
    assert_eq!(msgs[0].tag, 5);
    let reply = pdu::ProbeReply::decode(&msgs[0].payload).unwrap();
    assert_eq!((reply.hostname.as_str(), reply.flags), ("fakehost", 0));
    assert_eq!(msgs[2].payload, pdu::start(1, 1));
    assert_eq!(msgs[6].payload, vec![7; 10]);
    assert_eq!(msgs[9].payload, pdu::end(0, 0));
}

#[test]
fn eta_requests_are_answered_with_their_tag() {
    let (_, msgs) = talk(&[(Opcode::SendEta, vec![]), (Opcode::Quit, vec![])]);
    assert_eq!(msgs.len(), 1);
    assert_eq!((msgs[0].op, msgs[0].tag), (Opcode::Eta, 5));
}

#[test]
fn a_bad_job_is_said_to_the_client_then_quit() {
    let (r, msgs) = talk(&[(Opcode::Job, job("[bad]\n"))]);
    assert_eq!(r.unwrap(), Ended::Done);
    assert_eq!(msgs.len(), 2);
    let (level, text) = pdu::decode_text(&msgs[0].payload).unwrap();
    assert_eq!(
        (level, text.as_str()),
        (pdu::LOG_ERR, "job.fio:1: bad job\n")
    );
    assert_eq!(msgs[1].op, Opcode::Quit);
}

#[test]
fn hostile_input_ends_the_connection_with_an_error() {
    // A claimed 4 GiB payload, after a good probe.
    let mut h = encode(Opcode::Job, 0, 0, &[]);
    h[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    let c = crate::frame::crc16(&h[..20]);
    h[20..22].copy_from_slice(&c.to_le_bytes());
    let (a, mut b) = UnixStream::pair().unwrap();
    let t = std::thread::spawn(move || {
        serve(
            Box::new(a),
            &mut Fake {
                stopped: Default::default(),
            },
        )
    });
    b.write_all(&encode(Opcode::Probe, 0, 1, &probe())).unwrap();
    b.write_all(&h).unwrap();
    let r = t.join().unwrap();
    assert!(
        matches!(r, Err(ProtoError::FragmentTooLong { .. })),
        "{r:?}"
    );
}

#[test]
fn exit_ends_the_server() {
    let (r, _) = talk(&[(Opcode::Exit, vec![])]);
    assert_eq!(r.unwrap(), Ended::Exit);
}

#[test]
fn unsupported_commands_are_said_and_the_connection_goes_on() {
    let (_, msgs) = talk(&[(Opcode::VTrigger, vec![0, 0]), (Opcode::Quit, vec![])]);
    let (_, text) = pdu::decode_text(&msgs[0].payload).unwrap();
    assert!(text.contains("VTRIGGER is not supported"), "{text}");
}

#[test]
fn a_command_line_without_jobs_carries_its_options_to_the_job_file() {
    // `fio --client=H --output-format=json job.fio` sends JOBLINE, then JOB.
    let line = pdu::JobLine {
        args: vec!["fio".into(), "--output-format=json".into()],
        client_type: 1,
    };
    let (_, msgs) = talk(&[
        (Opcode::JobLine, line.encode()),
        (Opcode::Job, job("[j]\n")),
        (Opcode::Quit, vec![]),
    ]);
    assert_eq!(msgs[0].op, Opcode::Start);
    assert_eq!(msgs[0].payload, pdu::start(0, 0));
    let (_, text) = pdu::decode_text(&msgs[1].payload).unwrap();
    assert_eq!(text, "j: (g=0): rw=read --output-format=json\n");
    assert_eq!(msgs[2].payload, pdu::start(1, 1));
}
