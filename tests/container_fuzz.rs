//! Deterministic fuzzing of the container reader.
//!
//! The reader promises that no input makes it panic or read out of bounds
//! (`src/container/read.rs`), and that every byte of a file is guarded:
//! header, metadata and index by checksums and zero padding at `open`, pages
//! by their checksums and zero padding at first use and in `verify`. This
//! file checks both over a fixed corpus of valid files (procedural clips of
//! several sizes, with and without lz4, pages of 64 and 512 bytes and the
//! default) and, for each, mutations:
//!
//! - single-byte flips (every byte of small files, a stride of big ones) and
//!   seeded random multi-byte corruptions: a change before the first page must
//!   make `open` fail, a change inside the pages must make `verify` unsound;
//! - truncation at every length and appended bytes: `open` must fail;
//! - the same kinds of changes, and "interesting" 32-bit values (0, 1, max,
//!   NaN, infinities, ...) written at every offset of the header, metadata
//!   and index, with every checksum then recomputed, so that the mutation
//!   reaches the parsers and decoders behind the checksums: nothing may panic.
//!
//! Every case runs the harness the `fuzz/` target runs (open, sample at a few
//! times, sample each bone, decode the first and last samples, verify, and
//! when `verify` is sound, sample again and require success) inside
//! `catch_unwind`; a test fails listing the first failing cases with their
//! mutation and panic message.
//!
//! `CINESTREAM_WRITE_FUZZ_SEEDS=<dir> cargo test --release --test
//! container_fuzz write_fuzz_seeds` writes the valid files to `<dir>` as the
//! seed corpus of the `fuzz/` target.
// Needs the pipeline (compress, import, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Once, OnceLock};

use cinestream::compress::{build_preview, compress, CompressSettings, LoopPolicy};
use cinestream::container::{encode_stream_with_preview, StreamReader, WriteOptions, HEADER_LEN};
use cinestream::fuzzing::container::{exercise, recompute_checksums, Outcome};
use cinestream::procedural::{cinematic, CinematicSpec};
use cinestream::Clip;

#[path = "common/rng.rs"]
mod rng;
use rng::XorShift;

// ---------------------------------------------------------------------------
// The harness lives in cinestream::fuzzing::container, shared with fuzz/.

// ---------------------------------------------------------------------------
// Running cases.

/// What a case requires besides not panicking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// `open` fails.
    OpenFails,
    /// `open` succeeds and `verify` reports a problem.
    Unsound,
    /// Anything but a panic.
    NoPanic,
}

thread_local! {
    /// Set while a case runs: the panic hook records here instead of printing.
    static CAUGHT: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

/// Installs a panic hook that records panics of running cases (message and
/// location) and leaves every other panic to the default hook.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let recorded = CAUGHT
                .try_with(|c| match &mut *c.borrow_mut() {
                    Some(slot) => {
                        *slot = Some(info.to_string());
                        true
                    }
                    None => false,
                })
                .unwrap_or(false);
            if !recorded {
                default(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into its message and location.
fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    CAUGHT.with(|c| *c.borrow_mut() = Some(None));
    let result = catch_unwind(AssertUnwindSafe(f));
    let message = CAUGHT.with(|c| c.borrow_mut().take()).flatten();
    result.map_err(|_| {
        format!(
            "panicked: {}",
            message.unwrap_or_else(|| "(no message)".into())
        )
    })
}

/// Runs the harness on one input; `Err` describes a panic or a broken expectation.
fn run_case(data: &[u8], expect: Expect) -> Result<Outcome, String> {
    let outcome = catch(|| exercise(data))?;
    match (expect, outcome) {
        (Expect::OpenFails, Outcome::Opened { sound }) => Err(format!(
            "opened (verify sound: {sound}), expected open to fail"
        )),
        (Expect::Unsound, Outcome::OpenFailed) => {
            Err("open failed, expected it to succeed and verify to fail".into())
        }
        (Expect::Unsound, Outcome::Opened { sound: true }) => {
            Err("verify reported the file sound".into())
        }
        _ => Ok(outcome),
    }
}

/// Collects failures across many cases and reports the first few.
#[derive(Default)]
struct Failures {
    cases: usize,
    list: Vec<String>,
    outcomes: [usize; 3],
}

impl Failures {
    fn run(&mut self, what: impl FnOnce() -> String, data: &[u8], expect: Expect) {
        self.cases += 1;
        match run_case(data, expect) {
            Ok(Outcome::OpenFailed) => self.outcomes[0] += 1,
            Ok(Outcome::Opened { sound: false }) => self.outcomes[1] += 1,
            Ok(Outcome::Opened { sound: true }) => self.outcomes[2] += 1,
            Err(e) => self.list.push(format!("{}: {e}", what())),
        }
    }

    fn check(self, test: &str) {
        let [failed, unsound, sound] = self.outcomes;
        println!(
            "{test}: {} cases: open failed {failed}, unsound {unsound}, sound {sound}, failures {}",
            self.cases,
            self.list.len()
        );
        if !self.list.is_empty() {
            let first: Vec<&str> = self.list.iter().take(12).map(String::as_str).collect();
            panic!(
                "{test}: {} of {} cases failed; the first:\n  {}",
                self.list.len(),
                self.cases,
                first.join("\n  ")
            );
        }
    }
}

// ---------------------------------------------------------------------------
// The corpus.

/// A valid file and where its pages start.
struct Seed {
    name: String,
    bytes: Vec<u8>,
    pages_offset: usize,
}

/// A procedural clip of `actors` actors moving for `seconds`, then holding
/// its last pose for `hold` samples. Held segments are alike byte for byte,
/// which is what lets lz4 pages appear: moving segments do not compress.
fn clip(actors: usize, seconds: f64, hold: usize) -> Clip {
    let clip = cinematic(
        &CinematicSpec::default()
            .with_actors(actors)
            .with_seconds(seconds),
    );
    let mut poses = clip.poses().to_vec();
    let last = clip.pose(clip.num_samples() - 1).to_vec();
    for _ in 0..hold {
        poses.extend_from_slice(&last);
    }
    let skeleton = clip.skeleton().clone();
    Clip::from_poses("held", skeleton, clip.sample_rate(), clip.unit(), poses)
        .expect("a held clip is valid")
}

/// `clip` with two cuts and some of its tracks stepped (format version 5).
fn stepped_and_cut(clip: Clip) -> Clip {
    let n = clip.num_samples();
    let steps = cinestream::BoneSteps {
        rotation: true,
        ..cinestream::BoneSteps::NONE
    };
    clip.with_cuts(vec![n / 3, n / 2])
        .and_then(|c| c.with_bone_steps(1, steps))
        .and_then(|c| c.with_bone_steps(3, cinestream::BoneSteps::ALL))
        .expect("cuts and steps inside the clip")
}

fn seed(name: &str, clip: Clip, loop_policy: LoopPolicy, options: WriteOptions) -> Seed {
    seed_of(name, clip, loop_policy, options, None)
}

/// A seed with a preview tier within `preview_cm` (format version 3).
fn seed_of(
    name: &str,
    clip: Clip,
    loop_policy: LoopPolicy,
    options: WriteOptions,
    preview_cm: Option<f64>,
) -> Seed {
    let settings = CompressSettings::default().with_loop_policy(loop_policy);
    let (compressed, _) = compress(&clip, &settings).expect("compress");
    let preview =
        preview_cm.map(|cm| build_preview(&clip, &compressed, &settings, cm).expect("preview"));
    let (bytes, summary) =
        encode_stream_with_preview(&compressed, preview.as_ref(), &options).expect("encode");
    assert_eq!(
        options.lz4,
        summary.lz4_pages > 0,
        "{name}: lz4 pages when, and only when, asked for"
    );
    let reader = StreamReader::open(bytes.as_slice()).expect("open");
    assert!(reader.verify().is_sound(), "{name}: fresh file must verify");
    let pages_offset = reader.pages()[0].offset as usize;
    assert_eq!(
        run_case(&bytes, Expect::NoPanic),
        Ok(Outcome::Opened { sound: true })
    );
    Seed {
        name: format!(
            "{name} ({} bytes, {} pages, {} lz4)",
            bytes.len(),
            summary.pages,
            summary.lz4_pages
        ),
        bytes,
        pages_offset,
    }
}

/// The valid files every test mutates, built once.
fn corpus() -> &'static [Seed] {
    static CORPUS: OnceLock<Vec<Seed>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let auto = LoopPolicy::Auto;
        let plain = WriteOptions::default;
        let lz4 = || WriteOptions::default().with_lz4(true);
        vec![
            seed("one-sample", clip(1, 0.0, 0), auto, plain()),
            seed("1s", clip(1, 1.0, 0), auto, plain()),
            seed(
                "2s-page64",
                clip(1, 2.0, 0),
                auto,
                plain().with_page_bytes(64),
            ),
            seed(
                "4s-page512",
                clip(1, 4.0, 0),
                auto,
                plain().with_page_bytes(512),
            ),
            seed("10s", clip(1, 10.0, 0), auto, plain()),
            seed(
                "2s+held-lz4-page64",
                clip(1, 2.0, 120),
                auto,
                lz4().with_page_bytes(64),
            ),
            seed(
                "2actors-1s+held-wrap-lz4-page512",
                clip(2, 1.0, 60),
                LoopPolicy::Wrap,
                lz4().with_page_bytes(512),
            ),
            seed("1s+held-lz4", clip(1, 1.0, 300), auto, lz4()),
            seed_of(
                "2actors-2s-preview-page512",
                clip(2, 2.0, 0),
                auto,
                plain().with_page_bytes(512),
                Some(3.0),
            ),
            // Format version 5: cuts and stepped tracks, with a tier.
            seed_of(
                "2actors-2s-steps-cuts-preview-page512",
                stepped_and_cut(clip(2, 2.0, 0)),
                auto,
                plain().with_page_bytes(512),
                Some(3.0),
            ),
        ]
    })
}

/// Positions to flip: every byte up to `budget`, else an even stride that
/// still covers both ends and every region.
fn positions(range: std::ops::Range<usize>, budget: usize) -> impl Iterator<Item = usize> {
    let stride = range.len().div_ceil(budget).max(1);
    let last = (!range.is_empty() && (range.len() - 1) % stride != 0).then(|| range.end - 1);
    range.step_by(stride).chain(last)
}

/// Bytes flipped per file region before the stride kicks in.
const FLIP_BUDGET: usize = 6000;
/// Random multi-byte corruptions per file and region.
const RANDOM_CASES: usize = 400;

/// `count` random corruptions of 1 to 8 bytes, all inside `region`.
fn random_corruptions(
    seed: &Seed,
    region: std::ops::Range<usize>,
    count: usize,
    salt: u64,
) -> Vec<(String, Vec<u8>)> {
    if region.is_empty() {
        return Vec::new();
    }
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ (seed.bytes.len() as u64) ^ salt);
    (0..count)
        .map(|_| {
            let mut bytes = seed.bytes.clone();
            let mut changed = Vec::new();
            for _ in 0..1 + rng.below(8) {
                let at = region.start + rng.below(region.len());
                bytes[at] = rng.other_byte(bytes[at]);
                changed.push(at);
            }
            // A later change may restore an earlier one; describe what differs.
            changed.retain(|&at| bytes[at] != seed.bytes[at]);
            changed.sort_unstable();
            changed.dedup();
            let what = changed
                .iter()
                .map(|&at| format!("[{at}] {:#04x}->{:#04x}", seed.bytes[at], bytes[at]))
                .collect::<Vec<_>>()
                .join(", ");
            (what, bytes)
        })
        .filter(|(what, _)| !what.is_empty())
        .collect()
}

// ---------------------------------------------------------------------------
// The tests.

#[test]
fn corrupting_header_metadata_or_index_fails_open() {
    let mut failures = Failures::default();
    for seed in corpus() {
        let guarded = 0..seed.pages_offset;
        for at in positions(guarded.clone(), FLIP_BUDGET) {
            for mask in [0xFFu8, 1 << (at % 8)] {
                let mut bytes = seed.bytes.clone();
                bytes[at] ^= mask;
                failures.run(
                    || format!("{}: byte {at} ^= {mask:#04x}", seed.name),
                    &bytes,
                    Expect::OpenFails,
                );
            }
        }
        for (what, bytes) in random_corruptions(seed, guarded, RANDOM_CASES, 1) {
            failures.run(
                || format!("{}: {what}", seed.name),
                &bytes,
                Expect::OpenFails,
            );
        }
    }
    failures.check("header, metadata and index corruption");
}

#[test]
fn corrupting_pages_fails_verify() {
    let mut failures = Failures::default();
    for seed in corpus() {
        let pages = seed.pages_offset..seed.bytes.len();
        for at in positions(pages.clone(), FLIP_BUDGET) {
            for mask in [0xFFu8, 1 << (at % 8)] {
                let mut bytes = seed.bytes.clone();
                bytes[at] ^= mask;
                failures.run(
                    || format!("{}: byte {at} ^= {mask:#04x}", seed.name),
                    &bytes,
                    Expect::Unsound,
                );
            }
        }
        for (what, bytes) in random_corruptions(seed, pages, RANDOM_CASES, 2) {
            failures.run(|| format!("{}: {what}", seed.name), &bytes, Expect::Unsound);
        }
    }
    failures.check("page corruption");
}

#[test]
fn truncated_or_extended_files_fail_open() {
    let mut failures = Failures::default();
    for seed in corpus() {
        for len in 0..seed.bytes.len() {
            failures.run(
                || format!("{}: truncated to {len} bytes", seed.name),
                &seed.bytes[..len],
                Expect::OpenFails,
            );
        }
        for (extra, fill) in [(1, 0u8), (3, 0xAA), (8, 0), (64, 0xFF), (4096, 0x5A)] {
            let mut bytes = seed.bytes.clone();
            bytes.resize(bytes.len() + extra, fill);
            failures.run(
                || format!("{}: {extra} bytes of {fill:#04x} appended", seed.name),
                &bytes,
                Expect::OpenFails,
            );
        }
    }
    failures.check("truncation and appended bytes");
}

/// 32-bit patterns written over fields: counts, lengths, offsets and floats
/// at their edges.
const INTERESTING: [u32; 9] = [
    0,
    1,
    0xFF,
    0xFFFF,
    0x7FFF_FFFF,
    0xFFFF_FFFF,
    0x7FC0_0000, // NaN
    0x7F80_0000, // +inf
    0xBF80_0000, // -1.0
];

#[test]
fn mutations_behind_checksums_never_panic() {
    let mut failures = Failures::default();
    for seed in corpus() {
        let len = seed.bytes.len();
        let mut fixed = |what: &dyn Fn() -> String, mut bytes: Vec<u8>| {
            recompute_checksums(&mut bytes);
            failures.run(
                || format!("{}: {}, checksums fixed", seed.name, what()),
                &bytes,
                Expect::NoPanic,
            );
        };
        // Header (its checksum aside), metadata and index: every offset.
        for at in 8..seed.pages_offset {
            if (60..64).contains(&at) {
                continue;
            }
            for mask in [0xFFu8, 1 << (at % 8)] {
                let mut bytes = seed.bytes.clone();
                bytes[at] ^= mask;
                fixed(&|| format!("byte {at} ^= {mask:#04x}"), bytes);
            }
            for value in INTERESTING {
                let mut bytes = seed.bytes.clone();
                let end = (at + 4).min(seed.pages_offset);
                bytes[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
                if bytes != seed.bytes {
                    fixed(&|| format!("{value:#010x} written at {at}"), bytes);
                }
            }
        }
        // Pages: a stride of flips and patterns, and random corruptions.
        for at in positions(seed.pages_offset..len, FLIP_BUDGET / 4) {
            let mut bytes = seed.bytes.clone();
            bytes[at] ^= 0xFF;
            fixed(&|| format!("byte {at} ^= 0xff"), bytes);
            for value in [0u32, 0xFFFF_FFFF, 0x7FC0_0000] {
                let mut bytes = seed.bytes.clone();
                let end = (at + 4).min(len);
                bytes[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
                fixed(&|| format!("{value:#010x} written at {at}"), bytes);
            }
        }
        for (region, salt) in [
            (HEADER_LEN..seed.pages_offset, 3),
            (seed.pages_offset..len, 4),
        ] {
            for (what, bytes) in random_corruptions(seed, region, RANDOM_CASES, salt) {
                fixed(&|| what.clone(), bytes);
            }
        }
    }
    failures.check("mutations behind the checksums");
}

#[test]
fn harness_reports_panics() {
    // A panic inside a case comes back as its message and location, so a
    // reader panic cannot go unnoticed or unexplained.
    let caught = catch(|| -> u8 { panic!("boom {}", 42) });
    let message = caught.expect_err("a panic is an Err");
    assert!(
        message.contains("boom 42") && message.contains("container_fuzz.rs"),
        "{message}"
    );
    assert_eq!(catch(|| 7), Ok(7));
}

#[test]
fn checksum_fixing_restores_valid_files() {
    // The fixer recomputes exactly what the writer wrote, so fixing a valid
    // file is a no-op: mutations with fixed checksums differ only where meant.
    for seed in corpus() {
        let mut bytes = seed.bytes.clone();
        recompute_checksums(&mut bytes);
        assert!(
            bytes == seed.bytes,
            "{}: fixing changed a valid file",
            seed.name
        );
    }
}

#[test]
fn write_fuzz_seeds() {
    let Some(dir) = std::env::var_os("CINESTREAM_WRITE_FUZZ_SEEDS") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (i, seed) in corpus().iter().enumerate() {
        let path = dir.join(format!("seed-{i}.cine"));
        std::fs::write(&path, &seed.bytes).unwrap();
        println!("wrote {} ({})", path.display(), seed.name);
    }
}

/// Found by the fuzzer: section offsets near `u64::MAX` overflowed the
/// header's alignment arithmetic (a panic where overflow is checked). Every
/// such header is refused by name, whatever the build.
#[test]
fn section_offsets_near_the_end_of_u64_are_refused() {
    let golden = include_bytes!("data/golden/v3-preview.cine");
    for (field, value) in [
        (24usize, u64::MAX - 3),
        (24, u64::MAX),
        (48, u64::MAX - 7),
        (16, u64::MAX),
    ] {
        let mut bytes = golden.to_vec();
        bytes[field..field + 8].copy_from_slice(&value.to_le_bytes());
        recompute_checksums(&mut bytes);
        let opened = catch(|| StreamReader::open(&bytes[..]).map(|_| ()));
        match opened {
            Ok(Err(e)) => assert!(
                e.to_string().contains("header")
                    || e.to_string().contains("truncated")
                    || e.to_string().contains("length"),
                "field {field} = {value}: {e}"
            ),
            Ok(Ok(())) => panic!("field {field} = {value}: opened"),
            Err(panic) => panic!("field {field} = {value}: panicked: {panic}"),
        }
    }
}
