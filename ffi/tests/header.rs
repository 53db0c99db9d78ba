//! The committed C header is what cbindgen makes of the ABI now: a change
//! to `src/lib.rs` that is not regenerated into `include/cinestream.h`
//! fails here. `CINESTREAM_BLESS=1 cargo test -p cinestream-ffi --test
//! header` rewrites it.

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml reads");
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen parses ffi/src/lib.rs");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let path = crate_dir.join("include/cinestream.h");
    if std::env::var_os("CINESTREAM_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("writes include/cinestream.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "ffi/include/cinestream.h is stale (first difference at line {}: committed {:?}, \
             generated {:?}); regenerate it with \
             CINESTREAM_BLESS=1 cargo test -p cinestream-ffi --test header",
            line + 1,
            committed.lines().nth(line).unwrap_or("<end>"),
            generated.lines().nth(line).unwrap_or("<end>")
        );
    }
}
