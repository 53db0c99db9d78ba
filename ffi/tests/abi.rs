//! The C ABI called as C calls it: poses equal the library's bit for bit,
//! and every misuse (NULL, a freed handle, a handle of the other kind, a
//! made-up handle, too small an array, a bad remap, bad file bytes, bad
//! options) is an error code with a message, never a crash.
//!
//! Every `unsafe` block here calls the ABI with pointers to live locals of
//! the right type and length, or with deliberately NULL or invalid handles
//! and short lengths that the functions must refuse before touching
//! memory; each block says which.

use std::ffi::{c_char, CStr};
use std::ptr::{null, null_mut};

use cinestream::compress::{compress, CompressSettings};
use cinestream::container::{encode_stream, WriteOptions};
use cinestream::play::Player;
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::stream::{Stream, StreamOptions};
use cinestream::{Clip, FloatKind, FloatTrack, Sampling, Transform};
use cinestream_ffi::*;

/// The procedural clip [`packed`] packs: two actors with faces (morph
/// weights) and a camera (a field of view), 4 s at 30 Hz, and a light's
/// colour (four components) after the first morph weight, so that tracks
/// after it sit at offsets that are not their indices.
fn source_clip() -> Clip {
    let clip = cinematic(
        &CinematicSpec::default()
            .with_seconds(4.0)
            .with_actors(2)
            .with_face(true)
            .with_camera(true)
            .with_seed(7),
    );
    let colour = (0..clip.num_samples())
        .flat_map(|k| (0..4).map(move |c| 0.5 + 0.4 * ((k as f32) * 0.1 + c as f32).sin()))
        .collect();
    let colour = FloatTrack::new("Light/colour", FloatKind::Generic, 4, 1e-3, colour)
        .expect("a sound track");
    let mut floats = clip.float_tracks().to_vec();
    floats.insert(1, colour);
    clip.with_float_tracks(floats).expect("distinct names")
}

/// [`source_clip`] packed, in small pages.
fn packed() -> Vec<u8> {
    use std::sync::OnceLock;
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES
        .get_or_init(|| {
            let clip = source_clip();
            let (compressed, _) = compress(&clip, &CompressSettings::default()).expect("compress");
            let (bytes, _) =
                encode_stream(&compressed, &WriteOptions::default().with_page_bytes(4096))
                    .expect("encode");
            bytes
        })
        .clone()
}

fn options() -> CsStreamOptions {
    let mut o = CsStreamOptions {
        budget_bytes: 0,
        lookahead_seconds: 0.0,
        missing_page: 0,
        prefetch: 0,
        tick_us: 0,
    };
    // SAFETY: `o` is a live, writable CsStreamOptions.
    assert_eq!(unsafe { cs_stream_options_default(&mut o) }, CsStatus::Ok);
    o
}

fn open(bytes: &[u8]) -> *mut CsStream {
    let mut s = null_mut();
    let o = options();
    // SAFETY: `bytes` is a live slice of its length, `o` and `s` live locals.
    let status = unsafe { cs_stream_open_memory(bytes.as_ptr(), bytes.len(), &o, &mut s) };
    assert_eq!(status, CsStatus::Ok, "{}", last_error());
    s
}

fn player(s: *const CsStream) -> *mut CsPlayer {
    let mut o = CsPlayerOptions {
        loop_mode: 0,
        rate: 0.0,
        refine_frames: 0,
    };
    let mut p = null_mut();
    // SAFETY: `o` and `p` are live, writable locals; `s` is checked by the ABI.
    unsafe {
        assert_eq!(cs_player_options_default(&mut o), CsStatus::Ok);
        assert_eq!(
            cs_player_new(s, &o, &mut p),
            CsStatus::Ok,
            "{}",
            last_error()
        );
    }
    p
}

fn last_error() -> String {
    // SAFETY: cs_last_error returns a NUL-terminated thread-local string
    // that stays valid until the next failing call on this thread.
    unsafe { CStr::from_ptr(cs_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// A call's status with the thread's last error right after it.
fn c(name: &'static str, status: CsStatus) -> (&'static str, CsStatus, String) {
    (name, status, last_error())
}

/// `status` is `expected` and the message names `function` and `words`.
#[track_caller]
fn refused(status: CsStatus, expected: CsStatus, function: &str, words: &str) {
    let message = last_error();
    refused_with(status, &message, expected, function, words);
}

#[track_caller]
fn refused_with(status: CsStatus, message: &str, expected: CsStatus, function: &str, words: &str) {
    assert_eq!(status, expected, "{function}: {message}");
    assert!(
        message.starts_with(&format!("{function}: ")) && message.contains(words),
        "{function}: message {message:?} should name {words:?}"
    );
}

fn bits(t: &CsTransform) -> Vec<u32> {
    t.rotation
        .iter()
        .chain(&t.translation)
        .chain(&t.scale)
        .map(|v| v.to_bits())
        .collect()
}

fn rust_bits(t: &Transform) -> Vec<u32> {
    bits(&CsTransform {
        rotation: t.rotation.to_array(),
        translation: t.translation.to_array(),
        scale: t.scale.to_array(),
    })
}

fn bone_count(s: *const CsStream) -> usize {
    let mut info = CsClipInfo::default();
    // SAFETY: `info` is a live, writable CsClipInfo.
    assert_eq!(unsafe { cs_stream_info(s, &mut info) }, CsStatus::Ok);
    info.bone_count as usize
}

#[test]
fn poses_equal_the_library_bit_for_bit() {
    let bytes = packed();
    let rust = Stream::from_bytes(bytes.clone(), StreamOptions::default()).expect("open");
    let s = open(&bytes);
    let bones = bone_count(s);
    assert_eq!(bones, rust.meta().num_bones());
    let mut info = CsClipInfo::default();
    // SAFETY: `info` is a live, writable CsClipInfo.
    assert_eq!(unsafe { cs_stream_info(s, &mut info) }, CsStatus::Ok);
    assert_eq!(info.duration, rust.meta().duration());
    assert_eq!(info.sample_count as usize, rust.meta().num_samples());
    let mut pose = vec![Transform::IDENTITY; bones];
    let mut out = vec![CsTransform::default(); bones];
    let mut quality = 9;
    for i in 0..=97 {
        let t = info.duration * f64::from(i) / 97.0 + if i % 2 == 1 { 0.0123 } else { 0.0 };
        rust.sample(t, &mut pose).expect("sample");
        // SAFETY: `out` holds `bones` transforms; no remap; `quality` is live.
        let status =
            unsafe { cs_stream_sample(s, t, out.as_mut_ptr(), out.len(), null(), 0, &mut quality) };
        assert_eq!(status, CsStatus::Ok, "{}", last_error());
        assert_eq!(quality, CS_QUALITY_FULL);
        for b in 0..bones {
            assert_eq!(bits(&out[b]), rust_bits(&pose[b]), "t {t} bone {b}");
            let mut one = CsTransform::default();
            // SAFETY: `one` is a live, writable CsTransform.
            assert_eq!(
                unsafe { cs_stream_sample_bone(s, b as u32, t, &mut one) },
                CsStatus::Ok
            );
            assert_eq!(
                bits(&one),
                rust_bits(&pose[b]),
                "bone alone, t {t} bone {b}"
            );
        }
    }
    // A remap: reversed order into a larger array, every other bone skipped.
    let map: Vec<i32> = (0..bones)
        .map(|b| match b % 2 {
            0 => (bones + 3 - b) as i32,
            _ => -1,
        })
        .collect();
    let sentinel = CsTransform {
        rotation: [7.0; 4],
        translation: [7.0; 3],
        scale: [7.0; 3],
    };
    let mut wide = vec![sentinel; bones + 4];
    rust.sample(1.234, &mut pose).expect("sample");
    // SAFETY: `wide` holds bones + 4 transforms, `map` one entry per bone.
    let status = unsafe {
        cs_stream_sample(
            s,
            1.234,
            wide.as_mut_ptr(),
            wide.len(),
            map.as_ptr(),
            map.len(),
            &mut quality,
        )
    };
    assert_eq!(status, CsStatus::Ok, "{}", last_error());
    for (b, &to) in map.iter().enumerate() {
        if to >= 0 {
            assert_eq!(bits(&wide[to as usize]), rust_bits(&pose[b]));
        }
    }
    let written: Vec<usize> = map
        .iter()
        .filter(|&&i| i >= 0)
        .map(|&i| i as usize)
        .collect();
    for (i, t) in wide.iter().enumerate() {
        if !written.contains(&i) {
            assert_eq!(*t, sentinel, "out[{i}] has no bone and must stay as it was");
        }
    }
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn players_equal_the_library_forward_backward_and_seeking() {
    let bytes = packed();
    let rust_stream = Stream::from_bytes(bytes.clone(), StreamOptions::default()).expect("open");
    let mut rust = Player::new(&rust_stream);
    let s = open(&bytes);
    let p = player(s);
    // The player keeps the stream alive after its handle is freed.
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
    let bones = rust_stream.meta().num_bones();
    let mut out = vec![CsTransform::default(); bones];
    let mut step = CsAdvance::default();
    let mut ready = 0;
    let script: Vec<(&str, f64)> = (0..40)
        .map(|_| ("advance", 1.0 / 30.0))
        .chain([("rate", -1.5)])
        .chain((0..30).map(|_| ("advance", 1.0 / 60.0)))
        .chain([
            ("seek", 3.2),
            ("advance", 0.05),
            ("seek", 0.4),
            ("rate", 2.0),
        ])
        .chain((0..10).map(|_| ("advance", 1.0 / 30.0)))
        .chain([("loop", 1.0)])
        .chain((0..40).map(|_| ("advance", 1.0 / 10.0)))
        .collect();
    for (what, value) in script {
        // SAFETY: `step`, `ready` and `out` are live locals of the right
        // types and length; `p` is checked by the ABI.
        unsafe {
            match what {
                "advance" => {
                    let a = rust.advance(value).expect("advance");
                    assert_eq!(cs_player_advance(p, value, &mut step), CsStatus::Ok);
                    assert_eq!(step.time, a.time);
                    assert_eq!(step.root_delta, a.root_delta.to_array());
                    assert_eq!(step.loops, a.loops);
                    assert_eq!(step.ready, 1);
                }
                "seek" => {
                    assert!(rust.seek(value).expect("seek"));
                    assert_eq!(cs_player_seek(p, value, &mut ready), CsStatus::Ok);
                    assert_eq!(ready, 1);
                }
                "rate" => {
                    rust.set_rate(value);
                    assert_eq!(cs_player_set_rate(p, value), CsStatus::Ok);
                }
                _ => {
                    rust = rust.with_loop_mode(cinestream::LoopMode::Wrap);
                    assert_eq!(cs_player_set_loop_mode(p, CS_LOOP_WRAP), CsStatus::Ok);
                }
            }
            assert_eq!(
                cs_player_pose(p, out.as_mut_ptr(), out.len(), null(), 0),
                CsStatus::Ok
            );
        }
        for (b, (got, want)) in out.iter().zip(rust.pose()).enumerate() {
            assert_eq!(bits(got), rust_bits(want), "{what} {value} bone {b}");
        }
    }
    let mut state = CsPlayerState::default();
    // SAFETY: `state` is a live, writable CsPlayerState.
    assert_eq!(unsafe { cs_player_state(p, &mut state) }, CsStatus::Ok);
    assert_eq!((state.time, state.rate), (rust.time(), rust.rate()));
    assert_eq!(state.loop_mode, CS_LOOP_WRAP);
    assert_eq!(cs_player_free(p), CsStatus::Ok);
}

#[test]
fn skeleton_names_parents_and_lookup() {
    let bytes = packed();
    let rust = Stream::from_bytes(bytes.clone(), StreamOptions::default()).expect("open");
    let s = open(&bytes);
    let bones = rust.meta().skeleton.bones();
    let mut parents = vec![0i32; bones.len()];
    // SAFETY: `parents` holds one entry per bone.
    assert_eq!(
        unsafe { cs_stream_bone_parents(s, parents.as_mut_ptr(), parents.len()) },
        CsStatus::Ok
    );
    for (i, bone) in bones.iter().enumerate() {
        assert_eq!(parents[i], bone.parent.map_or(-1, |p| p as i32));
        let mut buf = [0 as c_char; 128];
        let mut len = 0usize;
        let mut found = -2;
        // SAFETY: `buf` holds 128 bytes, `len` and `found` are live locals;
        // the name is a NUL-terminated copy.
        unsafe {
            assert_eq!(
                cs_stream_bone_name(s, i as u32, buf.as_mut_ptr(), buf.len(), &mut len),
                CsStatus::Ok
            );
            assert_eq!(
                CStr::from_ptr(buf.as_ptr()).to_str().expect("utf-8"),
                bone.name
            );
            assert_eq!(len, bone.name.len());
            let name = std::ffi::CString::new(bone.name.clone()).expect("no NUL");
            assert_eq!(
                cs_stream_find_bone(s, name.as_ptr(), &mut found),
                CsStatus::Ok
            );
        }
        assert_eq!(bones[found as usize].name, bone.name);
    }
    let mut found = 0;
    // SAFETY: a NUL-terminated literal and a live local.
    assert_eq!(
        unsafe { cs_stream_find_bone(s, c"no such bone".as_ptr(), &mut found) },
        CsStatus::Ok
    );
    assert_eq!(found, -1);
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn float_tracks_names_kinds_components_and_offsets() {
    let clip = source_clip();
    let tracks = clip.float_tracks();
    assert!(
        tracks.len() > 2,
        "the clip has faces and a camera: {} float tracks",
        tracks.len()
    );
    let s = open(&packed());
    let mut info = CsClipInfo::default();
    // SAFETY: `info` is a live, writable CsClipInfo.
    assert_eq!(unsafe { cs_stream_info(s, &mut info) }, CsStatus::Ok);
    assert_eq!(info.float_track_count as usize, tracks.len());
    // Every sample's values through the ABI, to find each track's keys at
    // the offset the ABI gives.
    let mut values = vec![vec![0f32; info.float_value_count as usize]; clip.num_samples()];
    for (k, row) in values.iter_mut().enumerate() {
        let time = k as f64 / f64::from(clip.sample_rate());
        // SAFETY: `row` holds `float_value_count` floats.
        let status = unsafe { cs_stream_sample_floats(s, time, row.as_mut_ptr(), row.len()) };
        assert_eq!(status, CsStatus::Ok, "{}", last_error());
    }
    // Offsets counted here from the source's component counts.
    let mut offset = 0u32;
    for (i, track) in tracks.iter().enumerate() {
        let mut buf = [0 as c_char; 128];
        let mut len = 0usize;
        let mut float = CsFloatTrackInfo::default();
        let mut found = -2;
        // SAFETY: `buf` holds 128 bytes, the others are live locals; the
        // name looked up is a NUL-terminated copy.
        unsafe {
            assert_eq!(
                cs_stream_float_track_name(s, i as u32, buf.as_mut_ptr(), buf.len(), &mut len),
                CsStatus::Ok
            );
            assert_eq!(CStr::from_ptr(buf.as_ptr()).to_str(), Ok(track.name()));
            assert_eq!(len, track.name().len());
            assert_eq!(
                cs_stream_float_track_info(s, i as u32, &mut float),
                CsStatus::Ok
            );
            let name = std::ffi::CString::new(track.name()).expect("no NUL");
            assert_eq!(
                cs_stream_find_float_track(s, name.as_ptr(), &mut found),
                CsStatus::Ok
            );
        }
        assert_eq!(found, i as i32, "{}", track.name());
        let kind = match track.kind() {
            FloatKind::MorphWeight { .. } => CS_FLOAT_KIND_MORPH_WEIGHT,
            FloatKind::FieldOfView => CS_FLOAT_KIND_FIELD_OF_VIEW,
            _ => CS_FLOAT_KIND_GENERIC,
        };
        assert_eq!(
            float,
            CsFloatTrackInfo {
                kind,
                components: track.components() as u32,
                offset,
                precision: track.precision(),
            },
            "{}",
            track.name()
        );
        // The values at that offset are this track's keys, within its
        // precision (with a rounding margin).
        for (k, row) in values.iter().enumerate() {
            for (c, &key) in track.sample(k).iter().enumerate() {
                let got = row[offset as usize + c];
                assert!(
                    (got - key).abs() <= track.precision() * 1.001,
                    "{} component {c} at sample {k}: {got} against the key {key}",
                    track.name()
                );
            }
        }
        offset += track.components() as u32;
    }
    assert_eq!(offset, info.float_value_count);
    let kinds = tracks.iter().map(|t| t.kind().name()).collect::<Vec<_>>();
    assert!(
        kinds.contains(&"morph weight") && kinds.contains(&"field of view"),
        "{kinds:?}"
    );

    // Misuse: an index past the tracks, a short name buffer, NULLs.
    let n = tracks.len() as u32;
    let mut short = [0 as c_char; 3];
    let mut len = 0usize;
    let mut float = CsFloatTrackInfo::default();
    let mut found = 0;
    // SAFETY: every pointer is to a live local at least as long as the
    // length passed, or NULL on purpose (refused before any use).
    unsafe {
        let status = cs_stream_float_track_info(s, n, &mut float);
        refused(
            status,
            CsStatus::InvalidArgument,
            "cs_stream_float_track_info",
            &format!("float track {n} does not exist: the clip has {n} float tracks"),
        );
        let status = cs_stream_float_track_name(s, n, short.as_mut_ptr(), 3, &mut len);
        refused(
            status,
            CsStatus::InvalidArgument,
            "cs_stream_float_track_name",
            "does not exist",
        );
        let status = cs_stream_float_track_name(s, 0, short.as_mut_ptr(), 3, &mut len);
        refused(
            status,
            CsStatus::BufferTooSmall,
            "cs_stream_float_track_name",
            "needed",
        );
        assert_eq!(len, tracks[0].name().len(), "the length, also when short");
        assert_eq!(
            CStr::from_ptr(short.as_ptr()).to_bytes(),
            &tracks[0].name().as_bytes()[..2],
            "as much as fits, NUL-terminated"
        );
        let status = cs_stream_float_track_name(s, 0, null_mut(), 3, &mut len);
        refused(
            status,
            CsStatus::Null,
            "cs_stream_float_track_name",
            "buf is NULL",
        );
        let status = cs_stream_float_track_name(s, 0, short.as_mut_ptr(), 3, null_mut());
        refused(
            status,
            CsStatus::Null,
            "cs_stream_float_track_name",
            "length is NULL",
        );
        let status = cs_stream_float_track_info(s, 0, null_mut());
        refused(
            status,
            CsStatus::Null,
            "cs_stream_float_track_info",
            "out is NULL",
        );
        let status = cs_stream_find_float_track(s, null(), &mut found);
        refused(
            status,
            CsStatus::Null,
            "cs_stream_find_float_track",
            "name is NULL",
        );
        let status = cs_stream_find_float_track(s, c"Face/blink".as_ptr(), null_mut());
        refused(
            status,
            CsStatus::Null,
            "cs_stream_find_float_track",
            "track is NULL",
        );
        assert_eq!(
            cs_stream_find_float_track(s, c"no such track".as_ptr(), &mut found),
            CsStatus::Ok
        );
        assert_eq!(found, -1);
    }
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

/// Every function that takes a stream, called with `s` and otherwise
/// valid arguments: its name and status.
fn stream_calls(s: *mut CsStream) -> Vec<(&'static str, CsStatus, String)> {
    let mut info = CsClipInfo::default();
    let mut out = vec![CsTransform::default(); 512];
    let mut parents = vec![0i32; 512];
    let mut buf = [0 as c_char; 64];
    let mut len = 0usize;
    let mut found = 0i32;
    let mut float_info = CsFloatTrackInfo::default();
    let mut quality = 0u32;
    let mut one = CsTransform::default();
    let mut floats = vec![0f32; 512];
    let mut stats = CsStreamStats::default();
    let mut requests = [CsPageRequest::default(); 8];
    let mut count = 0usize;
    let mut p = null_mut();
    let po = CsPlayerOptions {
        loop_mode: CS_LOOP_CLIP,
        rate: 1.0,
        refine_frames: 0,
    };
    // SAFETY: every pointer is to a live local of the length passed; the
    // handle `s` is what is under test, checked by the ABI before any use.
    unsafe {
        vec![
            c("cs_stream_info", cs_stream_info(s, &mut info)),
            c(
                "cs_stream_bone_parents",
                cs_stream_bone_parents(s, parents.as_mut_ptr(), parents.len()),
            ),
            c(
                "cs_stream_bone_name",
                cs_stream_bone_name(s, 0, buf.as_mut_ptr(), buf.len(), &mut len),
            ),
            c(
                "cs_stream_find_bone",
                cs_stream_find_bone(s, c"root".as_ptr(), &mut found),
            ),
            c(
                "cs_stream_float_track_name",
                cs_stream_float_track_name(s, 0, buf.as_mut_ptr(), buf.len(), &mut len),
            ),
            c(
                "cs_stream_float_track_info",
                cs_stream_float_track_info(s, 0, &mut float_info),
            ),
            c(
                "cs_stream_find_float_track",
                cs_stream_find_float_track(s, c"Face/blink".as_ptr(), &mut found),
            ),
            c(
                "cs_stream_sample",
                cs_stream_sample(s, 0.5, out.as_mut_ptr(), out.len(), null(), 0, &mut quality),
            ),
            c(
                "cs_stream_sample_bone",
                cs_stream_sample_bone(s, 0, 0.5, &mut one),
            ),
            c(
                "cs_stream_sample_floats",
                cs_stream_sample_floats(s, 0.5, floats.as_mut_ptr(), floats.len()),
            ),
            c("cs_stream_preload", cs_stream_preload(s, 0.5)),
            c("cs_stream_stats", cs_stream_stats(s, &mut stats)),
            c("cs_stream_reset_stats", cs_stream_reset_stats(s)),
            c(
                "cs_stream_wanted_pages",
                cs_stream_wanted_pages(s, requests.as_mut_ptr(), requests.len(), &mut count),
            ),
            c("cs_player_new", cs_player_new(s, &po, &mut p)),
            c("cs_stream_free", cs_stream_free(s)),
        ]
    }
}

/// Every function that takes a player, called with `p` and otherwise
/// valid arguments.
fn player_calls(p: *mut CsPlayer) -> Vec<(&'static str, CsStatus, String)> {
    let mut out = vec![CsTransform::default(); 512];
    let mut step = CsAdvance::default();
    let mut ready = 0u32;
    let mut floats = vec![0f32; 512];
    let mut state = CsPlayerState::default();
    // SAFETY: every pointer is to a live local of the length passed; the
    // handle `p` is what is under test, checked by the ABI before any use.
    unsafe {
        vec![
            c("cs_player_set_rate", cs_player_set_rate(p, 1.0)),
            c(
                "cs_player_set_loop_mode",
                cs_player_set_loop_mode(p, CS_LOOP_WRAP),
            ),
            c("cs_player_seek", cs_player_seek(p, 0.5, &mut ready)),
            c("cs_player_advance", cs_player_advance(p, 0.1, &mut step)),
            c(
                "cs_player_pose",
                cs_player_pose(p, out.as_mut_ptr(), out.len(), null(), 0),
            ),
            c(
                "cs_player_floats",
                cs_player_floats(p, floats.as_mut_ptr(), floats.len()),
            ),
            c("cs_player_state", cs_player_state(p, &mut state)),
            c("cs_player_free", cs_player_free(p)),
        ]
    }
}

#[test]
fn every_function_refuses_null_freed_wrong_typed_and_made_up_handles() {
    let bytes = packed();
    // The calls on a live stream work (the last one frees it).
    let s = open(&bytes);
    for (name, status, message) in stream_calls(s) {
        assert_eq!(status, CsStatus::Ok, "{name}: {message}");
    }
    // Freed: every stream function, the free too (a double free).
    for (name, status, message) in stream_calls(s) {
        refused_with(
            status,
            &message,
            CsStatus::InvalidHandle,
            name,
            "not a live handle",
        );
    }
    // NULL.
    for (name, status, message) in stream_calls(null_mut()) {
        refused_with(status, &message, CsStatus::Null, name, "stream is NULL");
    }
    // Made up: never dereferenced (these would crash if they were).
    // Live handles are multiples of 8 (other tests make them meanwhile);
    // these never are.
    for fake in [0xdead_beef_usize, 1, usize::MAX, 0x1004] {
        for (name, status, message) in stream_calls(fake as *mut CsStream) {
            refused_with(
                status,
                &message,
                CsStatus::InvalidHandle,
                name,
                "not a live handle",
            );
        }
        for (name, status, message) in player_calls(fake as *mut CsPlayer) {
            refused_with(
                status,
                &message,
                CsStatus::InvalidHandle,
                name,
                "not a live handle",
            );
        }
    }
    let s = open(&bytes);
    let p = player(s);
    // Wrong type, both ways, and the handles still work afterwards.
    for (name, status, message) in stream_calls(p.cast()) {
        refused_with(
            status,
            &message,
            CsStatus::WrongHandleType,
            name,
            "is a player, not a stream",
        );
    }
    for (name, status, message) in player_calls(s.cast()) {
        refused_with(
            status,
            &message,
            CsStatus::WrongHandleType,
            name,
            "is a stream, not a player",
        );
    }
    for (name, status, message) in player_calls(p) {
        assert_eq!(status, CsStatus::Ok, "{name}: {message}");
    }
    for (name, status, message) in player_calls(p) {
        refused_with(
            status,
            &message,
            CsStatus::InvalidHandle,
            name,
            "not a live handle",
        );
    }
    for (name, status, message) in player_calls(null_mut()) {
        refused_with(status, &message, CsStatus::Null, name, "player is NULL");
    }
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn null_out_pointers_and_null_arrays_are_errors() {
    let bytes = packed();
    let s = open(&bytes);
    let p = player(s);
    let o = options();
    let po = CsPlayerOptions {
        loop_mode: CS_LOOP_CLIP,
        rate: 1.0,
        refine_frames: 0,
    };
    let mut out = vec![CsTransform::default(); 512];
    let mut q = 0u32;
    let mut len = 0usize;
    let mut buf = [0 as c_char; 8];
    let mut handle = null_mut();
    let mut player_handle = null_mut();
    let mut found = 0;
    // SAFETY: every non-null pointer is to a live local of the length
    // passed; the NULL ones are what is under test, refused by the ABI.
    let cases = unsafe {
        vec![
            (
                c(
                    "cs_stream_options_default",
                    cs_stream_options_default(null_mut()),
                ),
                "out",
            ),
            (
                c(
                    "cs_player_options_default",
                    cs_player_options_default(null_mut()),
                ),
                "out",
            ),
            (
                c(
                    "cs_stream_open_file",
                    cs_stream_open_file(null(), &o, &mut handle),
                ),
                "path",
            ),
            (
                c(
                    "cs_stream_open_file",
                    cs_stream_open_file(c"x.cine".as_ptr(), null(), &mut handle),
                ),
                "options",
            ),
            (
                c(
                    "cs_stream_open_file",
                    cs_stream_open_file(c"x.cine".as_ptr(), &o, null_mut()),
                ),
                "out",
            ),
            (
                c(
                    "cs_stream_open_memory",
                    cs_stream_open_memory(null(), 10, &o, &mut handle),
                ),
                "bytes",
            ),
            (
                c(
                    "cs_stream_open_memory",
                    cs_stream_open_memory(bytes.as_ptr(), bytes.len(), null(), &mut handle),
                ),
                "options",
            ),
            (
                c(
                    "cs_stream_open_memory",
                    cs_stream_open_memory(bytes.as_ptr(), bytes.len(), &o, null_mut()),
                ),
                "out",
            ),
            (c("cs_stream_info", cs_stream_info(s, null_mut())), "out"),
            (
                c(
                    "cs_stream_bone_parents",
                    cs_stream_bone_parents(s, null_mut(), 100),
                ),
                "parents",
            ),
            (
                c(
                    "cs_stream_bone_name",
                    cs_stream_bone_name(s, 0, null_mut(), 8, &mut len),
                ),
                "buf",
            ),
            (
                c(
                    "cs_stream_bone_name",
                    cs_stream_bone_name(s, 0, buf.as_mut_ptr(), buf.len(), null_mut()),
                ),
                "length",
            ),
            (
                c(
                    "cs_stream_find_bone",
                    cs_stream_find_bone(s, null(), &mut found),
                ),
                "name",
            ),
            (
                c(
                    "cs_stream_find_bone",
                    cs_stream_find_bone(s, c"a".as_ptr(), null_mut()),
                ),
                "bone",
            ),
            (
                c(
                    "cs_stream_sample",
                    cs_stream_sample(s, 0.0, null_mut(), 512, null(), 0, &mut q),
                ),
                "out",
            ),
            (
                c(
                    "cs_stream_sample",
                    cs_stream_sample(s, 0.0, out.as_mut_ptr(), 512, null(), 0, null_mut()),
                ),
                "quality",
            ),
            (
                c(
                    "cs_stream_sample",
                    cs_stream_sample(s, 0.0, out.as_mut_ptr(), 512, null(), 3, &mut q),
                ),
                "remap is NULL",
            ),
            (
                c(
                    "cs_stream_sample_bone",
                    cs_stream_sample_bone(s, 0, 0.0, null_mut()),
                ),
                "out",
            ),
            (
                c(
                    "cs_stream_sample_floats",
                    cs_stream_sample_floats(s, 0.0, null_mut(), 4),
                ),
                "values",
            ),
            (c("cs_stream_stats", cs_stream_stats(s, null_mut())), "out"),
            (
                c(
                    "cs_player_new",
                    cs_player_new(s, null(), &mut player_handle),
                ),
                "options",
            ),
            (c("cs_player_new", cs_player_new(s, &po, null_mut())), "out"),
            (
                c("cs_player_seek", cs_player_seek(p, 0.0, null_mut())),
                "ready",
            ),
            (
                c("cs_player_advance", cs_player_advance(p, 0.0, null_mut())),
                "out",
            ),
            (
                c(
                    "cs_player_pose",
                    cs_player_pose(p, null_mut(), 512, null(), 0),
                ),
                "out",
            ),
            (
                c(
                    "cs_player_pose",
                    cs_player_pose(p, out.as_mut_ptr(), 512, null(), 1),
                ),
                "remap is NULL",
            ),
            (
                c("cs_player_floats", cs_player_floats(p, null_mut(), 4)),
                "values",
            ),
            (c("cs_player_state", cs_player_state(p, null_mut())), "out"),
            (
                c(
                    "cs_last_error_copy",
                    cs_last_error_copy(null_mut(), 8, &mut len),
                ),
                "buf",
            ),
            (
                c(
                    "cs_last_error_copy",
                    cs_last_error_copy(buf.as_mut_ptr(), 8, null_mut()),
                ),
                "length",
            ),
        ]
    };
    for ((name, status, message), what) in cases {
        refused_with(status, &message, CsStatus::Null, name, what);
    }
    assert!(
        handle.is_null() && player_handle.is_null(),
        "nothing opened"
    );
    assert_eq!(cs_player_free(p), CsStatus::Ok);
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn too_small_arrays_and_bad_arguments_are_errors() {
    let bytes = include_bytes!("../../tests/data/golden/v2-floats.cine");
    let s = open(bytes);
    let p = player(s);
    let bones = bone_count(s);
    let mut info = CsClipInfo::default();
    // SAFETY: `info` is a live, writable CsClipInfo.
    assert_eq!(unsafe { cs_stream_info(s, &mut info) }, CsStatus::Ok);
    assert!(
        info.float_value_count > 0,
        "the golden file has float tracks"
    );
    let floats = info.float_value_count as usize;
    let mut out = vec![CsTransform::default(); bones];
    let mut parents = vec![0; bones];
    let mut values = vec![0f32; floats];
    let mut q = 0;
    let mut name = [0 as c_char; 2];
    let mut len = 0usize;
    let mut one = CsTransform::default();
    let mut ready = 0;
    let mut step = CsAdvance::default();
    // SAFETY: every pointer is to a live local at least as long as the
    // (deliberately short) length passed.
    let cases = unsafe {
        vec![
            (
                c(
                    "cs_stream_sample",
                    cs_stream_sample(s, 0.1, out.as_mut_ptr(), bones - 1, null(), 0, &mut q),
                ),
                (CsStatus::BufferTooSmall, "bones"),
            ),
            (
                c(
                    "cs_stream_sample",
                    cs_stream_sample(s, 0.1, out.as_mut_ptr(), 0, null(), 0, &mut q),
                ),
                (CsStatus::BufferTooSmall, "bones"),
            ),
            (
                c(
                    "cs_player_pose",
                    cs_player_pose(p, out.as_mut_ptr(), bones - 1, null(), 0),
                ),
                (CsStatus::BufferTooSmall, "bones"),
            ),
            (
                c(
                    "cs_stream_bone_parents",
                    cs_stream_bone_parents(s, parents.as_mut_ptr(), bones - 1),
                ),
                (CsStatus::BufferTooSmall, "bones"),
            ),
            (
                c(
                    "cs_stream_sample_floats",
                    cs_stream_sample_floats(s, 0.1, values.as_mut_ptr(), floats - 1),
                ),
                (CsStatus::BufferTooSmall, "floats"),
            ),
            (
                c(
                    "cs_player_floats",
                    cs_player_floats(p, values.as_mut_ptr(), floats - 1),
                ),
                (CsStatus::BufferTooSmall, "floats"),
            ),
            (
                c(
                    "cs_stream_bone_name",
                    cs_stream_bone_name(s, 0, name.as_mut_ptr(), name.len(), &mut len),
                ),
                (CsStatus::BufferTooSmall, "needed"),
            ),
            (
                c(
                    "cs_stream_bone_name",
                    cs_stream_bone_name(s, bones as u32, name.as_mut_ptr(), name.len(), &mut len),
                ),
                (CsStatus::InvalidArgument, "does not exist"),
            ),
            (
                c(
                    "cs_stream_sample_bone",
                    cs_stream_sample_bone(s, bones as u32, 0.1, &mut one),
                ),
                (CsStatus::InvalidArgument, "does not exist"),
            ),
            (
                c(
                    "cs_stream_sample",
                    cs_stream_sample(s, f64::NAN, out.as_mut_ptr(), bones, null(), 0, &mut q),
                ),
                (CsStatus::InvalidArgument, "time is NaN"),
            ),
            (
                c(
                    "cs_stream_sample_bone",
                    cs_stream_sample_bone(s, 0, f64::INFINITY, &mut one),
                ),
                (CsStatus::InvalidArgument, "time is inf"),
            ),
            (
                c("cs_stream_preload", cs_stream_preload(s, f64::NEG_INFINITY)),
                (CsStatus::InvalidArgument, "time"),
            ),
            (
                c("cs_player_seek", cs_player_seek(p, f64::NAN, &mut ready)),
                (CsStatus::InvalidArgument, "time"),
            ),
            (
                c(
                    "cs_player_advance",
                    cs_player_advance(p, f64::NAN, &mut step),
                ),
                (CsStatus::InvalidArgument, "dt"),
            ),
            (
                c("cs_player_set_rate", cs_player_set_rate(p, f64::INFINITY)),
                (CsStatus::InvalidArgument, "rate"),
            ),
            (
                c("cs_player_set_loop_mode", cs_player_set_loop_mode(p, 2)),
                (CsStatus::InvalidArgument, "CS_LOOP_CLAMP"),
            ),
        ]
    };
    for ((name, status, message), (expected, words)) in cases {
        refused_with(status, &message, expected, name, words);
    }
    // The name's length comes back with a short buffer, and what fits.
    assert!(len > 1);
    assert_eq!(name[1], 0);
    // The last error copied whole, and cut with a short buffer.
    let message = last_error();
    let mut buf = vec![0 as c_char; 256];
    let mut short = [0 as c_char; 4];
    // SAFETY: `buf` and `short` hold the lengths passed; `len` is live.
    unsafe {
        assert_eq!(
            cs_last_error_copy(buf.as_mut_ptr(), buf.len(), &mut len),
            CsStatus::Ok
        );
        assert_eq!(CStr::from_ptr(buf.as_ptr()).to_string_lossy(), message);
        assert_eq!(
            cs_last_error_copy(short.as_mut_ptr(), short.len(), &mut len),
            CsStatus::BufferTooSmall
        );
        assert_eq!(
            CStr::from_ptr(short.as_ptr()).to_bytes(),
            &message.as_bytes()[..3]
        );
    }
    assert_eq!(len, message.len());
    assert_eq!(last_error(), message, "the copy keeps the message");
    assert_eq!(cs_player_free(p), CsStatus::Ok);
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn bad_remap_tables_are_errors_and_write_nothing() {
    let bytes = packed();
    let s = open(&bytes);
    let p = player(s);
    let bones = bone_count(s);
    let n = bones as i32;
    let identity: Vec<i32> = (0..n).collect();
    let mut duplicate = identity.clone();
    duplicate[3] = 2;
    let mut past = identity.clone();
    past[5] = n;
    let mut negative = identity.clone();
    negative[1] = -2;
    let short: Vec<i32> = (0..n - 1).collect();
    let long: Vec<i32> = (0..n + 1).map(|i| if i < n { i } else { -1 }).collect();
    let cases: Vec<(&[i32], usize, &str)> = vec![
        (&duplicate, bones, "another clip bone maps there too"),
        (&past, bones, "neither -1 nor an index in out"),
        (&negative, bones, "neither -1 nor an index in out"),
        (&identity, bones - 1, "neither -1 nor an index in out"),
        (&short, bones, "entries, the clip has"),
        (&long, bones + 1, "entries, the clip has"),
    ];
    let sentinel = CsTransform {
        rotation: [5.0; 4],
        translation: [5.0; 3],
        scale: [5.0; 3],
    };
    for (map, out_len, words) in cases {
        let mut out = vec![sentinel; bones + 1];
        let mut q = 0;
        // SAFETY: `out` holds bones + 1 >= out_len transforms, `map` its own
        // length; `q` is live.
        let status = unsafe {
            cs_stream_sample(
                s,
                0.3,
                out.as_mut_ptr(),
                out_len,
                map.as_ptr(),
                map.len(),
                &mut q,
            )
        };
        refused(status, CsStatus::BadRemap, "cs_stream_sample", words);
        // SAFETY: as above.
        let status =
            unsafe { cs_player_pose(p, out.as_mut_ptr(), out_len, map.as_ptr(), map.len()) };
        refused(status, CsStatus::BadRemap, "cs_player_pose", words);
        assert!(
            out.iter().all(|t| *t == sentinel),
            "nothing written on a bad remap"
        );
    }
    assert_eq!(cs_player_free(p), CsStatus::Ok);
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn bad_file_bytes_paths_and_options_are_errors() {
    let good = packed();
    let o = options();
    let mut broken: Vec<(String, Vec<u8>)> = vec![
        ("empty".into(), Vec::new()),
        ("text".into(), b"BVH HIERARCHY ROOT Hips".to_vec()),
        ("half".into(), good[..good.len() / 2].to_vec()),
        ("header".into(), good[..20].to_vec()),
    ];
    for at in [0, 9, 40, 200] {
        let mut b = good.clone();
        b[at] ^= 0x5a;
        broken.push((format!("flipped byte {at}"), b));
    }
    let mut opened = 0;
    for (what, bytes) in &broken {
        let mut s = null_mut();
        // An empty slice still needs a non-null pointer.
        let ptr = if bytes.is_empty() {
            good.as_ptr()
        } else {
            bytes.as_ptr()
        };
        // SAFETY: `ptr` points to at least `bytes.len()` readable bytes.
        let status = unsafe { cs_stream_open_memory(ptr, bytes.len(), &o, &mut s) };
        if status == CsStatus::Ok {
            // A flip inside a page passes the open (pages are checked when
            // loaded): sampling every page then fails with BAD_FILE.
            opened += 1;
            let mut info = CsClipInfo::default();
            let mut out = vec![CsTransform::default(); 512];
            let mut q = 0;
            // SAFETY: live locals of the lengths passed.
            unsafe { assert_eq!(cs_stream_info(s, &mut info), CsStatus::Ok) };
            let failed = (0..=40).any(|i| {
                let t = info.duration * f64::from(i) / 40.0;
                // SAFETY: live locals of the lengths passed.
                let status = unsafe {
                    cs_stream_sample(s, t, out.as_mut_ptr(), out.len(), null(), 0, &mut q)
                };
                status == CsStatus::BadFile
                    && last_error().starts_with("cs_stream_sample: container")
            });
            assert!(failed, "{what}: opened, so a page must fail its checksum");
            assert_eq!(cs_stream_free(s), CsStatus::Ok);
        } else {
            refused(
                status,
                CsStatus::BadFile,
                "cs_stream_open_memory",
                "container",
            );
            assert!(s.is_null(), "{what}: no handle on failure");
        }
    }
    assert!(opened <= 2, "most corruptions fail at open");
    // A path that does not exist, and one that is not UTF-8.
    let mut s = null_mut();
    // SAFETY: NUL-terminated literals and live locals.
    unsafe {
        let status = cs_stream_open_file(c"/nonexistent/dir/clip.cine".as_ptr(), &o, &mut s);
        refused(
            status,
            CsStatus::Io,
            "cs_stream_open_file",
            "/nonexistent/dir/clip.cine",
        );
        let status = cs_stream_open_file(c"\xff\xfe.cine".as_ptr(), &o, &mut s);
        refused(
            status,
            CsStatus::InvalidArgument,
            "cs_stream_open_file",
            "path is not UTF-8",
        );
    }
    // A file on disk that works, and a bad one.
    let dir = std::env::temp_dir().join(format!("cinestream-ffi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("clip.cine");
    std::fs::write(&path, &good).expect("write");
    let c_path = std::ffi::CString::new(path.to_str().expect("utf-8")).expect("no NUL");
    // SAFETY: a NUL-terminated path and live locals.
    unsafe {
        assert_eq!(
            cs_stream_open_file(c_path.as_ptr(), &o, &mut s),
            CsStatus::Ok
        );
        assert_eq!(cs_stream_free(s), CsStatus::Ok);
        // The same clip packed without its skeleton: refused alone, opened
        // with the file that holds it, the same poses.
        let (compressed, _) =
            compress(&source_clip(), &CompressSettings::default()).expect("compress");
        let (lean, _) = encode_stream(
            &compressed,
            &WriteOptions::default()
                .with_page_bytes(4096)
                .with_skeleton_by_reference(true),
        )
        .expect("encode");
        let lean_path = dir.join("lean.cine");
        std::fs::write(&lean_path, &lean).expect("write");
        let c_lean = std::ffi::CString::new(lean_path.to_str().expect("utf-8")).expect("no NUL");
        let status = cs_stream_open_file(c_lean.as_ptr(), &o, &mut s);
        refused(status, CsStatus::BadFile, "cs_stream_open_file", "skeleton");
        let status = cs_stream_open_file_with_skeleton(c_lean.as_ptr(), null(), &o, &mut s);
        refused(
            status,
            CsStatus::Null,
            "cs_stream_open_file_with_skeleton",
            "skeleton_path is NULL",
        );
        let mut with = null_mut();
        assert_eq!(
            cs_stream_open_file_with_skeleton(c_lean.as_ptr(), c_path.as_ptr(), &o, &mut with),
            CsStatus::Ok,
            "{}",
            last_error()
        );
        let mut stored = null_mut();
        assert_eq!(
            cs_stream_open_file(c_path.as_ptr(), &o, &mut stored),
            CsStatus::Ok
        );
        let bones = source_clip().num_bones();
        let mut a = vec![CsTransform::default(); bones];
        let mut b = vec![CsTransform::default(); bones];
        let mut quality = 0u32;
        for time in [0.0, 0.4, 1.1] {
            assert_eq!(
                cs_stream_sample(with, time, a.as_mut_ptr(), bones, null(), 0, &mut quality),
                CsStatus::Ok
            );
            assert_eq!(
                cs_stream_sample(stored, time, b.as_mut_ptr(), bones, null(), 0, &mut quality),
                CsStatus::Ok
            );
            let same = a.iter().zip(&b).all(|(a, b)| bits(a) == bits(b));
            assert!(same, "pose at {time}");
        }
        assert_eq!(cs_stream_free(with), CsStatus::Ok);
        assert_eq!(cs_stream_free(stored), CsStatus::Ok);
        std::fs::write(
            &path,
            b"not a cine file at all, but long enough to read a header from it",
        )
        .expect("write");
        let status = cs_stream_open_file(c_path.as_ptr(), &o, &mut s);
        refused(
            status,
            CsStatus::BadFile,
            "cs_stream_open_file",
            "not a cinestream file",
        );
    }
    std::fs::remove_dir_all(&dir).ok();
    // Options the library refuses, each named.
    let mut bad = Vec::new();
    let mut policy = o;
    policy.missing_page = 7;
    bad.push((policy, "missing_page is 7"));
    let mut lookahead = o;
    lookahead.lookahead_seconds = f64::NAN;
    bad.push((lookahead, "lookahead_seconds"));
    let mut tick = o;
    tick.tick_us = 5;
    bad.push((tick, "tick"));
    let mut budget = o;
    budget.budget_bytes = 16;
    bad.push((budget, "budget"));
    let mut preview = o;
    preview.missing_page = CS_MISSING_PAGE_PREVIEW;
    bad.push((preview, "preview"));
    for (options, words) in bad {
        let mut s = null_mut();
        // SAFETY: `good` is readable for its length; live locals.
        let status = unsafe { cs_stream_open_memory(good.as_ptr(), good.len(), &options, &mut s) };
        refused(
            status,
            CsStatus::InvalidOptions,
            "cs_stream_open_memory",
            words,
        );
        assert!(s.is_null());
    }
    // Player options.
    let s = open(&good);
    let mut p = null_mut();
    for (po, words) in [
        (
            CsPlayerOptions {
                loop_mode: 5,
                rate: 1.0,
                refine_frames: 0,
            },
            "options->loop_mode",
        ),
        (
            CsPlayerOptions {
                loop_mode: CS_LOOP_CLIP,
                rate: f64::NAN,
                refine_frames: 0,
            },
            "options->rate",
        ),
    ] {
        // SAFETY: live locals.
        let status = unsafe { cs_player_new(s, &po, &mut p) };
        refused(status, CsStatus::InvalidArgument, "cs_player_new", words);
        assert!(p.is_null());
    }
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn not_ready_and_preview_policies_report_through_the_abi() {
    // A file with a preview tier: with policy PREVIEW and no prefetch, a
    // pose before any page is resident comes from the tier, and says so.
    let bytes = include_bytes!("../../tests/data/golden/v3-preview.cine");
    let mut o = options();
    o.prefetch = 0;
    o.missing_page = CS_MISSING_PAGE_PREVIEW;
    let mut s = null_mut();
    // SAFETY: `bytes` readable for its length; live locals.
    assert_eq!(
        unsafe { cs_stream_open_memory(bytes.as_ptr(), bytes.len(), &o, &mut s) },
        CsStatus::Ok
    );
    let bones = bone_count(s);
    let mut out = vec![CsTransform::default(); bones];
    let mut q = 9;
    // SAFETY: `out` holds `bones` transforms; `q` is live.
    assert_eq!(
        unsafe { cs_stream_sample(s, 0.2, out.as_mut_ptr(), bones, null(), 0, &mut q) },
        CsStatus::Ok
    );
    assert_eq!(q, CS_QUALITY_PREVIEW);
    let p = player(s);
    let mut step = CsAdvance::default();
    // SAFETY: `step` is live.
    assert_eq!(
        unsafe { cs_player_advance(p, 0.1, &mut step) },
        CsStatus::Ok
    );
    assert_eq!((step.ready, step.quality), (1, CS_QUALITY_PREVIEW));
    assert!(step.preview_bound_cm > 0.0);
    assert_eq!(cs_stream_preload(s, 0.2), CsStatus::Ok);
    // SAFETY: as above.
    assert_eq!(
        unsafe { cs_stream_sample(s, 0.2, out.as_mut_ptr(), bones, null(), 0, &mut q) },
        CsStatus::Ok
    );
    assert_eq!(q, CS_QUALITY_FULL);
    let mut stats = CsStreamStats::default();
    // SAFETY: `stats` is live.
    assert_eq!(unsafe { cs_stream_stats(s, &mut stats) }, CsStatus::Ok);
    assert!(
        stats.previews >= 2 && stats.page_loads >= 1 && stats.resident_bytes > 0,
        "{stats:?}"
    );
    assert_eq!(cs_player_free(p), CsStatus::Ok);
    assert_eq!(cs_stream_free(s), CsStatus::Ok);

    // NOT_READY without prefetch: the pose waits for a preload.
    let good = packed();
    o.missing_page = CS_MISSING_PAGE_NOT_READY;
    // SAFETY: `good` readable for its length; live locals.
    assert_eq!(
        unsafe { cs_stream_open_memory(good.as_ptr(), good.len(), &o, &mut s) },
        CsStatus::Ok
    );
    let bones = bone_count(s);
    let mut out = vec![CsTransform::default(); bones];
    // SAFETY: `out` holds `bones` transforms; `q` is live.
    let status = unsafe { cs_stream_sample(s, 1.0, out.as_mut_ptr(), bones, null(), 0, &mut q) };
    refused(
        status,
        CsStatus::NotReady,
        "cs_stream_sample",
        "not resident",
    );
    let p = player(s);
    let mut ready = 7;
    // SAFETY: `ready` is live.
    assert_eq!(unsafe { cs_player_seek(p, 1.0, &mut ready) }, CsStatus::Ok);
    assert_eq!(ready, 0);
    assert_eq!(cs_stream_preload(s, 1.0), CsStatus::Ok);
    // SAFETY: as above.
    unsafe {
        assert_eq!(cs_player_seek(p, 1.0, &mut ready), CsStatus::Ok);
        assert_eq!(ready, 1);
        assert_eq!(
            cs_stream_sample(s, 1.0, out.as_mut_ptr(), bones, null(), 0, &mut q),
            CsStatus::Ok
        );
    }
    assert_eq!(cs_stream_reset_stats(s), CsStatus::Ok);
    let mut stats = CsStreamStats::default();
    // SAFETY: `stats` is live.
    assert_eq!(unsafe { cs_stream_stats(s, &mut stats) }, CsStatus::Ok);
    assert_eq!((stats.stalls, stats.not_ready, stats.page_loads), (0, 0, 0));
    assert_eq!(cs_player_free(p), CsStatus::Ok);
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn the_last_error_is_per_thread_and_handles_cross_threads() {
    let s = open(&packed()) as usize;
    assert_eq!(cs_stream_free(null_mut()), CsStatus::Null);
    let here = last_error();
    let there = std::thread::spawn(move || {
        let p = player(s as *const CsStream);
        let mut step = CsAdvance::default();
        // SAFETY: `step` is live; the handles are registry numbers, valid
        // on any thread.
        assert_eq!(
            unsafe { cs_player_advance(p, 0.5, &mut step) },
            CsStatus::Ok
        );
        assert_eq!(cs_player_free(p), CsStatus::Ok);
        assert_eq!(cs_player_free(p), CsStatus::InvalidHandle);
        last_error()
    })
    .join()
    .expect("thread");
    assert!(there.starts_with("cs_player_free:"), "{there}");
    assert_eq!(last_error(), here, "another thread's failure is its own");
    assert_eq!(cs_stream_free(s as *mut CsStream), CsStatus::Ok);
}

#[test]
fn version_is_the_crate_version() {
    // SAFETY: cs_version returns a static NUL-terminated string.
    let v = unsafe { CStr::from_ptr(cs_version()) };
    assert_eq!(v.to_str().expect("utf-8"), env!("CARGO_PKG_VERSION"));
}

/// The file, its prefix and a host-driven stream over it (policy NOT_READY).
fn host_stream(file: &[u8]) -> *mut CsStream {
    let mut prefix_len = 0u64;
    let mut o = options();
    o.missing_page = CS_MISSING_PAGE_NOT_READY;
    let mut s = null_mut();
    // SAFETY: `file` is readable for its length (at least CS_HEADER_LEN
    // bytes), the prefix a sub-slice of it; live locals.
    unsafe {
        assert_eq!(
            cs_prefix_len(
                file.as_ptr(),
                CS_HEADER_LEN,
                file.len() as u64,
                &mut prefix_len
            ),
            CsStatus::Ok,
            "{}",
            last_error()
        );
        let prefix = &file[..prefix_len as usize];
        let status =
            cs_stream_open_host(prefix.as_ptr(), prefix.len(), file.len() as u64, &o, &mut s);
        assert_eq!(status, CsStatus::Ok, "{}", last_error());
    }
    s
}

#[test]
fn a_host_reads_the_pages_itself() {
    let file = packed();
    let rust = Stream::from_bytes(file.clone(), StreamOptions::default()).expect("open");
    let s = host_stream(&file);
    let bones = bone_count(s);
    let mut out = vec![CsTransform::default(); bones];
    let mut pose = vec![Transform::IDENTITY; bones];
    let mut q = 0;
    let mut requests = [CsPageRequest::default(); 64];
    let mut count = usize::MAX;
    let mut info = CsClipInfo::default();
    // SAFETY: every pointer is to a live local of the length passed; the
    // provided bytes are sub-slices of `file`.
    unsafe {
        assert_eq!(cs_stream_info(s, &mut info), CsStatus::Ok);
        assert!(info.page_count >= 2, "{info:?}");
        let status = cs_stream_sample(s, 2.0, out.as_mut_ptr(), bones, null(), 0, &mut q);
        refused(
            status,
            CsStatus::NotReady,
            "cs_stream_sample",
            "not resident",
        );
        // The page the sampler asked for comes first.
        assert_eq!(
            cs_stream_wanted_pages(s, requests.as_mut_ptr(), requests.len(), &mut count),
            CsStatus::Ok
        );
        assert!(count >= 1);
        for r in &requests[..count] {
            let bytes = &file[r.offset as usize..(r.offset + r.len) as usize];
            let mut installed = 9;
            assert_eq!(
                cs_stream_provide_page(s, r.page, bytes.as_ptr(), bytes.len(), &mut installed),
                CsStatus::Ok,
                "{}",
                last_error()
            );
            assert_eq!(installed, 1);
        }
        assert_eq!(
            cs_stream_sample(s, 2.0, out.as_mut_ptr(), bones, null(), 0, &mut q),
            CsStatus::Ok
        );
    }
    rust.sample(2.0, &mut pose).expect("sample");
    for (got, want) in out.iter().zip(&pose) {
        assert_eq!(bits(got), rust_bits(want));
    }
    // Misuse: a page that does not exist, bytes that are not the page's,
    // NULL bytes, count and requests; a short header; the BLOCK policy.
    let mut installed = 0;
    let mut prefix_len = 0;
    let mut o = options();
    let mut other = null_mut();
    let page0 = &file[..64];
    // The last page, asked for by a sampler: wanted first, so what is
    // provided for it is checked now.
    let last = info.page_count - 1;
    // SAFETY: live locals of the lengths passed.
    unsafe {
        let status = cs_stream_sample(s, info.duration, out.as_mut_ptr(), bones, null(), 0, &mut q);
        assert_eq!(status, CsStatus::NotReady, "{}", last_error());
        assert_eq!(
            cs_stream_wanted_pages(s, requests.as_mut_ptr(), 1, &mut count),
            CsStatus::Ok
        );
    }
    assert_eq!((count, requests[0].page), (1, last));
    // SAFETY: every pointer is to a live local or a slice of `file` of the
    // length passed; NULLs are what is under test.
    let cases = unsafe {
        vec![
            (
                c(
                    "cs_stream_provide_page",
                    cs_stream_provide_page(s, 999, page0.as_ptr(), 64, &mut installed),
                ),
                (CsStatus::InvalidArgument, "page 999 does not exist"),
            ),
            (
                c(
                    "cs_stream_provide_page",
                    cs_stream_provide_page(s, last, page0.as_ptr(), 64, &mut installed),
                ),
                (CsStatus::BadFile, "64 bytes read"),
            ),
            (
                c(
                    "cs_stream_provide_page",
                    cs_stream_provide_page(s, 1, null(), 64, &mut installed),
                ),
                (CsStatus::Null, "bytes is NULL"),
            ),
            (
                c(
                    "cs_stream_provide_page",
                    cs_stream_provide_page(s, 1, page0.as_ptr(), 64, null_mut()),
                ),
                (CsStatus::Null, "installed is NULL"),
            ),
            (
                c(
                    "cs_stream_wanted_pages",
                    cs_stream_wanted_pages(s, null_mut(), 4, &mut count),
                ),
                (CsStatus::Null, "requests is NULL"),
            ),
            (
                c(
                    "cs_stream_wanted_pages",
                    cs_stream_wanted_pages(s, requests.as_mut_ptr(), 4, null_mut()),
                ),
                (CsStatus::Null, "count is NULL"),
            ),
            (
                c(
                    "cs_prefix_len",
                    cs_prefix_len(file.as_ptr(), 10, file.len() as u64, &mut prefix_len),
                ),
                (CsStatus::BadFile, "truncated"),
            ),
            (
                c(
                    "cs_prefix_len",
                    cs_prefix_len(
                        b"NOTACINEFILE".repeat(8).as_ptr(),
                        64,
                        4096,
                        &mut prefix_len,
                    ),
                ),
                (CsStatus::BadFile, "not a cinestream file"),
            ),
            (
                c(
                    "cs_prefix_len",
                    cs_prefix_len(null(), 64, 4096, &mut prefix_len),
                ),
                (CsStatus::Null, "header is NULL"),
            ),
            (
                c(
                    "cs_prefix_len",
                    cs_prefix_len(file.as_ptr(), 64, file.len() as u64, null_mut()),
                ),
                (CsStatus::Null, "prefix_len is NULL"),
            ),
            (
                c(
                    "cs_stream_open_host",
                    cs_stream_open_host(file.as_ptr(), 64, file.len() as u64, &o, &mut other),
                ),
                (CsStatus::InvalidOptions, "NotReady"),
            ),
            (
                c("cs_stream_open_host", {
                    o.missing_page = CS_MISSING_PAGE_NOT_READY;
                    cs_stream_open_host(file.as_ptr(), 64, file.len() as u64, &o, &mut other)
                }),
                (CsStatus::Io, "table of contents the host gave"),
            ),
            (
                c(
                    "cs_stream_open_host",
                    cs_stream_open_host(null(), 64, 4096, &o, &mut other),
                ),
                (CsStatus::Null, "prefix is NULL"),
            ),
        ]
    };
    for ((name, status, message), (expected, words)) in cases {
        refused_with(status, &message, expected, name, words);
    }
    assert!(other.is_null());
    // A stream that reads its own pages takes none from the host.
    let own = open(&file);
    let r = requests[0];
    let bytes = &file[r.offset as usize..(r.offset + r.len) as usize];
    // SAFETY: `bytes` is a slice of `file` of the length passed; live local.
    let status =
        unsafe { cs_stream_provide_page(own, r.page, bytes.as_ptr(), bytes.len(), &mut installed) };
    assert_ne!(status, CsStatus::Ok);
    // NULL, freed and wrong-typed handles.
    let p = player(own);
    for (handle, expected) in [
        (null_mut(), CsStatus::Null),
        (p.cast(), CsStatus::WrongHandleType),
        (0xbad_0000 as *mut CsStream, CsStatus::InvalidHandle),
    ] {
        // SAFETY: `bytes` a slice of `file` of the length passed; the handle
        // is what is under test.
        let status = unsafe {
            cs_stream_provide_page(handle, 0, bytes.as_ptr(), bytes.len(), &mut installed)
        };
        assert_eq!(status, expected, "{}", last_error());
    }
    assert_eq!(cs_player_free(p), CsStatus::Ok);
    assert_eq!(cs_stream_free(own), CsStatus::Ok);
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
    // SAFETY: as above, on the freed handle.
    let status =
        unsafe { cs_stream_provide_page(s, 0, bytes.as_ptr(), bytes.len(), &mut installed) };
    refused(
        status,
        CsStatus::InvalidHandle,
        "cs_stream_provide_page",
        "not a live handle",
    );
}

#[test]
fn threads_sample_one_stream_while_others_make_and_free_handles() {
    let bytes = packed();
    let rust = Stream::from_bytes(bytes.clone(), StreamOptions::default()).expect("open");
    let s = open(&bytes) as usize;
    let bones = rust.meta().num_bones();
    let duration = rust.meta().duration();
    let samplers: Vec<_> = (0..4)
        .map(|k| {
            let rust = rust.clone();
            std::thread::spawn(move || {
                let mut out = vec![CsTransform::default(); bones];
                let mut pose = vec![Transform::IDENTITY; bones];
                let mut q = 0;
                for i in 0..300 {
                    let t = duration * f64::from((i * 7 + k * 13) % 301) / 300.0;
                    // SAFETY: `out` holds `bones` transforms; `q` is live;
                    // the stream handle is a registry number, valid here.
                    let status = unsafe {
                        cs_stream_sample(
                            s as *const CsStream,
                            t,
                            out.as_mut_ptr(),
                            bones,
                            null(),
                            0,
                            &mut q,
                        )
                    };
                    assert_eq!(status, CsStatus::Ok, "{}", last_error());
                    rust.sample(t, &mut pose).expect("sample");
                    for (got, want) in out.iter().zip(&pose) {
                        assert_eq!(bits(got), rust_bits(want));
                    }
                }
            })
        })
        .collect();
    // Meanwhile: players made, played and freed, twice freed, on the same stream.
    for _ in 0..200 {
        let p = player(s as *const CsStream);
        let mut step = CsAdvance::default();
        // SAFETY: `step` is live.
        assert_eq!(
            unsafe { cs_player_advance(p, 0.05, &mut step) },
            CsStatus::Ok
        );
        assert_eq!(cs_player_free(p), CsStatus::Ok);
        assert_eq!(cs_player_free(p), CsStatus::InvalidHandle);
    }
    for t in samplers {
        t.join().expect("sampler thread");
    }
    assert_eq!(cs_stream_free(s as *mut CsStream), CsStatus::Ok);
}

#[test]
fn stepped_tracks_and_cuts_hold_the_earlier_sample_through_the_abi() {
    // One actor whose bone 3 rotation is stepped, with a cut at sample 30.
    let clip = cinematic(&CinematicSpec::default().with_seconds(2.0).with_seed(3));
    let stepped = cinestream::BoneSteps {
        rotation: true,
        ..cinestream::BoneSteps::NONE
    };
    let clip = clip
        .with_bone_steps(3, stepped)
        .expect("steps")
        .with_cuts(vec![30])
        .expect("cuts");
    let (compressed, _) = compress(&clip, &CompressSettings::default()).expect("compress");
    let (bytes, _) = encode_stream(&compressed, &WriteOptions::default()).expect("encode");
    let s = open(&bytes);
    let bones = bone_count(s);
    let rate = f64::from(clip.sample_rate());
    let sample = |t: f64| {
        let mut out = vec![CsTransform::default(); bones];
        let mut quality = 9;
        // SAFETY: `out` holds `bones` transforms; no remap; `quality` is live.
        let status =
            unsafe { cs_stream_sample(s, t, out.as_mut_ptr(), out.len(), null(), 0, &mut quality) };
        assert_eq!(status, CsStatus::Ok, "{}", last_error());
        out
    };
    let one_bone = |bone: u32, t: f64| {
        let mut out = CsTransform::default();
        // SAFETY: `out` is a live, writable CsTransform.
        let status = unsafe { cs_stream_sample_bone(s, bone, t, &mut out) };
        assert_eq!(status, CsStatus::Ok, "{}", last_error());
        out
    };
    let mut blended = 0;
    for k in [3usize, 17, 29, 44] {
        let earlier = sample(k as f64 / rate);
        for u in [0.1, 0.5, 0.9] {
            let t = (k as f64 + u) / rate;
            let pose = sample(t);
            if k == 29 {
                // Across the cut: every bone holds sample 29, all of it.
                for (a, b) in pose.iter().zip(&earlier) {
                    assert_eq!(bits(a), bits(b), "t {t}: blended across the cut");
                }
            }
            // The stepped rotation holds; its translation still blends.
            assert_eq!(pose[3].rotation, earlier[3].rotation, "t {t}");
            assert_eq!(one_bone(3, t).rotation, earlier[3].rotation, "t {t}");
            assert_eq!(bits(&one_bone(3, t)), bits(&pose[3]), "t {t}");
            let moved = pose
                .iter()
                .zip(&earlier)
                .enumerate()
                .any(|(b, (x, y))| b != 3 && bits(x) != bits(y));
            if k != 29 && moved {
                blended += 1;
            }
        }
    }
    // Elsewhere the sampler still blends (the test can tell).
    assert!(blended >= 6, "{blended}");
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn a_lying_out_len_with_a_remap_allocates_nothing_of_its_size() {
    let bytes = packed();
    let s = open(&bytes);
    let bones = bone_count(s);
    let n = bones as i32;
    // Reversed into the first `bones` entries of a real array of that size.
    let map: Vec<i32> = (0..n).rev().collect();
    let mut out = vec![CsTransform::default(); bones];
    let mut q = 0;
    // A claimed length of 2^40 transforms (44 TB): the old check allocated
    // a flag per claimed entry and aborted. The remap only names entries
    // that exist, so nothing past `out`'s real end is touched.
    let lying = 1usize << 40;
    // SAFETY: `out` holds `bones` transforms and the map writes only there;
    // the length is a lie the ABI must not act on; `map` and `q` are live.
    let status = unsafe {
        cs_stream_sample(
            s,
            0.3,
            out.as_mut_ptr(),
            lying,
            map.as_ptr(),
            map.len(),
            &mut q,
        )
    };
    assert_eq!(status, CsStatus::Ok, "{}", last_error());
    let mut expected = vec![CsTransform::default(); bones];
    // SAFETY: `expected` holds `bones` transforms; no remap; `q` is live.
    let status =
        unsafe { cs_stream_sample(s, 0.3, expected.as_mut_ptr(), bones, null(), 0, &mut q) };
    assert_eq!(status, CsStatus::Ok);
    expected.reverse();
    assert_eq!(out, expected);
    // A length no array can have is refused before a slice is made of it.
    // SAFETY: refused before `out` is read or written.
    let status = unsafe {
        cs_stream_sample(
            s,
            0.3,
            out.as_mut_ptr(),
            usize::MAX / 8,
            map.as_ptr(),
            map.len(),
            &mut q,
        )
    };
    refused(
        status,
        CsStatus::InvalidArgument,
        "cs_stream_sample",
        "more than any array can hold",
    );
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn handles_near_a_live_handle_name_nothing() {
    let bytes = packed();
    let a = open(&bytes);
    let b = open(&bytes);
    let p = player(a);
    let live = [a as usize, b as usize, p as usize];
    for &handle in &live {
        assert_eq!(handle % 8, 0, "{handle:#x}");
        for k in 1..=512usize {
            for guess in [handle.wrapping_add(8 * k), handle.wrapping_sub(8 * k)] {
                if live.contains(&guess) {
                    panic!("{guess:#x} is a live handle {k} steps from {handle:#x}");
                }
                let mut info = std::mem::MaybeUninit::<CsClipInfo>::uninit();
                // SAFETY: `info` is writable; the made-up handle is checked
                // by the ABI before anything is done with it.
                let status = unsafe { cs_stream_info(guess as *const CsStream, info.as_mut_ptr()) };
                // Another test's live stream may happen to be there only by
                // a 1 in 2^61 chance.
                assert_eq!(
                    status,
                    CsStatus::InvalidHandle,
                    "{guess:#x}: {}",
                    last_error()
                );
            }
        }
    }
    assert_eq!(cs_player_free(p), CsStatus::Ok);
    assert_eq!(cs_stream_free(a), CsStatus::Ok);
    assert_eq!(cs_stream_free(b), CsStatus::Ok);
}

/// Run by `a_prefetch_thread_that_cannot_start_is_its_own_error` in a child
/// process whose threads cannot get a stack; does nothing otherwise.
#[test]
fn prefetch_thread_refused_child() {
    // The file the parent packed: packing here would need threads too.
    let Some(path) = std::env::var_os("CINESTREAM_SPAWN_CHILD") else {
        return;
    };
    let bytes = std::fs::read(path).unwrap();
    let mut o = options();
    o.prefetch = 1;
    let mut s = null_mut();
    // SAFETY: `bytes` is a live slice of its length, `o` and `s` live locals.
    let status = unsafe { cs_stream_open_memory(bytes.as_ptr(), bytes.len(), &o, &mut s) };
    refused(
        status,
        CsStatus::ThreadSpawn,
        "cs_stream_open_memory",
        "cannot start the prefetch thread",
    );
    assert!(s.is_null());
    // Without prefetch the same options open.
    o.prefetch = 0;
    // SAFETY: as above.
    let status = unsafe { cs_stream_open_memory(bytes.as_ptr(), bytes.len(), &o, &mut s) };
    assert_eq!(status, CsStatus::Ok, "{}", last_error());
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}

#[test]
fn a_prefetch_thread_that_cannot_start_is_its_own_error() {
    // Every new thread asks for a 120 TB stack, more than the address space
    // holds: thread creation fails (EAGAIN), and the test harness then runs
    // the test on its own thread.
    let path = std::env::temp_dir().join(format!("cinestream-spawn-{}.cine", std::process::id()));
    std::fs::write(&path, packed()).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "prefetch_thread_refused_child",
            "--test-threads=1",
            "--nocapture",
        ])
        .env("CINESTREAM_SPAWN_CHILD", &path)
        .env("RUST_MIN_STACK", "120000000000000")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
}

#[test]
fn a_70000_byte_bone_name_round_trips() {
    use cinestream::{Clip, Skeleton};
    let clip = cinematic(
        &CinematicSpec::default()
            .with_seconds(1.0)
            .with_actors(1)
            .with_seed(3),
    );
    let mut bones = clip.skeleton().bones().to_vec();
    let long: String = (0..70_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    bones[1].name = long.clone();
    let skeleton = std::sync::Arc::new(Skeleton::new(bones).unwrap());
    let clip = Clip::from_poses(
        clip.name(),
        skeleton,
        clip.sample_rate(),
        clip.unit(),
        clip.poses().to_vec(),
    )
    .unwrap();
    let (compressed, _) = compress(&clip, &CompressSettings::default()).unwrap();
    let (bytes, _) = encode_stream(&compressed, &WriteOptions::default()).unwrap();
    let s = open(&bytes);
    let mut buf = vec![0u8; 70_001];
    let mut length = 0;
    // SAFETY: `buf` holds its length in bytes; `length` is live.
    let status =
        unsafe { cs_stream_bone_name(s, 1, buf.as_mut_ptr().cast(), buf.len(), &mut length) };
    assert_eq!(status, CsStatus::Ok, "{}", last_error());
    assert_eq!(length, 70_000);
    assert_eq!(&buf[..70_000], long.as_bytes());
    assert_eq!(buf[70_000], 0);
    let name = std::ffi::CString::new(long).unwrap();
    let mut bone = -1;
    // SAFETY: `name` is NUL-terminated, `bone` live.
    assert_eq!(
        unsafe { cs_stream_find_bone(s, name.as_ptr(), &mut bone) },
        CsStatus::Ok
    );
    assert_eq!(bone, 1);
    assert_eq!(cs_stream_free(s), CsStatus::Ok);
}
