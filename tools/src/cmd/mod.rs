//! The subcommands.

pub mod demo;
pub mod stats;
