//! What the viewer's server holds for one opened file: the stream and the
//! player the page drives, what it counted while playing, and, beside a
//! source, the comparison. Every answer of the HTTP API is made here from
//! these; nothing here reads a path the user did not give.

use std::collections::BTreeMap;

use cinestream::container::StreamReader;
use cinestream::format::ClipMeta;
use cinestream::metric::{bone_errors_at, ErrorReport, MetricSettings};
use cinestream::play::Player;
use cinestream::stream::{MissingPage, Stream};
use cinestream::{
    sample::Quality,
    {FloatKind, Sampling},
};
use cinestream::{Clip, LoopMode, Transform};
use serde_json::{json, Value};

/// Most points of a curve sent to the page (the worst-error curve, each
/// float track): a longer clip is cut into this many runs of samples, each
/// shown by its worst (errors) or its first (float values).
pub const CURVE_POINTS: usize = 2000;

/// Floats per bone in a binary pose: rotation x y z w, translation x y z,
/// scale x y z.
pub const BONE_FLOATS: usize = 10;

/// Bytes before the floats of a binary pose or source pose.
pub const POSE_HEADER: usize = 24;

/// The decoded file against its sources.
pub struct Against {
    /// The sources combined as the file was packed, cut to its samples.
    pub source: Clip,
    /// How the error is measured.
    pub settings: MetricSettings,
    /// Every bone at every sample.
    pub error: ErrorReport,
    /// Source translations times this are in the file's unit.
    pub to_file_unit: f32,
    /// A file packed to a screen-space bound: each bone's allowed error at
    /// each sample (`[sample * bones + bone]`, cm), the compressor's bounds.
    pub allowed: Option<Vec<f32>>,
}

/// The opened file, its player and what the page has been shown.
pub struct Session {
    /// What the title says: the file, as given.
    pub title: String,
    pub stream: Stream,
    pub player: Player,
    /// The same bytes, read whole: the float curves, the error at a time
    /// and the inspect panel (never the pose the page plays).
    pub reader: StreamReader<std::sync::Arc<[u8]>>,
    /// What `inspect --json` says of the file.
    pub inspect: Value,
    pub against: Option<Against>,
    /// Prefetch lookahead, seconds of play.
    pub lookahead_s: f64,
    /// Pages resident at some poll: those not resident now were evicted.
    pub seen_resident: Vec<bool>,
    /// Poses the page was shown from the preview tier, and not ready.
    pub preview_frames: u64,
    pub not_ready_frames: u64,
    /// Cuts the playhead crossed.
    pub cuts_crossed: u64,
}

impl Session {
    /// Opens `bytes` (a whole .cine file) behind `stream`, a stream over
    /// the same file with the view's options.
    pub fn new(
        title: String,
        bytes: std::sync::Arc<[u8]>,
        stream: Stream,
        inspect: Value,
        lookahead_s: f64,
    ) -> anyhow::Result<Session> {
        let reader = StreamReader::open_with_skeleton(bytes, stream.options().skeleton.as_ref())?;
        let pages = stream.index().pages().len();
        Ok(Session {
            title,
            player: Player::new(&stream),
            stream,
            reader,
            inspect,
            against: None,
            lookahead_s,
            seen_resident: vec![false; pages],
            preview_frames: 0,
            not_ready_frames: 0,
            cuts_crossed: 0,
        })
    }

    fn meta(&self) -> &ClipMeta {
        self.stream.meta()
    }

    /// Everything the page needs once: the skeleton, actors, float tracks,
    /// cuts, pages with their times, the preview tier, the camera, inspect.
    pub fn meta_json(&self) -> Value {
        let meta = self.meta();
        let rate = f64::from(meta.sample_rate);
        let bones = meta.skeleton.bones();
        let names: Vec<&str> = bones.iter().map(|b| b.name.as_str()).collect();
        let parents: Vec<i64> = bones
            .iter()
            .map(|b| b.parent.map_or(-1, |p| p as i64))
            .collect();
        // An actor is a child of a "Scene" root (pack --actors, the
        // procedural cast) or, without one, a root of its own.
        let scene_root = bones.len() > 1
            && bones[0].parent.is_none()
            && bones[0].name.eq_ignore_ascii_case("scene");
        let actors: Vec<Value> = bones
            .iter()
            .enumerate()
            .filter(|(_, b)| match scene_root {
                true => b.parent == Some(0),
                false => b.parent.is_none(),
            })
            .map(|(i, b)| json!({ "name": b.name, "bone": i }))
            .collect();
        let offsets = meta.float_offsets();
        let floats: Vec<Value> = meta
            .floats
            .iter()
            .enumerate()
            .map(|(i, f)| {
                json!({
                    "name": f.name,
                    "kind": f.kind.name(),
                    "components": f.components,
                    "offset": offsets.get(i).copied().unwrap_or(0),
                })
            })
            .collect();
        let index = self.stream.index();
        let pages: Vec<Value> = (0..index.pages().len())
            .map(|page| {
                let segments = index.page_segments(page);
                let first = match segments.is_empty() {
                    true => 0,
                    false => meta.segments.segment(segments.start).0,
                };
                let end = match segments.is_empty() {
                    true => 0,
                    false => {
                        let (start, len) = meta.segments.segment(segments.end - 1);
                        start + len
                    }
                };
                json!({
                    "start": first as f64 / rate,
                    "end": end as f64 / rate,
                    "bytes": index.pages()[page].stored_len,
                })
            })
            .collect();
        let preview = self
            .stream
            .preview()
            .map(|tier| json!({ "bound_cm": tier.bound_cm() }));
        json!({
            "title": self.title,
            "name": meta.name,
            "bones": names,
            "parents": parents,
            "actors": actors,
            "unit_cm": meta.unit.cm_per_unit(),
            "sample_rate": rate,
            "samples": meta.num_samples(),
            // What the ratio counts, as pack does (ACL's raw size).
            "raw_bytes": cinestream::compress::RAW_BYTES_PER_BONE_SAMPLE
                * meta.num_bones()
                * meta.num_samples(),
            "duration": meta.duration(),
            "loop": matches!(meta.loop_mode, LoopMode::Wrap),
            "threshold_cm": meta.threshold_cm,
            "cuts": meta.cuts().iter().map(|&c| f64::from(c) / rate).collect::<Vec<_>>(),
            "floats": floats,
            "float_values": meta.num_float_values(),
            "camera": self.camera(),
            "pages": pages,
            "budget_bytes": self.stream.options().budget_bytes,
            "lookahead_s": self.lookahead_s,
            "missing_page": format!("{:?}", self.stream.options().missing_page),
            "preview": preview,
            "against": self.against.is_some(),
            "screen": meta.screen.map(|s| json!({
                "pixels": s.pixels,
                "resolution": [s.resolution.0, s.resolution.1],
                "max_cm": s.max_cm,
                "camera": s.camera,
                "worst_px": s.worst_px,
                "worst_cm": s.worst_cm,
                "allowed": self.against.as_ref().is_some_and(|a| a.allowed.is_some()),
            })),
            "inspect": self.inspect,
        })
    }

    /// The file's camera: the bone a field-of-view track names (`Camera`
    /// for `Camera/yfov`, as the glTF importer and the procedural
    /// cinematic name it), with the index of that value among a sample's
    /// float values; else a bone named `Camera` without a field of view.
    fn camera(&self) -> Option<Value> {
        let meta = self.meta();
        let skeleton = &meta.skeleton;
        let fov = meta
            .floats
            .iter()
            .enumerate()
            .find(|(_, f)| matches!(f.kind, FloatKind::FieldOfView));
        if let Some((track, f)) = fov {
            let owner = f.name.split('/').next().unwrap_or_default();
            if let Some(bone) = skeleton.find(owner) {
                return Some(json!({
                    "bone": bone,
                    "fov_value": meta.float_offsets().get(track).copied(),
                }));
            }
        }
        let bone = skeleton
            .bones()
            .iter()
            .position(|b| b.name.eq_ignore_ascii_case("camera"))?;
        Some(json!({ "bone": bone, "fov_value": null }))
    }

    /// Loops the player or clamps it at the ends, from where it is.
    pub fn set_loop(&mut self, wrap: bool) -> cinestream::Result<()> {
        let mode = match wrap {
            true => LoopMode::Wrap,
            false => LoopMode::Clamp,
        };
        let (time, rate) = (self.player.time(), self.player.rate());
        self.player = Player::new(&self.stream).with_loop_mode(mode);
        self.player.set_rate(rate);
        self.player.seek(time)?;
        Ok(())
    }

    /// Seeks to `time`, or advances by `dt` at `rate`, through the player;
    /// answers the pose as bytes: time (f64), flags (u32: 1 ready, 2
    /// preview), bones, float values, cuts crossed (u32 each), then
    /// [`BONE_FLOATS`] f32 per bone and the float values (f32).
    pub fn pose(&mut self, step: Step) -> cinestream::Result<Vec<u8>> {
        let (ready, cuts) = match step {
            Step::Seek(time) => (self.player.seek(time)?, 0),
            Step::Advance { dt, rate } => {
                self.player.set_rate(rate);
                let a = self.player.advance(dt)?;
                (a.ready, a.cuts)
            }
        };
        let preview = matches!(self.player.quality(), Quality::Preview { .. });
        match (ready, preview) {
            (false, _) => self.not_ready_frames += 1,
            (true, true) => self.preview_frames += 1,
            (true, false) => {}
        }
        self.cuts_crossed += u64::from(cuts);
        let flags = u32::from(ready) | (u32::from(preview) << 1);
        Ok(pose_bytes(
            self.player.time(),
            [flags, cuts],
            self.player.pose(),
            self.player.floats(),
        ))
    }

    /// Each page's state, one letter a page: `r` resident, `l` wanted in
    /// the prefetch window and not resident yet (queued or loading), `e`
    /// evicted (resident once, not now), `c` corrupt (a load failed its
    /// check), `-` never loaded; and the counters.
    pub fn residency_json(&mut self) -> Value {
        let meta = self.stream.meta();
        let rate = f64::from(meta.sample_rate);
        let time = self.player.time();
        let ahead = self.lookahead_s * self.player.rate();
        let (from, to) = match ahead >= 0.0 {
            true => (time, time + ahead),
            false => (time + ahead, time),
        };
        let corrupt: Vec<usize> = self
            .stream
            .prefetch_errors()
            .iter()
            .filter_map(|e| match e {
                cinestream::Error::Container(cinestream::ContainerError::CorruptPage {
                    page,
                    ..
                }) => Some(*page),
                _ => None,
            })
            .collect();
        let index = self.stream.index();
        let mut states = String::with_capacity(index.pages().len());
        for page in 0..index.pages().len() {
            let resident = self.stream.is_resident(page);
            if resident {
                self.seen_resident[page] = true;
            }
            let segments = index.page_segments(page);
            let in_window = !segments.is_empty() && {
                let (start, _) = meta.segments.segment(segments.start);
                let (last, len) = meta.segments.segment(segments.end - 1);
                let (start, end) = (start as f64 / rate, (last + len) as f64 / rate);
                start <= to && end >= from
            };
            states.push(match () {
                _ if corrupt.contains(&page) => 'c',
                _ if resident => 'r',
                _ if in_window => 'l',
                _ if self.seen_resident[page] => 'e',
                _ => '-',
            });
        }
        let s = self.stream.stats();
        json!({
            "time": time,
            "rate": self.player.rate(),
            "window": [from, to],
            "pages": states,
            "resident_bytes": s.resident_bytes,
            "peak_resident_bytes": s.peak_resident_bytes,
            "budget_bytes": self.stream.options().budget_bytes,
            "stalls": s.stalls,
            "stall_ms": s.stall_ns as f64 / 1e6,
            "page_loads": s.page_loads,
            "prefetch_loads": s.prefetch_loads,
            "evictions": s.evictions,
            "bytes_read": s.bytes_read,
            "preview_frames": self.preview_frames,
            "not_ready_frames": self.not_ready_frames,
            "cuts_crossed": self.cuts_crossed,
            "prefetch_errors": self.stream.prefetch_errors().iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        })
    }

    /// The source at the sample nearest `time` and each bone's error there,
    /// as bytes: the sample's time (f64), the sample and the bones (u32,
    /// twice), [`BONE_FLOATS`] f32 per bone of the source's local pose (its
    /// translations in the file's unit), then each bone's error in cm
    /// (f32). `None` without sources.
    pub fn against_at(&self, time: f64) -> Option<cinestream::Result<Vec<u8>>> {
        let against = self.against.as_ref()?;
        let meta = self.reader.meta();
        let samples = against.source.num_samples();
        let rate = f64::from(meta.sample_rate);
        let sample = ((time * rate).round().max(0.0) as usize).min(samples.saturating_sub(1));
        let errors = match bone_errors_at(&against.source, &self.reader, &against.settings, sample)
        {
            Ok(errors) => errors,
            Err(e) => return Some(Err(e)),
        };
        let scale = against.to_file_unit;
        let pose: Vec<Transform> = against
            .source
            .pose(sample)
            .iter()
            .map(|t| Transform {
                translation: t.translation * scale,
                ..*t
            })
            .collect();
        let errors: Vec<f32> = errors.iter().map(|&e| e as f32).collect();
        let as_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Some(Ok(pose_bytes(
            sample as f64 / rate,
            [as_u32(sample), 0],
            &pose,
            &errors,
        )))
    }

    /// Each bone's allowed error at the source's sample nearest `time`, cm
    /// (a file packed to a screen-space bound, with sources), as JSON.
    pub fn allowed_at(&self, time: f64) -> Option<Value> {
        let against = self.against.as_ref()?;
        let allowed = against.allowed.as_ref()?;
        let bones = against.source.num_bones();
        let samples = allowed.len() / bones.max(1);
        let rate = f64::from(self.reader.meta().sample_rate);
        let sample = ((time * rate).round().max(0.0) as usize).min(samples.saturating_sub(1));
        let row = allowed.get(sample * bones..(sample + 1) * bones)?;
        Some(json!({ "sample": sample, "allowed_cm": row }))
    }

    /// The worst error of any bone over the clip, at most [`CURVE_POINTS`]
    /// points, each the worst of its run of samples at that run's worst
    /// sample's time; the threshold; the worst sample.
    pub fn error_curve_json(&self) -> Option<Value> {
        let against = self.against.as_ref()?;
        let e = &against.error;
        let rate = f64::from(self.reader.meta().sample_rate);
        let per_sample = &e.max_per_sample_cm;
        let run = per_sample.len().div_ceil(CURVE_POINTS).max(1);
        let points: Vec<[f64; 2]> = per_sample
            .chunks(run)
            .enumerate()
            .map(|(k, chunk)| {
                let (i, worst) =
                    chunk
                        .iter()
                        .enumerate()
                        .fold((0, f64::NEG_INFINITY), |best, (i, &v)| match v > best.1 {
                            true => (i, v),
                            false => best,
                        });
                [(k * run + i) as f64 / rate, worst]
            })
            .collect();
        let bone = self
            .reader
            .meta()
            .skeleton
            .bones()
            .get(e.worst.0)
            .map(|b| b.name.clone());
        Some(json!({
            "threshold_cm": e.threshold_cm,
            "max_cm": e.max_cm,
            "worst_time": e.worst.1 as f64 / rate,
            "worst_bone": bone,
            "points": points,
        }))
    }

    /// Every float value over the clip at most [`CURVE_POINTS`] times,
    /// from the whole-file reader: `times` and one row of values a time.
    pub fn float_curves_json(&self) -> cinestream::Result<Value> {
        let meta = self.reader.meta();
        let n = meta.num_float_values();
        if n == 0 {
            return Ok(json!({ "times": [], "values": [] }));
        }
        let samples = meta.num_samples().max(1);
        let step = samples.div_ceil(CURVE_POINTS).max(1);
        let rate = f64::from(meta.sample_rate);
        let mut times = Vec::new();
        let mut rows = Vec::new();
        let mut values = vec![0.0f32; n];
        for sample in (0..samples).step_by(step) {
            let time = sample as f64 / rate;
            self.reader.sample_floats(time, &mut values)?;
            times.push(time);
            rows.push(values.clone());
        }
        Ok(json!({ "times": times, "values": rows }))
    }
}

/// How the page moves the playhead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Jump there (scrub, step, jump to a time).
    Seek(f64),
    /// Play on by `dt` seconds at `rate`.
    Advance { dt: f64, rate: f64 },
}

/// A pose as the page reads it (see [`Session::pose`]).
fn pose_bytes(time: f64, words: [u32; 2], pose: &[Transform], tail: &[f32]) -> Vec<u8> {
    let as_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(POSE_HEADER + 4 * (pose.len() * BONE_FLOATS + tail.len()));
    out.extend_from_slice(&time.to_le_bytes());
    for word in [words[0], as_u32(pose.len()), as_u32(tail.len()), words[1]] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for t in pose {
        let r = t.rotation;
        for v in [r.x, r.y, r.z, r.w]
            .into_iter()
            .chain(t.translation.to_array())
            .chain(t.scale.to_array())
        {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for v in tail {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Query parameters of a request's URL (`a=1&b=2`), the last of each name.
pub fn query(url: &str) -> BTreeMap<&str, &str> {
    url.split_once('?')
        .map(|(_, q)| q)
        .unwrap_or("")
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .collect()
}

/// The file's policy, for the page's title line.
pub fn policy_name(policy: MissingPage) -> &'static str {
    match policy {
        MissingPage::Block => "block",
        MissingPage::NotReady => "not-ready",
        MissingPage::Preview => "preview",
    }
}

/// What the comparison measured, for the terminal.
pub fn describe(against: &Against) -> String {
    let e = &against.error;
    format!(
        "against the source: worst {:.5} cm (threshold {} cm)",
        e.max_cm, e.threshold_cm
    )
}
