//! The preview section's bytes, as `preview_tier.rs` parses them.

/// What the preview section stores, as the writer hands it over.
#[derive(Clone, Debug, PartialEq)]
pub struct PreviewSection {
    /// Largest object-space error of the preview against the full-quality
    /// decode, in centimetres, on the full clip's shell.
    pub bound_cm: f32,
    /// Largest float-track error of the preview against the full-quality
    /// decode, in units of each track's precision; 0 without float tracks.
    pub float_bound: f32,
    /// Each actor's part, in bone order.
    pub actors: Vec<PreviewActor>,
}

/// One actor's part of a preview section.
#[derive(Clone, Debug, PartialEq)]
pub struct PreviewActor {
    /// Its first bone (its bones run to the next actor's first).
    pub first_bone: u32,
    /// Full sample position of each key (see [`PreviewKeys`]).
    pub positions: Vec<u32>,
    /// Its segments over its keys, in order.
    pub segments: Vec<Vec<u8>>,
}

impl PreviewSection {
    /// The section's bytes: the preamble, then each actor's first bone, key
    /// and segment counts, key gaps, segment ends and segments. Gaps must
    /// fit 16 bits (as [`PreviewKeys`] keeps them).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.actors.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.bound_cm.to_le_bytes());
        out.extend_from_slice(&self.float_bound.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for actor in &self.actors {
            out.extend_from_slice(&actor.first_bone.to_le_bytes());
            out.extend_from_slice(&(actor.positions.len() as u32).to_le_bytes());
            out.extend_from_slice(&(actor.segments.len() as u32).to_le_bytes());
            for gap in actor.positions.windows(2).map(|w| w[1] - w[0]) {
                out.extend_from_slice(&(gap as u16).to_le_bytes());
            }
            let mut end = 0u32;
            for segment in &actor.segments {
                end += segment.len() as u32;
                out.extend_from_slice(&end.to_le_bytes());
            }
            for segment in &actor.segments {
                out.extend_from_slice(segment);
            }
        }
        out
    }
}
