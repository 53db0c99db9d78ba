//! FBX import against an independent converter. For each FBX file whose
//! conversion to glTF by assimp (`assimp export x.fbx x.gltf -fgltf2`) is in
//! the directory `CINESTREAM_FBX_ASSIMP` names, the joints' object-space
//! positions and orientations at every sample of cinestream's FBX import
//! agree with cinestream's glTF import of assimp's file, sampled at the same
//! rate, each joint at the times that are a key of every moving channel of
//! it and its ancestors in assimp's file (`NAME.keys.json` beside it:
//! assimp joins FBX's cubic curves with straight lines between keys, so
//! only keys are common ground).
//!
//! The two share no FBX code: assimp reads the FBX (its own transform
//! rules, pivots and pre-rotations as helper nodes), cinestream's glTF
//! importer reads what assimp wrote, and the kinematics here are this
//! file's own (f64). assimp keeps the file's own axes and unit (its root is
//! identity), cinestream converts to +Y up metres: the comparison tries the
//! 24 rotations that map axes onto axes and the units FBX files use (cm, m,
//! inch) and keeps the one that fits, printing it, so that a wrong axis or
//! unit conversion shows as a change of that line, and anything else as an
//! error. Joints are matched by name; assimp's `$AssimpFbx$` helper nodes
//! have no counterpart and are left out.
//!
//! `.ci/fbx_assimp` converts `../shared/data/fbx` and runs this test; without
//! the variable it passes, saying it was skipped.
#![cfg(feature = "pipeline")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cinestream::import::{import_file, ImportOptions};
use cinestream::{Clip, Transform};
use glam::{DMat3, DQuat, DVec3};

/// Agreement gate, cm: f32 round-off of two importers' poses of joints up
/// to a few metres from the origin, composed down chains of 60 joints.
const GATE_CM: f64 = 0.01;

/// Each bone's object-space position (cm) and orientation (unit axes, scale
/// removed), composed in f64.
fn object_space(clip: &Clip, pose: &[Transform]) -> Vec<(DVec3, DMat3)> {
    let cm = clip.unit().cm_per_unit();
    let mut out: Vec<(DVec3, DMat3, DMat3)> = Vec::with_capacity(pose.len());
    for (bone, local) in clip.skeleton().bones().iter().zip(pose) {
        let q = local.rotation;
        let rotation = DMat3::from_quat(
            DQuat::from_xyzw(q.x.into(), q.y.into(), q.z.into(), q.w.into()).normalize(),
        );
        // Linear part (rotation times scale) and translation, in cm.
        let linear = rotation * DMat3::from_diagonal(local.scale.as_dvec3());
        let translation = local.translation.as_dvec3() * cm;
        let (position, linear) = match bone.parent {
            Some(p) => {
                let (pp, _, pl) = out[p];
                (pp + pl * translation, pl * linear)
            }
            None => (translation, linear),
        };
        let axes = DMat3::from_cols(
            linear.x_axis.normalize_or_zero(),
            linear.y_axis.normalize_or_zero(),
            linear.z_axis.normalize_or_zero(),
        );
        out.push((position, axes, linear));
    }
    out.into_iter().map(|(p, a, _)| (p, a)).collect()
}

/// The 24 rotations that map each axis onto an axis.
fn axis_rotations() -> Vec<DMat3> {
    let axes = [DVec3::X, DVec3::Y, DVec3::Z];
    let mut out = Vec::new();
    for (i, &a) in axes.iter().enumerate() {
        for (j, &b) in axes.iter().enumerate() {
            if i == j {
                continue;
            }
            for sa in [1.0, -1.0] {
                for sb in [1.0, -1.0] {
                    let x = a * sa;
                    let y = b * sb;
                    out.push(DMat3::from_cols(x, y, x.cross(y)));
                }
            }
        }
    }
    out
}

/// A readable name of an axis rotation: where +X, +Y, +Z of assimp's
/// (the file's) space go in cinestream's.
fn describe(rotation: &DMat3) -> String {
    let name = |v: DVec3| {
        let (i, c) = [v.x, v.y, v.z]
            .iter()
            .copied()
            .enumerate()
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
            .unwrap_or((0, 1.0));
        format!("{}{}", if c < 0.0 { "-" } else { "+" }, ["X", "Y", "Z"][i])
    };
    // `rotation` maps cinestream's space to the file's; its inverse the other way.
    let back = rotation.transpose();
    format!(
        "file +X->{} +Y->{} +Z->{}",
        name(back.x_axis),
        name(back.y_axis),
        name(back.z_axis)
    )
}

/// Joint name without a character prefix (`character/joint`).
fn joint_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

struct Fit {
    rotation: DMat3,
    cm_per_file_unit: f64,
    offset: usize,
    worst_cm: f64,
    worst_at: String,
    worst_axis: f64,
    compared: usize,
    /// How far from the origin any compared joint is, cm: what pins the unit.
    moved_cm: f64,
}

/// The times (seconds) at which each bone of `assimp` holds the file's own
/// values: `None` at any time, else the key times common to it and its
/// ancestors (`keys`: each moving node's key times).
fn exact_times(assimp: &Clip, keys: &serde_json::Value) -> Vec<Option<Vec<f64>>> {
    let mut out: Vec<Option<Vec<f64>>> = Vec::new();
    for bone in assimp.skeleton().bones() {
        let own: Option<Vec<f64>> = keys
            .get(&bone.name)
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        let inherited = bone.parent.and_then(|p| out[p].clone());
        out.push(match (own, inherited) {
            (Some(a), Some(b)) => Some(
                a.into_iter()
                    .filter(|t| b.iter().any(|u| (t - u).abs() < 1e-4))
                    .collect(),
            ),
            (a, b) => a.or(b),
        });
    }
    out
}

/// Compares one FBX clip with assimp's conversion of it, each joint at the
/// samples of `assimp` where it holds the file's own values (`keys`).
fn compare(fbx: &Clip, assimp: &Clip, keys: &serde_json::Value) -> Option<Fit> {
    let exact = exact_times(assimp, keys);
    let on_key = |bone: usize, sample: usize| {
        let t = sample as f64 / f64::from(assimp.sample_rate());
        exact[bone]
            .as_ref()
            .is_none_or(|times| times.iter().any(|k| (k - t).abs() < 1e-4))
    };
    let mut assimp_bones: HashMap<&str, usize> = HashMap::new();
    for (i, b) in assimp.skeleton().bones().iter().enumerate() {
        if !b.name.contains("$AssimpFbx$") {
            assimp_bones.entry(joint_name(&b.name)).or_insert(i);
        }
    }
    let pairs: Vec<(usize, usize)> = fbx
        .skeleton()
        .bones()
        .iter()
        .enumerate()
        .filter_map(|(i, b)| assimp_bones.get(joint_name(&b.name)).map(|&j| (i, j)))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let fbx_poses: Vec<_> = (0..fbx.num_samples())
        .map(|s| object_space(fbx, fbx.pose(s)))
        .collect();
    // assimp's glTF says metres but holds the file's unit: undo the glTF
    // importer's metres here and let the fit find the unit.
    let assimp_cm = assimp.unit().cm_per_unit();
    let assimp_poses: Vec<_> = (0..assimp.num_samples())
        .map(|s| {
            object_space(assimp, assimp.pose(s))
                .into_iter()
                .map(|(p, a)| (p / assimp_cm, a))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut best: Option<Fit> = None;
    for rotation in axis_rotations() {
        for cm_per_file_unit in [1.0, 100.0, 2.54] {
            // assimp's timeline may start later than the stack: try shifts
            // of whole samples and keep the best (printed).
            for offset in 0..=2usize.min(assimp_poses.len().saturating_sub(1)) {
                let mut fit = Fit {
                    rotation,
                    cm_per_file_unit,
                    offset,
                    worst_cm: 0.0,
                    worst_at: String::new(),
                    worst_axis: 0.0,
                    compared: 0,
                    moved_cm: 0.0,
                };
                let samples = fbx_poses.len().min(assimp_poses.len() - offset);
                for s in 0..samples {
                    let (f, a) = (&fbx_poses[s], &assimp_poses[s + offset]);
                    for &(i, j) in pairs.iter().filter(|&&(_, j)| on_key(j, s + offset)) {
                        // cinestream's pose taken into the file's space.
                        let position = rotation * f[i].0 / cm_per_file_unit;
                        let err = (position - a[j].0).length() * cm_per_file_unit;
                        let axes = rotation * f[i].1;
                        let axis_err = (axes.x_axis - a[j].1.x_axis)
                            .length()
                            .max((axes.y_axis - a[j].1.y_axis).length())
                            .max((axes.z_axis - a[j].1.z_axis).length());
                        if err > fit.worst_cm {
                            fit.worst_cm = err;
                            fit.worst_at =
                                format!("'{}' sample {s}", fbx.skeleton().bones()[i].name);
                        }
                        fit.worst_axis = fit.worst_axis.max(axis_err);
                        fit.moved_cm = fit.moved_cm.max(f[i].0.length());
                        fit.compared += 1;
                    }
                }
                let score = |f: &Fit| f.worst_cm + 100.0 * f.worst_axis;
                if best.as_ref().is_none_or(|b| score(&fit) < score(b)) {
                    best = Some(fit);
                }
            }
        }
    }
    best
}

/// What the FBX file itself says of its space (its GlobalSettings, read by
/// `.ci/fbx_assimp`): its up axis and its unit.
struct Declared {
    up: DVec3,
    cm_per_unit: f64,
}

impl Declared {
    fn read(path: &Path) -> Option<Declared> {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
        let up: [f64; 3] = serde_json::from_value(v.get("up")?.clone()).ok()?;
        Some(Declared {
            up: DVec3::from(up),
            cm_per_unit: v.get("unit_cm")?.as_f64()?,
        })
    }

    /// Why `fit` is not the conversion the file declares: its +Y up must be
    /// the file's up axis, and its unit the file's. A fit that nothing
    /// pins (no joint ever leaves the origin) is not judged.
    fn mismatch(&self, fit: &Fit) -> Option<String> {
        let declared = self;
        if fit.moved_cm < 1e-3 {
            return None;
        }
        let up = fit.rotation * DVec3::Y;
        if (up - declared.up).length() > 1e-9 {
            return Some(format!(
                "cinestream's +Y is the file's {up}, but the file says up is {}",
                declared.up
            ));
        }
        if (fit.cm_per_file_unit - declared.cm_per_unit).abs() > 1e-6 * declared.cm_per_unit {
            return Some(format!(
                "the poses fit a unit of {} cm, but the file says {} cm",
                fit.cm_per_file_unit, declared.cm_per_unit
            ));
        }
        None
    }
}

#[test]
fn fbx_import_agrees_with_assimp() {
    let Some(dir) = std::env::var_os("CINESTREAM_FBX_ASSIMP").map(PathBuf::from) else {
        println!("skipped: CINESTREAM_FBX_ASSIMP is unset (.ci/fbx_assimp sets it)");
        return;
    };
    let fbx_dir = std::env::var_os("CINESTREAM_FBX_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new("../shared/data/fbx").to_path_buf());
    let mut converted: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the conversions' directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "gltf"))
        .collect();
    converted.sort();
    assert!(!converted.is_empty(), "no .gltf in {}", dir.display());
    let mut failures = Vec::new();
    for gltf in &converted {
        let stem = gltf.file_stem().and_then(|s| s.to_str()).expect("a name");
        let fbx_path = fbx_dir.join(format!("{stem}.fbx"));
        let keys: serde_json::Value = std::fs::read(gltf.with_extension("keys.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let declared = Declared::read(&gltf.with_extension("file.json"));
        let fbx_clips = import_file(&fbx_path, &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", fbx_path.display()));
        for (k, fbx) in fbx_clips.iter().enumerate() {
            let options = ImportOptions::default()
                .with_gltf_sample_rate(Some(fbx.sample_rate()))
                .with_lenient(true);
            let assimp_clips = match import_file(gltf, &options) {
                Ok(clips) => clips,
                Err(e) => {
                    println!("{stem}: assimp's conversion does not import ({e}); not compared");
                    break;
                }
            };
            let assimp = assimp_clips
                .iter()
                .find(|c| c.name() == fbx.name())
                .or_else(|| assimp_clips.get(k));
            let Some(assimp) = assimp else {
                println!("{stem} '{}': no animation in assimp's file", fbx.name());
                continue;
            };
            let anim_keys = keys.get(assimp.name()).cloned().unwrap_or_default();
            match compare(fbx, assimp, &anim_keys) {
                None => println!(
                    "{stem} '{}': no joint name in common with assimp's file",
                    fbx.name()
                ),
                Some(fit) => {
                    let line = format!(
                        "{stem} '{}': {} bones, {} samples at {} Hz; {} joint-samples compared at keys; \
                         {}, file unit {} cm, assimp {} sample(s) later; worst {:.6} cm ({}), \
                         worst axis {:.2e}",
                        fbx.name(),
                        fbx.num_bones(),
                        fbx.num_samples(),
                        fbx.sample_rate(),
                        fit.compared,
                        describe(&fit.rotation),
                        fit.cm_per_file_unit,
                        fit.offset,
                        fit.worst_cm,
                        fit.worst_at,
                        fit.worst_axis
                    );
                    println!("{line}");
                    if fit.worst_cm > GATE_CM || fit.worst_axis > 1e-3 {
                        failures.push(line);
                    } else if let Some(problem) = declared.as_ref().and_then(|d| d.mismatch(&fit)) {
                        failures.push(format!("{line}: {problem}"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "FBX import and assimp disagree:\n{}",
        failures.join("\n")
    );
}
