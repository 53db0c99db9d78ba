//! How an imported clip's samples were taken from its source's own curves:
//! the rate, why it was chosen, and how far the clip, as the sampler plays
//! it, strays from those curves.

/// Why an importer sampled a clip at its rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RateReason {
    /// The caller's rate (`--rate`).
    Forced,
    /// The keys' own contiguous uniform grid (or, for sparse keys, a whole
    /// multiple of it): every key on a sample.
    KeyGrid,
    /// The lowest common grid of keys that are not contiguous and uniform
    /// (24 Hz keys with a gap, on 120 Hz): every key on a sample.
    CommonGrid,
    /// Irregular keys: the lowest candidate rate whose resampling error is
    /// within the threshold.
    WithinThreshold,
    /// Irregular keys kept within the threshold by no rate up to the limit:
    /// sampled at the limit anyway (lenient import).
    OverThreshold,
    /// The source's own frame rate, whose frames are its timeline (FBX),
    /// with keys between frames that no multiple of it up to the limit
    /// holds: those keys are not samples, and the resampling error says how
    /// far the clip, played between frames, strays from them.
    FileFrames,
}

impl RateReason {
    /// A few words for reports (`"common grid"`).
    pub fn name(self) -> &'static str {
        match self {
            RateReason::Forced => "forced",
            RateReason::KeyGrid => "key grid",
            RateReason::CommonGrid => "common grid",
            RateReason::WithinThreshold => "within threshold",
            RateReason::OverThreshold => "over threshold",
            RateReason::FileFrames => "file frames",
        }
    }
}

/// An imported clip's rate and resampling error: the clip played as the
/// sampler plays it (linear blend between samples, normalized lerp for
/// rotations) against the source's curves evaluated with their own
/// interpolation, at every source key time, halfway between consecutive
/// keys, at every sample and halfway between consecutive samples.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Resampling {
    /// The rate the clip was sampled at, in Hz.
    pub rate: f64,
    /// Why that rate.
    pub reason: RateReason,
    /// The largest object-space error of any bone at any of those times,
    /// in centimetres (the metric's shell and unit conversion).
    pub error_cm: f64,
    /// Where the largest bone error is, in seconds.
    pub worst_time: f64,
    /// The largest float track error over that track's precision (at most
    /// 1 is within it); 0 without float tracks.
    pub float_error_share: f64,
    /// The bound `error_cm` was held to, in centimetres.
    pub threshold_cm: f64,
}

impl Resampling {
    /// Whether the bones are within the threshold and every float track
    /// within its precision.
    pub fn is_within(&self) -> bool {
        self.error_cm <= self.threshold_cm && self.float_error_share <= 1.0
    }

    /// The threshold to compress this clip to, out of `threshold_cm`, so
    /// that at a source key between two samples the codec's error and the
    /// resampling error together stay within `threshold_cm`: less the
    /// resampling error where keys may fall between samples (irregular keys,
    /// a forced rate), never below half of it; the whole of it where every
    /// key is a sample (a key grid or a common grid) or where the source's
    /// frames are its timeline (file frames: what is measured is the frames).
    pub fn codec_threshold_cm(&self, threshold_cm: f64) -> f64 {
        match self.reason {
            RateReason::KeyGrid | RateReason::CommonGrid | RateReason::FileFrames => threshold_cm,
            _ => (threshold_cm - self.error_cm).max(0.5 * threshold_cm),
        }
    }
}
