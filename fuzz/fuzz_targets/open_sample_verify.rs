//! Fuzz target: no input may make the container reader panic.
//!
//! Each input is opened as a container and, if it opens, sampled at a few
//! times (start, middle, end, negative, NaN, infinite), sampled bone by bone
//! (the first 64 bones), decoded at its first and last samples and verified;
//! when `verify` finds it sound, the sampling is repeated and must succeed.
//! Checksums guard every byte of a file, so most mutations stop at a
//! checksum; to reach the parsers and decoders behind them, each input that
//! starts with the magic is run a second time with every checksum recomputed.
//! The same harness runs deterministically in `tests/container_fuzz.rs`.
#![no_main]

use cinestream::container::StreamReader;
use cinestream::Transform;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    exercise(data);
    if data.starts_with(b"CINESTRM") {
        let mut fixed = data.to_vec();
        fix_checksums(&mut fixed);
        if fixed != data {
            exercise(&fixed);
        }
    }
});

/// Opens `data` and uses the reader every way playback does.
fn exercise(data: &[u8]) {
    let Ok(reader) = StreamReader::open(data) else {
        return;
    };
    let meta = reader.meta();
    let bones = meta.num_bones();
    let last = meta.num_samples() - 1;
    let duration = meta.duration() as f32;
    let times = [
        0.0,
        duration * 0.5,
        duration,
        -1.0,
        f32::NAN,
        f32::INFINITY,
        f32::MAX,
    ];
    let mut pose = vec![Transform::IDENTITY; bones];
    let sample_all = |pose: &mut [Transform]| -> Result<(), String> {
        for t in times {
            reader
                .sample(t, pose)
                .map_err(|e| format!("sample({t}): {e}"))?;
        }
        for bone in 0..bones.min(64) {
            reader
                .sample_bone(bone, duration * 0.25)
                .map_err(|e| format!("sample_bone({bone}): {e}"))?;
        }
        for index in [0, last, usize::MAX] {
            reader
                .decode_sample(index, pose)
                .map_err(|e| format!("decode_sample({index}): {e}"))?;
        }
        Ok(())
    };
    let _ = sample_all(&mut pose);
    // Misuse must be an error, not a panic.
    assert!(reader.sample_bone(bones, 0.0).is_err());
    assert!(reader
        .sample(0.0, &mut vec![Transform::IDENTITY; bones + 1])
        .is_err());
    if reader.verify().is_sound() {
        if let Err(e) = sample_all(&mut pose) {
            panic!("verify() found the file sound, but {e}");
        }
    }
}

/// Recomputes every checksum the file's own (possibly mutated) fields point
/// at: page checksums in the index, then the metadata, index and header
/// checksums. Whatever does not parse is left alone.
fn fix_checksums(b: &mut [u8]) {
    let _ = try_fix_checksums(b);
}

fn try_fix_checksums(b: &mut [u8]) -> Option<()> {
    fn range(b: &[u8], at: usize, len: usize) -> Option<std::ops::Range<usize>> {
        let end = at.checked_add(len)?;
        (end <= b.len()).then_some(at..end)
    }
    fn u32_at(b: &[u8], at: usize) -> Option<u32> {
        Some(u32::from_le_bytes(b[range(b, at, 4)?].try_into().ok()?))
    }
    fn u64_at(b: &[u8], at: usize) -> Option<u64> {
        Some(u64::from_le_bytes(b[range(b, at, 8)?].try_into().ok()?))
    }
    fn put(b: &mut [u8], at: usize, crc: u32) {
        b[at..at + 4].copy_from_slice(&crc.to_le_bytes());
    }
    if b.len() < 64 {
        return None;
    }
    let metadata = range(b, 64, u32_at(b, 12)? as usize);
    let index = range(
        b,
        usize::try_from(u64_at(b, 24)?).ok()?,
        u32_at(b, 32)? as usize,
    );
    if let Some(index) = index.clone() {
        let segments = u32_at(b, index.start)? as usize;
        let pages = u32_at(b, index.start + 4)? as usize;
        let first = segments.checked_mul(16)?.checked_add(index.start + 8)?;
        for page in 0..pages {
            let entry = first.checked_add(page.checked_mul(24)?)?;
            if entry.checked_add(24)? > index.end {
                break;
            }
            let offset = usize::try_from(u64_at(b, entry)?).ok()?;
            let stored = u32_at(b, entry + 8)? as usize;
            if let Some(r) = range(b, offset, stored) {
                let crc = crc32fast::hash(&b[r]);
                put(b, entry + 20, crc);
            }
        }
    }
    if let Some(m) = metadata {
        let crc = crc32fast::hash(&b[m]);
        put(b, 36, crc);
    }
    if let Some(i) = index {
        let crc = crc32fast::hash(&b[i]);
        put(b, 40, crc);
    }
    let crc = crc32fast::hash(&b[..60]);
    put(b, 60, crc);
    Some(())
}
