//! BVH import through files: names, non-UTF-8 input and the Bandai Namco corpus.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cinestream::import::bvh::load_bvh;
use cinestream::{Error, LengthUnit};

const SMALL: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 3 Xposition Yposition Zposition
}
MOTION
Frames: 2
Frame Time: 0.04
1 2 3
4 5 6
";

/// A file in the temp directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, contents: &[u8]) -> TempFile {
        let dir = std::env::temp_dir().join(format!("cinestream-bvh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        let path = dir.join(name);
        std::fs::write(&path, contents).expect("write temp file");
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

#[test]
fn load_names_clip_after_file_stem() {
    let file = TempFile::new("walk_01.bvh", SMALL.as_bytes());
    let clip = load_bvh(&file.0, LengthUnit::METRE).unwrap();
    assert_eq!(clip.name(), "walk_01");
    assert_eq!(clip.unit(), LengthUnit::METRE);
    assert_eq!(clip.num_samples(), 2);
    assert_eq!(clip.sample_rate(), 25.0);
}

#[test]
fn load_labels_errors_with_file_name() {
    let file = TempFile::new(
        "broken.bvh",
        SMALL.replace("Frames: 2", "Frames: 0").as_bytes(),
    );
    match load_bvh(&file.0, LengthUnit::CENTIMETRE) {
        Err(Error::Bvh {
            source_name, line, ..
        }) => {
            assert_eq!(source_name, "broken.bvh");
            assert_eq!(line, 8);
        }
        other => panic!("expected Error::Bvh, got {other:?}"),
    }
}

#[test]
fn load_rejects_non_utf8() {
    let mut bytes = SMALL.as_bytes().to_vec();
    // Latin-1 'é' in the joint name on line 2.
    let at = SMALL.find("Hips").unwrap() + 1;
    bytes[at] = 0xE9;
    let file = TempFile::new("latin1.bvh", &bytes);
    match load_bvh(&file.0, LengthUnit::CENTIMETRE) {
        Err(Error::Bvh {
            source_name,
            line,
            message,
        }) => {
            assert_eq!(source_name, "latin1.bvh");
            assert_eq!(line, 2);
            assert!(message.contains("invalid UTF-8"), "{message}");
            assert!(message.contains("expected ASCII or UTF-8"), "{message}");
        }
        other => panic!("expected Error::Bvh, got {other:?}"),
    }
}

#[test]
fn load_reports_missing_file_as_io() {
    let missing = Path::new("/nonexistent/cinestream/none.bvh");
    assert!(matches!(
        load_bvh(missing, LengthUnit::CENTIMETRE),
        Err(Error::Io { .. })
    ));
}

/// The number on a file's `Frames:` line, read without the importer.
fn declared_frames(text: &str) -> usize {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Frames:"))
        .expect("a Frames: line");
    line.trim_start()["Frames:".len()..]
        .trim()
        .parse()
        .expect("a frame count")
}

#[test]
fn imports_bandai_namco_corpus() {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/data/bandai-namco-1"
    ));
    if !dir.is_dir() {
        eprintln!("skipping: corpus not found at {}", dir.display());
        return;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bvh"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 174);
    let start = Instant::now();
    let mut samples = 0;
    for path in &files {
        let clip = load_bvh(path, LengthUnit::CENTIMETRE)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(clip.num_bones(), 22, "{}", path.display());
        assert_eq!(clip.sample_rate(), 30.0, "{}", path.display());
        assert_eq!(
            clip.num_samples(),
            declared_frames(&text),
            "{}",
            path.display()
        );
        assert_eq!(clip.name(), path.file_stem().unwrap().to_str().unwrap());
        assert_eq!(clip.skeleton().bones()[0].name, "joint_Root");
        samples += clip.num_samples();
    }
    eprintln!(
        "imported {} files, {samples} samples in {:?} (includes re-reading each file)",
        files.len(),
        start.elapsed()
    );
}
