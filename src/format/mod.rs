//! The codec's format: everything a compressed clip's bytes mean, in one
//! place that imports nothing above the clip model.
//!
//! A compressed clip is clip metadata (skeleton, rate, sample count, loop
//! mode, what each sub-track is, constant values, clip ranges) plus one byte
//! string per segment. Segments split the samples evenly: `k = ceil(n / 16)`
//! segments whose lengths differ by at most one (31 samples are 16 + 15), so
//! the segment of any sample is found by arithmetic.
//!
//! Segment bytes, for `T` animated tracks (in bone order, rotation then
//! translation then scale within a bone, then the animated slots of the
//! float tracks, each up to three components of one track, stored as a
//! translation is):
//!
//! | bytes | content |
//! |---|---|
//! | `T`, or `ceil(5 T / 8)` packed ([`SegmentEncoding::Compact`], format version 4) | bit-rate index of each track (see [`BIT_RATES`]) |
//! | `6 T` | range slot of each track: 8-bit segment minimum x, y, z then extent x, y, z; at rate 0 the value as three little-endian `u16`; unused at 32 bits |
//! | rest | keys, sample after sample; within a sample, track after track, x, y, z at their bits (`component_bits`), least significant bit first |
//!
//! From the bottom up:
//! - `values.rs`: bit rates, quantized integers and their bits, clip
//!   ranges, rotations as stored;
//! - `tracks.rs`: tracks, the segment split, [`ClipMeta`];
//! - `keys.rs`: the bits of each component of a track's key;
//! - `segment.rs`: a segment's bytes, checked ([`SegmentView`]);
//! - `preview_keys.rs`: where a preview tier's keys lie on the clip's samples
//!   (`PreviewKeys`).
//!
//! The container file that carries these parts is written down in
//! `docs/FORMAT.md`; decoding them fast is [`crate::sample`]'s job.

#[cfg(feature = "pipeline")]
pub(crate) mod encode;
pub(crate) mod keys;
pub(crate) mod preview_keys;
pub(crate) mod segment;
pub(crate) mod tracks;
pub(crate) mod values;

// Public: what a compressed clip's metadata says (the readers hand out a
// `ClipMeta`) and what a segment's rates mean. The bit-level helpers the
// codec shares between its writer and its readers stay inside the crate.
pub use segment::{SegmentFault, SegmentView};
pub use tracks::{
    AnimatedTrack, Channel, ClipMeta, ConstantTrack, FloatMeta, FloatSlot, ScreenMeta,
    SegmentLayout,
};
pub use values::{ClipRange, SegmentEncoding, BIT_RATES, NUM_RATES};

// The writer's part, and the helpers only the pipeline takes from here.
#[cfg(feature = "pipeline")]
pub(crate) use encode::{
    rotation_grid_point, rotation_range_on_grid, rotation_reference_on_grid, write_bits,
    write_rates, RATE_HIGHEST_QUANTIZED, SEGMENT_RANGE_BITS,
};
#[cfg(feature = "pipeline")]
pub(crate) use {
    keys::key_bits,
    tracks::{constant_rotation, encoding_of},
    values::{rates_len, segment_header_len},
};

// What the readers share with the writer.
pub(crate) use keys::{component_bits, NO_EXTENT};
pub(crate) use preview_keys::{actor_ranges, PreviewKeys};
pub(crate) use tracks::float_slots;
pub(crate) use values::{
    max_quantized, rotation_from_xyz, rotation_grid_value, unit_from_quantized,
    CONSTANT_VALUE_BITS, INV_MAX, RANGE_SLOT_BYTES, RATE_CONSTANT, RATE_FULL_PRECISION,
    ROTATION_GRID_STEPS,
};
