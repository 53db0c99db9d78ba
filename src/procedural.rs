//! procedural
