//! The clips every bench measures, chosen one way for all of them.
//!
//! Two clips, a short one (152 samples) and a long one (1,901 samples, the
//! longest file of the corpus): from the Bandai Namco corpus in
//! `../shared/data/bandai-namco-1` when it is there, procedural 22-bone
//! clips of the same lengths otherwise, so that the benches run anywhere and
//! measure the real data where it exists.

use std::hint::black_box;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use cinestream::import::{import_file, ImportOptions};
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::{Clip, Sampling, Transform};
use criterion::Bencher;

/// Samples of the short clip.
pub const SHORT_SAMPLES: usize = 152;
/// Samples of the long clip (the longest file of the corpus).
pub const LONG_SAMPLES: usize = 1901;
/// One frame of a 30 fps game loop: the step of the forward and backward walks.
pub const STEP: f64 = 1.0 / 30.0;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/data/bandai-namco-1");

/// A clip and where it came from.
pub struct BenchClip {
    /// `short` or `long`: the bench id's part.
    pub label: &'static str,
    /// The file, or how the procedural clip was made.
    pub source: String,
    pub clip: Clip,
}

/// The short and the long clip.
pub fn clips() -> [BenchClip; 2] {
    let [short, long] = match corpus_files() {
        Some((short, long)) => [short, long].map(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            (format!("corpus {name}"), load(&p))
        }),
        None => [SHORT_SAMPLES, LONG_SAMPLES]
            .map(|n| (format!("procedural, 1 actor, {n} samples"), procedural(n))),
    };
    [("short", short), ("long", long)].map(|(label, (source, clip))| BenchClip {
        label,
        source,
        clip,
    })
}

/// The `Frames:` count of a BVH file, read from its header only.
fn bvh_frames(path: &Path) -> Option<usize> {
    let file = std::fs::File::open(path).ok()?;
    for line in std::io::BufReader::new(file).lines() {
        let line = line.ok()?;
        if let Some(rest) = line.trim_start().strip_prefix("Frames:") {
            return rest.trim().parse().ok();
        }
    }
    None
}

/// The corpus file with exactly `SHORT_SAMPLES` frames (else the closest),
/// and the one with the most frames; `None` without the corpus.
fn corpus_files() -> Option<(PathBuf, PathBuf)> {
    let mut files: Vec<(PathBuf, usize)> = std::fs::read_dir(CORPUS)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("bvh")))
        .filter_map(|p| bvh_frames(&p).map(|f| (p, f)))
        .collect();
    files.sort();
    let short = files
        .iter()
        .min_by_key(|(_, f)| f.abs_diff(SHORT_SAMPLES))?
        .0
        .clone();
    let long = files.iter().max_by_key(|(_, f)| *f)?.0.clone();
    Some((short, long))
}

fn load(path: &Path) -> Clip {
    import_file(path, &ImportOptions::default())
        .expect("import corpus file")
        .into_iter()
        .next()
        .expect("a BVH file holds one clip")
}

fn procedural(samples: usize) -> Clip {
    cinematic(
        &CinematicSpec::default()
            .with_actors(1)
            .with_seconds((samples - 1) as f64 / 30.0),
    )
}

/// Full poses one frame apart, `step` seconds each (negative walks backward
/// from the end), wrapping to the other end: what playback asks of a sampler.
pub fn walk<S>(b: &mut Bencher<'_>, sampler: &S, pose: &mut [Transform], step: f64)
where
    S: Sampling,
    S::Error: std::fmt::Debug,
{
    let duration = sampler.clip_meta().duration();
    let mut t = if step < 0.0 { duration } else { 0.0 };
    b.iter(|| {
        sampler.sample(black_box(t), pose).expect("sample");
        t += step;
        if t > duration {
            t = 0.0;
        } else if t < 0.0 {
            t = duration;
        }
        black_box(&*pose);
    })
}
