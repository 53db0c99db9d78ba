//! What the BVH grammar produces: joints with their offsets and channels,
//! and the motion evaluated into poses.

use glam::DVec3;

use crate::clip::Transform;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Axis {
    X,
    Y,
    Z,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Channel {
    Position(Axis),
    Rotation(Axis),
}

impl Channel {
    const ALL: [(&'static str, Channel); 6] = [
        ("Xposition", Channel::Position(Axis::X)),
        ("Yposition", Channel::Position(Axis::Y)),
        ("Zposition", Channel::Position(Axis::Z)),
        ("Xrotation", Channel::Rotation(Axis::X)),
        ("Yrotation", Channel::Rotation(Axis::Y)),
        ("Zrotation", Channel::Rotation(Axis::Z)),
    ];

    pub(super) fn parse(name: &str) -> Option<Channel> {
        Channel::ALL
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, c)| c)
    }

    pub(super) fn name(self) -> &'static str {
        Channel::ALL
            .iter()
            .find(|&&(_, c)| c == self)
            .map_or("?", |&(n, _)| n)
    }
}

/// A ROOT or JOINT as parsed.
pub(super) struct Joint<'a> {
    pub(super) name: &'a str,
    pub(super) parent: Option<usize>,
    /// Line of its ROOT or JOINT keyword.
    pub(super) line: usize,
    pub(super) offset: Option<DVec3>,
    /// Line of its CHANNELS statement, if any.
    pub(super) channels_line: Option<usize>,
    pub(super) channels: Vec<Channel>,
    /// Index of its first channel in a frame line. Channels are numbered in
    /// the order CHANNELS statements appear in the file.
    pub(super) first_channel: usize,
}

/// The MOTION section: values of every channel, frame after frame.
pub(super) struct Motion {
    pub(super) sample_rate: f32,
    pub(super) num_frames: usize,
    pub(super) poses: Vec<Transform>,
}
