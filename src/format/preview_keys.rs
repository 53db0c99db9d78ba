//! Where the keys of a clip's preview tier lie on the full clip's samples.
//!
//! A preview tier is a coarse copy of the whole clip: some of its samples,
//! chosen where they matter most (dense through fast motion and on both
//! sides of a cut, sparse where the clip moves smoothly), and every time of
//! the full clip falls between two of them. Preview key `k` holds the full
//! clip at sample position `positions[k]`: increasing, the first 0, the last
//! the end of play (the last sample of a clamping clip, or the wrap-around
//! `full_samples`, which holds sample 0 again, of a wrapping one). Between
//! two keys a time blends them by where it lies between their positions.

use std::ops::Range;

use crate::clip::{LoopMode, TrackKind};
use crate::format::ClipMeta;

/// Most samples between two preview keys: bounds a preview's gaps (and a
/// gap fits the 16 bits the file stores it in).
pub const MAX_PREVIEW_GAP: u32 = 4096;

/// The preview keys' positions on the full clip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewKeys {
    pub(super) positions: Vec<u32>,
    pub(super) full_samples: usize,
    pub(super) loop_mode: LoopMode,
}

impl PreviewKeys {
    /// Keys at `positions` (full sample positions) of a clip of
    /// `full_samples` stored samples looping as `loop_mode`; an error says
    /// what is wrong unless they increase from 0 to the end of play by gaps
    /// of at most [`MAX_PREVIEW_GAP`].
    pub fn new(
        positions: Vec<u32>,
        full_samples: usize,
        loop_mode: LoopMode,
    ) -> Result<PreviewKeys, String> {
        if full_samples == 0 {
            return Err("a clip of no samples".into());
        }
        let keys = PreviewKeys {
            positions,
            full_samples,
            loop_mode,
        };
        let end = keys.end();
        match (keys.positions.first(), keys.positions.last()) {
            (Some(0), Some(&last)) if last as usize == end => {}
            (first, last) => {
                return Err(format!(
                "keys must run from sample 0 to the end of play ({end}), not {first:?} to {last:?}"
            ))
            }
        }
        if keys.positions.len() > 1 {
            if let Some(k) = keys
                .positions
                .windows(2)
                .position(|w| w[1] <= w[0] || w[1] - w[0] > MAX_PREVIEW_GAP)
            {
                return Err(format!(
                    "keys {k} and {} at samples {} and {} do not increase by 1 to {MAX_PREVIEW_GAP}",
                    k + 1,
                    keys.positions[k],
                    keys.positions[k + 1]
                ));
            }
        } else if end != 0 {
            return Err("one key for a clip of more than one sample".into());
        }
        Ok(keys)
    }

    /// An error naming the first cut (see
    /// [`ClipMeta::cuts`]) without a key on both sides, at `k - 1` and `k`:
    /// between those the full clip holds, so the keys must too.
    pub fn check_cuts(&self, cuts: &[u32]) -> Result<(), String> {
        let has = |p: u32| self.positions.binary_search(&p).is_ok();
        match cuts.iter().find(|&&k| !(has(k - 1) && has(k))) {
            Some(k) => Err(format!(
                "no keys at both sides of the cut at sample {k} (samples {} and {k})",
                k - 1
            )),
            None => Ok(()),
        }
    }

    /// The end of play in sample positions: the last sample of a clamping
    /// clip, the wrap-around (`full_samples`) of a wrapping one.
    pub fn end(&self) -> usize {
        end_of(self.full_samples, self.loop_mode)
    }

    /// Number of preview keys.
    pub fn keys(&self) -> usize {
        self.positions.len()
    }

    /// The preview position (in keys, `0..=keys - 1`) of the full clip's
    /// sample position `position` (`0..=end`, as the sampler locates it):
    /// the key at or before it plus how far it lies toward the next.
    pub fn position(&self, position: f64) -> f64 {
        let last = self.positions.len() - 1;
        if last == 0 {
            return 0.0;
        }
        let position = position.clamp(0.0, self.end() as f64);
        // The last key at or before `position` (the first is 0).
        let k = (self
            .positions
            .partition_point(|&p| f64::from(p) <= position)
            - 1)
        .min(last - 1);
        let (a, b) = (self.positions[k], self.positions[k + 1]);
        k as f64 + (position - f64::from(a)) / f64::from(b - a)
    }
}

/// The clip's actors: runs of bones, in order and covering every bone,
/// each holding whole hierarchies (no bone's parent before its run), or
/// hanging from a still scene root: when bone 0 (a root) has no animated
/// track, each of its children starts a run (the first run keeps bone 0),
/// as `pack --actors` lays a scene out. A preview keeps
/// keys per actor, so that one actor's fast motion costs the others
/// nothing. One run of every bone when the bones are laid out otherwise.
pub fn actor_ranges(meta: &ClipMeta) -> Vec<Range<usize>> {
    let skeleton = &meta.skeleton;
    let bones = skeleton.len();
    let still_root = meta
        .kinds
        .first()
        .is_some_and(|k| !k.contains(&TrackKind::Animated));
    // Where a run may start: at a root, or at a child of a still scene root.
    let starts = |bone: usize| match skeleton.parent(bone) {
        None => bone > 0,
        Some(0) => still_root && bone > 1,
        Some(_) => false,
    };
    // Per bone: the earliest parent of it or any bone after it (a still
    // scene root and no parent count as none), so that whether a bone
    // starts an actor is one comparison, not a pass over the bones after
    // it (the square of the actors on a wide skeleton).
    let mut earliest_parent = vec![usize::MAX; bones + 1];
    for bone in (0..bones).rev() {
        let parent = match skeleton.parent(bone) {
            Some(0) if still_root => usize::MAX,
            Some(p) => p,
            None => usize::MAX,
        };
        earliest_parent[bone] = earliest_parent[bone + 1].min(parent);
    }
    let mut ranges: Vec<Range<usize>> = Vec::with_capacity(1);
    ranges.push(0..0);
    for (bone, &earliest) in earliest_parent[..bones].iter().enumerate() {
        // No bone from it on has a parent before it: it starts an actor.
        if starts(bone) && earliest >= bone {
            ranges.push(bone..bone + 1);
        } else if let Some(last) = ranges.last_mut() {
            last.end = bone + 1;
        }
    }
    let whole = ranges.iter().all(|r| {
        r.clone().all(|b| {
            skeleton
                .parent(b)
                .is_none_or(|p| p >= r.start || (still_root && p == 0))
        })
    });
    match whole && !ranges[0].is_empty() {
        true => ranges,
        false => std::iter::once(0..bones).collect(),
    }
}

pub(super) fn end_of(full_samples: usize, loop_mode: LoopMode) -> usize {
    match loop_mode {
        LoopMode::Clamp => full_samples - 1,
        LoopMode::Wrap if full_samples > 1 => full_samples,
        LoopMode::Wrap => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tier_must_key_both_sides_of_every_cut() {
        let keys = PreviewKeys::new(vec![0, 12, 13, 30, 39], 40, LoopMode::Clamp).unwrap();
        assert!(keys.check_cuts(&[13]).is_ok());
        let message = keys.check_cuts(&[13, 27]).unwrap_err();
        assert!(
            message.contains("cut at sample 27 (samples 26 and 27)"),
            "{message}"
        );
    }
    use crate::clip::Skeleton;

    #[test]
    fn keys_that_do_not_cover_the_clip_are_refused() {
        for (positions, samples) in [
            (vec![1, 9], 10),            // not from 0
            (vec![0, 8], 10),            // not to the end
            (vec![0, 4, 4, 9], 10),      // not increasing
            (vec![0], 10),               // one key for many samples
            (vec![], 10),                // none
            (vec![0, 5000, 9000], 9001), // a gap over the most
        ] {
            assert!(
                PreviewKeys::new(positions.clone(), samples, LoopMode::Clamp).is_err(),
                "{positions:?}"
            );
        }
        assert!(
            PreviewKeys::new(vec![0, 9], 10, LoopMode::Wrap).is_err(),
            "a wrap ends at 10"
        );
    }

    #[test]
    // One run of bones is a vector of one range, which is what it means.
    #[allow(clippy::single_range_in_vec_init)]
    fn actors_are_runs_of_whole_hierarchies() {
        use crate::clip::{Bone, LengthUnit, Transform};
        use crate::format::SegmentLayout;
        use std::sync::Arc;
        let meta = |parents: &[Option<usize>], root_animated: bool| {
            let bones = parents
                .iter()
                .enumerate()
                .map(|(i, &parent)| Bone {
                    name: format!("b{i}"),
                    parent,
                    bind: Transform::IDENTITY,
                })
                .collect();
            let mut kinds = vec![[TrackKind::Default; 3]; parents.len()];
            if root_animated {
                kinds[0][0] = TrackKind::Animated;
            }
            ClipMeta::new(
                "m".into(),
                Arc::new(Skeleton::new(bones).unwrap()),
                30.0,
                LoopMode::Clamp,
                LengthUnit::CENTIMETRE,
                kinds,
                vec![],
                vec![],
                SegmentLayout::new(1, 16),
                0.01,
                3.0,
            )
        };
        // Two actors of three bones, and a camera.
        let two = meta(
            &[None, Some(0), Some(1), None, Some(3), Some(3), None],
            false,
        );
        assert_eq!(actor_ranges(&two), [0..3, 3..6, 6..7]);
        // A second root whose later bones hang from the first: one run,
        // unless the first is still.
        assert_eq!(actor_ranges(&meta(&[None, None, Some(0)], true)), [0..3]);
        assert_eq!(
            actor_ranges(&meta(&[None, None, Some(0)], false)),
            [0..1, 1..2, 2..3]
        );
        assert_eq!(actor_ranges(&meta(&[None, Some(0)], false)), [0..2]);
        // A still scene root: each of its children starts an actor.
        let scene = [None, Some(0), Some(1), Some(0), Some(3), Some(0)];
        assert_eq!(actor_ranges(&meta(&scene, false)), [0..3, 3..5, 5..6]);
        // An animated scene root moves every actor: one run.
        assert_eq!(actor_ranges(&meta(&scene, true)), [0..6]);
        // A still scene root and a camera root after the actors.
        let with_camera = [None, Some(0), Some(1), Some(0), Some(3), None];
        assert_eq!(actor_ranges(&meta(&with_camera, false)), [0..3, 3..5, 5..6]);
    }
}
