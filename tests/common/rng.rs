//! A small deterministic generator (xorshift64) for the tests that draw
//! cases: seeded per test, so that every run sees the same cases and a
//! failure names one that reproduces. One copy, shared with `#[path]`.
#![allow(dead_code)]

/// Xorshift64 (13, 7, 17); the seed must not be zero.
pub struct XorShift(pub u64);

impl XorShift {
    /// The next 64 bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `[0, n)`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A byte.
    pub fn byte(&mut self) -> u8 {
        self.next() as u8
    }

    /// A byte different from `old`.
    pub fn other_byte(&mut self, old: u8) -> u8 {
        old ^ (1 + self.below(255) as u8)
    }
}
