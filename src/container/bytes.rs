//! Little-endian reading: a bounds-checked cursor.
//!
//! Every read from a file goes through [`Cursor`], which returns an error
//! naming the section and the offset instead of panicking or reading out of
//! bounds. The writer's side is `write/bytes.rs`.

use crate::error::ContainerError;

/// What went wrong reading a section: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadFault {
    /// Offset in the section.
    pub offset: usize,
    /// What was expected.
    pub message: String,
}

impl ReadFault {
    /// The error of reading `section` with this fault.
    pub fn in_section(self, section: &str) -> ContainerError {
        ContainerError::Malformed {
            section: section.to_string(),
            offset: self.offset,
            message: self.message,
        }
    }
}

/// A reading position in a byte slice.
pub struct Cursor<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, offset: 0 }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.offset
    }

    /// Current offset.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// A fault at the current offset.
    pub fn fault(&self, message: impl Into<String>) -> ReadFault {
        ReadFault {
            offset: self.offset,
            message: message.into(),
        }
    }

    /// The next `len` bytes.
    pub fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8], ReadFault> {
        if len > self.remaining() {
            return Err(self.fault(format!(
                "{what}: needs {len} bytes, {} left",
                self.remaining()
            )));
        }
        let out = &self.bytes[self.offset..self.offset + len];
        self.offset += len;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], ReadFault> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    /// A `u8`.
    pub fn u8(&mut self, what: &str) -> Result<u8, ReadFault> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A `u16`.
    pub fn u16(&mut self, what: &str) -> Result<u16, ReadFault> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    /// A `u32`.
    pub fn u32(&mut self, what: &str) -> Result<u32, ReadFault> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// A `u64`.
    pub fn u64(&mut self, what: &str) -> Result<u64, ReadFault> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A finite `f32`.
    pub fn f32(&mut self, what: &str) -> Result<f32, ReadFault> {
        let at = self.offset;
        let v = f32::from_le_bytes(self.array(what)?);
        if !v.is_finite() {
            return Err(ReadFault {
                offset: at,
                message: format!("{what}: {v} is not finite"),
            });
        }
        Ok(v)
    }

    /// A finite `f64`.
    pub fn f64(&mut self, what: &str) -> Result<f64, ReadFault> {
        let at = self.offset;
        let v = f64::from_le_bytes(self.array(what)?);
        if !v.is_finite() {
            return Err(ReadFault {
                offset: at,
                message: format!("{what}: {v} is not finite"),
            });
        }
        Ok(v)
    }

    /// Three finite `f32`.
    pub fn vec3(&mut self, what: &str) -> Result<glam::Vec3, ReadFault> {
        Ok(glam::Vec3::new(
            self.f32(what)?,
            self.f32(what)?,
            self.f32(what)?,
        ))
    }

    /// A `u32` as LEB128: seven bits a byte, least significant first, the
    /// top bit set on every byte but the last; at most five bytes, in the
    /// shortest form (a longer one is refused, so each value has one
    /// encoding and a checksum covers one meaning).
    pub fn varint(&mut self, what: &str) -> Result<u32, ReadFault> {
        let at = self.offset;
        let mut value = 0u64;
        for i in 0..5 {
            let byte = self.u8(what)?;
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                if (byte == 0 && i > 0) || value > u64::from(u32::MAX) {
                    break;
                }
                return Ok(value as u32);
            }
        }
        Err(ReadFault {
            offset: at,
            message: format!("{what}: not a shortest LEB128 u32"),
        })
    }

    /// A UTF-8 string of `len` bytes.
    pub fn str(&mut self, len: usize, what: &str) -> Result<&'a str, ReadFault> {
        let at = self.offset;
        let bytes = self.take(len, what)?;
        std::str::from_utf8(bytes).map_err(|_| ReadFault {
            offset: at,
            message: format!("{what}: not UTF-8"),
        })
    }
}

/// `len` zero bytes in a buffer allocated fallibly: a length a file or a
/// caller chose that the machine cannot hold is an
/// [`OutOfMemory`](std::io::ErrorKind::OutOfMemory) error naming `what`,
/// never an abort.
pub(crate) fn try_zeroed(len: usize, what: &str) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(len).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("cannot allocate {len} bytes for {what}: {e}"),
        )
    })?;
    bytes.resize(len, 0);
    Ok(bytes)
}

/// Appends `more` to `bytes`, allocating fallibly (see [`try_zeroed`]).
pub(crate) fn try_extend(bytes: &mut Vec<u8>, more: &[u8], what: &str) -> std::io::Result<()> {
    bytes.try_reserve(more.len()).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            format!("cannot allocate {} more bytes for {what}: {e}", more.len()),
        )
    })?;
    bytes.extend_from_slice(more);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_rejects_non_finite_floats_and_bad_utf8() {
        let mut c = Cursor::new(&[0, 0, 0xC0, 0x7F, 0xFF, 0xFE]);
        assert!(c.f32("nan").unwrap_err().message.contains("not finite"));
        assert!(c.str(2, "name").unwrap_err().message.contains("not UTF-8"));
    }
}
