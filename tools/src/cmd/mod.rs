//! The subcommands.

pub mod batch;
pub mod common;
pub mod demo;
pub mod pack;
pub mod stats;
pub mod verify;
