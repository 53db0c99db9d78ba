//! Deterministic fuzzing of streaming playback.
//!
//! Runs the harness the `fuzz/` target `stream_players` runs
//! (`cinestream::fuzzing::players`) over a fixed set of scripts: a
//! hand-written tour of every operation for each built-in container and
//! both missing-page policies, then a few hundred scripts from a seeded
//! generator, over the built-in containers and over the same containers
//! carried in the input. Each script plays several players over a stream
//! with a budget of two or three pages and its prefetch thread running;
//! the harness panics if a pose differs from the whole-file reader's, a
//! blocking stream fails, a player's playhead leaves the clip, or the
//! resident bytes go over the documented bound. A test fails listing the
//! first failing cases with their panic message.
//!
//! `CINESTREAM_WRITE_FUZZ_SEEDS=<dir> cargo test --release --test
//! stream_fuzz write_stream_fuzz_seeds` writes the hand-written scripts (and
//! their embedded-container forms) to `<dir>/stream_players`, the seed
//! corpus of the `fuzz/` target.
// Needs the pipeline (compress, import, metric): not built by the runtime alone.
#![cfg(feature = "pipeline")]

use std::panic::{catch_unwind, AssertUnwindSafe};

use cinestream::container::StreamReader;
use cinestream::fuzzing::players::{exercise, input, seed_containers, Container, Header, Outcome};
use cinestream::stream::MissingPage;

#[path = "common/rng.rs"]
mod rng;
use rng::XorShift;

/// Time selectors of the harness (`Input::time`): an argument byte, then
/// the kind.
const T_ZERO: [u8; 2] = [0, 0];
const T_END: [u8; 2] = [0, 2];
const T_NAN: [u8; 2] = [0, 5];
const T_INF: [u8; 2] = [0, 6];
const T_MAX: [u8; 2] = [0, 8];
const T_BEFORE: [u8; 2] = [200, 4];
fn t_in(fraction: u8) -> [u8; 2] {
    [fraction, 3]
}
fn t_sample(sample: u8) -> [u8; 2] {
    [sample, 11]
}
fn t_loops(loops: i8) -> [u8; 2] {
    [(loops as i16 + 128) as u8, 15]
}

/// A tour of every operation: two players looping and clamped, seeks to
/// the ends, past them, to NaN and infinity, rates backward and fast,
/// frames one by one and many at once, direct samples with every rounding,
/// bone samples (one past the last bone too), warming, preloading,
/// evicting and a reset of the counters.
/// Returns the script and its number of operations.
fn tour() -> (Vec<u8>, usize) {
    let mut ops: Vec<u8> = Vec::new();
    let mut count = 0;
    let mut op = |code: u8, slot: u8, args: &[u8]| {
        count += 1;
        ops.extend_from_slice(&[code, slot]);
        ops.extend_from_slice(args);
    };
    op(0, 0, &[2]); // player 0 loops
    op(0, 1, &[1]); // player 1 clamps
    op(2, 0, &t_in(128));
    op(5, 0, &[31, 0]); // 32 frames at 30 Hz
    op(2, 1, &T_END);
    op(3, 1, &[0, 1]); // backward
    op(5, 1, &[20, 1]); // 21 frames at 60 Hz
    op(3, 0, &[0, 2]); // twice as fast
    op(4, 0, &[4, 0, 15]); // a step of zero loops and a half-sample
    op(5, 0, &[10, 0]);
    op(2, 0, &T_NAN);
    op(2, 1, &T_INF);
    op(2, 0, &t_loops(-3));
    op(4, 0, &[5, 0, 6]); // a step of +inf
    op(2, 1, &T_BEFORE);
    op(6, 0, &[T_MAX[0], T_MAX[1], 0]);
    for rounding in 0..4 {
        let [a, b] = t_sample(3);
        op(6, 0, &[a, b, rounding]);
    }
    op(7, 0, &[0, T_ZERO[0], T_ZERO[1]]);
    op(7, 0, &[255, T_END[0], T_END[1]]); // bone 255: past the last
    op(8, 0, &t_in(200));
    op(11, 0, &[]);
    op(9, 0, &t_in(64));
    op(12, 0, &[]);
    op(10, 0, &[]);
    op(0, 2, &[0]); // player 2, the clip's own mode
    op(3, 2, &[0, 0]);
    op(5, 2, &[31, 0]);
    op(1, 1, &[]);
    op(5, 0, &[15, 3]); // backward frames
    op(2, 3, &t_sample(7));
    op(5, 3, &[31, 1]);
    (ops, count)
}

/// The hand-written inputs: the tour over each built-in container, both
/// policies, as a built-in and as an embedded container.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let (script, _) = tour();
    for (i, bytes) in seed_containers().iter().enumerate() {
        for (policy, name) in [
            (MissingPage::Block, "block"),
            (MissingPage::NotReady, "not-ready"),
        ] {
            for (container, embedded, how) in [
                (Container::Seed(i), &[][..], "builtin"),
                (Container::Embedded, &bytes[..], "embedded"),
            ] {
                let header = Header {
                    policy,
                    budget_pages: 2,
                    lookahead: 4,
                    container,
                };
                out.push((
                    format!("tour-{i}-{name}-{how}"),
                    input(&header, embedded, &script),
                ));
            }
        }
    }
    out
}

/// Runs the harness on one input; `Err` is the panic's message.
fn run(data: &[u8]) -> Result<Outcome, String> {
    catch_unwind(AssertUnwindSafe(|| exercise(data))).map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "(no message)".into())
    })
}

/// Runs every case, then fails listing the first failures.
fn run_all(cases: impl IntoIterator<Item = (String, Vec<u8>)>) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, data) in cases {
        count += 1;
        match run(&data) {
            Ok(outcome) => outcomes.push(outcome),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed; first: {:#?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    outcomes
}

#[test]
fn builtin_containers_are_sound_and_paged_small() {
    let seeds = seed_containers();
    assert_eq!(seeds.len(), 4);
    for (i, bytes) in seeds.iter().enumerate() {
        let reader = StreamReader::open(bytes.as_slice()).expect("a built-in container opens");
        assert!(reader.verify().is_sound(), "built-in container {i}");
        // A budget of two or three pages evicts as the players move, except
        // in the one-sample clip.
        let pages = reader.pages().len();
        println!(
            "built-in container {i}: {} bytes, {pages} pages, {} samples",
            bytes.len(),
            reader.meta().num_samples()
        );
        match reader.meta().num_samples() {
            1 => assert_eq!(pages, 1),
            _ => assert!(pages >= 2, "built-in container {i}: {pages} pages"),
        }
    }
}

#[test]
fn the_tour_keeps_every_promise() {
    let outcomes = run_all(seeds());
    for (outcome, (name, _)) in outcomes.iter().zip(seeds()) {
        assert!(outcome.opened && outcome.sound, "{name}: {outcome:?}");
        assert_eq!(outcome.ops, tour().1, "{name}: every operation ran");
        // Every script compares poses with the reader: blocking ones at
        // every step, non-blocking ones at least when a page came.
        assert!(
            outcome.compared > 0,
            "{name}: nothing compared: {outcome:?}"
        );
        if !outcome.not_ready_policy {
            assert_eq!(outcome.not_ready, 0, "{name}: {outcome:?}");
        }
    }
    // The non-blocking tours met pages that were not ready, and waited.
    let not_ready: usize = outcomes.iter().map(|o| o.not_ready).sum();
    assert!(not_ready > 0, "no page was ever not ready: {outcomes:?}");
}

#[test]
fn generated_scripts_keep_every_promise() {
    const CASES: usize = 400;
    let containers = seed_containers();
    let mut rng = XorShift(0x5eed_57ea_0001);
    let cases = (0..CASES).map(|case| {
        let embedded = rng.next() % 4 == 0;
        let i = (rng.next() % containers.len() as u64) as usize;
        let header = Header {
            policy: match rng.next() % 2 {
                0 => MissingPage::Block,
                _ => MissingPage::NotReady,
            },
            budget_pages: 2 + rng.next() % 2,
            lookahead: (rng.next() % 8) as usize,
            container: match embedded {
                true => Container::Embedded,
                false => Container::Seed(i),
            },
        };
        let len = (rng.next() % 400) as usize;
        let script: Vec<u8> = (0..len).map(|_| rng.byte()).collect();
        let bytes = match embedded {
            true => &containers[i][..],
            false => &[][..],
        };
        (
            format!("case {case} ({header:?})"),
            input(&header, bytes, &script),
        )
    });
    let outcomes = run_all(cases.collect::<Vec<_>>());
    let sum = |f: fn(&Outcome) -> usize, not_ready: bool| -> usize {
        outcomes
            .iter()
            .filter(|o| o.not_ready_policy == not_ready)
            .map(f)
            .sum()
    };
    let (compared_block, compared_nr) = (sum(|o| o.compared, false), sum(|o| o.compared, true));
    let not_ready = sum(|o| o.not_ready, true);
    println!(
        "{CASES} scripts: {} ops, poses compared {compared_block} blocking, {compared_nr} non-blocking, \
         {not_ready} not ready, {} retries",
        outcomes.iter().map(|o| o.ops).sum::<usize>(),
        sum(|o| o.retries, true)
    );
    assert!(outcomes.iter().all(|o| o.opened && o.sound));
    assert!(
        compared_block > 1000 && compared_nr > 100,
        "too few comparisons"
    );
    assert!(not_ready > 0, "no page was ever not ready");
}

#[test]
fn inputs_that_do_not_open_are_turned_away() {
    // An embedded container that is not one: nothing is played.
    let header = Header {
        policy: MissingPage::Block,
        budget_pages: 2,
        lookahead: 0,
        container: Container::Embedded,
    };
    let outcome = run(&input(&header, b"not a container", &tour().0)).unwrap();
    assert!(!outcome.opened && outcome.ops == 0, "{outcome:?}");
    // An empty input plays the first built-in container, with no script.
    let outcome = run(&[]).unwrap();
    assert!(outcome.opened && outcome.ops == 0, "{outcome:?}");
}

#[test]
fn inputs_fuzzing_found_keep_every_promise() {
    // Each file under tests/data/stream_players made the harness fail once;
    // the comment beside each name says how.
    let found = [
        // A player on the 0.9 s looping clip stepped by -f64::MAX from the
        // clip's very end: the loop count overflowed (`Player::place`),
        // which panics where overflow is checked (the fuzz build, debug
        // tests); `play::tests::steps_too_big_to_count_...` checks the
        // count itself.
        "place-overflow.bin",
        // A player at a rate so fast that the prefetcher's lookahead window
        // passed u64 samples: its + 1 overflowed in the prefetch thread
        // (`Scorer::plan`; `stream::tests::a_rate_too_fast_...` checks the
        // plan itself).
        "plan-window-overflow.bin",
    ];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stream_players");
    let cases = found.iter().map(|name| {
        let bytes = std::fs::read(dir.join(name)).expect("a fuzzing finding");
        (name.to_string(), bytes)
    });
    let outcomes = run_all(cases.collect::<Vec<_>>());
    assert!(outcomes.iter().all(|o| o.opened && o.ops > 0));
}

#[test]
fn write_stream_fuzz_seeds() {
    let Some(dir) = std::env::var_os("CINESTREAM_WRITE_FUZZ_SEEDS") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir).join("stream_players");
    std::fs::create_dir_all(&dir).expect("a seed folder");
    for (name, bytes) in seeds() {
        std::fs::write(dir.join(name), bytes).expect("a seed");
    }
}
