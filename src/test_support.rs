//! The tests' fixtures, one copy each, shared by the unit tests of every
//! module and by the integration tests under `tests/` (which include the
//! same files): a temporary directory removed when dropped, a seeded
//! generator for the tests that draw cases, and a glTF document built in
//! code.

#[cfg(feature = "pipeline")]
#[path = "../tests/common/gltf_doc.rs"]
pub(crate) mod gltf_doc;
#[path = "../tests/common/rng.rs"]
pub(crate) mod rng;
#[path = "../tests/common/temp_dir.rs"]
pub(crate) mod temp_dir;
