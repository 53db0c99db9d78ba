//! The harnesses fuzzing runs, shared by the `fuzz/` targets and the
//! deterministic fuzz tests under `tests/` so that both check the same
//! promises. At the top of the crate because they drive every layer: a file
//! through the reader and a stream ([`container`]), players over a stream
//! ([`players`]), and every importer ([`import`]).
//!
//! Not part of the stable API: it exists for the fuzzers.

pub mod container;
pub mod import;
pub mod players;

use crate::clip::Transform;

/// Bitwise equality of two transforms, so that NaN equals itself: what
/// both harnesses compare poses with.
fn same_bits(a: &Transform, b: &Transform) -> bool {
    let bits = |t: &Transform| {
        let (r, p, s) = (
            t.rotation.to_array(),
            t.translation.to_array(),
            t.scale.to_array(),
        );
        [r[0], r[1], r[2], r[3], p[0], p[1], p[2], s[0], s[1], s[2]].map(f32::to_bits)
    };
    bits(a) == bits(b)
}
