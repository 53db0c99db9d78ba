//! metric
