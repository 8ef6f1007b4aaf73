use super::*;
use std::io::Read;

fn hdr(version: u16, op: u16, flags: u32, tag: u64, len: u32, payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&version.to_le_bytes());
    h.extend_from_slice(&op.to_le_bytes());
    h.extend_from_slice(&flags.to_le_bytes());
    h.extend_from_slice(&tag.to_le_bytes());
    h.extend_from_slice(&len.to_le_bytes());
    let c = crc16(&h);
    h.extend_from_slice(&c.to_le_bytes());
    h.extend_from_slice(&crc16(payload).to_le_bytes());
    h
}

#[test]
fn crc16_is_fios_crc16_arc() {
    // CRC-16/ARC's check value; fio's table is the same polynomial, reflected, init 0.
    assert_eq!(crc16(b"123456789"), 0xbb3d);
}

#[test]
fn fio_clients_probe_decodes() {
    // The PROBE an unmodified `fio --client` (3.33) sent on loopback.
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/fio-client-probe.bin"
    ))
    .unwrap();
    let (msgs, err) = decode_all(&bytes);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(msgs.len(), 1);
    assert_eq!(msgs[0].op, Opcode::Probe);
    assert_eq!(msgs[0].payload.len(), 136);
    // And fiox encodes it to the same bytes.
    assert_eq!(
        encode(Opcode::Probe, 0, msgs[0].tag, &msgs[0].payload),
        bytes
    );
}

#[test]
fn long_payloads_go_in_1k_fragments_and_come_back_whole() {
    let payload: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
    let bytes = encode(Opcode::Ts, 0, 42, &payload);
    assert_eq!(bytes.len(), 3000 + 3 * HEADER);
    // The first two fragments say MORE, the last does not.
    assert_eq!(bytes[4] & 1, 1);
    assert_eq!(bytes[HEADER + 1024 + 4] & 1, 1);
    assert_eq!(bytes[2 * (HEADER + 1024) + 4] & 1, 0);
    let (msgs, err) = decode_all(&bytes);
    assert!(err.is_none());
    assert_eq!(msgs, vec![Message::new(Opcode::Ts, 42, payload)]);
    // An empty payload is one bare header.
    assert_eq!(encode(Opcode::Quit, 0, 0, &[]).len(), HEADER);
}

#[test]
fn a_claimed_4gib_payload_is_refused_before_any_allocation() {
    let bytes = hdr(VERSION, Opcode::Job as u16, 0, 0, u32::MAX, &[]);
    let (msgs, err) = decode_all(&bytes);
    assert!(msgs.is_empty());
    assert!(
        matches!(err, Some(ProtoError::FragmentTooLong { len: u32::MAX })),
        "{err:?}"
    );
}

#[test]
fn endless_fragments_stop_at_the_message_limit() {
    // A peer that never clears MORE: refused once the message passes MAX_MESSAGE.
    struct Endless(Vec<u8>, usize);
    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.0.len() - self.1);
            buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 = (self.1 + n) % self.0.len();
            Ok(n)
        }
    }
    impl TimedRead for Endless {
        fn set_limit(&mut self, _: Option<Duration>) -> std::io::Result<()> {
            Ok(())
        }
    }
    let payload = [0u8; MAX_FRAGMENT];
    let mut frag = hdr(VERSION, Opcode::Job as u16, F_MORE, 0, 1024, &payload);
    frag.extend_from_slice(&payload);
    let mut r = Reader::new(Endless(frag, 0), Limits::default());
    assert!(matches!(
        r.read_message(),
        Err(ProtoError::MessageTooLong(_))
    ));
}

#[test]
fn a_bad_header_crc_is_an_error() {
    let mut bytes = encode(Opcode::Run, 0, 0, &[]);
    bytes[20] ^= 0xff;
    let (_, err) = decode_all(&bytes);
    assert!(matches!(err, Some(ProtoError::HeaderCrc { .. })), "{err:?}");
}

#[test]
fn a_bad_payload_crc_is_an_error() {
    let mut bytes = encode(Opcode::Job, 0, 0, b"[job]\nrw=read\n");
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let (_, err) = decode_all(&bytes);
    assert!(
        matches!(err, Some(ProtoError::PayloadCrc { .. })),
        "{err:?}"
    );
}

#[test]
fn a_truncated_packet_is_an_error_and_a_close_between_messages_is_not() {
    let bytes = encode(Opcode::Job, 0, 0, b"[job]\nrw=read\n");
    for cut in [1, HEADER - 1, HEADER, bytes.len() - 1] {
        let (_, err) = decode_all(&bytes[..cut]);
        assert!(
            matches!(err, Some(ProtoError::Truncated)),
            "cut {cut}: {err:?}"
        );
    }
    let (msgs, err) = decode_all(&bytes);
    assert_eq!((msgs.len(), err.is_none()), (1, true));
}

#[test]
fn another_protocol_version_is_refused_naming_both() {
    let bytes = hdr(96, Opcode::Probe as u16, 0, 0, 0, &[]);
    let (_, err) = decode_all(&bytes);
    let e = err.unwrap();
    assert!(matches!(e, ProtoError::Version { got: 96, want: 97 }));
    let text = e.to_string();
    assert!(text.contains("96") && text.contains("97"), "{text}");
}

#[test]
fn an_unknown_command_is_an_error() {
    let bytes = hdr(VERSION, 99, 0, 0, 0, &[]);
    assert!(matches!(
        decode_all(&bytes).1,
        Some(ProtoError::UnknownOpcode(99))
    ));
}

#[test]
fn fragments_of_different_commands_are_refused() {
    let mut bytes = hdr(VERSION, Opcode::Job as u16, F_MORE, 0, 1, b"a");
    bytes.push(b'a');
    bytes.extend(hdr(VERSION, Opcode::Text as u16, 0, 0, 1, b"b"));
    bytes.push(b'b');
    assert!(matches!(
        decode_all(&bytes).1,
        Some(ProtoError::FragmentMismatch { first: 3, then: 5 })
    ));
}

#[test]
fn a_peer_dripping_bytes_times_out() {
    // Slowloris: one byte per read, slower than the message limit allows in total.
    struct Drip(Vec<u8>, usize);
    impl Read for Drip {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_millis(5));
            if self.1 == self.0.len() || buf.is_empty() {
                return Ok(0);
            }
            buf[0] = self.0[self.1];
            self.1 += 1;
            Ok(1)
        }
    }
    impl TimedRead for Drip {
        fn set_limit(&mut self, _: Option<Duration>) -> std::io::Result<()> {
            Ok(())
        }
    }
    let bytes = encode(Opcode::Job, 0, 0, &[b'x'; 600]);
    let limits = Limits {
        idle: None,
        message: Duration::from_millis(30),
        ..Limits::default()
    };
    let mut r = Reader::new(Drip(bytes, 0), limits);
    assert!(matches!(r.read_message(), Err(ProtoError::Timeout(_))));
}

#[test]
fn a_socket_read_timeout_is_a_timeout_error() {
    let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
    let limits = Limits {
        idle: Some(Duration::from_millis(10)),
        message: Duration::from_millis(10),
        ..Limits::default()
    };
    let mut r = Reader::new(a, limits);
    assert!(matches!(r.read_message(), Err(ProtoError::Timeout(_))));
}
