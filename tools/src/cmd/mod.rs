//! The subcommands.

pub mod batch;
pub mod common;
pub mod demo;
pub mod export;
pub mod inspect;
pub mod pack;
pub mod play;
pub mod stats;
pub mod verify;
pub mod view;
