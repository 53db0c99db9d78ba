//! Round trips through container bytes and every way a file can be broken.

use crate::sample::Sampling;
use std::sync::Arc;

use glam::{Quat, Vec3};
use proptest::prelude::*;

use super::*;
use crate::clip::{Bone, Clip, LengthUnit, Skeleton, TrackKind, Transform};
use crate::compress::{compress, CompressSettings};
use crate::compressed::CompressedClip;
use crate::error::{ContainerError, Error};
use crate::procedural::{cinematic, CinematicSpec};

/// A clip with every kind of sub-track: animated, constant and default
/// rotations, translations and scales.
fn every_kind_clip(samples: usize) -> Clip {
    let bone = |name: &str, parent, y| Bone {
        name: name.into(),
        parent,
        bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::new(0.0, y, 0.0)),
    };
    let skeleton = Arc::new(
        Skeleton::new(vec![
            bone("root", None, 0.0),
            bone("a", Some(0), 10.0),
            bone("b", Some(1), 10.0),
            bone("c", Some(0), 5.0),
        ])
        .unwrap(),
    );
    let mut poses = Vec::new();
    for s in 0..samples {
        let t = s as f32 / 30.0;
        let mut pose = skeleton.bind_pose();
        pose[0].translation = Vec3::new(50.0 * t, 0.0, 3.0 * t.sin());
        pose[0].rotation = Quat::from_rotation_y(0.7 * t);
        pose[1].rotation = Quat::from_rotation_x(0.4);
        pose[1].scale = Vec3::splat(1.0 + 0.2 * t.sin());
        pose[2].rotation = Quat::from_rotation_z(2.0 * t.cos());
        pose[2].translation = Vec3::new(0.0, 12.0, 0.0);
        pose[3].scale = Vec3::new(2.0, 1.0, 1.0);
        poses.extend(pose);
    }
    Clip::from_poses("every-kind", skeleton, 30.0, LengthUnit::CENTIMETRE, poses).unwrap()
}

fn compressed(clip: &Clip) -> CompressedClip {
    compress(clip, &CompressSettings::default()).unwrap().0
}

fn encoded(clip: &CompressedClip, options: &WriteOptions) -> Vec<u8> {
    encode_stream(clip, options).unwrap().0
}

fn assert_same_as_memory(clip: &CompressedClip, bytes: &[u8]) {
    let reader = StreamReader::open(bytes).unwrap();
    assert_eq!(reader.meta(), clip.meta());
    let bones = clip.meta().num_bones();
    let mut from_memory = vec![Transform::IDENTITY; bones];
    let mut from_file = vec![Transform::IDENTITY; bones];
    for s in 0..clip.meta().num_samples() {
        clip.decode_sample(s, &mut from_memory).unwrap();
        reader.decode_sample(s, &mut from_file).unwrap();
        assert_eq!(from_memory, from_file, "sample {s}");
    }
    assert!(reader.verify().is_sound());
}

#[test]
fn every_track_kind_round_trips_through_the_file() {
    let clip = compressed(&every_kind_clip(70));
    let kinds = &clip.meta().kinds;
    assert_eq!(
        kinds[0],
        [TrackKind::Animated, TrackKind::Animated, TrackKind::Default]
    );
    assert_eq!(
        kinds[1],
        [TrackKind::Constant, TrackKind::Default, TrackKind::Animated]
    );
    assert_eq!(
        kinds[2],
        [TrackKind::Animated, TrackKind::Constant, TrackKind::Default]
    );
    assert_eq!(
        kinds[3],
        [TrackKind::Default, TrackKind::Default, TrackKind::Constant]
    );
    for options in [
        WriteOptions::default(),
        WriteOptions::default().with_page_bytes(100),
        WriteOptions::default().with_page_bytes(1).with_lz4(true),
        WriteOptions::default().with_lz4(true),
    ] {
        assert_same_as_memory(&clip, &encoded(&clip, &options));
    }
}

#[test]
fn writing_is_deterministic_and_pages_split_as_asked() {
    let clip = compressed(&cinematic(&CinematicSpec::default().with_seconds(20.0)));
    let options = WriteOptions::default().with_page_bytes(4096);
    let (a, summary) = encode_stream(&clip, &options).unwrap();
    let (b, _) = encode_stream(&clip, &options).unwrap();
    assert_eq!(a, b);
    let reader = StreamReader::open(&a).unwrap();
    assert_eq!(reader.pages().len(), summary.pages);
    assert!(summary.pages > 1);
    for page in reader.pages() {
        assert!(
            page.decoded_len as usize <= 4096
                || reader
                    .segments()
                    .iter()
                    .filter(|s| reader.pages()[s.page as usize] == *page)
                    .count()
                    == 1
        );
    }
}

#[test]
fn float_tracks_round_trip_through_the_file_bit_for_bit() {
    let clip = cinematic(
        &CinematicSpec::default()
            .with_actors(2)
            .with_seconds(5.0)
            .with_face(true)
            .with_camera(true),
    );
    let compressed = compressed(&clip);
    for options in [
        WriteOptions::default().with_page_bytes(1500),
        WriteOptions::default().with_page_bytes(1500).with_lz4(true),
    ] {
        let bytes = encoded(&compressed, &options);
        let reader = StreamReader::open(&bytes[..]).unwrap();
        assert_eq!(reader.index().header().version(), COMPACT_FORMAT_VERSION);
        assert_eq!(reader.meta(), compressed.meta());
        assert!(reader.index().pages().len() > 2);
        assert!(reader.verify().is_sound());
        let stream = crate::stream::Stream::from_bytes(
            bytes.clone(),
            crate::stream::StreamOptions::default(),
        )
        .unwrap();
        let n = compressed.meta().num_float_values();
        let (mut a, mut b, mut c) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
        for k in 0..300 {
            let time = k as f64 * 0.01713;
            compressed.sample_floats(time, &mut a).unwrap();
            reader.sample_floats(time, &mut b).unwrap();
            stream.sample_floats(time, &mut c).unwrap();
            assert_eq!(a.map_bits(), b.map_bits(), "at {time}");
            assert_eq!(a.map_bits(), c.map_bits(), "at {time}");
        }
        // Read as an older version (header patched, checksum fixed), the
        // metadata is laid out as that version does not lay it out: an
        // error naming the metadata, not floats silently dropped.
        for older in [FIRST_FORMAT_VERSION, FLOAT_FORMAT_VERSION] {
            let mut patched = bytes.clone();
            patched[8..10].copy_from_slice(&older.to_le_bytes());
            let crc = crc32(&patched[..60]);
            patched[60..64].copy_from_slice(&crc.to_le_bytes());
            let err = StreamReader::open(&patched[..]).unwrap_err().to_string();
            assert!(err.contains("metadata"), "version {older}: {err}");
        }
    }
}

trait MapBits {
    fn map_bits(&self) -> Vec<u32>;
}

impl MapBits for Vec<f32> {
    fn map_bits(&self) -> Vec<u32> {
        self.iter().map(|v| v.to_bits()).collect()
    }
}

#[test]
fn segment_views_and_header_checksums_match_what_was_written() {
    let clip = compressed(&cinematic(&CinematicSpec::default().with_seconds(6.0)));
    for options in [
        WriteOptions::default().with_page_bytes(700),
        WriteOptions::default().with_page_bytes(700).with_lz4(true),
    ] {
        let bytes = encoded(&clip, &options);
        let reader = StreamReader::open(&bytes[..]).unwrap();
        let header = reader.index().header();
        // What the compressor makes is written as the newest version.
        assert_eq!(header.version(), COMPACT_FORMAT_VERSION);
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        assert_eq!(header.header_checksum(), u32_at(60));
        assert_eq!(header.metadata_checksum(), u32_at(36));
        assert_eq!(header.index_checksum(), u32_at(40));
        for segment in 0..clip.meta().segments.count() {
            let view = reader.segment_view(segment).unwrap();
            let written = clip.segment_bytes(segment);
            let (_, samples) = clip.meta().segments.segment(segment);
            let fresh =
                crate::format::SegmentView::new(written, &clip.meta().animated, samples).unwrap();
            assert!(view.rates().eq(fresh.rates()), "segment {segment}");
            assert_eq!(
                view.keys(),
                &written[clip.meta().segment_header_bytes()..],
                "segment {segment}"
            );
            assert_eq!(view.sample_bits(), fresh.sample_bits(), "segment {segment}");
        }
    }
}

#[test]
fn sampling_at_key_times_returns_the_decoded_keys_exactly() {
    let clip = compressed(&every_kind_clip(50));
    let bytes = encoded(&clip, &WriteOptions::default());
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let bones = clip.meta().num_bones();
    let (mut key, mut sampled) = (
        vec![Transform::IDENTITY; bones],
        vec![Transform::IDENTITY; bones],
    );
    for s in 0..50 {
        reader.decode_sample(s, &mut key).unwrap();
        reader.sample(s as f64 / 30.0, &mut sampled).unwrap();
        assert_eq!(key, sampled, "sample {s}");
        for (bone, expected) in key.iter().enumerate() {
            let one = reader.sample_bone(bone, s as f64 / 30.0).unwrap();
            assert_eq!(one, *expected, "bone {bone} sample {s}");
        }
    }
}

#[test]
fn forward_backward_and_random_order_give_identical_poses() {
    let clip = compressed(&cinematic(&CinematicSpec::default().with_seconds(5.0)));
    let bytes = encoded(&clip, &WriteOptions::default().with_lz4(true));
    let reader = StreamReader::open(bytes).unwrap();
    let bones = reader.meta().num_bones();
    let times: Vec<f64> = (0..400).map(|i| i as f64 * 0.01337).collect();
    let sample_all = |order: &mut dyn Iterator<Item = usize>| {
        let mut out = vec![Vec::new(); times.len()];
        let mut pose = vec![Transform::IDENTITY; bones];
        for i in order {
            reader.sample(times[i], &mut pose).unwrap();
            out[i] = pose.clone();
        }
        out
    };
    let forward = sample_all(&mut (0..times.len()));
    let backward = sample_all(&mut (0..times.len()).rev());
    let random = sample_all(&mut (0..times.len()).map(|i| (i * 7919) % times.len()));
    assert_eq!(forward, backward);
    assert_eq!(forward, random);
    // Between keys the pose is interpolated: sample 10.5 lies between keys 10 and 11.
    let mut mid = vec![Transform::IDENTITY; bones];
    reader.sample(10.5 / 30.0, &mut mid).unwrap();
    let (mut k10, mut k11) = (mid.clone(), mid.clone());
    reader.decode_sample(10, &mut k10).unwrap();
    reader.decode_sample(11, &mut k11).unwrap();
    let expected = (k10[1].translation + k11[1].translation) * 0.5;
    assert!((mid[1].translation - expected).length() < 1e-4);
}

#[test]
fn a_flipped_byte_in_any_page_fails_that_page() {
    let clip = compressed(&cinematic(&CinematicSpec::default().with_seconds(4.0)));
    let bytes = encoded(&clip, &WriteOptions::default().with_page_bytes(512));
    let pages = StreamReader::open(&bytes[..]).unwrap().pages().to_vec();
    assert!(pages.len() > 2);
    for (index, page) in pages.iter().enumerate() {
        for at in [
            0,
            page.stored_len as usize / 2,
            page.stored_len as usize - 1,
        ] {
            let mut broken = bytes.clone();
            broken[page.offset as usize + at] ^= 0x10;
            let reader = StreamReader::open(&broken[..]).unwrap();
            let report = reader.verify();
            assert_eq!(report.corrupt_pages.len(), 1);
            assert_eq!(report.corrupt_pages[0].0, index);
            assert!(
                report.corrupt_pages[0].1.contains(&format!("page {index}")),
                "{}",
                report.corrupt_pages[0].1
            );
            // Sampling a time in that page fails with the same error; others still work.
            let segment = reader
                .segments()
                .iter()
                .position(|s| s.page as usize == index)
                .unwrap();
            let (first, _) = reader.meta().segments.segment(segment);
            let mut pose = vec![Transform::IDENTITY; reader.meta().num_bones()];
            let err = reader.decode_sample(first, &mut pose).unwrap_err();
            assert!(
                matches!(err, Error::Container(crate::error::ContainerError::CorruptPage { page, .. }) if page == index)
            );
            let err = reader.segment_view(segment).unwrap_err();
            assert!(
                matches!(err, Error::Container(crate::error::ContainerError::CorruptPage { page, .. }) if page == index)
            );
        }
    }
}

#[test]
fn any_flipped_byte_outside_pages_fails_open_and_none_panics() {
    let clip = compressed(&every_kind_clip(40));
    let bytes = encoded(&clip, &WriteOptions::default());
    let pages_start = StreamReader::open(&bytes[..]).unwrap().pages()[0].offset as usize;
    for at in 0..bytes.len() {
        let mut broken = bytes.clone();
        broken[at] ^= 0x01;
        match StreamReader::open(&broken[..]) {
            Err(_) => assert!(at < pages_start || broken[at..].is_empty(), "byte {at}"),
            Ok(reader) => {
                assert!(
                    at >= pages_start,
                    "byte {at} in the header, metadata or index passed open"
                );
                assert!(!reader.verify().is_sound(), "byte {at}");
            }
        }
    }
}

#[test]
fn truncation_at_any_offset_is_an_error() {
    let clip = compressed(&every_kind_clip(40));
    let bytes = encoded(&clip, &WriteOptions::default());
    for len in 0..bytes.len() {
        let err = StreamReader::open(&bytes[..len]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Container(crate::error::ContainerError::Truncated { .. })
            ),
            "length {len}: {err}"
        );
    }
}

#[test]
fn wrong_magic_and_version_have_their_own_errors() {
    let clip = compressed(&every_kind_clip(10));
    let mut bytes = encoded(&clip, &WriteOptions::default());
    let mut bad_magic = bytes.clone();
    bad_magic[0] = b'X';
    assert!(matches!(
        StreamReader::open(&bad_magic[..]).unwrap_err(),
        Error::Container(crate::error::ContainerError::BadMagic { .. })
    ));
    for version in [0u16, FORMAT_VERSION + 1] {
        bytes[8..10].copy_from_slice(&version.to_le_bytes());
        let err = StreamReader::open(&bytes[..]).unwrap_err();
        assert!(
            matches!(err, Error::Container(crate::error::ContainerError::UnsupportedVersion { found, supported: FORMAT_VERSION }) if found == version),
            "{err}"
        );
        assert!(err
            .to_string()
            .contains(&format!("format version {version}")));
    }
}

#[test]
fn pose_and_bone_mistakes_are_errors_not_panics() {
    let clip = compressed(&every_kind_clip(10));
    let bytes = encoded(&clip, &WriteOptions::default());
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let mut short = vec![Transform::IDENTITY; 2];
    assert!(reader.sample(0.1, &mut short).is_err());
    assert!(reader.sample_bone(99, 0.1).is_err());
    // Times outside the clip clamp; NaN and infinities do not panic.
    let mut pose = vec![Transform::IDENTITY; 4];
    for t in [-5.0, 1e9, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        reader.sample(t, &mut pose).unwrap();
    }
}

#[test]
fn files_are_written_atomically() {
    let dir = std::env::temp_dir().join(format!("cinestream-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("clip.cine");
    let clip = compressed(&every_kind_clip(20));
    std::fs::write(&path, b"old contents").unwrap();
    let summary = write_stream(&clip, &WriteOptions::default(), &path).unwrap();
    let written = std::fs::read(&path).unwrap();
    assert_eq!(written.len(), summary.file_bytes);
    assert_eq!(written, encoded(&clip, &WriteOptions::default()));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "clip.cine")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A failing write leaves nothing under the final name.
    let missing = dir.join("no-such-dir").join("clip.cine");
    assert!(write_stream(&clip, &WriteOptions::default(), &missing).is_err());
    assert!(!missing.exists());
    // Both whole-file readers read what was written.
    let reader = StreamReader::open_file(&path).unwrap();
    assert!(reader.verify().is_sound());
    assert!(StreamReader::open_mapped(&path)
        .unwrap()
        .verify()
        .is_sound());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_whole_file_reader_holds_its_own_bytes_when_the_file_is_cut() {
    let dir = std::env::temp_dir().join(format!("cinestream-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("clip.cine");
    let clip = compressed(&every_kind_clip(200));
    let options = WriteOptions::default().with_page_bytes(256);
    write_stream(&clip, &options, &path).unwrap();
    let reader = StreamReader::open_file(&path).unwrap();
    let len = reader.data().len();
    assert!(reader.pages().len() > 2);
    // Another process cuts the file to its header, then to nothing, before
    // any page was checked: a mapped reader would fault (SIGBUS) below.
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_len(HEADER_LEN as u64).unwrap();
    file.set_len(0).unwrap();
    let report = reader.verify();
    assert!(report.is_sound(), "{report:?}");
    let mut pose = vec![Transform::IDENTITY; reader.meta().num_bones()];
    reader.sample(0.5, &mut pose).unwrap();
    assert_eq!(reader.data().len(), len);
    // Opened again, the cut file is an error in words.
    let e = StreamReader::open_file(&path).unwrap_err().to_string();
    assert!(e.contains("truncated"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_over_the_whole_file_limit_is_refused_in_words() {
    let dir = std::env::temp_dir().join(format!("cinestream-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("clip.cine");
    let bytes = encoded(&compressed(&every_kind_clip(20)), &WriteOptions::default());
    std::fs::write(&path, &bytes).unwrap();
    let len = bytes.len() as u64;
    assert_eq!(read::read_checked_file(&path, len, None).unwrap(), bytes);
    let e = read::read_checked_file(&path, len - 1, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("{len} bytes, over the {}", len - 1)),
        "{e}"
    );
    assert!(e.contains("Stream") && e.contains("open_mapped"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn readers_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<StreamReader<Vec<u8>>>();
    check::<StreamReader<mmap::MappedFile>>();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_clips_round_trip(
        bones in 1usize..6,
        samples in 1usize..40,
        seed in any::<u64>(),
        page_bytes in 1usize..2000,
        lz4 in any::<bool>(),
    ) {
        let mut rng = seed;
        let mut next = move || {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((rng >> 33) as f32 / (1u64 << 31) as f32) * 2.0 - 1.0
        };
        let skeleton = Arc::new(Skeleton::new((0..bones).map(|b| Bone {
            name: format!("b{b}"),
            parent: b.checked_sub(1),
            bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::new(0.0, 5.0, 0.0)),
        }).collect()).unwrap());
        let speeds: Vec<f32> = (0..bones * 3).map(|_| next()).collect();
        let mut poses = Vec::new();
        for s in 0..samples {
            for b in 0..bones {
                let t = s as f32 * 0.1;
                poses.push(Transform {
                    rotation: Quat::from_euler(glam::EulerRot::XYZ, speeds[3 * b] * t, speeds[3 * b + 1], 2.0 * t),
                    translation: Vec3::new(speeds[3 * b + 2] * t * 10.0, 5.0, 0.0),
                    scale: if b == 0 { Vec3::ONE } else { Vec3::splat(1.0 + 0.1 * (speeds[3 * b] * t).sin()) },
                });
            }
        }
        let clip = Clip::from_poses("random", skeleton, 30.0, LengthUnit::CENTIMETRE, poses).unwrap();
        let compressed = compressed(&clip);
        let bytes = encoded(&compressed, &WriteOptions::default().with_page_bytes(page_bytes).with_lz4(lz4));
        assert_same_as_memory(&compressed, &bytes);
        let reader = StreamReader::open(&bytes[..]).unwrap();
        let report = crate::metric::measure_error(&clip.clone().with_loop_mode(reader.meta().loop_mode), &reader, &crate::metric::MetricSettings::default());
        // A wrap loop drops the last sample; compare what is stored.
        if reader.meta().num_samples() == clip.num_samples() {
            prop_assert!(report.unwrap().max_cm <= 0.01);
        }
    }
}

#[test]
fn rounding_modes_pick_the_bracketing_samples() {
    use crate::sample::SampleRounding;
    let clip = compressed(&every_kind_clip(40));
    let bytes = encoded(&clip, &WriteOptions::default());
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let bones = reader.meta().num_bones();
    let pose = |f: &dyn Fn(&mut Vec<Transform>)| {
        let mut p = vec![Transform::IDENTITY; bones];
        f(&mut p);
        p
    };
    let key = |i| {
        pose(&|p| {
            reader.decode_sample(i, p).unwrap();
        })
    };
    let at = |t: f64, r| {
        pose(&|p| {
            reader.sample_rounded(t, r, p).unwrap();
        })
    };
    let t = 10.3 / 30.0;
    assert_eq!(at(t, SampleRounding::Floor), key(10));
    assert_eq!(at(t, SampleRounding::Ceil), key(11));
    assert_eq!(at(t, SampleRounding::Nearest), key(10));
    assert_eq!(at(10.7 / 30.0, SampleRounding::Nearest), key(11));
    let between = at(t, SampleRounding::None);
    assert_ne!(between, key(10));
    assert_ne!(between, key(11));
    // Clamped: before the start is the first sample, past the end the last.
    assert_eq!(at(-1.0, SampleRounding::None), key(0));
    assert_eq!(at(100.0, SampleRounding::None), key(39));
}

#[test]
fn wrapping_clips_loop_back_to_the_first_sample() {
    use crate::compress::LoopPolicy;
    use crate::sample::SampleRounding;
    let clip = every_kind_clip(31);
    let settings = CompressSettings::default().with_loop_policy(LoopPolicy::Wrap);
    let (compressed, _) = compress(&clip, &settings).unwrap();
    assert_eq!(compressed.meta().num_samples(), 30);
    assert!((compressed.meta().duration() - 1.0).abs() < 1e-9);
    let bytes = encoded(&compressed, &WriteOptions::default());
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let bones = reader.meta().num_bones();
    let mut a = vec![Transform::IDENTITY; bones];
    let mut b = vec![Transform::IDENTITY; bones];
    // One duration later is the same pose; the last interval blends into sample 0.
    reader.sample(0.25, &mut a).unwrap();
    reader.sample(1.25, &mut b).unwrap();
    assert_eq!(a, b);
    reader.sample(-0.75, &mut b).unwrap();
    assert_eq!(a, b);
    reader
        .sample_rounded(29.6 / 30.0, SampleRounding::Ceil, &mut a)
        .unwrap();
    reader.decode_sample(0, &mut b).unwrap();
    assert_eq!(a, b);
}

/// A version-4 file in several pages, with where its segment lengths lie.
fn compact_file_and_lengths() -> (Vec<u8>, usize) {
    let clip = compressed(&cinematic(&CinematicSpec::default().with_seconds(3.0)));
    let bytes = encoded(&clip, &WriteOptions::default().with_page_bytes(1200));
    let reader = StreamReader::open(&bytes[..]).unwrap();
    assert_eq!(reader.index().header().version(), COMPACT_FORMAT_VERSION);
    assert!(reader.pages().len() > 2);
    let index = reader.index().header().index_offset as usize;
    let lengths = index + 8 + reader.pages().len() * PAGE_ENTRY_LEN;
    drop(reader);
    (bytes, lengths)
}

#[test]
fn version_4_segment_lengths_must_fill_their_pages_exactly() {
    let (bytes, lengths) = compact_file_and_lengths();
    let reader = StreamReader::open(&bytes[..]).unwrap();
    let first = reader.index().segments()[0];
    assert_eq!((first.page, first.offset), (0, 0));
    // Every length, read back, as the writer wrote it.
    let mut c = super::bytes::Cursor::new(&bytes[lengths..]);
    for entry in reader.index().segments() {
        assert_eq!(c.varint("length").unwrap(), entry.len);
    }
    // The first segment's length one byte shorter or longer (its varint
    // keeps its width), the checksums made right: the page no longer adds up.
    assert!(first.len > 128 && first.len % 128 > 1 && first.len % 128 < 126);
    for delta in [-1i8, 1] {
        let mut broken = bytes.clone();
        broken[lengths] = (broken[lengths] as i8 + delta) as u8;
        crate::fuzzing::container::recompute_checksums(&mut broken);
        let err = StreamReader::open(&broken[..]).unwrap_err().to_string();
        assert!(
            err.contains("index") && err.contains("page"),
            "{delta}: {err}"
        );
    }
}

#[test]
fn a_clip_range_whose_keys_would_not_be_finite_is_refused_at_open() {
    let compressed = compressed(&every_kind_clip(20));
    let bytes = encoded(&compressed, &WriteOptions::default());
    let header = Header::parse(&bytes, bytes.len() as u64).unwrap();
    let track = compressed
        .meta()
        .animated
        .iter()
        .position(|t| t.channel == crate::format::Channel::Translation)
        .unwrap();
    let bone = compressed.meta().animated[track].bone;
    // Finite min and extent whose sum is not (2e38 + 2e38 overflows f32),
    // and a sum that is finite but whose keys' differences are not.
    for (min, extent) in [(2.0e38, 2.0e38), (-1.0e38, 1.0e38)] {
        let mut meta = compressed.meta().clone();
        meta.animated[track].range.min.y = min;
        meta.animated[track].range.extent.y = extent;
        let metadata = write::metadata::encode_metadata(&meta, header.version(), false).unwrap();
        assert_eq!(metadata.len() as u64, header.metadata_len);
        let mut patched = bytes.clone();
        patched[HEADER_LEN..HEADER_LEN + metadata.len()].copy_from_slice(&metadata);
        crate::fuzzing::container::recompute_checksums(&mut patched);
        let e = StreamReader::open(&patched[..]).unwrap_err().to_string();
        assert!(
            e.contains(&format!("bone {bone} translation")) && e.contains("clip range y"),
            "{min} {extent}: {e}"
        );
        let e = crate::stream::Stream::from_bytes(patched, Default::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("not be finite"), "{e}");
    }
}

/// Version 6 with its skeleton left out, opened with the skeleton.
fn lean_reader<'a>(bytes: &'a [u8], skeleton: &Arc<Skeleton>) -> StreamReader<&'a [u8]> {
    StreamReader::open_with_skeleton(bytes, Some(skeleton)).unwrap()
}

#[test]
fn a_file_without_its_skeleton_gives_the_same_poses_bit_for_bit() {
    let by_reference = WriteOptions::default().with_skeleton_by_reference(true);
    let clips = [
        compressed(&every_kind_clip(70)),
        compressed(&cinematic(&CinematicSpec::default().with_seconds(3.0))),
    ];
    for clip in &clips {
        let skeleton = Arc::clone(&clip.meta().skeleton);
        for options in [
            by_reference.clone(),
            by_reference.clone().with_page_bytes(100),
            by_reference.clone().with_page_bytes(1).with_lz4(true),
            by_reference.clone().with_lz4(true),
        ] {
            let (bytes, summary) = encode_stream(clip, &options).unwrap();
            assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 6);
            let reader = lean_reader(&bytes, &skeleton);
            // Everything but the clip's name, which the file leaves out too.
            let mut expected = clip.meta().clone();
            expected.name.clear();
            assert_eq!(reader.meta(), &expected);
            assert_eq!(reader.pages().len(), summary.pages);
            let bones = clip.meta().num_bones();
            let (mut from_memory, mut from_file) = (
                vec![Transform::IDENTITY; bones],
                vec![Transform::IDENTITY; bones],
            );
            for s in 0..clip.meta().num_samples() {
                clip.decode_sample(s, &mut from_memory).unwrap();
                reader.decode_sample(s, &mut from_file).unwrap();
                let bits = |p: &[Transform]| -> Vec<u32> {
                    p.iter()
                        .flat_map(|t| {
                            let mut v = t.rotation.to_array().to_vec();
                            v.extend(t.translation.to_array());
                            v.extend(t.scale.to_array());
                            v
                        })
                        .map(f32::to_bits)
                        .collect()
                };
                assert_eq!(bits(&from_memory), bits(&from_file), "sample {s}");
            }
            assert!(reader.verify().is_sound());
            // Smaller than the same clip with its skeleton, by more than
            // the bones' names.
            let stored = encoded(clip, &options.clone().with_skeleton_by_reference(false));
            let names: usize = skeleton.bones().iter().map(|b| b.name.len()).sum();
            assert!(
                bytes.len() + names < stored.len(),
                "{} {}",
                bytes.len(),
                stored.len()
            );
        }
    }
}

#[test]
fn a_file_without_its_skeleton_needs_that_skeleton() {
    let clip = compressed(&every_kind_clip(20));
    let skeleton = Arc::clone(&clip.meta().skeleton);
    let lean = encoded(
        &clip,
        &WriteOptions::default().with_skeleton_by_reference(true),
    );
    let stored = encoded(&clip, &WriteOptions::default());
    let err = StreamReader::open(&lean[..]).unwrap_err();
    assert!(
        matches!(err, Error::Container(ContainerError::SkeletonNeeded { bones: 4, fingerprint }) if fingerprint == skeleton_fingerprint(&skeleton)),
        "{err}"
    );
    assert!(err.to_string().contains("--skeleton"), "{err}");
    // Another skeleton: a bind translation one ulp off, a bone renamed, a
    // bone fewer. Refused for the file that stores its skeleton too.
    let mut bones = skeleton.bones().to_vec();
    bones[1].bind.translation.y = f32::from_bits(bones[1].bind.translation.y.to_bits() + 1);
    let mut renamed = skeleton.bones().to_vec();
    renamed[2].name = "B".into();
    let others = [bones, renamed, skeleton.bones()[..3].to_vec()];
    for other in others {
        let other = Arc::new(Skeleton::new(other).unwrap());
        for bytes in [&lean, &stored] {
            let err = StreamReader::open_with_skeleton(&bytes[..], Some(&other)).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Container(ContainerError::SkeletonMismatch { bones: 4, .. })
                ),
                "{err}"
            );
        }
    }
    // The stream takes it in its options.
    let options = crate::stream::StreamOptions::default();
    assert!(crate::stream::Stream::from_bytes(lean.clone(), options.clone()).is_err());
    let stream =
        crate::stream::Stream::from_bytes(lean, options.with_skeleton(Arc::clone(&skeleton)))
            .unwrap();
    let mut pose = vec![Transform::IDENTITY; 4];
    stream.sample(0.3, &mut pose).unwrap();
    let mut expected = vec![Transform::IDENTITY; 4];
    clip.sample(0.3, &mut expected).unwrap();
    assert_eq!(pose, expected);
}

#[test]
fn the_skeleton_fingerprint_is_fnv_1a_of_the_bone_records_a_file_stores() {
    // Two bones written out by hand as "A bone" lays them out (version 4
    // on): parent + 1, bind flags, name length, name, the stored values.
    let skeleton = Skeleton::new(vec![
        Bone {
            name: "hip".into(),
            parent: None,
            bind: Transform::IDENTITY,
        },
        Bone {
            name: "k".into(),
            parent: Some(0),
            bind: Transform::from_rotation_translation(Quat::IDENTITY, Vec3::new(0.0, 2.5, 0.0)),
        },
    ])
    .unwrap();
    let mut records = vec![0u8, 0, 3, b'h', b'i', b'p', 1, BIND_TRANSLATION, 1, b'k'];
    for v in [0.0f32, 2.5, 0.0] {
        records.extend(v.to_le_bytes());
    }
    let mut hash: u64 = 0xcbf29ce484222325;
    for byte in &records {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x100000001b3);
    }
    assert_eq!(skeleton_fingerprint(&skeleton), hash);
    // And those are the bytes a version-4 file of the skeleton holds.
    let skeleton = Arc::new(skeleton);
    let poses = [skeleton.bind_pose(), skeleton.bind_pose()].concat();
    let clip = Clip::from_poses("two", skeleton, 30.0, LengthUnit::CENTIMETRE, poses).unwrap();
    let bytes = encoded(&compressed(&clip), &WriteOptions::default());
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 4);
    assert!(bytes.windows(records.len()).any(|w| w == records));
}

#[test]
fn a_file_without_its_skeleton_refuses_every_flipped_byte_and_truncation() {
    let clip = compressed(&every_kind_clip(40));
    let skeleton = Arc::clone(&clip.meta().skeleton);
    let bytes = encoded(
        &clip,
        &WriteOptions::default().with_skeleton_by_reference(true),
    );
    let pages_start = lean_reader(&bytes, &skeleton).pages()[0].offset as usize;
    for at in 0..bytes.len() {
        let mut broken = bytes.clone();
        broken[at] ^= 0x01;
        match StreamReader::open_with_skeleton(&broken[..], Some(&skeleton)) {
            Err(_) => assert!(at < pages_start, "byte {at}"),
            Ok(reader) => {
                assert!(at >= pages_start, "byte {at} before the pages passed open");
                assert!(!reader.verify().is_sound(), "byte {at}");
            }
        }
    }
    for len in 0..bytes.len() {
        let err = StreamReader::open_with_skeleton(&bytes[..len], Some(&skeleton)).unwrap_err();
        assert!(
            matches!(err, Error::Container(ContainerError::Truncated { .. })),
            "length {len}: {err}"
        );
    }
    // A byte more after the last page is not a file this writer wrote.
    let mut longer = bytes.clone();
    longer.push(0);
    let err = StreamReader::open_with_skeleton(&longer[..], Some(&skeleton)).unwrap_err();
    assert!(err.to_string().contains("after the last page"), "{err}");
}

/// A small cinematic with a camera, compressed to half a pixel on screen.
fn shot_aware_clip() -> CompressedClip {
    let clip = cinematic(
        &CinematicSpec::default()
            .with_seconds(1.0)
            .with_face(true)
            .with_camera(true),
    );
    let bound = crate::compress::ScreenBound::new(0.5);
    compress(
        &clip,
        &CompressSettings::default().with_screen_bound(Some(bound)),
    )
    .unwrap()
    .0
}

#[test]
fn a_screen_bound_is_written_as_version_7_and_read_back_exactly() {
    let clip = shot_aware_clip();
    let screen = clip.meta().screen.expect("the compressor states its bound");
    assert_eq!(
        (screen.pixels, screen.resolution, screen.max_cm),
        (0.5, (3840, 2160), 1.0)
    );
    assert!(
        screen.worst_px <= 0.5 && screen.worst_cm <= 1.0,
        "{screen:?}"
    );
    for options in [
        WriteOptions::default(),
        WriteOptions::default().with_skeleton_by_reference(true),
        WriteOptions::default().with_lz4(true).with_page_bytes(256),
    ] {
        let bytes = encoded(&clip, &options);
        assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 7);
        let skeleton = Arc::clone(&clip.meta().skeleton);
        let reader = StreamReader::open_with_skeleton(&bytes[..], Some(&skeleton)).unwrap();
        assert_eq!(reader.meta().screen, Some(screen));
        let mut from_memory = vec![Transform::IDENTITY; clip.meta().num_bones()];
        let mut from_file = from_memory.clone();
        for s in 0..clip.meta().num_samples() {
            clip.decode_sample(s, &mut from_memory).unwrap();
            reader.decode_sample(s, &mut from_file).unwrap();
            assert_eq!(from_memory, from_file, "sample {s}");
        }
        assert!(reader.verify().is_sound());
    }
    // The same clip without the bound is written as before.
    let mut plain = clip.meta().clone();
    plain.screen = None;
    assert_ne!(plain, *clip.meta());
}

#[test]
fn a_screen_bound_out_of_its_ranges_or_in_version_6_is_refused() {
    let clip = shot_aware_clip();
    let bytes = encoded(&clip, &WriteOptions::default());
    let meta_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let metadata = &bytes[LEAN_HEADER_LEN..LEAN_HEADER_LEN + meta_len];
    let given = Some(&clip.meta().skeleton);
    assert_eq!(
        metadata::parse_metadata(metadata, 7, given).unwrap().screen,
        clip.meta().screen
    );
    // Version 6 knows no such flag.
    let err = metadata::parse_metadata(metadata, 6, given).unwrap_err();
    assert!(format!("{err:?}").contains("unknown flag bits"), "{err:?}");
    // The bound follows the shell distance: name (varint + bytes), rate,
    // two varint counts, flags, then three f64.
    let name = clip.meta().name.len();
    let mut at = 1 + name + 4;
    for _ in 0..2 {
        while metadata[at] & 0x80 != 0 {
            at += 1;
        }
        at += 1;
    }
    let flags = at;
    assert_eq!(metadata[flags] & 8, 8, "the screen flag");
    let pixels = flags + 1 + 24;
    assert_eq!(
        f64::from_le_bytes(metadata[pixels..pixels + 8].try_into().unwrap()),
        0.5
    );
    for bad in [0.0f64, -1.0, f64::NAN, f64::INFINITY] {
        let mut broken = metadata.to_vec();
        broken[pixels..pixels + 8].copy_from_slice(&bad.to_le_bytes());
        let err = metadata::parse_metadata(&broken, 7, given).unwrap_err();
        assert!(
            format!("{err:?}").contains("screen bound"),
            "{bad}: {err:?}"
        );
    }
}
