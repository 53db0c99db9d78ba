//! Shot-aware compression: the error bound of each bone at each sample set
//! by how large it can show on screen through the clip's own camera.
//!
//! A cinematic knows its camera in advance. An error a viewer can see is an
//! error in pixels, and one pixel at depth `z` through a camera of vertical
//! field of view `fov` on an image `H` pixels high spans `z / f` (clip
//! units), where `f = (H / 2) / tan(fov / 2)` is the focal length in
//! pixels. A displacement `d` of a point at `(u, v) = (x / z, y / z)` in the
//! camera's frame moves its image by at most `f |d| sqrt(1 + u^2 + v^2) / z`
//! pixels (the largest singular value of the projection's derivative), so a
//! virtual vertex may be off by `P z / (f sqrt(1 + u^2 + v^2))` for an error
//! of at most `P` pixels. That bound, never below the object-space
//! threshold and never above the ceiling, replaces the scalar threshold in
//! the bit-rate search; vertices behind the camera or farther out of the
//! frame than the ceiling can bring back into it get the ceiling.
//!
//! The camera is part of the picture: its own error moves every vertex on
//! screen. Its bone (and every bone above it) is held to a bound tighter
//! than the threshold, set so that its rotation and translation move no
//! vertex by more than [`CAMERA_SHARE`] of the pixels, and its field of
//! view keeps its float track's precision, whose effect on each vertex is
//! taken off that vertex's pixels. The final check then projects the
//! decoded vertices through the decoded camera and compares them with the
//! source's through the source camera, at every sample: that measurement,
//! not the estimate, is what the compressor promises.
//!
//! The camera follows glTF's convention: it looks down its bone's local -Z
//! axis with +Y up, as the glTF importer and the procedural cinematic give
//! it. Its field of view is the [`FloatKind::FieldOfView`] track named
//! `{bone}/yfov`.

use glam::{DQuat, DVec3};
use rayon::prelude::*;

use crate::clip::{Clip, FloatKind, Transform};
use crate::compressed::CompressedClip;
use crate::error::{Error, Result};
use crate::metric::{local_to_object, shell_vertices, vertices_error, DTransform};
use crate::sample::Sampling;

/// The image size [`ScreenBound`] assumes unless told: 3840 x 2160 (4K UHD).
pub const DEFAULT_RESOLUTION: (u32, u32) = (3840, 2160);

/// The ceiling [`ScreenBound`] puts on any bone's error unless told, in
/// centimetres: 1 cm, so that shadows, reflections and limbs out of the
/// frame stay sane.
pub const DEFAULT_MAX_CM: f64 = 1.0;

/// The pixel bounds [`ScreenBound::check`] accepts.
pub const SCREEN_PX_RANGE: std::ops::RangeInclusive<f64> = 0.01..=100.0;

/// The ceilings, in centimetres, [`ScreenBound::check`] accepts.
pub const MAX_CM_RANGE: std::ops::RangeInclusive<f64> = 0.0001..=100.0;

/// Share of the pixel bound kept for the camera's own error (its bone's
/// rotation and translation); the vertices get the rest, less what the
/// field of view's precision may move them.
pub const CAMERA_SHARE: f64 = 0.1;

/// Share of the pixel bound the camera's field of view may take at the
/// image's corner: its track's precision is tightened to that.
pub const FOV_SHARE: f64 = 0.05;

/// Share of each vertex's pixels kept back for what the first-order bound
/// leaves out: the projection's curvature, relative to the first-order
/// term about the error over the depth, which the bound itself keeps
/// under `pixels / f` (2e-4 for half a pixel at 4K) in the frame.
const CURVATURE_SHARE: f64 = 0.01;

/// An error bound in pixels on screen through a camera of the clip, in
/// place of the one object-space threshold (which stays the floor).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ScreenBound {
    /// Largest error on screen of any virtual vertex at any sample, in
    /// pixels, in [`SCREEN_PX_RANGE`].
    pub pixels: f64,
    /// The camera's bone; `None` takes the clip's one camera.
    pub camera: Option<String>,
    /// Image width and height in pixels. Default: [`DEFAULT_RESOLUTION`].
    pub resolution: (u32, u32),
    /// Largest object-space error of any bone anywhere, in centimetres, in
    /// [`MAX_CM_RANGE`]. Default: [`DEFAULT_MAX_CM`].
    pub max_cm: f64,
}

impl ScreenBound {
    /// A bound of `pixels` through the clip's one camera, at 4K, with a
    /// 1 cm ceiling.
    pub fn new(pixels: f64) -> ScreenBound {
        ScreenBound {
            pixels,
            camera: None,
            resolution: DEFAULT_RESOLUTION,
            max_cm: DEFAULT_MAX_CM,
        }
    }

    /// Names the camera's bone.
    pub fn with_camera(mut self, bone: impl Into<String>) -> Self {
        self.camera = Some(bone.into());
        self
    }

    /// Sets the image size.
    pub fn with_resolution(mut self, width: u32, height: u32) -> Self {
        self.resolution = (width, height);
        self
    }

    /// Sets the ceiling.
    pub fn with_max_cm(mut self, cm: f64) -> Self {
        self.max_cm = cm;
        self
    }

    /// The bound a front end's options ask for: `None` without `pixels`,
    /// and an error when the options that shape a bound (`camera`,
    /// `resolution`, `max_cm`) come without it. Every front end (the
    /// program's flags, Python's keywords) builds its bound here.
    pub fn from_options(
        pixels: Option<f64>,
        camera: Option<String>,
        resolution: Option<(u32, u32)>,
        max_cm: Option<f64>,
    ) -> Result<Option<ScreenBound>> {
        let Some(pixels) = pixels else {
            if camera.is_some() || resolution.is_some() || max_cm.is_some() {
                return Err(Error::InvalidSettings {
                    message: "a camera, a resolution and a ceiling shape a screen-space bound: \
                              give the pixels (--screen-px, screen_px) too"
                        .into(),
                });
            }
            return Ok(None);
        };
        let mut bound = ScreenBound::new(pixels);
        bound.camera = camera;
        bound.resolution = resolution.unwrap_or(DEFAULT_RESOLUTION);
        bound.max_cm = max_cm.unwrap_or(DEFAULT_MAX_CM);
        Ok(Some(bound))
    }

    /// The bound a file states it was compressed to
    /// ([`ClipMeta::screen`](crate::format::ClipMeta::screen)),
    /// its camera named by its bone; `None` for a file without one.
    pub fn stated_by(meta: &crate::format::ClipMeta) -> Option<ScreenBound> {
        let s = meta.screen?;
        let camera = meta.skeleton.bones().get(s.camera as usize)?.name.clone();
        Some(
            ScreenBound::new(s.pixels)
                .with_camera(camera)
                .with_resolution(s.resolution.0, s.resolution.1)
                .with_max_cm(s.max_cm),
        )
    }

    /// Checks every field against its range; the error names the field.
    pub fn check(&self, threshold_cm: f64) -> Result<()> {
        let bad = |message: String| Err(Error::InvalidSettings { message });
        if !SCREEN_PX_RANGE.contains(&self.pixels) {
            return bad(format!(
                "screen_px must be in [{}, {}] pixels, not {}",
                SCREEN_PX_RANGE.start(),
                SCREEN_PX_RANGE.end(),
                self.pixels
            ));
        }
        let (w, h) = self.resolution;
        if !(1..=65536).contains(&w) || !(1..=65536).contains(&h) {
            return bad(format!(
                "resolution must be 1 to 65536 pixels each way, not {w}x{h}"
            ));
        }
        if !MAX_CM_RANGE.contains(&self.max_cm) {
            return bad(format!(
                "max_cm must be in [{}, {}] cm, not {}",
                MAX_CM_RANGE.start(),
                MAX_CM_RANGE.end(),
                self.max_cm
            ));
        }
        if self.max_cm < threshold_cm {
            return bad(format!(
                "max_cm {} is under the threshold {threshold_cm} cm: the ceiling bounds the \
                 error from above, the threshold from below",
                self.max_cm
            ));
        }
        Ok(())
    }
}

/// A clip's camera: its bone and its field of view's float track.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CameraOf {
    pub bone: usize,
    pub fov_track: usize,
}

/// The cameras of `clip`: each bone with a field-of-view track named
/// `{bone}/yfov` (the importers' and the procedural cinematic's naming).
pub(crate) fn cameras(clip: &Clip) -> Vec<CameraOf> {
    let skeleton = clip.skeleton();
    clip.float_tracks()
        .iter()
        .enumerate()
        .filter(|(_, t)| t.kind() == FloatKind::FieldOfView)
        .filter_map(|(fov_track, t)| {
            let node = t.name().strip_suffix("/yfov")?;
            let bone = skeleton.bones().iter().position(|b| b.name == node)?;
            Some(CameraOf { bone, fov_track })
        })
        .collect()
}

/// The camera `bound` names in `clip`, or its one camera.
pub(crate) fn find_camera(clip: &Clip, bound: &ScreenBound) -> Result<CameraOf> {
    let all = cameras(clip);
    let names = || {
        all.iter()
            .map(|c| format!("'{}'", clip.skeleton().bones()[c.bone].name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &bound.camera {
        Some(name) => all
            .iter()
            .find(|c| clip.skeleton().bones()[c.bone].name == *name)
            .cloned()
            .ok_or_else(|| Error::InvalidSettings {
                message: format!(
                    "'{}' has no camera '{name}' (a bone with a field-of-view track \
                     '{name}/yfov'); its cameras: {}",
                    clip.name(),
                    if all.is_empty() {
                        "none".to_string()
                    } else {
                        names()
                    }
                ),
            }),
        None => match all.len() {
            1 => Ok(all[0].clone()),
            0 => Err(Error::InvalidSettings {
                message: format!(
                    "'{}' has no camera (a bone with a field-of-view track '{{bone}}/yfov'), \
                     which a screen-space bound projects through",
                    clip.name()
                ),
            }),
            n => Err(Error::InvalidSettings {
                message: format!(
                    "'{}' has {n} cameras ({}): name the one to bound the error through",
                    clip.name(),
                    names()
                ),
            }),
        },
    }
}

/// A camera at one sample, in clip units.
#[derive(Clone, Copy, Debug)]
pub(crate) struct View {
    /// Object space to the camera's frame (inverse rotation), and its position.
    to_camera: DQuat,
    position: DVec3,
    /// Focal length in pixels.
    f: f64,
    half_width: f64,
    half_height: f64,
    /// The vertical field of view, radians.
    fov: f64,
}

/// Where a point falls through a [`View`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Projected {
    /// Depth in front of the camera (negative behind it).
    pub depth: f64,
    /// `x / z` and `y / z` in the camera's frame.
    pub u: f64,
    pub v: f64,
    /// Pixels from the image's centre, x right and y up.
    pub px: f64,
    pub py: f64,
}

impl View {
    /// The camera whose object transform is `camera` and whose vertical
    /// field of view is `fov` radians, on an image of `resolution`.
    pub fn new(camera: &DTransform, fov: f64, resolution: (u32, u32)) -> View {
        let half_height = f64::from(resolution.1) / 2.0;
        View {
            to_camera: camera.rotation.inverse(),
            position: camera.translation,
            f: half_height / (fov / 2.0).tan(),
            half_width: f64::from(resolution.0) / 2.0,
            half_height,
            fov,
        }
    }

    /// Where `p` (object space) falls.
    pub fn project(&self, p: DVec3) -> Projected {
        let c = self.to_camera * (p - self.position);
        let depth = -c.z;
        let (u, v) = (c.x / depth, c.y / depth);
        Projected {
            depth,
            u,
            v,
            px: self.f * u,
            py: self.f * v,
        }
    }

    /// Whether a projected point is in front of the camera and inside the image.
    pub fn in_frame(&self, p: &Projected) -> bool {
        p.depth > 0.0 && p.px.abs() <= self.half_width && p.py.abs() <= self.half_height
    }

    /// The largest `1 + u^2 + v^2` of a point inside the image.
    fn max_slant_squared(&self) -> f64 {
        let (u, v) = (self.half_width / self.f, self.half_height / self.f);
        1.0 + u * u + v * v
    }
}

/// A screen bound resolved on one clip: what the search and the final
/// check need.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub bound: ScreenBound,
    pub camera: CameraOf,
    /// The camera's bone and every bone above it.
    pub camera_chain: Vec<bool>,
    /// The ceiling and the floor, clip units.
    pub max: f64,
    pub floor: f64,
    /// The field of view's precision, radians.
    pub fov_precision: f64,
    /// The camera bone's shell distance at each sample, clip units (see
    /// [`Resolved::camera_shells`]).
    pub camera_shells: Vec<f64>,
}

impl Resolved {
    /// Resolves `bound` on `clip`; `floor` is the object-space threshold
    /// the search aims at (clip units).
    pub fn new(clip: &Clip, bound: &ScreenBound, floor: f64) -> Result<Resolved> {
        let camera = find_camera(clip, bound)?;
        let bones = clip.num_bones();
        let mut camera_chain = vec![false; bones];
        let mut cursor = Some(camera.bone);
        while let Some(b) = cursor {
            camera_chain[b] = true;
            cursor = clip.skeleton().parent(b);
        }
        // The field of view moves a point `r` pixels from the centre by
        // `r * error / sin(fov)` pixels: held to `FOV_SHARE` of the bound at
        // the image's corner at the narrowest field of view, it costs a few
        // bits of one track.
        let fov = &clip.float_tracks()[camera.fov_track];
        let narrowest = (0..clip.num_samples())
            .map(|s| f64::from(fov.sample(s)[0]))
            .fold(f64::INFINITY, f64::min);
        let corner = f64::from(bound.resolution.0).hypot(f64::from(bound.resolution.1)) / 2.0;
        let needed = FOV_SHARE * bound.pixels * narrowest.sin().abs() / corner;
        let fov_precision = f64::from(fov.precision()).min(needed);
        Ok(Resolved {
            bound: bound.clone(),
            camera,
            camera_chain,
            max: clip.unit().from_cm(bound.max_cm),
            floor,
            fov_precision,
            camera_shells: Vec::new(),
        })
    }

    /// The view of the source at `sample`, from its object transforms
    /// `[sample * bones + bone]`.
    pub fn source_view(&self, clip: &Clip, raw_object: &[DTransform], sample: usize) -> View {
        let bones = clip.num_bones();
        let fov = clip.float_tracks()[self.camera.fov_track].sample(sample)[0];
        View::new(
            &raw_object[sample * bones + self.camera.bone],
            f64::from(fov),
            self.bound.resolution,
        )
    }

    /// The camera bone's shell distance at each sample: the nearest depth
    /// of any joint in the frame, less `reach` (the farthest a virtual
    /// vertex lies from its joint), at least 1 cm, so that its shell's
    /// error bounds both the camera's turn (shell error over shell
    /// distance) and its move (at most the shell error, seen from no nearer
    /// than that). 1 m at a sample with no joint in the frame.
    pub fn camera_shells(
        &self,
        clip: &Clip,
        raw_object: &[DTransform],
        samples: usize,
        reach: f64,
    ) -> Vec<f64> {
        let bones = clip.num_bones();
        let one_cm = clip.unit().from_cm(1.0);
        (0..samples)
            .into_par_iter()
            .map(|s| {
                let view = self.source_view(clip, raw_object, s);
                let nearest = (0..bones)
                    .filter(|&b| !self.camera_chain[b])
                    .map(|b| view.project(raw_object[s * bones + b].translation))
                    .filter(|p| view.in_frame(p))
                    .map(|p| p.depth)
                    .fold(f64::INFINITY, f64::min);
                match nearest.is_finite() {
                    true => (nearest - reach).max(one_cm),
                    false => clip.unit().from_cm(100.0),
                }
            })
            .collect()
    }

    /// The bound of every bone at every sample, `[sample * bones + bone]`,
    /// clip units, from the source's virtual vertices.
    pub fn bounds(
        &self,
        clip: &Clip,
        raw_object: &[DTransform],
        raw_vertices: &[[DVec3; 3]],
        samples: usize,
    ) -> Vec<f64> {
        let bones = clip.num_bones();
        let pixels = self.bound.pixels;
        (0..samples)
            .into_par_iter()
            .flat_map_iter(|s| {
                let view = self.source_view(clip, raw_object, s);
                // The camera's share: its turn moves a point by about
                // f * angle * slant^2 pixels, its move by f * d * slant / z.
                let camera = CAMERA_SHARE * pixels * self.camera_shells[s]
                    / (view.f * view.max_slant_squared())
                    / 2.0;
                // How far the field of view's precision moves a point one
                // pixel from the centre: d f / d fov * precision / f.
                let half = view.fov / 2.0;
                let fov_per_pixel =
                    self.fov_precision / (2.0 * half.sin() * half.cos()).max(f64::MIN_POSITIVE);
                (0..bones).map(move |b| {
                    if self.camera_chain[b] {
                        return self.floor.min(camera);
                    }
                    let vertex_bound = |p: DVec3| {
                        let at = view.project(p);
                        if at.depth <= 0.0 {
                            return self.max;
                        }
                        let slant = (1.0 + at.u * at.u + at.v * at.v).sqrt();
                        let outside = (at.px.abs() - view.half_width)
                            .max(at.py.abs() - view.half_height)
                            .max(0.0);
                        if outside > view.f * self.max * slant / at.depth {
                            return self.max;
                        }
                        let fov_px = (at.px * at.px + at.py * at.py).sqrt() * fov_per_pixel;
                        let own =
                            ((1.0 - CAMERA_SHARE) * pixels - fov_px) * (1.0 - CURVATURE_SHARE);
                        if own <= 0.0 {
                            return self.floor;
                        }
                        own * at.depth / (view.f * slant)
                    };
                    let v = &raw_vertices[s * bones + b];
                    let tightest = vertex_bound(v[0])
                        .min(vertex_bound(v[1]))
                        .min(vertex_bound(v[2]));
                    tightest.clamp(self.floor, self.max)
                })
            })
            .collect()
    }
}

/// What the final check measured: the worst error on screen, and the
/// worst in object space.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ScreenReport {
    /// The bound asked for, pixels.
    pub pixels: f64,
    /// The ceiling asked for, centimetres.
    pub max_cm: f64,
    /// The largest distance on screen between a virtual vertex of the
    /// decoded pose through the decoded camera and the same vertex of the
    /// source through the source camera, of the vertices the source has in
    /// the frame, pixels.
    pub worst_px: f64,
    /// Bone and sample of `worst_px`.
    pub worst_px_at: (usize, usize),
    /// The largest object-space error of any bone (the camera's own
    /// included) at any sample, centimetres.
    pub worst_cm: f64,
}

/// Measures `compressed` against `stored` at every sample: each bone
/// against its bound (`bounds`, clip units, with the vertices' `offsets`),
/// and each vertex the source has in the frame on screen. The (bone,
/// sample) pairs over either, and the measurement.
pub(crate) fn check(
    resolved: &Resolved,
    stored: &Clip,
    compressed: &CompressedClip,
    raw_object: &[DTransform],
    raw_vertices: &[[DVec3; 3]],
    offsets: &[DVec3],
    bounds: &[f64],
) -> Result<(Vec<(usize, usize)>, ScreenReport)> {
    let bones = stored.num_bones();
    let samples = compressed.meta().num_samples();
    let rate = f64::from(compressed.meta().sample_rate);
    let fov_index = compressed.meta().float_offsets()[resolved.camera.fov_track] as usize;
    let values = compressed.meta().num_float_values();
    let unit = stored.unit();
    type Measured = (Vec<(usize, usize)>, f64, (usize, usize), f64);
    let per_sample: Vec<Measured> = (0..samples)
        .into_par_iter()
        .map(|s| -> Result<Measured> {
            let mut pose = vec![Transform::IDENTITY; bones];
            let mut floats = vec![0.0f32; values];
            compressed.sample(s as f64 / rate, &mut pose)?;
            compressed.sample_floats(s as f64 / rate, &mut floats)?;
            let mut object = vec![DTransform::from_f32(&Transform::IDENTITY); bones];
            local_to_object(stored.skeleton(), &pose, &mut object);
            let source = resolved.source_view(stored, raw_object, s);
            let decoded = View::new(
                &object[resolved.camera.bone],
                f64::from(floats[fov_index]),
                resolved.bound.resolution,
            );
            let mut over = Vec::new();
            let (mut worst_px, mut worst_at, mut worst_cm) = (0.0f64, (0, s), 0.0f64);
            for (b, decoded_object) in object.iter().enumerate() {
                let i = s * bones + b;
                let vertices = shell_vertices(decoded_object, offsets[i]);
                let e = vertices_error(&raw_vertices[i], &vertices);
                worst_cm = worst_cm.max(unit.to_cm(e));
                let mut is_over = e > bounds[i] || e.is_nan();
                if !resolved.camera_chain[b] {
                    for (raw, dec) in raw_vertices[i].iter().zip(&vertices) {
                        let from = source.project(*raw);
                        if !source.in_frame(&from) {
                            continue;
                        }
                        let to = decoded.project(*dec);
                        let px = if to.depth > 0.0 {
                            (to.px - from.px).hypot(to.py - from.py)
                        } else {
                            f64::INFINITY
                        };
                        if px > worst_px || px.is_nan() {
                            worst_px = px;
                            worst_at = (b, s);
                        }
                        is_over |= px > resolved.bound.pixels || px.is_nan();
                    }
                }
                if is_over {
                    over.push((b, s));
                }
            }
            Ok((over, worst_px, worst_at, worst_cm))
        })
        .collect::<Result<_>>()?;
    let mut report = ScreenReport {
        pixels: resolved.bound.pixels,
        max_cm: resolved.bound.max_cm,
        ..ScreenReport::default()
    };
    let mut over = Vec::new();
    for (o, px, at, cm) in per_sample {
        over.extend(o);
        if px > report.worst_px {
            report.worst_px = px;
            report.worst_px_at = at;
        }
        report.worst_cm = report.worst_cm.max(cm);
    }
    Ok((over, report))
}

#[cfg(test)]
mod tests {
    use glam::{DQuat, DVec3};

    use crate::clip::{Clip, Transform};
    use crate::compress::{compress, CompressSettings, ScreenBound};
    use crate::procedural::{cinematic, CinematicSpec, CAMERA_BONE, CAMERA_FOV_TRACK};
    use crate::sample::Sampling;

    /// Object-space rotation and position of every bone, in `f64`, by a
    /// walk of the parents written here (the crate's is not used).
    fn object_space(clip: &Clip, local: &[Transform]) -> Vec<(DQuat, DVec3)> {
        let mut out: Vec<(DQuat, DVec3)> = Vec::with_capacity(local.len());
        for (b, t) in local.iter().enumerate() {
            let r = t.rotation.as_dquat().normalize();
            let p = t.translation.as_dvec3();
            out.push(match clip.skeleton().parent(b) {
                Some(parent) => {
                    let (pr, pp) = out[parent];
                    (pr * r, pp + pr * p)
                }
                None => (r, p),
            });
        }
        out
    }

    /// Pixels of `p` through a camera at `(rotation, position)` looking
    /// down its -Z with vertical field of view `fov` on a `w` x `h` image;
    /// `None` behind the camera, or with `inside` outside the image.
    fn pixel(
        camera: (DQuat, DVec3),
        fov: f64,
        (w, h): (f64, f64),
        p: DVec3,
        inside: bool,
    ) -> Option<(f64, f64)> {
        let c = camera.0.inverse() * (p - camera.1);
        if c.z >= 0.0 {
            return None;
        }
        let focal = (h / 2.0) / (fov / 2.0).tan();
        let (x, y) = (focal * c.x / -c.z, focal * c.y / -c.z);
        (!inside || (x.abs() <= w / 2.0 && y.abs() <= h / 2.0)).then_some((x, y))
    }

    #[test]
    fn a_half_pixel_bound_holds_on_screen_and_shrinks_the_file() {
        let spec = CinematicSpec::default()
            .with_actors(3)
            .with_seconds(3.0)
            .with_face(true)
            .with_camera(true);
        let clip = cinematic(&spec);
        let (strict, _) = compress(&clip, &CompressSettings::default()).unwrap();
        let settings = CompressSettings::default().with_screen_bound(Some(ScreenBound::new(0.5)));
        let (shot, stats) = compress(&clip, &settings).unwrap();
        let measured = stats.screen.expect("a screen report");
        assert!(measured.worst_px <= 0.5, "{measured:?}");
        let (a, b) = (strict.codec_size(), shot.codec_size());
        assert!(b * 5 < a * 4, "shot-aware {b} bytes against {a}");

        let camera = clip
            .skeleton()
            .bones()
            .iter()
            .position(|b| b.name == CAMERA_BONE)
            .unwrap();
        let fov_track = clip
            .float_tracks()
            .iter()
            .position(|t| t.name() == CAMERA_FOV_TRACK)
            .unwrap();
        let fov_value = shot.meta().float_offsets()[fov_track] as usize;
        let shell = clip.unit().from_cm(3.0);
        let image = (3840.0, 2160.0);
        let rate = f64::from(clip.sample_rate());
        let mut pose = vec![Transform::IDENTITY; clip.num_bones()];
        let mut floats = vec![0.0; shot.meta().num_float_values()];
        let (mut worst_px, mut worst_decoded_camera_px, mut worst_cm) = (0.0f64, 0.0f64, 0.0f64);
        let mut seen = 0usize;
        for s in 0..clip.num_samples() {
            shot.sample(s as f64 / rate, &mut pose).unwrap();
            shot.sample_floats(s as f64 / rate, &mut floats).unwrap();
            let source = object_space(&clip, clip.pose(s));
            let decoded = object_space(&clip, &pose);
            let source_fov = f64::from(clip.float_tracks()[fov_track].sample(s)[0]);
            let decoded_fov = f64::from(floats[fov_value]);
            for b in (0..clip.num_bones()).filter(|&b| b != camera) {
                for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
                    let at = |(r, p): (DQuat, DVec3)| p + r * (axis * shell);
                    let (from, to) = (at(source[b]), at(decoded[b]));
                    worst_cm = worst_cm.max(clip.unit().to_cm(from.distance(to)));
                    let Some(x) = pixel(source[camera], source_fov, image, from, true) else {
                        continue;
                    };
                    seen += 1;
                    // Both poses through the source's camera.
                    if let Some(y) = pixel(source[camera], source_fov, image, to, false) {
                        worst_px = worst_px.max((x.0 - y.0).hypot(x.1 - y.1));
                    } else {
                        worst_px = f64::INFINITY;
                    }
                    // The decoded pose through the decoded camera.
                    match pixel(decoded[camera], decoded_fov, image, to, false) {
                        Some(y) => {
                            worst_decoded_camera_px =
                                worst_decoded_camera_px.max((x.0 - y.0).hypot(x.1 - y.1))
                        }
                        None => worst_decoded_camera_px = f64::INFINITY,
                    }
                }
            }
        }
        assert!(
            seen > clip.num_samples() * 20,
            "the cast is in the frame: {seen}"
        );
        assert!(worst_px <= 0.5, "through the source camera: {worst_px} px");
        assert!(
            worst_decoded_camera_px <= 0.5,
            "through the decoded camera: {worst_decoded_camera_px} px"
        );
        assert!(worst_cm <= 1.0, "object space: {worst_cm} cm");
        // Looser than the strict file somewhere, or the bound did nothing.
        assert!(worst_cm > 0.02, "object space: {worst_cm} cm");
        eprintln!("strict {a} B, shot-aware {b} B ({:.2} x); {worst_px:.3} px, {worst_decoded_camera_px:.3} px with the decoded camera, {worst_cm:.4} cm; compressor: {measured:?}", a as f64 / b as f64);
    }
}
