//! The embedded default: procedural humanoid cinematics of any length.
//!
//! A 22-bone humanoid (the joint layout of common motion-capture rigs, in
//! centimetres, y up) walks along a winding path with arm swing, hip bob,
//! head turns and slow, non-repeating gesture drift. Some bones never move
//! (the neck stays at its bind pose, the shoulders hold a constant pose), the
//! root and hips translate. Several actors can share one clip under a scene
//! root, as the cast of one cinematic. On request each actor also gets a
//! face (morph-target weights that blink, talk and raise the brows) and the
//! scene a camera (a root bone that dollies and pans to keep the cast in
//! view, and a field of view that zooms): see [`CinematicSpec::with_face`]
//! and [`CinematicSpec::with_camera`]. Without them the bones are exactly
//! what they always were. Everything is a pure function of the
//! [`CinematicSpec`], so demos, tests and benchmarks need no files.

use std::f32::consts::TAU;
use std::sync::Arc;

use glam::{EulerRot, Quat, Vec3};

use crate::clip::{Bone, Clip, FloatKind, FloatTrack, LengthUnit, Skeleton, Transform};

/// Bones of one humanoid actor.
pub(crate) const HUMANOID_BONES: usize = 22;

/// Bytes per bone per sample that building a cinematic, compressing it and
/// building its preview tier take at their peak (the clip's poses, the
/// compressor's object-space copies, vertices and scratch): 356 to 359
/// measured at 178 and 354 bones over 7,201 samples (peak RSS), rounded up
/// for the process's own.
pub(crate) const PEAK_BYTES_PER_BONE_SAMPLE: u64 = 400;

/// The most bytes [`CinematicSpec::check_memory`] lets `cinestream demo`
/// take (4 GiB): four actors for the longest demo (an hour) fit.
pub const CINEMATIC_MEMORY_LIMIT: u64 = 4 << 30;

/// What to generate.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CinematicSpec {
    /// Number of actors. With more than one, bone 0 is a still scene root. Default: 1.
    pub actors: usize,
    /// Length in seconds. Default: 10.
    pub seconds: f64,
    /// Samples per second. Default: 30.
    pub sample_rate: f32,
    /// Varies each actor's gait, pace and gestures. Default: 1.
    pub seed: u64,
    /// Gives each actor a face: the morph weights of [`FACE_TARGETS`].
    /// Default: off.
    pub face: bool,
    /// Adds a camera: a root bone [`CAMERA_BONE`] after the actors' bones,
    /// and its field of view [`CAMERA_FOV_TRACK`]. Default: off.
    pub camera: bool,
}

/// Each actor's morph targets when [`CinematicSpec::face`] is on, with the
/// made-up largest vertex displacement (cm) each moves at weight 1: their
/// float tracks are named `Face/{target}` (`actor{i}/Face/{target}` with
/// several actors), in this order, actor after actor.
pub const FACE_TARGETS: [(&str, f32); 4] = [
    ("jaw_open", 3.0),
    ("blink_l", 1.0),
    ("blink_r", 1.0),
    ("brow_up", 0.8),
];

/// How far, in cm, a face's vertices may move from where the exact weights
/// put them: the precision of each weight is this over its displacement.
pub(crate) const FACE_THRESHOLD_CM: f32 = 0.01;

/// The camera's bone when [`CinematicSpec::camera`] is on: a root, the last bone.
pub const CAMERA_BONE: &str = "Camera";

/// The camera's vertical field of view (radians), the last float track.
pub const CAMERA_FOV_TRACK: &str = "Camera/yfov";

/// Precision of the camera's field of view: 1e-4 rad (0.006°), as the glTF
/// importer gives a camera's `yfov`.
pub(crate) const CAMERA_FOV_PRECISION: f32 = crate::clip::FIELD_OF_VIEW_PRECISION;

impl Default for CinematicSpec {
    fn default() -> Self {
        CinematicSpec {
            actors: 1,
            seconds: 10.0,
            sample_rate: 30.0,
            seed: 1,
            face: false,
            camera: false,
        }
    }
}

impl CinematicSpec {
    /// Sets the number of actors (at least 1).
    pub fn with_actors(mut self, actors: usize) -> Self {
        self.actors = actors.max(1);
        self
    }

    /// Sets the length in seconds.
    pub fn with_seconds(mut self, seconds: f64) -> Self {
        self.seconds = seconds;
        self
    }

    /// Sets the sample rate.
    pub fn with_sample_rate(mut self, rate: f32) -> Self {
        self.sample_rate = rate;
        self
    }

    /// Sets the seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Gives each actor a face (morph weights), or not.
    pub fn with_face(mut self, face: bool) -> Self {
        self.face = face;
        self
    }

    /// Adds a camera (a bone and a field of view), or not.
    pub fn with_camera(mut self, camera: bool) -> Self {
        self.camera = camera;
        self
    }

    /// Number of samples: one every 1/rate seconds, both ends included.
    pub fn num_samples(&self) -> usize {
        (self.seconds.max(0.0) * self.sample_rate as f64).round() as usize + 1
    }

    /// Number of bones: `HUMANOID_BONES` per actor, the scene root with
    /// more than one actor, and the camera's with [`CinematicSpec::camera`].
    pub fn num_bones(&self) -> usize {
        let actors = self.actors.max(1);
        actors * HUMANOID_BONES + usize::from(actors > 1) + usize::from(self.camera)
    }

    /// Bytes that building this cinematic, compressing it and building its
    /// preview tier take at their peak, estimated:
    /// `PEAK_BYTES_PER_BONE_SAMPLE` per bone per sample.
    pub fn estimated_peak_bytes(&self) -> u64 {
        (self.num_bones() as u64)
            .saturating_mul(self.num_samples() as u64)
            .saturating_mul(PEAK_BYTES_PER_BONE_SAMPLE)
    }

    /// Refuses, before anything is built, a cinematic whose
    /// [`estimated_peak_bytes`](Self::estimated_peak_bytes) are over
    /// `limit`, naming both, so that flags each within its range cannot
    /// together exhaust the memory (64 actors for an hour: 61 GB).
    pub fn check_memory(&self, limit: u64) -> crate::error::Result<()> {
        let estimate = self.estimated_peak_bytes();
        if estimate <= limit {
            return Ok(());
        }
        let gb = |bytes: u64| bytes as f64 / 1e9;
        Err(crate::error::Error::InvalidSettings {
            message: format!(
                "{} actors for {} s ({} bones x {} samples) would take about {:.1} GB to build and compress, over the limit of {:.1} GB: fewer actors or seconds",
                self.actors.max(1),
                self.seconds,
                self.num_bones(),
                self.num_samples(),
                gb(estimate),
                gb(limit)
            ),
        })
    }
}

/// Name, parent (index within the actor) and bind offset of each humanoid bone.
const HUMANOID: [(&str, Option<usize>, [f32; 3]); HUMANOID_BONES] = [
    ("joint_Root", None, [0.0, 0.0, 0.0]),
    ("Hips", Some(0), [0.0, 94.0, 0.0]),
    ("Spine", Some(1), [0.0, 15.7, 0.0]),
    ("Chest", Some(2), [0.0, 9.0, -0.4]),
    ("Neck", Some(3), [0.0, 16.4, 0.0]),
    ("Head", Some(4), [0.0, 6.5, 0.0]),
    ("Shoulder_L", Some(3), [5.0, 13.0, -0.2]),
    ("UpperArm_L", Some(6), [5.3, 0.0, 0.0]),
    ("LowerArm_L", Some(7), [24.3, 0.0, 0.0]),
    ("Hand_L", Some(8), [22.3, 0.0, 0.0]),
    ("Shoulder_R", Some(3), [-5.0, 13.0, -0.2]),
    ("UpperArm_R", Some(10), [-5.3, 0.0, 0.0]),
    ("LowerArm_R", Some(11), [-24.3, 0.0, 0.0]),
    ("Hand_R", Some(12), [-22.3, 0.0, 0.0]),
    ("UpperLeg_L", Some(1), [9.5, -6.5, 0.0]),
    ("LowerLeg_L", Some(14), [0.0, -39.1, 0.0]),
    ("Foot_L", Some(15), [0.0, -41.0, 0.0]),
    ("Toes_L", Some(16), [0.0, -6.0, 10.5]),
    ("UpperLeg_R", Some(1), [-9.5, -6.5, 0.0]),
    ("LowerLeg_R", Some(18), [0.0, -39.1, 0.0]),
    ("Foot_R", Some(19), [0.0, -41.0, 0.0]),
    ("Toes_R", Some(20), [0.0, -6.0, 10.5]),
];

/// The skeleton of `actors` humanoids; with more than one, they hang under a scene root.
pub fn humanoid_skeleton(actors: usize) -> Skeleton {
    let actors = actors.max(1);
    let mut bones = Vec::with_capacity(actors * HUMANOID_BONES + 1);
    let scene = actors > 1;
    if scene {
        bones.push(Bone {
            name: "Scene".into(),
            parent: None,
            bind: Transform::IDENTITY,
        });
    }
    for actor in 0..actors {
        let base = bones.len();
        for (name, parent, offset) in HUMANOID {
            let name = if scene {
                format!("actor{actor}/{name}")
            } else {
                name.to_string()
            };
            let parent = match parent {
                Some(p) => Some(base + p),
                None if scene => Some(0),
                None => None,
            };
            let bind = Transform::from_rotation_translation(Quat::IDENTITY, Vec3::from(offset));
            bones.push(Bone { name, parent, bind });
        }
    }
    // The table above is well formed: parents precede children and nothing is
    // non-finite, so validation cannot fail.
    Skeleton::new(bones).unwrap_or_else(|e| unreachable!("built-in humanoid is valid: {e}"))
}

/// A procedural cinematic: every actor walks its own path for `spec.seconds`.
///
/// The bones are those of [`humanoid_skeleton`], then with
/// [`CinematicSpec::camera`] the [`CAMERA_BONE`] root; the float tracks are
/// each actor's [`FACE_TARGETS`] with [`CinematicSpec::face`], then
/// [`CAMERA_FOV_TRACK`]. The actors' bones do not depend on either.
///
/// # Panics
///
/// If `spec.sample_rate` is not a positive finite number.
pub fn cinematic(spec: &CinematicSpec) -> Clip {
    assert!(
        spec.sample_rate.is_finite() && spec.sample_rate > 0.0,
        "procedural cinematic: sample rate {} Hz is not positive and finite",
        spec.sample_rate
    );
    let actors = spec.actors.max(1);
    let skeleton = if spec.camera {
        let mut bones = humanoid_skeleton(actors).bones().to_vec();
        bones.push(Bone {
            name: CAMERA_BONE.to_string(),
            parent: None,
            bind: Transform::from_rotation_translation(
                Quat::IDENTITY,
                Vec3::new(0.0, 160.0, 600.0),
            ),
        });
        Skeleton::new(bones)
            .unwrap_or_else(|e| unreachable!("built-in humanoid and camera are valid: {e}"))
    } else {
        humanoid_skeleton(actors)
    };
    let skeleton = Arc::new(skeleton);
    let samples = spec.num_samples();
    let bones = skeleton.len();
    let first_actor_bone = usize::from(actors > 1);
    let styles: Vec<Style> = (0..actors)
        .map(|a| Style::new(spec.seed, a as u64, actors))
        .collect();
    let camera = spec.camera.then(|| Camera::new(spec.seed));

    let mut poses = Vec::with_capacity(samples * bones);
    let mut pose = skeleton.bind_pose();
    let mut fov = Vec::with_capacity(if spec.camera { samples } else { 0 });
    for sample in 0..samples {
        let time = sample as f32 / spec.sample_rate;
        for (actor, style) in styles.iter().enumerate() {
            let base = first_actor_bone + actor * HUMANOID_BONES;
            style.pose(time, &mut pose[base..base + HUMANOID_BONES]);
        }
        if let Some(camera) = &camera {
            // Every actor's root is in the scene's space (the scene root is
            // the identity): the camera frames their middle at chest height.
            let middle = (0..actors)
                .map(|a| pose[first_actor_bone + a * HUMANOID_BONES].translation)
                .sum::<Vec3>()
                / actors as f32;
            pose[bones - 1] = camera.pose(time, middle + Vec3::new(0.0, 130.0, 0.0));
            fov.push(camera.fov(time));
        }
        poses.extend_from_slice(&pose);
    }
    let mut floats = Vec::new();
    if spec.face {
        for actor in 0..actors {
            let face = Face::new(spec.seed, actor as u64, spec.seconds.max(0.0));
            let prefix = if actors > 1 {
                format!("actor{actor}/Face")
            } else {
                "Face".to_string()
            };
            let mut values = vec![Vec::with_capacity(samples); FACE_TARGETS.len()];
            for sample in 0..samples {
                let weights = face.weights(sample as f32 / spec.sample_rate);
                for (track, weight) in values.iter_mut().zip(weights) {
                    track.push(weight);
                }
            }
            for ((target, displacement), values) in FACE_TARGETS.into_iter().zip(values) {
                floats.push(
                    FloatTrack::morph_weight(
                        format!("{prefix}/{target}"),
                        values,
                        Some(displacement),
                        FACE_THRESHOLD_CM,
                    )
                    .unwrap_or_else(|e| unreachable!("procedural weights are finite: {e}")),
                );
            }
        }
    }
    if spec.camera {
        floats.push(
            FloatTrack::new(
                CAMERA_FOV_TRACK,
                FloatKind::FieldOfView,
                1,
                CAMERA_FOV_PRECISION,
                fov,
            )
            .unwrap_or_else(|e| unreachable!("procedural field of view is finite: {e}")),
        );
    }
    let name = format!("procedural-{actors}x{:.0}s", spec.seconds);
    Clip::from_poses(
        name,
        skeleton,
        spec.sample_rate,
        LengthUnit::CENTIMETRE,
        poses,
    )
    .and_then(|clip| clip.with_float_tracks(floats))
    .unwrap_or_else(|e| unreachable!("procedural motion is finite and well formed: {e}"))
}

/// One actor's face: when it blinks, when it talks, how its brows move.
struct Face {
    /// Start times of the blinks, increasing.
    blinks: Vec<f32>,
    /// Spoken phrases: start and end times, increasing.
    phrases: Vec<(f32, f32)>,
    /// Syllables per second.
    syllables: f32,
    phase: f32,
    brow_rate: f32,
}

/// How long a blink takes to close and to open, in seconds.
const BLINK_CLOSE: f32 = 0.06;
const BLINK_OPEN: f32 = 0.12;
/// How long a phrase takes to start and to fade, in seconds.
const PHRASE_RAMP: f32 = 0.15;

impl Face {
    /// A face for `seconds` of cinematic, its own random stream (the
    /// actors' gaits do not change with it).
    fn new(seed: u64, actor: u64, seconds: f64) -> Face {
        let mut rng =
            SplitMix64(seed ^ actor.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xFACE_FACE_FACE_FACE);
        let mut r = |lo: f32, hi: f32| lo + (hi - lo) * rng.next_f32();
        let end = seconds as f32 + 1.0;
        let mut blinks = Vec::new();
        let mut t = r(0.3, 2.0);
        while t < end {
            blinks.push(t);
            // Every 2 to 6 s, now and then twice in quick succession.
            t += if r(0.0, 1.0) < 0.15 {
                r(0.3, 0.5)
            } else {
                r(2.0, 6.0)
            };
        }
        let mut phrases = Vec::new();
        let mut t = r(0.2, 1.5);
        while t < end {
            let length = r(1.2, 4.0);
            phrases.push((t, t + length));
            t += length + r(0.5, 2.5);
        }
        Face {
            blinks,
            phrases,
            syllables: r(3.5, 5.0),
            phase: r(0.0, TAU),
            brow_rate: r(0.05, 0.15),
        }
    }

    /// The weights of [`FACE_TARGETS`] at `t` seconds, each in 0..=1.
    fn weights(&self, t: f32) -> [f32; 4] {
        // Blinks: a quick close and a slower open; the right eye a few
        // milliseconds after the left.
        let blink = |t: f32| {
            let last = self.blinks.partition_point(|&b| b <= t);
            let Some(start) = last.checked_sub(1).map(|i| self.blinks[i]) else {
                return 0.0;
            };
            let dt = t - start;
            if dt < BLINK_CLOSE {
                smoothstep(dt / BLINK_CLOSE)
            } else if dt < BLINK_CLOSE + BLINK_OPEN {
                1.0 - smoothstep((dt - BLINK_CLOSE) / BLINK_OPEN)
            } else {
                0.0
            }
        };
        // Speech: syllables opening the jaw within phrases, silent between.
        let phrase = self.phrases.partition_point(|&(start, _)| start <= t);
        let envelope = phrase.checked_sub(1).map_or(0.0, |i| {
            let (start, end) = self.phrases[i];
            let rise = smoothstep((t - start) / PHRASE_RAMP);
            let fall = smoothstep((end - t) / PHRASE_RAMP);
            rise.min(fall)
        });
        let syllable = 0.5 - 0.5 * (TAU * self.syllables * t + self.phase).cos();
        let stress = 0.65 + 0.35 * (TAU * 0.37 * t + 2.0 * self.phase).sin();
        let jaw = envelope * syllable * stress;
        // Brows: a slow drift, raised a little more while talking.
        let drift = 0.5 + 0.5 * (TAU * self.brow_rate * t + self.phase).sin();
        let brow = 0.35 * drift * drift + 0.25 * envelope;
        [
            jaw.clamp(0.0, 1.0),
            blink(t),
            blink(t - 0.008),
            brow.clamp(0.0, 1.0),
        ]
    }
}

/// 0 below 0, 1 above 1, an S curve between.
fn smoothstep(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

/// The camera: it orbits slowly round the cast, dollying in and out and
/// rising and falling, always looking at them, and zooms.
struct Camera {
    phase: f32,
}

impl Camera {
    fn new(seed: u64) -> Camera {
        let mut rng = SplitMix64(seed ^ 0xCA3E_7A00_CA3E_7A00);
        Camera {
            phase: TAU * rng.next_f32(),
        }
    }

    /// The camera's transform at `t` seconds, looking at `target` down its
    /// -Z axis (the glTF convention), y up, no roll.
    fn pose(&self, t: f32, target: Vec3) -> Transform {
        let azimuth = self.phase + 0.12 * t;
        let distance = 450.0 + 120.0 * (TAU * 0.03 * t + self.phase).sin();
        let height = 160.0 + 25.0 * (TAU * 0.05 * t).sin();
        let position = Vec3::new(
            target.x + distance * azimuth.sin(),
            height,
            target.z + distance * azimuth.cos(),
        );
        let look = (target - position).normalize_or(Vec3::NEG_Z);
        let yaw = (-look.x).atan2(-look.z);
        let pitch = look.y.clamp(-1.0, 1.0).asin();
        Transform::from_rotation_translation(
            Quat::from_euler(EulerRot::YXZ, yaw, pitch, 0.0),
            position,
        )
    }

    /// The vertical field of view at `t` seconds, in radians: 0.35 to 0.85
    /// (20° to 49°), slow zooms in and out.
    fn fov(&self, t: f32) -> f32 {
        let zoom = 0.5 + 0.5 * (TAU * 0.045 * t + 0.5 * self.phase).sin();
        0.35 + 0.5 * smoothstep(zoom)
    }
}

/// One actor's gait and gestures.
struct Style {
    start: Vec3,
    heading: f32,
    pace: f32,
    stride: f32,
    turn_rate: f32,
    gesture: [f32; 6],
    phase: f32,
}

impl Style {
    fn new(seed: u64, actor: u64, actors: usize) -> Style {
        let mut rng = SplitMix64(seed ^ actor.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut r = |lo: f32, hi: f32| lo + (hi - lo) * rng.next_f32();
        let ring = TAU * actor as f32 / actors as f32;
        Style {
            start: Vec3::new(300.0 * ring.cos(), 0.0, 300.0 * ring.sin())
                * (actors > 1) as u8 as f32,
            heading: r(0.0, TAU),
            pace: r(0.8, 1.1),
            stride: r(0.8, 1.2),
            turn_rate: r(-0.25, 0.25),
            gesture: [
                r(0.05, 0.2),
                r(0.07, 0.3),
                r(0.11, 0.4),
                r(0.13, 0.5),
                r(0.17, 0.6),
                r(0.19, 0.7),
            ],
            phase: r(0.0, TAU),
        }
    }

    fn pose(&self, t: f32, out: &mut [Transform]) {
        let g = |i: usize, amp: f32| {
            amp * (TAU * self.gesture[i] * t + self.phase * (i + 1) as f32).sin()
        };
        // Gait phase: one full cycle per two steps.
        let cycle = TAU * self.pace * t + self.phase;
        let s = cycle.sin();
        let c = cycle.cos();
        let stride = self.stride;

        // Root motion: walk along a slowly curving path at about 1.1 m/s.
        let heading = self.heading + self.turn_rate * t + g(0, 0.3);
        let speed = 110.0 * self.pace * stride;
        let distance = speed * t;
        let path = Vec3::new(heading.sin(), 0.0, heading.cos()) * distance;
        out[0].translation = self.start + path;
        out[0].rotation = Quat::from_rotation_y(heading);

        // Hips bob twice per cycle and sway side to side.
        out[1].translation = Vec3::new(2.0 * s, 94.0 + 2.5 * (2.0 * cycle).cos(), 0.0);
        out[1].rotation = Quat::from_euler(EulerRot::YXZ, 0.12 * s, 0.05 + g(1, 0.04), 0.06 * c);
        out[2].rotation = Quat::from_euler(EulerRot::YXZ, -0.08 * s, 0.04 + g(2, 0.05), -0.03 * c);
        out[3].rotation = Quat::from_euler(EulerRot::YXZ, -0.06 * s + g(3, 0.1), 0.02, 0.0);
        // Neck (4) stays at its bind pose; the head looks around.
        out[5].rotation = Quat::from_euler(EulerRot::YXZ, g(4, 0.5), g(5, 0.15), 0.0);

        // Shoulders hold a constant, non-bind pose; arms swing against the legs.
        out[6].rotation = Quat::from_rotation_z(-0.08);
        out[10].rotation = Quat::from_rotation_z(0.08);
        for (side, sign) in [(7usize, 1.0f32), (11, -1.0)] {
            let swing = -sign * 0.45 * stride * s;
            out[side].rotation = Quat::from_euler(
                EulerRot::XYZ,
                swing + g(2, 0.1),
                0.0,
                -sign * (1.2 + g(3, 0.08)),
            );
            out[side + 1].rotation = Quat::from_rotation_y(sign * (0.35 + 0.25 * (1.0 - sign * s)));
            out[side + 2].rotation = Quat::from_rotation_x(0.2 * c + g(5, 0.1));
        }

        // Legs: hip flexion, knee bend in swing, ankle roll, toe push-off.
        for (leg, sign) in [(14usize, 1.0f32), (18, -1.0)] {
            let phase = sign * s;
            let swing = (sign * c).max(0.0);
            out[leg].rotation =
                Quat::from_euler(EulerRot::XYZ, -0.5 * stride * phase, 0.0, sign * 0.03);
            out[leg + 1].rotation = Quat::from_rotation_x(0.1 + 0.9 * swing * swing);
            out[leg + 2].rotation = Quat::from_rotation_x(-0.25 * phase + 0.1 * swing);
            out[leg + 3].rotation = Quat::from_rotation_x(0.4 * (-phase).max(0.0));
        }
    }
}

/// A tiny deterministic generator, so the default motion never depends on a crate's version.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// A single chain of `bones` bones 1 cm apart (a rope, hair, a tail), each
/// bent 0.3 rad on its parent and turning a little per sample, the root
/// travelling 10 cm a second: the deep rig the compression benches and
/// tests use. It coils rather than runs straight because `f32` rotations
/// composed down a straight chain metres long cannot keep 0.01 cm.
pub fn coiled_chain(bones: usize, samples: usize) -> Clip {
    chain("chain", bones, samples, |t, phase| {
        Quat::from_euler(
            EulerRot::XYZ,
            0.02 * (1.3 * t + phase).sin(),
            0.01 * (0.7 * t + 2.0 * phase).cos(),
            0.3 + 0.015 * (1.9 * t + phase).sin(),
        )
    })
}

/// A straight chain of `bones` bones of 1 cm, each turning a few
/// thousandths of a radian: five metres at 500 bones, where the rounding of
/// every rotation adds up at the tip (the root still travels 10 cm/s).
pub fn straight_chain(bones: usize, samples: usize) -> Clip {
    chain("straight", bones, samples, |t, phase| {
        Quat::from_euler(
            EulerRot::XYZ,
            0.002 * (1.3 * t + phase).sin(),
            0.001 * (0.7 * t + 2.0 * phase).cos(),
            0.0015 * (1.9 * t + phase).sin(),
        )
    })
}

/// A chain of bones 1 cm apart whose bone `b` turns by `rotation(t, 0.37 b)`
/// at time `t`, its root travelling 10 cm/s along x.
fn chain(name: &str, bones: usize, samples: usize, rotation: impl Fn(f32, f32) -> Quat) -> Clip {
    let bones = bones.max(1);
    let chain: Vec<Bone> = (0..bones)
        .map(|b| Bone {
            name: format!("b{b}"),
            parent: b.checked_sub(1),
            bind: Transform::from_rotation_translation(
                Quat::IDENTITY,
                Vec3::new(0.0, if b == 0 { 0.0 } else { 1.0 }, 0.0),
            ),
        })
        .collect();
    let skeleton = Arc::new(
        Skeleton::new(chain).unwrap_or_else(|e| unreachable!("a chain is a valid skeleton: {e}")),
    );
    let mut poses = Vec::with_capacity(bones * samples.max(1));
    for s in 0..samples.max(1) {
        let t = s as f32 / 30.0;
        let mut pose = skeleton.bind_pose();
        for (b, local) in pose.iter_mut().enumerate() {
            local.rotation = rotation(t, b as f32 * 0.37);
        }
        pose[0].translation = Vec3::new(10.0 * t, 0.0, 0.0);
        poses.extend(pose);
    }
    Clip::from_poses(name, skeleton, 30.0, LengthUnit::CENTIMETRE, poses)
        .unwrap_or_else(|e| unreachable!("procedural motion is finite and well formed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::TrackKind;

    #[test]
    fn memory_estimates_refuse_the_hour_of_64_actors_and_let_the_default_by() {
        let spec = |actors, seconds| {
            CinematicSpec::default()
                .with_actors(actors)
                .with_seconds(seconds)
                .with_face(true)
                .with_camera(true)
        };
        let big = spec(64, 3600.0);
        assert_eq!(big.num_bones(), 64 * 22 + 2);
        assert_eq!(big.estimated_peak_bytes(), 1410 * 108_001 * 400);
        let message = big
            .check_memory(CINEMATIC_MEMORY_LIMIT)
            .unwrap_err()
            .to_string();
        for part in [
            "64 actors",
            "3600 s",
            "1410 bones x 108001 samples",
            "60.9 GB",
            "4.3 GB",
        ] {
            assert!(message.contains(part), "{part:?} missing from {message}");
        }
        // The demo's default cast for the longest length fits, and the
        // count is the clip's.
        let long = spec(4, 3600.0);
        assert!(long.check_memory(CINEMATIC_MEMORY_LIMIT).is_ok());
        let short = spec(3, 1.0);
        assert_eq!(short.num_bones(), cinematic(&short).num_bones());
        assert_eq!(
            spec(1, 1.0).num_bones(),
            cinematic(&spec(1, 1.0)).num_bones()
        );
    }

    #[test]
    fn one_actor_has_22_bones_and_the_requested_length() {
        let clip = cinematic(&CinematicSpec::default().with_seconds(4.0));
        assert_eq!(clip.num_bones(), HUMANOID_BONES);
        assert_eq!(clip.num_samples(), 121);
        assert!((clip.duration() - 4.0).abs() < 1e-9);
    }

    #[test]
    fn actors_hang_under_one_scene_root() {
        let clip = cinematic(&CinematicSpec::default().with_actors(3).with_seconds(1.0));
        let skeleton = clip.skeleton();
        assert_eq!(skeleton.len(), 1 + 3 * HUMANOID_BONES);
        assert_eq!(skeleton.parent(0), None);
        for actor in 0..3 {
            let root = 1 + actor * HUMANOID_BONES;
            assert_eq!(skeleton.parent(root), Some(0));
            assert_eq!(
                skeleton.bones()[root].name,
                format!("actor{actor}/joint_Root")
            );
        }
        // Actors move differently.
        let a = clip.pose(10)[1 + 1].rotation;
        let b = clip.pose(10)[1 + HUMANOID_BONES + 1].rotation;
        assert_ne!(a, b);
    }

    #[test]
    fn some_bones_are_still_some_translate_and_motion_is_smooth() {
        let clip = cinematic(&CinematicSpec::default().with_seconds(3.0));
        let kinds = clip.exact_track_kinds();
        assert_eq!(kinds[4][0], TrackKind::Default, "neck rotation");
        assert_eq!(kinds[6][0], TrackKind::Constant, "shoulder rotation");
        assert_eq!(kinds[0][1], TrackKind::Animated, "root motion");
        assert_eq!(kinds[1][1], TrackKind::Animated, "hip bob");
        assert_eq!(kinds[2][1], TrackKind::Default, "spine translation");
        assert!(kinds.iter().all(|k| k[2] == TrackKind::Default), "no scale");
        // Smooth: no bone turns faster than 9 rad/s (0.3 rad a sample at 30 Hz).
        for s in 1..clip.num_samples() {
            for (bone, (a, b)) in clip.pose(s - 1).iter().zip(clip.pose(s)).enumerate() {
                let step = a.rotation.angle_between(b.rotation);
                assert!(step < 0.3, "bone {bone} turns {step} rad at sample {s}");
            }
        }
    }

    #[test]
    fn generation_is_deterministic_and_seeded() {
        let spec = CinematicSpec::default().with_seconds(1.0).with_seed(7);
        assert_eq!(cinematic(&spec), cinematic(&spec));
        assert_ne!(
            cinematic(&spec).poses(),
            cinematic(&spec.clone().with_seed(8)).poses()
        );
    }

    #[test]
    fn face_and_camera_leave_the_actors_bones_as_they_were() {
        for actors in [1, 3] {
            let spec = CinematicSpec::default()
                .with_actors(actors)
                .with_seconds(2.0);
            let plain = cinematic(&spec);
            assert!(plain.float_tracks().is_empty());
            let full = cinematic(&spec.clone().with_face(true).with_camera(true));
            let bones = plain.num_bones();
            assert_eq!(full.num_bones(), bones + 1);
            assert_eq!(&full.skeleton().bones()[..bones], plain.skeleton().bones());
            let camera = &full.skeleton().bones()[bones];
            assert_eq!((camera.name.as_str(), camera.parent), (CAMERA_BONE, None));
            for s in 0..plain.num_samples() {
                assert_eq!(&full.pose(s)[..bones], plain.pose(s), "sample {s}");
            }
            assert_eq!(full.name(), plain.name());
            let face_only = cinematic(&spec.clone().with_face(true));
            assert_eq!(face_only.poses(), plain.poses());
            assert_eq!(face_only.float_tracks().len(), actors * FACE_TARGETS.len());
            assert_eq!(full.float_tracks().len(), actors * FACE_TARGETS.len() + 1);
        }
    }

    #[test]
    fn faces_blink_in_short_pulses_and_talk_in_phrases() {
        let rate = 30.0;
        let spec = CinematicSpec::default()
            .with_seconds(60.0)
            .with_actors(2)
            .with_face(true);
        let clip = cinematic(&spec);
        let names: Vec<&str> = clip.float_tracks().iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            [
                "actor0/Face/jaw_open",
                "actor0/Face/blink_l",
                "actor0/Face/blink_r",
                "actor0/Face/brow_up",
                "actor1/Face/jaw_open",
                "actor1/Face/blink_l",
                "actor1/Face/blink_r",
                "actor1/Face/brow_up"
            ]
        );
        for (track, (_, displacement)) in
            clip.float_tracks().iter().zip(FACE_TARGETS.iter().cycle())
        {
            assert_eq!(
                track.precision(),
                FACE_THRESHOLD_CM / displacement,
                "{}",
                track.name()
            );
            assert!(
                track.values().iter().all(|v| (0.0..=1.0).contains(v)),
                "{} leaves 0..1",
                track.name()
            );
        }
        let one = cinematic(&spec.clone().with_actors(1));
        assert_eq!(one.float_tracks()[0].name(), "Face/jaw_open");
        assert_eq!(one.float_tracks()[0].precision(), 0.01 / 3.0);

        let values = |k: usize| clip.float_tracks()[k].values();
        // Blinks: every pulse over within 0.2 s, one every few seconds, and
        // the eyes close fully.
        let mut pulses = 0;
        let mut run = 0;
        for &v in values(1) {
            if v > 0.0 {
                run += 1;
                assert!(run as f32 / rate <= 0.2, "a blink lasts over 0.2 s");
            } else if run > 0 {
                pulses += 1;
                run = 0;
            }
        }
        assert!((10..=40).contains(&pulses), "{pulses} blinks in a minute");
        assert!(values(1).iter().any(|&v| v > 0.95), "eyes never close");
        assert_ne!(values(1), values(2), "the eyes are a few ms apart");
        assert_ne!(values(1), values(5), "actors blink at their own times");
        // Speech: silences of half a second or more, and syllables (local
        // maxima of the jaw) several times a second while talking.
        let jaw = values(0);
        let silent = jaw
            .windows(15)
            .filter(|w| w.iter().all(|&v| v == 0.0))
            .count();
        assert!(silent > 0, "no pause");
        let syllables = jaw
            .windows(3)
            .filter(|w| w[1] > 0.1 && w[1] >= w[0] && w[1] > w[2])
            .count();
        assert!(syllables > 60, "{syllables} syllables in a minute");
        assert!(jaw.iter().any(|&v| v > 0.6), "the jaw never opens wide");
        let brow = values(3);
        let (low, high) = brow
            .iter()
            .fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
        assert!(high - low > 0.2, "brows barely move: {low}..{high}");
    }

    #[test]
    fn the_camera_keeps_the_cast_in_view_and_zooms() {
        let spec = CinematicSpec::default()
            .with_seconds(60.0)
            .with_actors(2)
            .with_camera(true);
        let clip = cinematic(&spec);
        let camera = clip.num_bones() - 1;
        let fov = clip.float_tracks().last().unwrap();
        assert_eq!(fov.name(), CAMERA_FOV_TRACK);
        assert_eq!(fov.kind(), FloatKind::FieldOfView);
        assert_eq!(fov.precision(), CAMERA_FOV_PRECISION);
        let mut travelled = 0.0;
        for s in 0..clip.num_samples() {
            let pose = clip.pose(s);
            let view = pose[camera];
            let middle = (pose[1].translation + pose[1 + HUMANOID_BONES].translation) / 2.0
                + Vec3::new(0.0, 130.0, 0.0);
            let forward = view.rotation * Vec3::NEG_Z;
            let towards = (middle - view.translation).normalize();
            assert!(forward.dot(towards) > 0.999, "sample {s}: looks away");
            if s > 0 {
                travelled += (view.translation - clip.pose(s - 1)[camera].translation).length();
                let zoom = (fov.sample(s)[0] - fov.sample(s - 1)[0]).abs();
                assert!(zoom < 0.01, "sample {s}: zooms by {zoom} rad");
            }
        }
        assert!(travelled > 1000.0, "the camera moves {travelled} cm");
        let (low, high) = fov
            .values()
            .iter()
            .fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
        assert!(low >= 0.35 && high <= 0.85, "{low}..{high}");
        assert!(high - low > 0.3, "barely zooms: {low}..{high}");
        let again = cinematic(&spec.clone().with_face(true));
        assert_eq!(again.poses(), clip.poses());
        assert_eq!(cinematic(&spec), clip);
    }
}
