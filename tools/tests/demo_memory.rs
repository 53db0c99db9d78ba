//! `demo` flags each within its range but together too large for memory
//! (64 actors for an hour: 61 GB, OOM-killed at 20) are refused up front,
//! in words naming the estimate and the limit.
// Test helpers may unwrap: a failure there is a failed test.
#![allow(clippy::unwrap_used)]

use std::process::Command;

#[test]
#[cfg(unix)]
fn demo_refuses_a_cinematic_too_large_for_memory_before_building_it() {
    // Under a 2 GB address-space limit: building it anyway fails to
    // allocate (an abort, not one line of error), so the test cannot pass
    // by the machine having the memory.
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 2000000 && exec '{}' demo --actors 64 --seconds 3600 --play-seconds 0",
            env!("CARGO_BIN_EXE_cinestream")
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line expected: {stderr}");
    for part in [
        "error: ",
        "64 actors",
        "3600 s",
        "60.9 GB",
        "limit of 4.3 GB",
    ] {
        assert!(lines[0].contains(part), "{part:?} missing from {stderr}");
    }
    assert!(output.stdout.is_empty(), "nothing built or printed");
}
