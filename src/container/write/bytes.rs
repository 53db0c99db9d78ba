//! The writer's side of `bytes.rs`: a little-endian writer and the checks
//! that a length fits the format.

use crate::error::Error;

/// The error of a value too large for the format: `what` does not fit.
pub fn too_big(what: &str) -> Error {
    Error::InvalidSettings {
        message: format!("{what} does not fit the container format"),
    }
}

/// `n` as the format's `u32`, or an error naming `what`.
pub fn to_u32(n: usize, what: &str) -> Result<u32, Error> {
    u32::try_from(n).map_err(|_| too_big(what))
}

/// Appends little-endian values to a byte vector.
#[derive(Default)]
pub struct Writer {
    /// The bytes so far.
    pub bytes: Vec<u8>,
}

impl Writer {
    /// A `u8`.
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    /// A `u16`.
    pub fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A `u32`.
    pub fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A `u64`.
    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// An `f32`.
    pub fn f32(&mut self, v: f32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// An `f64`.
    pub fn f64(&mut self, v: f64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    /// A `u32` as LEB128 (see [`Cursor::varint`]).
    pub fn varint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.bytes.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.bytes.push(v as u8);
    }

    /// Three `f32`.
    pub fn vec3(&mut self, v: glam::Vec3) {
        self.f32(v.x);
        self.f32(v.y);
        self.f32(v.z);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::bytes::Cursor;

    #[test]
    fn cursor_reads_little_endian_and_reports_where_it_ran_out() {
        let mut w = Writer::default();
        w.u16(0x1234);
        w.u32(7);
        w.f32(1.5);
        let mut c = Cursor::new(&w.bytes);
        assert_eq!(c.u16("a").unwrap(), 0x1234);
        assert_eq!(c.u32("b").unwrap(), 7);
        assert_eq!(c.f32("c").unwrap(), 1.5);
        let err = c.u8("d").unwrap_err();
        assert_eq!(err.offset, 10);
        assert!(err.message.contains("d: needs 1 bytes, 0 left"));
    }

    #[test]
    fn varints_round_trip_in_their_shortest_form_only() {
        for v in [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 28, u32::MAX] {
            let mut w = Writer::default();
            w.varint(v);
            let expected_len = (32 - v.leading_zeros()).div_ceil(7).max(1) as usize;
            assert_eq!(w.bytes.len(), expected_len, "{v}");
            let mut c = Cursor::new(&w.bytes);
            assert_eq!(c.varint("v").unwrap(), v);
            assert_eq!(c.remaining(), 0);
        }
        // 0 padded to two bytes, a value over u32::MAX, six bytes, cut short.
        for bad in [
            &[0x80, 0x00][..],
            &[0xff, 0xff, 0xff, 0xff, 0x10],
            &[0x80; 6],
            &[0x80],
        ] {
            assert!(Cursor::new(bad).varint("length").is_err(), "{bad:?}");
        }
    }
}
