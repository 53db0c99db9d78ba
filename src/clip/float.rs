//! Float tracks: the animated values of a cinematic that are not bones.
//!
//! A face's morph-target (blend shape) weights, a camera's field of view, a
//! light's colour, a focus distance: named tracks of 1 to 4 components,
//! sampled at the clip's rate, each with its own precision in its own unit.
//! The precision is the largest error the codec may leave in any component
//! at any sample; for a morph weight it follows from the mesh (see
//! [`FloatTrack::morph_weight`]).

use super::ClipError;

/// The precision of a camera's field of view, in radians: 1e-4 rad is
/// 0.0057°, under a tenth of a pixel at the edge of a 1080-line image at
/// 40°. What the importers and the procedural camera give it.
pub const FIELD_OF_VIEW_PRECISION: f32 = 1.0e-4;

/// Most components a float track may have.
pub const MAX_FLOAT_COMPONENTS: usize = 4;

/// What a float track drives, which says what unit its values and precision
/// are in and how an error in it shows.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum FloatKind {
    /// A morph target weight (unitless, usually 0 to 1). When the mesh is
    /// known, `max_displacement_cm` is the largest distance the target
    /// moves a vertex at weight 1, so a weight error `e` moves a vertex at
    /// most `e * max_displacement_cm`.
    MorphWeight {
        /// The target's largest vertex displacement at weight 1, in cm.
        max_displacement_cm: Option<f32>,
    },
    /// A camera's vertical field of view, in radians.
    FieldOfView,
    /// Anything else (a colour, a focus distance, a custom curve), in the
    /// unit the importer or caller gives it.
    Generic,
}

impl FloatKind {
    /// A short name for reports: `"morph weight"`, `"field of view"`, `"float"`.
    pub fn name(self) -> &'static str {
        match self {
            FloatKind::MorphWeight { .. } => "morph weight",
            FloatKind::FieldOfView => "field of view",
            FloatKind::Generic => "float",
        }
    }

    /// The kind's key in machine-read reports (the JSON export, the
    /// `--json` outputs, the Python binding): `"morph_weight"`,
    /// `"field_of_view"` or `"generic"`.
    pub fn key(self) -> &'static str {
        match self {
            FloatKind::MorphWeight { .. } => "morph_weight",
            FloatKind::FieldOfView => "field_of_view",
            FloatKind::Generic => "generic",
        }
    }
}

/// One named float track of a clip: `components` values per sample, sample
/// after sample.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatTrack {
    name: String,
    kind: FloatKind,
    components: usize,
    precision: f32,
    /// Whether the track holds each sample's value until the next sample
    /// (a glTF STEP sampler) instead of blending toward it.
    pub(super) stepped: bool,
    /// `values[sample * components + component]`.
    values: Vec<f32>,
}

/// Precision of a morph weight whose target moves no vertex: any error is
/// invisible, but the weight still reads back close to what was stored.
const IDLE_MORPH_PRECISION: f32 = 1.0e-3;

impl FloatTrack {
    /// A track of `components` (1 to [`MAX_FLOAT_COMPONENTS`]) values per
    /// sample, laid out sample after sample, kept within `precision` (its
    /// unit, positive) by the codec.
    pub fn new(
        name: impl Into<String>,
        kind: FloatKind,
        components: usize,
        precision: f32,
        values: Vec<f32>,
    ) -> Result<FloatTrack, ClipError> {
        let name = name.into();
        if !(1..=MAX_FLOAT_COMPONENTS).contains(&components) {
            return Err(ClipError::FloatComponents {
                track: name,
                components,
            });
        }
        if !(precision.is_finite() && precision > 0.0) {
            return Err(ClipError::FloatPrecision {
                track: name,
                precision,
            });
        }
        if values.is_empty() || values.len() % components != 0 {
            return Err(ClipError::FloatLength {
                track: name,
                expected: values.len().div_ceil(components).max(1) * components,
                found: values.len(),
            });
        }
        if let Some(at) = values.iter().position(|v| !v.is_finite()) {
            return Err(ClipError::FloatNonFinite {
                track: name,
                sample: at / components,
            });
        }
        Ok(FloatTrack {
            name,
            kind,
            components,
            precision,
            stepped: false,
            values,
        })
    }

    /// A morph target's weight, one value per sample, with the precision
    /// that keeps every vertex within `threshold_cm` of where the exact
    /// weight puts it: `threshold_cm / max_displacement_cm` (the target's
    /// largest vertex displacement at weight 1). A target that moves no
    /// vertex, or whose displacement is unknown (`None`), gets a precision
    /// of 0.001.
    pub fn morph_weight(
        name: impl Into<String>,
        values: Vec<f32>,
        max_displacement_cm: Option<f32>,
        threshold_cm: f32,
    ) -> Result<FloatTrack, ClipError> {
        let max_displacement_cm = max_displacement_cm.filter(|d| d.is_finite() && *d >= 0.0);
        let precision = match max_displacement_cm {
            Some(d) if d > 0.0 => (threshold_cm / d).min(1.0),
            _ => IDLE_MORPH_PRECISION,
        };
        FloatTrack::new(
            name,
            FloatKind::MorphWeight {
                max_displacement_cm,
            },
            1,
            precision,
            values,
        )
    }

    /// The track's name (unique in its clip).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the track drives.
    pub fn kind(&self) -> FloatKind {
        self.kind
    }

    /// Values per sample, 1 to [`MAX_FLOAT_COMPONENTS`].
    pub fn components(&self) -> usize {
        self.components
    }

    /// The largest error the codec may leave in a component, in the track's unit.
    pub fn precision(&self) -> f32 {
        self.precision
    }

    /// Number of samples.
    pub fn num_samples(&self) -> usize {
        self.values.len() / self.components
    }

    /// The values of sample `sample`.
    pub fn sample(&self, sample: usize) -> &[f32] {
        &self.values[sample * self.components..(sample + 1) * self.components]
    }

    /// Every value, sample after sample.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// Each component's smallest and largest value over the samples, in
    /// component order (a track has at least one sample: [`FloatTrack::new`]).
    pub fn component_ranges(&self) -> Vec<(f32, f32)> {
        let mut ranges = vec![(f32::INFINITY, f32::NEG_INFINITY); self.components];
        for sample in self.values.chunks_exact(self.components) {
            for ((lo, hi), &v) in ranges.iter_mut().zip(sample) {
                *lo = lo.min(v);
                *hi = hi.max(v);
            }
        }
        ranges
    }

    /// The same track under another name.
    pub fn with_name(mut self, name: impl Into<String>) -> FloatTrack {
        self.name = name.into();
        self
    }

    /// The same track with another precision (positive and finite, else unchanged).
    pub fn with_precision(mut self, precision: f32) -> FloatTrack {
        if precision.is_finite() && precision > 0.0 {
            self.precision = precision;
        }
        self
    }

    /// The same track, stepped or not: a stepped track sampled between two
    /// samples gives the earlier one's values exactly, never a blend.
    pub fn with_stepped(mut self, stepped: bool) -> FloatTrack {
        self.stepped = stepped;
        self
    }

    /// Whether the track holds each sample until the next (see
    /// [`FloatTrack::with_stepped`]).
    pub fn is_stepped(&self) -> bool {
        self.stepped
    }

    /// The first `samples` samples.
    pub(super) fn truncate(&mut self, samples: usize) {
        self.values.truncate(samples * self.components);
    }

    /// Appends another track's samples (same components).
    pub(super) fn extend(&mut self, other: &FloatTrack) {
        self.values.extend_from_slice(&other.values);
    }

    /// Repeats the last sample until the track has `samples` samples.
    pub(super) fn hold_to(&mut self, samples: usize) {
        let last = self.num_samples() - 1;
        let held = self.sample(last).to_vec();
        for _ in self.num_samples()..samples {
            self.values.extend_from_slice(&held);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_shapes_and_values() {
        let bad = |r: Result<FloatTrack, ClipError>| r.unwrap_err().to_string();
        let g = FloatKind::Generic;
        assert!(bad(FloatTrack::new("a", g, 0, 0.1, vec![1.0])).contains("1 to 4"));
        assert!(bad(FloatTrack::new("a", g, 5, 0.1, vec![1.0; 5])).contains("1 to 4"));
        assert!(bad(FloatTrack::new("a", g, 2, 0.1, vec![1.0; 3])).contains("expected 4"));
        assert!(bad(FloatTrack::new("a", g, 1, 0.0, vec![1.0])).contains("precision"));
        assert!(bad(FloatTrack::new("a", g, 1, 0.1, vec![])).contains("'a'"));
        let nan = bad(FloatTrack::new(
            "a",
            g,
            2,
            0.1,
            vec![0.0, 1.0, 2.0, f32::NAN],
        ));
        assert!(nan.contains("sample 1"), "{nan}");
    }

    #[test]
    fn component_ranges_are_each_components_extremes() {
        let values = vec![0.5, -2.0, 0.25, 3.0, -1.0, 7.0];
        let t = FloatTrack::new("a", FloatKind::Generic, 2, 0.1, values).unwrap();
        assert_eq!(t.component_ranges(), vec![(-1.0, 0.5), (-2.0, 7.0)]);
    }

    #[test]
    fn morph_weight_precision_keeps_vertices_within_the_threshold() {
        let w = FloatTrack::morph_weight("jaw", vec![0.0, 0.5], Some(4.0), 0.01).unwrap();
        assert_eq!(w.precision(), 0.0025);
        assert_eq!(
            w.kind(),
            FloatKind::MorphWeight {
                max_displacement_cm: Some(4.0)
            }
        );
        let idle = FloatTrack::morph_weight("none", vec![0.0], Some(0.0), 0.01).unwrap();
        assert_eq!(idle.precision(), IDLE_MORPH_PRECISION);
        assert_eq!(w.sample(1), &[0.5]);
    }
}
