//! The sampling calls every reader answers ([`Sampling`]): the one trait
//! of the sampler, reached as `cinestream::Sampling`.

use super::*;

/// The sampling calls, for anything that holds a clip's segments: a
/// `CompressedClip`, a whole-file `StreamReader` or a `Stream`. Stateless:
/// each call stands alone, takes `&self`, allocates nothing and may run on
/// any number of threads at once. Times are seconds (`f64`); every call
/// returns the crate's [`Error`]. Sealed: implemented only by the crate.
///
/// # Example
///
/// ```
/// use cinestream::container::StreamReader;
/// use cinestream::{Sampling, Transform};
///
/// let reader = StreamReader::open(&include_bytes!("../../tests/data/golden/v1-clamp.cine")[..])?;
/// let bones = reader.clip_meta().num_bones();
/// let mut pose = vec![Transform::IDENTITY; bones];
/// std::thread::scope(|s| {
///     s.spawn(|| reader.sample(0.9, &mut vec![Transform::IDENTITY; bones]));
///     reader.sample(0.1, &mut pose)
/// })?;
/// assert!(reader.sample(0.0, &mut pose[..1]).is_err()); // wrong length: an error, pose untouched
/// # Ok::<(), cinestream::Error>(())
/// ```
pub trait Sampling: SegmentSource<Error = Error> + Sized {
    /// The clip's metadata.
    fn clip_meta(&self) -> &ClipMeta;

    /// Samples every bone at `time` (seconds), interpolating. On an error
    /// `pose` keeps what it held.
    fn sample(&self, time: f64, pose: &mut [Transform]) -> Result<Quality, Error> {
        self.sample_rounded(time, SampleRounding::None, pose)
    }

    /// Samples every bone at `time` with the given rounding.
    fn sample_rounded(
        &self,
        time: f64,
        rounding: SampleRounding,
        pose: &mut [Transform],
    ) -> Result<Quality, Error> {
        sample_pose(
            self.clip_meta(),
            self.decode_plan(),
            self,
            time,
            rounding,
            pose,
        )?;
        Ok(Quality::Full)
    }

    /// Samples every bone the writer wants at `time` into the caller's own
    /// types (see [`PoseWriter`]). On an error nothing is written.
    fn sample_into<W: PoseWriter + ?Sized>(
        &self,
        time: f64,
        writer: &mut W,
    ) -> Result<Quality, Error> {
        let meta = self.clip_meta();
        let keys = locate(meta, time, SampleRounding::None);
        decode_keys_into(meta, self.decode_plan(), self, keys, writer)?;
        Ok(Quality::Full)
    }

    /// Samples one bone's local transform at `time`, decoding only its tracks.
    #[allow(unsafe_code)]
    fn sample_bone(&self, bone: usize, time: f64) -> Result<Transform, Error> {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = Avx2::detect() {
            // SAFETY: the function enables what `avx2` proves this CPU has.
            return unsafe { sample_bone_avx2(avx2, self, bone, time) };
        }
        sample_bone_at(self, bone, time)
    }

    /// Brings into the CPU cache what sampling at `time` will read, if its
    /// segment is at hand (a stream's resident page, every segment of a clip in memory); loads
    /// and counts nothing. Call it a frame or so before sampling a time
    /// whose segment no frame touched lately (a cut an engine sees coming),
    /// so that the frame that samples finds the segment's tables and keys in
    /// cache. A player warms the segments it steps into for itself.
    fn warm(&self, time: f64) {
        warm_keys(self, locate(self.clip_meta(), time, SampleRounding::None));
    }

    /// Samples every float track at `time` (seconds) into `values`, track
    /// after track, each track's components in a row
    /// ([`ClipMeta::float_offsets`]); no bone is decoded. On an error
    /// `values` keeps what it held.
    fn sample_floats(&self, time: f64, values: &mut [f32]) -> Result<Quality, Error> {
        let meta = self.clip_meta();
        if values.len() != meta.num_float_values() {
            return Err(SampleError::FloatLength {
                expected: meta.num_float_values(),
                found: values.len(),
            }
            .into());
        }
        let mut writer = FloatValues {
            values,
            offsets: meta.float_offsets(),
        };
        self.sample_into(time, &mut writer)
    }

    /// Float track `track` alone at `time`: its components, then zeros.
    /// Decodes only that track's slots, as [`Sampling::sample_bone`] does
    /// one bone, with the values [`Sampling::sample_floats`] gives.
    fn sample_float(&self, track: usize, time: f64) -> Result<[f32; 4], Error> {
        let meta = self.clip_meta();
        let keys = locate(meta, time, SampleRounding::None);
        sample_float_keys(meta, self.decode_plan(), self, track, keys)
    }

    /// Decodes the stored sample `index` (clamped to the last) exactly.
    fn decode_sample(&self, index: usize, pose: &mut [Transform]) -> Result<Quality, Error> {
        let index = index.min(self.clip_meta().num_samples() - 1);
        let keys = KeyPair {
            a: index,
            b: index,
            alpha: 0.0,
        };
        decode_keys(self.clip_meta(), self.decode_plan(), self, keys, pose)?;
        Ok(Quality::Full)
    }
}
