//! The decoder's contract (the server's reading and the client's), as the fuzz target (fuzz/fuzz_targets/netproto.rs) and the tests
//! drive it: any bytes decode to messages and at most one error without a panic, every
//! payload reader returns a value or an error, and every message decoded re-encodes to bytes
//! that decode to the same message.

use crate::frame::{decode_all, encode};
use crate::{pdu, stat};

/// Check the contract on `data`; panics (a finding) when it does not hold.
pub fn decoder(data: &[u8]) {
    let (msgs, _err) = decode_all(data);
    for m in &msgs {
        let p = &m.payload;
        let _ = pdu::Probe::decode(p);
        let _ = pdu::ProbeReply::decode(p);
        let _ = pdu::JobText::decode(p);
        let _ = pdu::JobLine::decode(p);
        let _ = pdu::decode_load_file(p);
        let _ = pdu::decode_text(p);
        let _ = stat::ts_summary(p);
        // The client's side: every payload read as each result structure, and as the event
        // its own command makes.
        let _ = stat::decode_ts(p);
        let _ = stat::decode_gs(p);
        let _ = stat::decode_du(p);
        let _ = crate::client::decode(m.op, p);
        let _ = crate::iolog::IoLog::decode(p).map(|l| l.text());
        let again = encode(m.op, m.flags, m.tag, p);
        let (back, err) = decode_all(&again);
        assert!(err.is_none(), "{err:?}");
        assert_eq!(back.as_slice(), std::slice::from_ref(m));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Opcode;

    /// A small fuzzer of its own: byte edits of valid conversations (so that inputs get past
    /// the CRCs now and then), every one checked against the contract.
    #[test]
    fn mutated_conversations_keep_the_contract() {
        let job = pdu::JobText {
            text: "[j]\nrw=read\n".into(),
            client_type: 1,
        }
        .encode();
        let mut base = encode(Opcode::Job, 0, 0, &job);
        base.extend(encode(
            Opcode::Text,
            0,
            0,
            &pdu::text(1, "x\n", std::time::UNIX_EPOCH),
        ));
        base.extend(encode(Opcode::Ts, 0, 0, &vec![0; 3000]));
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..3000 {
            let mut b = base.clone();
            for _ in 0..(next() % 4 + 1) {
                let i = (next() as usize) % b.len();
                match next() % 3 {
                    0 => b[i] = next() as u8,
                    1 => b.truncate(i),
                    _ => b.insert(i, next() as u8),
                }
                if b.is_empty() {
                    break;
                }
            }
            decoder(&b);
        }
        decoder(&base);
    }
}
