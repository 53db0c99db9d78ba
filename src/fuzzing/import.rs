//! The harness that fuzzing runs against the importers, shared by the
//! `fuzz/` targets and `tests/import_fuzz.rs` so that both check the same
//! thing.
//!
//! Not part of the stable API: it exists for the fuzzers. No input may make
//! an importer panic, and what an importer accepts must be a clip the rest
//! of the pipeline can take: at least one bone and one sample, every
//! transform finite. glTF is parsed without a directory, so no input can
//! make the harness open a file.

use crate::clip::{Clip, LengthUnit};
use crate::import::{acl, bvh, fbx, gltf, ImportOptions};

/// What an importer made of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The importer returned an error.
    Refused,
    /// The importer returned this many clips, each checked.
    Imported(usize),
}

/// Parses `data` as BVH text, strictly and leniently. Panics only if the
/// importer does, or if it returns a clip that breaks the clip model.
pub fn bvh(data: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return Outcome::Refused;
    };
    let lenient = ImportOptions::default().with_lenient(true);
    let _ = bvh::parse_bvh_with(text, "fuzz.bvh", &lenient).map(|clip| check(&clip));
    match bvh::parse_bvh(text, "fuzz.bvh", LengthUnit::CENTIMETRE) {
        Ok(clip) => {
            check(&clip);
            Outcome::Imported(1)
        }
        Err(_) => Outcome::Refused,
    }
}

/// Parses `data` as a glTF document (JSON or GLB), with the animations'
/// own rates and leniently at 30 Hz. Panics only if the importer does, or
/// if it returns a clip that breaks the clip model.
pub fn gltf(data: &[u8]) -> Outcome {
    let lenient = ImportOptions::default()
        .with_lenient(true)
        .with_gltf_sample_rate(Some(30.0));
    if let Ok(clips) = gltf::parse_gltf(data, None, "fuzz.glb", &lenient) {
        clips.iter().for_each(check);
    }
    match gltf::parse_gltf(data, None, "fuzz.glb", &ImportOptions::default()) {
        Ok(clips) => {
            clips.iter().for_each(check);
            Outcome::Imported(clips.len())
        }
        Err(_) => Outcome::Refused,
    }
}

/// Parses `data` as an ACL raw clip, in centimetres and in metres. Panics
/// only if the importer does, or if it returns a clip that breaks the clip
/// model or whose source metric is not positive and finite.
pub fn acl_sjson(data: &[u8]) -> Outcome {
    let Ok(text) = std::str::from_utf8(data) else {
        return Outcome::Refused;
    };
    let metres = ImportOptions::default().with_bvh_unit(LengthUnit::METRE);
    let _ = acl::parse_acl_sjson(text, "fuzz.acl.sjson", &metres).map(|clip| check(&clip));
    match acl::parse_acl_sjson(text, "fuzz.acl.sjson", &ImportOptions::default()) {
        Ok(clip) => {
            check(&clip);
            let metric = clip.source_metric();
            for &(bone, cm) in &metric.bone_shells_cm {
                assert!(bone < clip.num_bones() && cm.is_finite() && cm > 0.0);
            }
            assert!(metric
                .threshold_cm
                .is_none_or(|cm| cm.is_finite() && cm > 0.0));
            Outcome::Imported(1)
        }
        Err(_) => Outcome::Refused,
    }
}

/// Parses `data` as an FBX document through ufbx, strictly and leniently.
/// Panics only if the importer does, or if it returns a clip that breaks
/// the clip model. ufbx reads from memory and never opens a file.
pub fn fbx(data: &[u8]) -> Outcome {
    let lenient = ImportOptions::default().with_lenient(true);
    if let Ok(clips) = fbx::parse_fbx(data, "fuzz.fbx", &lenient) {
        clips.iter().for_each(check);
    }
    match fbx::parse_fbx(data, "fuzz.fbx", &ImportOptions::default()) {
        Ok(clips) => {
            clips.iter().for_each(check);
            Outcome::Imported(clips.len())
        }
        Err(_) => Outcome::Refused,
    }
}

/// The clip model's promises, checked on what an importer returned.
fn check(clip: &Clip) {
    assert!(clip.num_bones() > 0, "a clip without bones");
    assert!(clip.num_samples() > 0, "a clip without samples");
    assert!(
        clip.sample_rate().is_finite() && clip.sample_rate() > 0.0,
        "sample rate {}",
        clip.sample_rate()
    );
    assert_eq!(clip.poses().len(), clip.num_bones() * clip.num_samples());
    for (i, t) in clip.poses().iter().enumerate() {
        assert!(
            t.rotation.is_finite() && t.translation.is_finite() && t.scale.is_finite(),
            "transform {i} is not finite: {t:?}"
        );
    }
}
