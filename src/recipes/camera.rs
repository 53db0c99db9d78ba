//! A camera taken from another file: for a screen-space bound on actors
//! whose own file has no camera (`pack --camera-clip`, `verify
//! --camera-clip`), the sequencer's camera exported on its own as glTF or
//! FBX joins the clip as one more root bone and its field-of-view track.

use std::path::Path;
use std::sync::Arc;

use crate::clip::{Bone, Clip, FloatKind, Skeleton, Transform};
use crate::error::{Error, Result};
use crate::import::{self, ImportOptions};

/// `clip` with the camera of the file at `path` added: a root bone of the
/// camera node's name placed where the node is in object space at each of
/// `clip`'s samples (the camera file sampled at the clip's rate, its last
/// sample held past its end, its lengths converted to the clip's unit), and
/// its field of view, `{name}/yfov`. The file must hold exactly one camera
/// (a node with an animated or constant field of view). Pack and verify
/// both call this, so a file and the sources it is checked against get the
/// same camera.
pub fn with_camera_clip(clip: Clip, path: &Path, options: &ImportOptions) -> Result<Clip> {
    let refuse = |why: String| Error::InvalidSettings {
        message: format!("camera clip {}: {why}", path.display()),
    };
    let options = options
        .clone()
        .with_gltf_sample_rate(Some(clip.sample_rate()));
    let sources = import::import_file(path, &options)?;
    let found: Vec<(&Clip, crate::compress::CameraOf)> = sources
        .iter()
        .flat_map(|c| {
            crate::compress::cameras(c)
                .into_iter()
                .map(move |cam| (c, cam))
        })
        .collect();
    let (camera_clip, camera) = match found.as_slice() {
        [one] => one.clone(),
        [] => {
            return Err(refuse(
                "no camera (a node with a field of view, imported as a '{node}/yfov' track)"
                    .to_string(),
            ))
        }
        more => {
            return Err(refuse(format!(
                "{} cameras; export the one to bound the error through alone",
                more.len()
            )))
        }
    };
    let name = camera_clip.skeleton().bones()[camera.bone].name.clone();
    if clip.skeleton().find(&name).is_some() {
        return Err(refuse(format!(
            "'{}' already has a bone '{name}'",
            clip.name()
        )));
    }
    let fov_name = format!("{name}/yfov");
    if clip.float_tracks().iter().any(|t| t.name() == fov_name) {
        return Err(refuse(format!(
            "'{}' already has a float track '{fov_name}'",
            clip.name()
        )));
    }
    // The camera node's object-space transform at each of its samples.
    let scale = camera_clip.unit().cm_per_unit() / clip.unit().cm_per_unit();
    let camera_skeleton = camera_clip.skeleton();
    // The camera's bone and those above it, root last.
    let mut chain = vec![camera.bone];
    while let Some(parent) = camera_skeleton.parent(chain[chain.len() - 1]) {
        chain.push(parent);
    }
    let placed: Vec<Transform> = (0..camera_clip.num_samples())
        .map(|s| {
            let pose = camera_clip.pose(s);
            let (mut rotation, mut translation) = (glam::DQuat::IDENTITY, glam::DVec3::ZERO);
            for &b in chain.iter().rev() {
                let t = pose[b];
                translation += rotation * t.translation.as_dvec3();
                rotation = (rotation * t.rotation.as_dquat()).normalize();
            }
            Transform::from_rotation_translation(
                rotation.as_quat().normalize(),
                (translation * scale).as_vec3(),
            )
        })
        .collect();
    let at = |s: usize| s.min(placed.len() - 1);
    let bones = clip.num_bones();
    let mut skeleton: Vec<Bone> = clip.skeleton().bones().to_vec();
    skeleton.push(Bone {
        name: name.clone(),
        parent: None,
        bind: placed[0],
    });
    let skeleton = Arc::new(Skeleton::new(skeleton).map_err(|e| refuse(e.to_string()))?);
    let mut poses = Vec::with_capacity(clip.num_samples() * (bones + 1));
    for s in 0..clip.num_samples() {
        poses.extend_from_slice(clip.pose(s));
        poses.push(placed[at(s)]);
    }
    let fov = &camera_clip.float_tracks()[camera.fov_track];
    let fov_values: Vec<f32> = (0..clip.num_samples())
        .map(|s| fov.sample(s.min(fov.num_samples() - 1))[0])
        .collect();
    let fov_track = crate::clip::FloatTrack::new(
        fov_name,
        FloatKind::FieldOfView,
        1,
        fov.precision(),
        fov_values,
    )
    .map_err(|e| refuse(e.to_string()))?
    .with_stepped(fov.is_stepped());
    let mut floats = clip.float_tracks().to_vec();
    floats.push(fov_track);
    let invalid = |e: crate::clip::ClipError| Error::InvalidClip {
        source_name: format!("'{}' with the camera of {}", clip.name(), path.display()),
        source: e,
    };
    let mut joined = Clip::from_poses(
        clip.name(),
        skeleton,
        clip.sample_rate(),
        clip.unit(),
        poses,
    )
    .map_err(invalid)?
    .with_loop_mode(clip.loop_mode())
    .with_float_tracks(floats)
    .map_err(invalid)?
    .with_cuts(clip.cuts().to_vec())
    .map_err(invalid)?;
    for (bone, &steps) in clip.bone_steps().iter().enumerate() {
        joined = joined.with_bone_steps(bone, steps).map_err(invalid)?;
    }
    if let Some(space) = clip.source_space() {
        joined = joined.with_source_space(space);
    }
    Ok(joined)
}
