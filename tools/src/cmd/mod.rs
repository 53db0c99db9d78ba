//! The subcommands.

pub mod batch;
pub mod demo;
pub mod stats;
