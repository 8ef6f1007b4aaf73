//! A small eBPF assembler: the instruction encoding of the kernel's uapi (`struct bpf_insn`),
//! builders for the few instruction forms the programs use, and forward/backward labels
//! resolved when the program is finished. No build-time dependency (no clang, no libbpf):
//! the programs are Rust code that emits instructions.

use std::collections::HashMap;

/// One eBPF instruction, laid out as the kernel's `struct bpf_insn`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    /// dst register in the low nibble, src in the high one (little-endian bitfields).
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

/// A register, r0..r10 (r10: the read-only frame pointer).
pub type Reg = u8;
pub const R0: Reg = 0;
pub const R1: Reg = 1;
pub const R2: Reg = 2;
pub const R3: Reg = 3;
pub const R4: Reg = 4;
pub const R5: Reg = 5;
pub const R6: Reg = 6;
pub const R7: Reg = 7;
pub const R8: Reg = 8;
pub const R9: Reg = 9;
pub const FP: Reg = 10;

// Instruction classes, sizes, modes, operations (uapi linux/bpf.h, linux/bpf_common.h).
const LD: u8 = 0x00;
const LDX: u8 = 0x01;
const ST: u8 = 0x02;
const STX: u8 = 0x03;
const JMP: u8 = 0x05;
const ALU64: u8 = 0x07;
const IMM: u8 = 0x00;
const MEM: u8 = 0x60;
const ATOMIC: u8 = 0xc0;
const K: u8 = 0x00;
const X: u8 = 0x08;

/// Access sizes.
#[derive(Debug, Clone, Copy)]
pub enum Size {
    B,
    W,
    DW,
}

impl Size {
    fn bits(self) -> u8 {
        match self {
            Size::W => 0x00,
            Size::B => 0x10,
            Size::DW => 0x18,
        }
    }
}

/// 64-bit ALU operations.
#[derive(Debug, Clone, Copy)]
pub enum Alu {
    Add = 0x00,
    Sub = 0x10,
    Mul = 0x20,
    Div = 0x30,
    And = 0x50,
    Lsh = 0x60,
    Rsh = 0x70,
    Xor = 0xa0,
    Mov = 0xb0,
}

/// Conditional jumps (unsigned unless named S..).
#[derive(Debug, Clone, Copy)]
pub enum Cond {
    Eq = 0x10,
    Gt = 0x20,
    Ge = 0x30,
    Set = 0x40,
    Ne = 0x50,
    Sgt = 0x60,
}

/// Kernel helper functions the programs call.
#[derive(Debug, Clone, Copy)]
pub enum Helper {
    MapLookup = 1,
    KtimeGetNs = 5,
    GetCurrentPidTgid = 14,
    ProbeReadUser = 112,
    ProbeReadKernel = 113,
}

fn insn(code: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: (dst & 0x0f) | (src << 4),
        off,
        imm,
    }
}

/// A program being assembled.
#[derive(Debug, Default)]
pub struct Asm {
    insns: Vec<Insn>,
    labels: HashMap<String, usize>,
    fixups: Vec<(usize, String)>,
    twice: Vec<String>,
}

impl Asm {
    pub fn new() -> Asm {
        Asm::default()
    }

    /// Mark the next instruction as `name`; a name marked twice makes `finish` fail (a jump
    /// would silently go to the later one).
    pub fn label(&mut self, name: &str) {
        if self
            .labels
            .insert(name.to_string(), self.insns.len())
            .is_some()
        {
            self.twice.push(name.to_string());
        }
    }

    pub fn alu_imm(&mut self, op: Alu, dst: Reg, imm: i32) {
        self.insns.push(insn(ALU64 | K | op as u8, dst, 0, 0, imm));
    }

    pub fn alu_reg(&mut self, op: Alu, dst: Reg, src: Reg) {
        self.insns.push(insn(ALU64 | X | op as u8, dst, src, 0, 0));
    }

    pub fn mov_imm(&mut self, dst: Reg, imm: i32) {
        self.alu_imm(Alu::Mov, dst, imm);
    }

    pub fn mov(&mut self, dst: Reg, src: Reg) {
        self.alu_reg(Alu::Mov, dst, src);
    }

    /// dst = *(size *)(src + off)
    pub fn ldx(&mut self, size: Size, dst: Reg, src: Reg, off: i16) {
        self.insns
            .push(insn(LDX | MEM | size.bits(), dst, src, off, 0));
    }

    /// *(size *)(dst + off) = src
    pub fn stx(&mut self, size: Size, dst: Reg, off: i16, src: Reg) {
        self.insns
            .push(insn(STX | MEM | size.bits(), dst, src, off, 0));
    }

    /// *(size *)(dst + off) = imm
    pub fn st_imm(&mut self, size: Size, dst: Reg, off: i16, imm: i32) {
        self.insns
            .push(insn(ST | MEM | size.bits(), dst, 0, off, imm));
    }

    /// Atomic *(u64 *)(dst + off) += src.
    pub fn xadd(&mut self, dst: Reg, off: i16, src: Reg) {
        self.insns
            .push(insn(STX | ATOMIC | Size::DW.bits(), dst, src, off, 0));
    }

    /// Atomic fetch-and-add: src = *(u64 *)(dst + off), *(u64 *)(dst + off) += src.
    pub fn fetch_add(&mut self, dst: Reg, off: i16, src: Reg) {
        self.insns
            .push(insn(STX | ATOMIC | Size::DW.bits(), dst, src, off, 0x01));
    }

    /// dst = the map whose descriptor is `fd` (a 16-byte ld_imm64 with BPF_PSEUDO_MAP_FD).
    pub fn ld_map(&mut self, dst: Reg, fd: i32) {
        self.insns
            .push(insn(LD | IMM | Size::DW.bits(), dst, 1, 0, fd));
        self.insns.push(insn(0, 0, 0, 0, 0));
    }

    /// dst = the address of byte `off` of the value of the one-entry array map `fd` (a
    /// 16-byte ld_imm64 with BPF_PSEUDO_MAP_VALUE: no lookup at run time).
    pub fn ld_map_value(&mut self, dst: Reg, fd: i32, off: i32) {
        self.insns
            .push(insn(LD | IMM | Size::DW.bits(), dst, 2, 0, fd));
        self.insns.push(insn(0, 0, 0, 0, off));
    }

    pub fn call(&mut self, h: Helper) {
        self.insns.push(insn(JMP | 0x80, 0, 0, 0, h as i32));
    }

    pub fn exit(&mut self) {
        self.insns.push(insn(JMP | 0x90, 0, 0, 0, 0));
    }

    pub fn ja(&mut self, to: &str) {
        self.fixups.push((self.insns.len(), to.to_string()));
        self.insns.push(insn(JMP, 0, 0, 0, 0));
    }

    pub fn jmp_imm(&mut self, c: Cond, dst: Reg, imm: i32, to: &str) {
        self.fixups.push((self.insns.len(), to.to_string()));
        self.insns.push(insn(JMP | K | c as u8, dst, 0, 0, imm));
    }

    pub fn jmp_reg(&mut self, c: Cond, dst: Reg, src: Reg, to: &str) {
        self.fixups.push((self.insns.len(), to.to_string()));
        self.insns.push(insn(JMP | X | c as u8, dst, src, 0, 0));
    }

    /// The finished program; an unknown label or a jump out of range is a bug in the
    /// program's builder, reported as an error rather than a panic.
    pub fn finish(mut self) -> Result<Vec<Insn>, String> {
        if let Some(name) = self.twice.first() {
            return Err(format!("BPF label {name} is defined twice"));
        }
        for (at, name) in &self.fixups {
            let to = *self
                .labels
                .get(name)
                .ok_or_else(|| format!("BPF label {name} is not defined"))?;
            let off = to as i64 - *at as i64 - 1;
            self.insns[*at].off =
                i16::try_from(off).map_err(|_| format!("BPF jump to {name} out of range"))?;
        }
        Ok(self.insns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_defined_twice_is_an_error() {
        let mut a = Asm::new();
        a.label("x");
        a.exit();
        a.label("x");
        a.exit();
        assert!(a.finish().unwrap_err().contains("twice"));
    }

    #[test]
    fn encodes_as_the_kernel_does() {
        let mut a = Asm::new();
        a.mov_imm(R0, 0);
        a.jmp_imm(Cond::Eq, R1, 3, "out");
        a.ldx(Size::DW, R2, R1, 8);
        a.label("out");
        a.exit();
        let p = a.finish().unwrap();
        assert_eq!(
            p[0],
            Insn {
                code: 0xb7,
                regs: 0,
                off: 0,
                imm: 0
            }
        );
        assert_eq!(
            p[1],
            Insn {
                code: 0x15,
                regs: 1,
                off: 1,
                imm: 3
            }
        );
        assert_eq!(
            p[2],
            Insn {
                code: 0x79,
                regs: 0x12,
                off: 8,
                imm: 0
            }
        );
        assert_eq!(p[3].code, 0x95);
    }

    #[test]
    fn unknown_label_is_an_error() {
        let mut a = Asm::new();
        a.ja("nowhere");
        assert!(a.finish().is_err());
    }
}
