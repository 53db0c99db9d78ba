//! The tests' fixtures, one copy each, shared by the unit tests of every
//! module and by the integration tests under `tests/` (which include the
//! same files): a temporary directory removed when dropped, and a seeded
//! generator for the tests that draw cases.

#[path = "../tests/common/rng.rs"]
pub(crate) mod rng;
#[path = "../tests/common/temp_dir.rs"]
pub(crate) mod temp_dir;

