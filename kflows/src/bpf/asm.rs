//! A BPF assembler: named registers, the instructions a hand-written program needs, and
//! jumps to named labels resolved by [`Asm::finish`], so no jump offset is ever counted by
//! hand.

use std::collections::HashMap;

/// A register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reg(u8);
/// r0: helpers' results and the program's return value.
pub const R0: Reg = Reg(0);
/// r1: the context at entry, the first argument of a helper.
pub const R1: Reg = Reg(1);
/// Register r2.
pub const R2: Reg = Reg(2);
/// Register r3.
pub const R3: Reg = Reg(3);
/// Register r4.
pub const R4: Reg = Reg(4);
/// Register r5.
pub const R5: Reg = Reg(5);
/// r6: the first register helpers preserve (r6-r9).
pub const R6: Reg = Reg(6);
/// Register r7.
pub const R7: Reg = Reg(7);
/// Register r8.
pub const R8: Reg = Reg(8);
/// Register r9.
pub const R9: Reg = Reg(9);
/// The frame pointer (read only).
pub const FP: Reg = Reg(10);

/// Access sizes.
#[derive(Clone, Copy)]
pub enum Size {
    /// One byte.
    B,
    /// Two bytes.
    H,
    /// Four bytes.
    W,
    /// Eight bytes.
    DW,
}

impl Size {
    fn bits(self) -> u8 {
        match self {
            Size::W => 0x00,
            Size::H => 0x08,
            Size::B => 0x10,
            Size::DW => 0x18,
        }
    }
}

/// Jump conditions (`BPF_JMP` operations).
#[derive(Clone, Copy)]
pub enum Cond {
    /// `==`.
    Eq = 0x10,
    /// `>` (unsigned).
    Gt = 0x20,
    /// `>=` (unsigned).
    Ge = 0x30,
    /// `&` is not zero.
    Set = 0x40,
    /// `!=`.
    Ne = 0x50,
    /// `<` (unsigned).
    Lt = 0xa0,
    /// `<=` (unsigned).
    Le = 0xb0,
}

/// 64-bit ALU operations.
#[derive(Clone, Copy)]
pub enum Alu {
    /// `+=`.
    Add = 0x00,
    /// `-=`.
    Sub = 0x10,
    /// `*=`.
    Mul = 0x20,
    /// `|=`.
    Or = 0x40,
    /// `&=`.
    And = 0x50,
    /// `<<=`.
    Lsh = 0x60,
    /// `>>=` (logical).
    Rsh = 0x70,
    /// `%=` (unsigned).
    Mod = 0x90,
    /// `^=`.
    Xor = 0xa0,
    /// `=`.
    Mov = 0xb0,
}

const CLASS_LDX: u8 = 0x01;
const CLASS_ST: u8 = 0x02;
const CLASS_STX: u8 = 0x03;
const CLASS_ALU: u8 = 0x04;
const CLASS_JMP: u8 = 0x05;
const CLASS_ALU64: u8 = 0x07;
const MODE_MEM: u8 = 0x60;
const SRC_X: u8 = 0x08;

/// One `struct bpf_insn` (`linux/bpf.h`): opcode, destination and source registers, offset,
/// immediate, as the kernel reads them on a little-endian machine.
pub const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    (code as u64)
        | (((dst & 0xf) | ((src & 0xf) << 4)) as u64) << 8
        | ((off as u16) as u64) << 16
        | ((imm as u32) as u64) << 32
}

/// Instructions with jumps to labels, resolved by [`Asm::finish`].
#[derive(Debug, Default)]
pub struct Asm {
    insns: Vec<u64>,
    labels: HashMap<String, usize>,
    fixups: Vec<(usize, String)>,
}

impl Asm {
    fn push(&mut self, i: u64) {
        self.insns.push(i);
    }
    /// `dst op= imm` (64-bit).
    pub fn alu_imm(&mut self, op: Alu, dst: Reg, imm: i32) {
        self.push(insn(CLASS_ALU64 | op as u8, dst.0, 0, 0, imm));
    }
    /// `dst op= src` (64-bit).
    pub fn alu(&mut self, op: Alu, dst: Reg, src: Reg) {
        self.push(insn(CLASS_ALU64 | op as u8 | SRC_X, dst.0, src.0, 0, 0));
    }
    /// `dst = src`.
    pub fn mov(&mut self, dst: Reg, src: Reg) {
        self.alu(Alu::Mov, dst, src);
    }
    /// `dst = imm`.
    pub fn movi(&mut self, dst: Reg, imm: i32) {
        self.alu_imm(Alu::Mov, dst, imm);
    }
    /// `dst = be16(dst)`: a 16-bit load's network order to the host's.
    pub fn be16(&mut self, dst: Reg) {
        self.push(insn(CLASS_ALU | 0xd0 | SRC_X, dst.0, 0, 0, 16));
    }
    /// `dst = *(size *)(src + off)`.
    pub fn ldx(&mut self, size: Size, dst: Reg, src: Reg, off: i16) {
        self.push(insn(
            CLASS_LDX | MODE_MEM | size.bits(),
            dst.0,
            src.0,
            off,
            0,
        ));
    }
    /// `*(size *)(dst + off) = src`.
    pub fn stx(&mut self, size: Size, dst: Reg, off: i16, src: Reg) {
        self.push(insn(
            CLASS_STX | MODE_MEM | size.bits(),
            dst.0,
            src.0,
            off,
            0,
        ));
    }
    /// `*(size *)(dst + off) = imm`.
    pub fn st(&mut self, size: Size, dst: Reg, off: i16, imm: i32) {
        self.push(insn(CLASS_ST | MODE_MEM | size.bits(), dst.0, 0, off, imm));
    }
    /// `dst = imm` (64-bit): two instruction slots.
    pub fn ld_imm64(&mut self, dst: Reg, imm: u64) {
        self.push(insn(0x18, dst.0, 0, 0, imm as u32 as i32));
        self.push(insn(0, 0, 0, 0, (imm >> 32) as u32 as i32));
    }
    /// `dst = map` (the map's fd, which the loader turns into the map).
    pub fn ld_map(&mut self, dst: Reg, fd: i32) {
        // BPF_LD | BPF_DW | BPF_IMM with src BPF_PSEUDO_MAP_FD: two instruction slots.
        self.push(insn(0x18, dst.0, 1, 0, fd));
        self.push(insn(0, 0, 0, 0, 0));
    }
    /// Calls helper `n` (arguments in r1-r5, result in r0; r1-r5 are clobbered).
    pub fn call(&mut self, n: i32) {
        self.push(insn(CLASS_JMP | 0x80, 0, 0, 0, n));
    }
    /// Returns r0.
    pub fn exit(&mut self) {
        self.push(insn(CLASS_JMP | 0x90, 0, 0, 0, 0));
    }
    fn jump_to(&mut self, i: u64, label: &str) {
        self.fixups.push((self.insns.len(), label.to_string()));
        self.push(i);
    }
    /// `goto label`.
    pub fn ja(&mut self, label: &str) {
        self.jump_to(insn(CLASS_JMP, 0, 0, 0, 0), label);
    }
    /// `if dst cond imm goto label`.
    pub fn jmp_imm(&mut self, cond: Cond, dst: Reg, imm: i32, label: &str) {
        self.jump_to(insn(CLASS_JMP | cond as u8, dst.0, 0, 0, imm), label);
    }
    /// `if dst cond src goto label`.
    pub fn jmp(&mut self, cond: Cond, dst: Reg, src: Reg, label: &str) {
        self.jump_to(
            insn(CLASS_JMP | cond as u8 | SRC_X, dst.0, src.0, 0, 0),
            label,
        );
    }
    /// Places `label` at the next instruction.
    pub fn label(&mut self, label: &str) {
        let prev = self.labels.insert(label.to_string(), self.insns.len());
        debug_assert!(prev.is_none(), "label {label} placed twice");
    }
    /// The instructions with every jump resolved; an unknown label is an error.
    pub fn finish(mut self) -> Result<Vec<u64>, String> {
        for (at, label) in std::mem::take(&mut self.fixups) {
            let to = *self
                .labels
                .get(&label)
                .ok_or_else(|| format!("jump to unknown label {label}"))?;
            let off = i16::try_from(to as i64 - at as i64 - 1)
                .map_err(|_| format!("jump to {label} out of range"))?;
            self.insns[at] = (self.insns[at] & !(0xffff << 16)) | (u64::from(off as u16) << 16);
        }
        Ok(self.insns)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn unknown_label_is_an_error() {
        let mut a = Asm::default();
        a.ja("nowhere");
        assert!(a.finish().unwrap_err().contains("nowhere"));
    }

    #[test]
    fn jump_offsets_are_relative_to_the_next_instruction() {
        let mut a = Asm::default();
        a.jmp_imm(Cond::Eq, R1, 0, "end");
        a.movi(R0, 1);
        a.label("end");
        a.exit();
        let p = a.finish().unwrap();
        assert_eq!((p[0] >> 16) as u16, 1);
    }
}
