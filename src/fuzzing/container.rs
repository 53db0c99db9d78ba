//! The harness that fuzzing runs against the reader, shared by the `fuzz/`
//! target and `tests/container_fuzz.rs` so that both check the same thing.
//!
//! Not part of the stable API: it exists for the fuzzers.

use super::same_bits;
use crate::clip::Transform;
use crate::container::index::MAX_TABLE_OF_CONTENTS_LEN;
use crate::container::StreamReader;
use crate::sample::Sampling;
use crate::stream::{MissingPage, PageData, Source, Stream, StreamOptions};

/// What the reader made of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `open` returned an error.
    OpenFailed,
    /// `open` succeeded; `verify` said whether every page and segment is sound.
    Opened {
        /// What `verify` said.
        sound: bool,
    },
}

/// Opens `data` and uses the reader every way playback does. Panics only if
/// the reader does, or if a file that verified sound fails to sample.
pub fn exercise(data: &[u8]) -> Outcome {
    open_as_sparse_file(data);
    let Ok(reader) = StreamReader::open(data) else {
        return Outcome::OpenFailed;
    };
    let meta = reader.meta();
    let bones = meta.num_bones();
    let last = meta.num_samples() - 1;
    let duration = meta.duration();
    let times = [
        0.0,
        duration * 0.5,
        duration,
        -1.0,
        f64::NAN,
        f64::INFINITY,
        f64::MAX,
    ];
    let mut pose = vec![Transform::IDENTITY; bones];
    // A pose an engine is handed is finite: an error is the only other
    // answer a sound file may give (its ranges and raw keys are checked).
    let finite = |what: String, pose: &[Transform]| -> Result<(), String> {
        match pose.iter().position(|t| !is_finite(t)) {
            Some(bone) => Err(format!("{what}: bone {bone} is {:?}", pose[bone])),
            None => Ok(()),
        }
    };
    let sample_all = |pose: &mut [Transform]| -> Result<(), String> {
        for t in times {
            reader
                .sample(t, pose)
                .map_err(|e| format!("sample({t}): {e}"))?;
            finite(format!("sample({t})"), pose)?;
        }
        for bone in 0..bones.min(64) {
            let one = reader
                .sample_bone(bone, duration * 0.25)
                .map_err(|e| format!("sample_bone({bone}): {e}"))?;
            finite(format!("sample_bone({bone})"), &[one])?;
        }
        for index in [0, last, usize::MAX] {
            reader
                .decode_sample(index, pose)
                .map_err(|e| format!("decode_sample({index}): {e}"))?;
            finite(format!("decode_sample({index})"), pose)?;
        }
        Ok(())
    };
    let _ = sample_all(&mut pose);
    // Misuse must be an error, not a panic.
    assert!(reader.sample_bone(bones, 0.0).is_err());
    assert!(reader
        .sample(0.0, &mut vec![Transform::IDENTITY; bones + 1])
        .is_err());
    let report = reader.verify();
    let sound = report.is_sound();
    if sound {
        if let Err(e) = sample_all(&mut pose) {
            panic!("verify() found the file sound, but {e}");
        }
    }
    stream_like_the_reader(data, &reader, &times, sound);
    host_deliveries_in_any_order(data, &reader, &times, sound);
    if reader.preview().is_some() {
        previewing_stream(data, &times, sound);
    }
    Outcome::Opened { sound }
}

/// Every number of a transform is finite.
fn is_finite(t: &Transform) -> bool {
    t.rotation.is_finite() && t.translation.is_finite() && t.scale.is_finite()
}

/// A stream that previews every page (it loads none), over a file whose
/// tier opened: every time samples, and a sound file's never fails.
fn previewing_stream(data: &[u8], times: &[f64], sound: bool) {
    let options = StreamOptions::default()
        .with_prefetch(false)
        .with_missing_page(MissingPage::Preview);
    let stream = match Stream::from_bytes(data.to_vec(), options) {
        Ok(stream) => stream,
        Err(e) => {
            panic!("the reader opened the file and its tier, a previewing stream did not: {e}")
        }
    };
    let bones = stream.meta().num_bones();
    let mut pose = vec![Transform::IDENTITY; bones];
    let mut floats = vec![0.0f32; stream.meta().num_float_values()];
    for &t in times {
        let result = stream.sample(t, &mut pose);
        let floats_result = stream.sample_floats(t, &mut floats);
        for bone in 0..bones.min(64) {
            let _ = stream.sample_bone(bone, t);
        }
        if sound {
            assert!(result.is_ok() && floats_result.is_ok(), "preview at {t}");
        }
    }
}

/// A stream over the same bytes, with room for two pages only so that it
/// evicts all along, opens when the reader does and, on a sound file,
/// samples exactly what the reader samples.
fn stream_like_the_reader(data: &[u8], reader: &StreamReader<&[u8]>, times: &[f64], sound: bool) {
    let index = reader.index();
    let largest = (0..index.pages().len())
        .map(|p| reader.resident_cost(p) as u64)
        .max()
        .unwrap_or(0);
    let options = StreamOptions::default()
        .with_prefetch(false)
        .with_budget_bytes(2 * largest);
    let stream = match Stream::from_bytes(data.to_vec(), options) {
        Ok(stream) => stream,
        Err(e) => panic!("the reader opened the file, the stream did not: {e}"),
    };
    let bones = reader.meta().num_bones();
    let (mut a, mut b) = (
        vec![Transform::IDENTITY; bones],
        vec![Transform::IDENTITY; bones],
    );
    for &t in times {
        let from_stream = stream.sample(t, &mut a);
        if sound {
            let from_reader = reader.sample(t, &mut b);
            assert!(from_stream.is_ok() && from_reader.is_ok(), "sample({t})");
            assert!(
                a.iter().zip(&b).all(|(x, y)| same_bits(x, y)),
                "stream and reader differ at {t}"
            );
        }
    }
}

/// Recomputes every checksum the file's own (possibly mutated) fields point
/// at: page checksums in the index, then the metadata, index and header
/// checksums. Whatever does not parse is left alone.
pub fn recompute_checksums(b: &mut [u8]) {
    let _ = try_recompute_checksums(b);
}

fn try_recompute_checksums(b: &mut [u8]) -> Option<()> {
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
    let version = u16::from_le_bytes([b[8], b[9]]);
    if let Some(index) = index.clone() {
        let segments = u32_at(b, index.start)? as usize;
        let pages = u32_at(b, index.start + 4)? as usize;
        // Version 4 puts the page table first; earlier versions after
        // 16-byte segment entries.
        let first = match version {
            4.. => index.start + 8,
            _ => segments.checked_mul(16)?.checked_add(index.start + 8)?,
        };
        for page in 0..pages {
            let entry = first.checked_add(page.checked_mul(24)?)?;
            if entry.checked_add(24)? > index.end {
                break;
            }
            let offset = usize::try_from(u64_at(b, entry)?).ok()?;
            let stored = u32_at(b, entry + 8)? as usize;
            if let Some(r) = range(b, offset, stored) {
                let crc = crate::container::crc32(&b[r]);
                put(b, entry + 20, crc);
            }
        }
    }
    if let Some(m) = metadata {
        let crc = crate::container::crc32(&b[m]);
        put(b, 36, crc);
    }
    if let Some(i) = index.clone() {
        let crc = crate::container::crc32(&b[i]);
        put(b, 40, crc);
    }
    // Version 3 on: the preview tier after the index.
    let preview_len = u32_at(b, 44)? as usize;
    if version >= 3 && preview_len > 0 {
        if let Some(i) = index.clone() {
            let start = i.end.div_ceil(8) * 8;
            if let Some(p) = range(b, start, preview_len) {
                let crc = crate::container::crc32(&b[p]);
                put(b, 56, crc);
            }
        }
    }
    let crc = crate::container::crc32(&b[..60]);
    put(b, 60, crc);
    Some(())
}

/// A valid file of a few hundred bytes that claims `samples` samples: a
/// one-bone clip that never moves (no animated track, so its segment holds
/// no keys), packed, then its sample count in the metadata set to `samples`
/// and every checksum recomputed. What reading, verifying or exporting it
/// allocates must follow what the file holds, not what it claims.
pub fn claiming_samples(samples: u32) -> Vec<u8> {
    use crate::clip::{Bone, Clip, LengthUnit, Skeleton};
    use crate::compress::{compress, CompressSettings};
    use crate::container::{encode_stream, WriteOptions, HEADER_LEN};

    let root = Bone {
        name: "root".into(),
        parent: None,
        bind: Transform::IDENTITY,
    };
    let skeleton = Skeleton::new(vec![root])
        .unwrap_or_else(|e| unreachable!("one root bone is a valid skeleton: {e}"));
    let poses = vec![Transform::IDENTITY; 2];
    let clip = Clip::from_poses("bomb", skeleton.into(), 30.0, LengthUnit::CENTIMETRE, poses)
        .unwrap_or_else(|e| unreachable!("two identity poses are a valid clip: {e}"));
    let (compressed, _) = compress(&clip, &CompressSettings::default())
        .unwrap_or_else(|e| unreachable!("a still bone compresses: {e}"));
    let (mut bytes, _) = encode_stream(&compressed, &WriteOptions::default())
        .unwrap_or_else(|e| unreachable!("a one-segment clip encodes: {e}"));
    // Metadata (docs/FORMAT.md): name length (u32), name, sample rate (f32),
    // sample count (u32).
    let at = HEADER_LEN + 4 + "bomb".len() + 4;
    assert_eq!(
        bytes[at..at + 4],
        2u32.to_le_bytes(),
        "the sample count's place"
    );
    bytes[at..at + 4].copy_from_slice(&samples.to_le_bytes());
    recompute_checksums(&mut bytes);
    bytes
}

/// `data` followed by zeros up to the length its header declares (a sparse
/// file): a stream opening it reads no more than the table of contents'
/// limit at once, whatever the header (checksum fixed or not) claims.
struct SparseFile {
    data: Vec<u8>,
    len: u64,
}

impl Source for SparseFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read(&self, offset: u64, len: usize) -> std::io::Result<PageData> {
        assert!(
            len as u64 <= MAX_TABLE_OF_CONTENTS_LEN,
            "a read of {len} bytes at {offset}: over the table of contents' limit"
        );
        let mut out = vec![0u8; len];
        let start = offset.min(self.data.len() as u64) as usize;
        let end = (start + len).min(self.data.len());
        out[..end - start].copy_from_slice(&self.data[start..end]);
        Ok(PageData::owned(out))
    }

    fn describe(&self) -> String {
        "a sparse file".into()
    }
}

/// Opens `data` as the sparse file its header declares, when it declares
/// a longer one: refused or opened, never a read past the limit.
fn open_as_sparse_file(data: &[u8]) {
    let Some(declared) = data.get(16..24) else {
        return;
    };
    let mut len = [0u8; 8];
    len.copy_from_slice(declared);
    let len = u64::from_le_bytes(len);
    if len <= data.len() as u64 {
        return;
    }
    let data = data.to_vec();
    let options = StreamOptions::default().with_prefetch(false);
    let _ = Stream::open(SparseFile { data, len }, options);
}

/// A host delivers every page, in an order the input decides, each first
/// as the wrong bytes (another page's, a short read, a flipped bit) and
/// then as the right ones: the wrong ones are refused, the right ones taken,
/// and on a sound file every pose after is the reader's.
fn host_deliveries_in_any_order(
    data: &[u8],
    reader: &StreamReader<&[u8]>,
    times: &[f64],
    sound: bool,
) {
    let index = reader.index();
    let pages = index.pages();
    let prefix = data[..index.header().pages_offset as usize].to_vec();
    let options = StreamOptions::default()
        .with_missing_page(MissingPage::NotReady)
        .with_budget_bytes(u64::MAX);
    let stream = match Stream::open_host(prefix, data.len() as u64, options) {
        Ok(stream) => stream,
        Err(e) => panic!("the reader opened the file, a host-driven stream did not: {e}"),
    };
    let stored = |page: usize| {
        let entry = pages[page];
        &data[entry.offset as usize..][..entry.stored_len as usize]
    };
    // An order from the input's bytes: a stride through the pages.
    let n = pages.len();
    let stride = (1..=n)
        .rev()
        .find(|s| gcd(*s, n) == 1 && *s <= 1 + data.len() % n.max(1))
        .unwrap_or(1);
    let bones = reader.meta().num_bones();
    let (mut a, mut b) = (
        vec![Transform::IDENTITY; bones],
        vec![Transform::IDENTITY; bones],
    );
    let rate = f64::from(reader.meta().sample_rate);
    for k in 0..n {
        let page = (k * stride + data.len()) % n;
        // A sampler asks for the page first, so the stream takes it.
        let time = index.page_samples(page).start as f64 / rate;
        let _ = stream.sample(time, &mut a);
        let right = stored(page);
        let mut flipped = right.to_vec();
        if let Some(b) = flipped.get_mut(k % right.len().max(1)) {
            *b ^= 1 << (k % 8);
        }
        let wrong = [
            stored((page + 1) % n).to_vec(),
            right[..right.len().saturating_sub(1)].to_vec(),
            flipped,
        ];
        for bytes in wrong.into_iter().filter(|bytes| bytes != right) {
            // On a damaged file the "right" bytes may be the wrong ones, and
            // a flip may undo the damage: only a sound file's are known.
            let refused = stream.provide_page(page, bytes.clone()).is_err();
            if sound {
                assert!(refused, "page {page}: wrong bytes were taken");
            }
        }
        let taken = stream.provide_page(page, right.to_vec());
        if sound {
            assert!(
                matches!(taken, Ok(true)),
                "page {page}: the right bytes after wrong ones: {taken:?}"
            );
        }
    }
    if !sound {
        return;
    }
    for &t in times {
        let from_stream = stream.sample(t, &mut a);
        let from_reader = reader.sample(t, &mut b);
        assert!(
            from_stream.is_ok() && from_reader.is_ok(),
            "host-driven sample({t}): {from_stream:?}"
        );
        assert!(
            a.iter().zip(&b).all(|(x, y)| same_bits(x, y)),
            "host-driven stream and reader differ at {t}"
        );
    }
}

fn gcd(a: usize, b: usize) -> usize {
    match b {
        0 => a,
        _ => gcd(b, a % b),
    }
}
