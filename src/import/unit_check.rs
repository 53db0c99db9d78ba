//! Is the length unit a clip was read in plausible?
//!
//! A BVH file never states its unit, so a file written in metres and read
//! in centimetres imports without error as a 1.8 cm person, and every error
//! bound is then off by a factor of a hundred. This module measures the
//! skeleton in its bind pose and, when its size is implausible for a
//! character in the unit it was read in, names the unit that makes it one.

use glam::{DQuat, DVec3};

use crate::clip::{Clip, LengthUnit};

/// Smallest skeleton (largest extent of its bind pose, in cm) taken as
/// plausible: a small creature. A person in centimetres read as millimetres
/// (17 cm) falls below it.
pub(crate) const PLAUSIBLE_MIN_CM: f64 = 25.0;
/// Largest skeleton taken as plausible: a giant of ten metres.
pub(crate) const PLAUSIBLE_MAX_CM: f64 = 1000.0;
/// The size a likely unit is chosen to come nearest to: an adult's height.
const TYPICAL_CM: f64 = 170.0;

/// A clip whose size is implausible in the unit it was read in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct UnitDoubt {
    /// The unit the clip was read in.
    pub read_in: LengthUnit,
    /// The bind pose's largest extent along x, y or z, in centimetres as read.
    pub extent_cm: f64,
    /// The named unit that makes the skeleton the size of a character.
    pub likely: LengthUnit,
    /// The extent in centimetres, read in the likely unit.
    pub likely_extent_cm: f64,
}

impl std::fmt::Display for UnitDoubt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "read in {}, the skeleton measures {} cm, implausible for a character; read in {} \
             it would measure {} cm (--unit {})",
            self.read_in.in_words(),
            significant(self.extent_cm),
            self.likely.in_words(),
            significant(self.likely_extent_cm),
            self.likely
        )
    }
}

/// Three significant digits, without an exponent.
fn significant(value: f64) -> String {
    let digits = (2 - value.abs().max(1e-9).log10().floor() as i32).max(0) as usize;
    format!("{value:.digits$}")
}

/// The largest extent of the bind pose's joint positions along x, y or z,
/// in centimetres. Zero for a single joint.
pub(crate) fn bind_extent_cm(clip: &Clip) -> f64 {
    let bones = clip.skeleton().bones();
    let mut objects: Vec<(DQuat, DVec3, DVec3)> = Vec::with_capacity(bones.len());
    let (mut low, mut high) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for bone in bones {
        let local = bone.bind;
        let (rotation, translation, scale) = (
            local.rotation.as_dquat(),
            local.translation.as_dvec3(),
            local.scale.as_dvec3(),
        );
        // Parents come before their children, so the parent's object
        // transform is already known; scale is per axis without shear.
        let object = match bone.parent.and_then(|p| objects.get(p)) {
            None => (rotation, translation, scale),
            Some(&(pr, pt, ps)) => (pr * rotation, pr * (ps * translation) + pt, ps * scale),
        };
        low = low.min(object.1);
        high = high.max(object.1);
        objects.push(object);
    }
    clip.unit().to_cm((high - low).max_element())
}

/// Doubts the unit `clip` was read in when its bind pose is smaller than
/// `PLAUSIBLE_MIN_CM` or larger than `PLAUSIBLE_MAX_CM` and another named
/// unit brings it inside; `None` when it is plausible, has a single joint
/// or no named unit helps.
pub(crate) fn doubt_unit(clip: &Clip) -> Option<UnitDoubt> {
    let extent_cm = bind_extent_cm(clip);
    if !(extent_cm.is_finite() && extent_cm > 0.0)
        || (PLAUSIBLE_MIN_CM..=PLAUSIBLE_MAX_CM).contains(&extent_cm)
    {
        return None;
    }
    let read_in = clip.unit();
    let in_units = read_in.from_cm(extent_cm);
    let (likely, likely_extent_cm) = LengthUnit::NAMED
        .iter()
        .map(|&(_, unit)| (unit, unit.to_cm(in_units)))
        .filter(|&(_, cm)| (PLAUSIBLE_MIN_CM..=PLAUSIBLE_MAX_CM).contains(&cm))
        .min_by(|a, b| {
            let off = |cm: f64| (cm / TYPICAL_CM).ln().abs();
            off(a.1).total_cmp(&off(b.1))
        })?;
    Some(UnitDoubt {
        read_in,
        extent_cm,
        likely,
        likely_extent_cm,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use glam::{Quat, Vec3};

    use super::*;
    use crate::clip::{Bone, Skeleton, Transform};

    /// A standing figure `height` units tall (hips at half height, a spine
    /// up, a leg down) under a root rotated a quarter turn about x, so the
    /// extent must come through the hierarchy, read in `unit`.
    fn figure(height: f32, unit: LengthUnit) -> Clip {
        let bone = |name: &str, parent, t: Vec3| Bone {
            name: name.into(),
            parent,
            bind: Transform::from_rotation_translation(Quat::IDENTITY, t),
        };
        let mut root = bone("Root", None, Vec3::ZERO);
        root.bind.rotation = Quat::from_rotation_x(std::f32::consts::FRAC_PI_2);
        let bones = vec![
            root,
            bone("Hips", Some(0), Vec3::new(0.0, 0.0, 0.5 * height)),
            bone("Head", Some(1), Vec3::new(0.0, 0.0, 0.5 * height)),
            bone("Foot", Some(1), Vec3::new(0.1 * height, 0.0, -0.5 * height)),
        ];
        let skeleton = Arc::new(Skeleton::new(bones).unwrap());
        let pose = skeleton.bind_pose();
        Clip::from_poses("figure", skeleton, 30.0, unit, pose).unwrap()
    }

    #[test]
    fn the_extent_is_measured_through_the_hierarchy_in_centimetres() {
        // Head at +h/2 above the hips, foot h/2 below: h along one axis.
        assert!((bind_extent_cm(&figure(180.0, LengthUnit::CENTIMETRE)) - 180.0).abs() < 1e-4);
        assert!((bind_extent_cm(&figure(1.8, LengthUnit::METRE)) - 180.0).abs() < 1e-4);
        assert!((bind_extent_cm(&figure(70.0, LengthUnit::INCH)) - 177.8).abs() < 1e-3);
    }

    #[test]
    fn metres_read_as_centimetres_are_doubted_and_metres_named() {
        let doubt = doubt_unit(&figure(1.8, LengthUnit::CENTIMETRE)).expect("a doubt");
        assert_eq!(doubt.likely, LengthUnit::METRE);
        assert!((doubt.extent_cm - 1.8).abs() < 1e-6);
        assert!((doubt.likely_extent_cm - 180.0).abs() < 1e-4);
        let text = doubt.to_string();
        assert!(
            text.contains("1.80 cm") && text.contains("--unit m"),
            "{text}"
        );
    }

    #[test]
    fn the_doubt_says_its_units_in_words() {
        // A figure 70 inches tall read as millimetres: 7 cm. Inches make it
        // 178 cm, so the doubt names them; the short name made the sentence
        // read "read in in it would measure".
        let doubt = doubt_unit(&figure(70.0, LengthUnit::MILLIMETRE)).expect("a doubt");
        assert_eq!(doubt.likely, LengthUnit::INCH);
        let text = doubt.to_string();
        assert!(text.starts_with("read in millimetres, "), "{text}");
        assert!(text.contains("read in inches it would measure"), "{text}");
        assert!(!text.contains("read in in "), "{text}");
        assert!(text.contains("(--unit in)"), "{text}");
        let odd = LengthUnit::from_cm_per_unit(2.0).expect("a unit");
        assert_eq!(odd.in_words(), "units of 2 cm");
    }

    #[test]
    fn millimetres_read_as_centimetres_are_doubted_and_millimetres_named() {
        let doubt = doubt_unit(&figure(1800.0, LengthUnit::CENTIMETRE)).expect("a doubt");
        assert_eq!(doubt.likely, LengthUnit::MILLIMETRE);
        assert!(doubt.to_string().contains("--unit mm"));
    }

    #[test]
    fn centimetres_read_as_millimetres_are_doubted() {
        let doubt = doubt_unit(&figure(170.0, LengthUnit::MILLIMETRE)).expect("a doubt");
        assert_eq!(doubt.likely, LengthUnit::CENTIMETRE);
    }

    #[test]
    fn plausible_sizes_are_not_doubted() {
        for (height, unit) in [
            (180.0, LengthUnit::CENTIMETRE),
            (1.8, LengthUnit::METRE),
            (1800.0, LengthUnit::MILLIMETRE),
            (70.0, LengthUnit::INCH),
            (6.0, LengthUnit::FOOT),
            (30.0, LengthUnit::CENTIMETRE),
        ] {
            assert_eq!(doubt_unit(&figure(height, unit)), None, "{height} {unit}");
        }
    }

    #[test]
    fn a_single_joint_is_not_doubted() {
        let skeleton = Arc::new(
            Skeleton::new(vec![Bone {
                name: "Camera".into(),
                parent: None,
                bind: Transform::IDENTITY,
            }])
            .unwrap(),
        );
        let pose = skeleton.bind_pose();
        let clip =
            Clip::from_poses("camera", skeleton, 30.0, LengthUnit::CENTIMETRE, pose).unwrap();
        assert_eq!(doubt_unit(&clip), None);
    }
}
