//! The tests' temporary directories go when the test does: a test that
//! packed a walk and stopped (returned or panicked) once left its
//! `cinestream-*` folder in the temporary directory.

mod common;

#[test]
fn a_packed_walk_is_removed_when_its_guard_goes() {
    let dir = common::packed_walk("temp-guard", &[]);
    let path = dir.to_path_buf();
    assert!(path.join("walk.cine").is_file());
    drop(dir);
    assert!(!path.exists(), "{} left behind", path.display());
}

#[test]
fn a_panicking_test_removes_its_directory_too() {
    let path = std::panic::catch_unwind(|| {
        let dir = common::temp_dir("temp-guard", "panic");
        let path = dir.to_path_buf();
        std::fs::write(dir.join("left.txt"), "x").expect("writing");
        std::panic::panic_any(path);
    })
    .expect_err("the closure panics")
    .downcast::<std::path::PathBuf>()
    .expect("the path as the panic's payload");
    assert!(!path.exists(), "{} left behind", path.display());
}
