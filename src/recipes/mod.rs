//! The recipes every front end runs: the program's `pack` and `verify`,
//! Python's `pack`, `verify_file` and `Stream.verify`, and any later one
//! call these functions, so that what they do and what they refuse is one
//! thing, written once.
//!
//! This module owns the order of the work (import, compress, preview,
//! write, report; read, verify, import the sources, measure, report), the
//! reports (serializable: the program prints them with `--json`, Python
//! returns them as dicts), and every check between what a recipe reads and
//! what it writes ([`outputs`]). Argument parsing, progress bars and the
//! printing of text stay with the front ends.

pub mod outputs;
pub mod pack;
pub mod verify;
