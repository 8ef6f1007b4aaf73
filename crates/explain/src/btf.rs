//! The kernel's own type information (BTF, /sys/kernel/btf/vmlinux) read for the few facts
//! the raw-tracepoint programs need: a struct member's byte offset (`task_struct.pid`,
//! `request.cmd_flags`), an enumerator's value (`__REQ_RAHEAD`) and how many arguments a
//! tracepoint passes (`btf_trace_sched_switch`'s prototype), so no kernel layout is
//! hard-coded. Only the type section is walked, once; a kernel without BTF is reported as
//! such and `--explain` runs without phases.

use crate::ExplainError;

const MAGIC: u16 = 0xeb9f;

/// The blob, where its strings are, and each type's header with the range of its data.
pub struct Btf {
    blob: Vec<u8>,
    strings: std::ops::Range<usize>,
    types: Vec<Ty>,
}

struct Ty {
    kind: u32,
    name: u32,
    size_or_type: u32,
    kind_flag: bool,
    /// Byte range (in the blob) of the kind-specific data after the type's 12-byte header.
    data: std::ops::Range<usize>,
}

fn bad(why: &str) -> ExplainError {
    ExplainError::Unavailable(format!("the kernel's BTF (/sys/kernel/btf/vmlinux) {why}"))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Bytes of kind-specific data that follow a type of `kind` with `vlen` entries.
fn extra(kind: u32, vlen: usize) -> Option<usize> {
    Some(match kind {
        1 | 14 | 17 => 4,             // INT, VAR, DECL_TAG
        3 => 12,                      // ARRAY
        4 | 5 | 15 | 19 => 12 * vlen, // STRUCT, UNION, DATASEC, ENUM64
        6 | 13 => 8 * vlen,           // ENUM, FUNC_PROTO
        2 | 7 | 8 | 9 | 10 | 11 | 12 | 16 | 18 => 0,
        _ => return None,
    })
}

impl Btf {
    /// Read the running kernel's BTF.
    pub fn kernel() -> Result<Btf, ExplainError> {
        let raw = std::fs::read("/sys/kernel/btf/vmlinux").map_err(|e| {
            bad(&format!(
                "cannot be read ({e}): this kernel has no BTF (CONFIG_DEBUG_INFO_BTF)"
            ))
        })?;
        Btf::parse(&raw).ok_or_else(|| bad("is not in a format fiox reads"))
    }

    /// Parse a little-endian BTF blob (None when malformed).
    pub fn parse(raw: &[u8]) -> Option<Btf> {
        if u16::from_le_bytes(raw.get(0..2)?.try_into().ok()?) != MAGIC {
            return None;
        }
        let hdr = u32_at(raw, 4)? as usize;
        let (toff, tlen) = (u32_at(raw, 8)? as usize, u32_at(raw, 12)? as usize);
        let (soff, slen) = (u32_at(raw, 16)? as usize, u32_at(raw, 20)? as usize);
        let (tstart, sstart) = (hdr + toff, hdr + soff);
        raw.get(tstart..tstart + tlen)?;
        raw.get(sstart..sstart + slen)?;
        // Type id 0 is void: ids count from 1, so types[0] stands for it.
        let mut types = vec![Ty {
            kind: 0,
            name: 0,
            size_or_type: 0,
            kind_flag: false,
            data: 0..0,
        }];
        let mut at = tstart;
        while at < tstart + tlen {
            let info = u32_at(raw, at + 4)?;
            let kind = (info >> 24) & 0x1f;
            let end = at + 12 + extra(kind, (info & 0xffff) as usize)?;
            if end > tstart + tlen {
                return None;
            }
            types.push(Ty {
                kind,
                name: u32_at(raw, at)?,
                size_or_type: u32_at(raw, at + 8)?,
                kind_flag: info >> 31 == 1,
                data: at + 12..end,
            });
            at = end;
        }
        Some(Btf {
            blob: raw.to_vec(),
            strings: sstart..sstart + slen,
            types,
        })
    }

    fn name(&self, off: u32) -> &str {
        let s = self
            .blob
            .get(self.strings.start + off as usize..self.strings.end)
            .unwrap_or(&[]);
        let end = s.iter().position(|&c| c == 0).unwrap_or(0);
        std::str::from_utf8(&s[..end]).unwrap_or("")
    }

    fn find(&self, kind: u32, name: &str) -> Option<&Ty> {
        self.types
            .iter()
            .find(|t| t.kind == kind && self.name(t.name) == name)
    }

    fn data_u32(&self, t: &Ty, i: usize) -> Option<u32> {
        u32_at(&self.blob, t.data.start + 4 * i)
    }

    /// Byte offset of `member` in `struct name` (not a bitfield), looking inside its
    /// anonymous structs and unions (io_ring_ctx keeps its fields in cache-line groups).
    pub fn member_offset(&self, name: &str, member: &str) -> Result<u32, ExplainError> {
        let miss = || bad(&format!("has no struct {name} member {member}"));
        let t = self.find(4, name).ok_or_else(miss)?;
        let bits = self.member_bits(t, member, 0).ok_or_else(miss)?;
        if bits % 8 != 0 {
            return Err(miss());
        }
        Ok(bits / 8)
    }

    /// Bit offset of `member` in struct or union `t`, searching anonymous members (depth-limited).
    fn member_bits(&self, t: &Ty, member: &str, depth: u32) -> Option<u32> {
        if depth > 8 {
            return None;
        }
        for i in 0..t.data.len() / 12 {
            let n = self.data_u32(t, 3 * i)?;
            let ty = self.data_u32(t, 3 * i + 1)?;
            let off = self.data_u32(t, 3 * i + 2)?;
            let bits = if t.kind_flag { off & 0xff_ffff } else { off };
            if n != 0 && self.name(n) == member {
                return Some(bits);
            }
            if n == 0 {
                let inner = self.types.get(ty as usize)?;
                if matches!(inner.kind, 4 | 5) {
                    if let Some(b) = self.member_bits(inner, member, depth + 1) {
                        return Some(bits + b);
                    }
                }
            }
        }
        None
    }

    /// Value of the enumerator `name` (in any enum).
    pub fn enum_value(&self, name: &str) -> Result<i64, ExplainError> {
        for t in self.types.iter().filter(|t| t.kind == 6) {
            for i in 0..t.data.len() / 8 {
                if self.data_u32(t, 2 * i).map(|n| self.name(n)) == Some(name) {
                    let v = self.data_u32(t, 2 * i + 1).unwrap_or(0);
                    return Ok(v as i32 as i64);
                }
            }
        }
        Err(bad(&format!("has no enumerator {name}")))
    }

    /// Arguments a raw tracepoint passes its programs: `btf_trace_NAME` is a typedef of a
    /// pointer to a prototype whose first parameter is the tracepoint's private data.
    pub fn tracepoint_args(&self, tp: &str) -> Result<usize, ExplainError> {
        let miss = || bad(&format!("does not describe tracepoint {tp}"));
        let td = self.find(8, &format!("btf_trace_{tp}")).ok_or_else(miss)?;
        let ptr = self.types.get(td.size_or_type as usize).ok_or_else(miss)?;
        let proto = self
            .types
            .get(ptr.size_or_type as usize)
            .filter(|p| ptr.kind == 2 && p.kind == 13)
            .ok_or_else(miss)?;
        Ok((proto.data.len() / 8).saturating_sub(1))
    }

    /// The type id of `btf_trace_NAME`: what a BTF-typed raw tracepoint program (tp_btf) is
    /// loaded against, so that the verifier knows its arguments' types and lets it read the
    /// structures they point to directly (no bpf_probe_read_kernel call per field).
    pub fn tracepoint_type(&self, tp: &str) -> Result<u32, ExplainError> {
        let name = format!("btf_trace_{tp}");
        self.types
            .iter()
            .position(|t| t.kind == 8 && self.name(t.name) == name)
            .map(|i| i as u32)
            .ok_or_else(|| bad(&format!("does not describe tracepoint {tp}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_running_kernels_types() {
        let Ok(b) = Btf::kernel() else {
            fiox_guard::eprintln!("skipped: no /sys/kernel/btf/vmlinux on this kernel");
            return;
        };
        let pid = b.member_offset("task_struct", "pid").unwrap();
        assert!(pid > 0 && pid < 16384, "{pid}");
        assert!(b.member_offset("request", "cmd_flags").is_ok());
        assert!(b.member_offset("request", "no_such_member").is_err());
        assert_eq!(b.enum_value("REQ_OP_WRITE").unwrap(), 1);
        assert!(b.enum_value("__REQ_RAHEAD").unwrap() > 0);
        assert_eq!(b.tracepoint_args("sched_switch").unwrap(), 4);
        assert_eq!(b.tracepoint_args("block_rq_issue").unwrap(), 1);
        let id = b.tracepoint_type("sched_switch").unwrap();
        assert_eq!(b.types[id as usize].kind, 8);
        assert!(b.tracepoint_type("no_such_tracepoint").is_err());
        if b.tracepoint_args("io_uring_create").is_ok() {
            assert_eq!(b.tracepoint_args("io_uring_create").unwrap(), 5);
            assert!(b.member_offset("io_ring_ctx", "rings").is_ok());
            assert!(b.member_offset("io_rings", "cq").unwrap() > 0);
            assert_eq!(b.member_offset("io_uring", "head").unwrap(), 0);
        }
    }

    #[test]
    fn refuses_garbage() {
        assert!(Btf::parse(b"not btf at all, not at all").is_none());
        assert!(Btf::parse(&[0x9f, 0xeb, 1, 0, 24, 0, 0, 0, 0, 0, 0, 0, 255, 0, 0, 0]).is_none());
    }
}
