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

    /// A number in `[0, 1)`, on a grid of 2^-24.
    pub fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
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
