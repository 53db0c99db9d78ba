//! The skeleton: which nodes are bones, their order and rest pose, and how
//! skins group into characters that name their bones.

use std::borrow::Cow;

use glam::{Quat, Vec3};
use gltf::json::Root;

use super::Context;
use super::Drive;
use crate::clip::{Bone, Skeleton, Transform, MIN_QUATERNION_LENGTH};
use crate::error::Result;

impl Context<'_> {
    /// Builds the skeleton from the skins and what the channels drive
    /// (`drives[animation][channel]`, see `classify_channels`), and maps
    /// node indices to bone indices.
    pub(super) fn build_skeleton(
        &self,
        document: &gltf::Document,
        drives: &[Vec<Drive>],
    ) -> Result<Rig> {
        let root = document.as_json();
        let nodes = root.nodes.len();
        let mut parents: Vec<Option<usize>> = vec![None; nodes];
        for (parent, node) in root.nodes.iter().enumerate() {
            for (k, child) in node.children.iter().flatten().enumerate() {
                let child = child.value();
                let location = || format!("nodes[{parent}].children[{k}]");
                if child >= nodes {
                    return Err(self.error(
                        location(),
                        format!("names node {child}, but there are only {nodes} nodes"),
                    ));
                }
                if child == parent {
                    return Err(self.error(location(), "node is its own child"));
                }
                if let Some(other) = parents[child] {
                    return Err(self.error(
                        location(),
                        format!("node {child} is already a child of node {other}"),
                    ));
                }
                parents[child] = Some(parent);
            }
        }

        // Seeds: every skin's joints and every node a TRS channel moves.
        // `joint_skin[node]` is the first skin listing the node as a joint;
        // skins sharing a joint are one character.
        let mut seeds = Vec::new();
        let mut joint_skin: Vec<Option<usize>> = vec![None; nodes];
        let mut characters = UnionFind::new(root.skins.len());
        for (s, skin) in root.skins.iter().enumerate() {
            if skin.joints.is_empty() {
                return Err(self.error(format!("skins[{s}].joints"), "skin has no joints"));
            }
            for (k, joint) in skin.joints.iter().enumerate() {
                let joint = joint.value();
                if joint >= nodes {
                    return Err(self.error(
                        format!("skins[{s}].joints[{k}]"),
                        format!("names node {joint}, but there are only {nodes} nodes"),
                    ));
                }
                match joint_skin[joint] {
                    Some(other) => characters.union(s, other),
                    None => joint_skin[joint] = Some(s),
                }
                seeds.push(joint);
            }
        }
        for (a, animation) in root.animations.iter().enumerate() {
            for (k, channel) in animation.channels.iter().enumerate() {
                if let Some(Drive::Bone(_)) = drives.get(a).and_then(|d| d.get(k)) {
                    seeds.push(channel.target.node.value());
                }
            }
        }
        if seeds.is_empty() {
            // Morph weights or a field of view alone: the nodes they animate
            // and their ancestors stand at rest, so the clip has a skeleton.
            for (a, animation) in root.animations.iter().enumerate() {
                for (k, channel) in animation.channels.iter().enumerate() {
                    match drives.get(a).and_then(|d| d.get(k)) {
                        Some(Drive::Weights { .. }) => seeds.push(channel.target.node.value()),
                        Some(&Drive::FieldOfView { camera }) => seeds.extend(
                            root.nodes
                                .iter()
                                .position(|n| n.camera.is_some_and(|c| c.value() == camera)),
                        ),
                        _ => {}
                    }
                }
            }
        }
        if seeds.is_empty() {
            return Err(self.error(
                "animations",
                "no skin, and no channel moves a node (translation, rotation, scale, morph \
                 weights, or the field of view of a camera some node holds)",
            ));
        }

        // Mark the seeds and their ancestors, walking each chain only until it
        // meets a node already marked so deep hierarchies stay linear.
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            Unseen,
            OnPath,
            Included,
        }
        let mut marks = vec![Mark::Unseen; nodes];
        let mut path = Vec::new();
        for &seed in &seeds {
            let mut cursor = seed;
            loop {
                match marks[cursor] {
                    Mark::Included => break,
                    Mark::OnPath => {
                        return Err(self.error(
                            format!("nodes[{cursor}]"),
                            "node hierarchy has a cycle through this node",
                        ))
                    }
                    Mark::Unseen => {
                        marks[cursor] = Mark::OnPath;
                        path.push(cursor);
                        match parents[cursor] {
                            Some(parent) => cursor = parent,
                            None => break,
                        }
                    }
                }
            }
            for node in path.drain(..) {
                marks[node] = Mark::Included;
            }
        }

        // Depth first from the roots; children in node index order.
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes];
        let mut stack = Vec::new();
        for node in (0..nodes).rev() {
            if marks[node] != Mark::Included {
                continue;
            }
            match parents[node] {
                Some(parent) => children[parent].push(node),
                None => stack.push(node),
            }
        }
        let mut order = Vec::new();
        while let Some(node) = stack.pop() {
            // `children` lists were filled in descending order, so popping
            // visits them ascending.
            stack.append(&mut children[node]);
            order.push(node);
        }
        let (prefixes, skin_characters) =
            self.character_prefixes(root, &order, &parents, &joint_skin, characters);

        let transforms: Vec<_> = document
            .nodes()
            .map(|n| n.transform().decomposed())
            .collect();
        let mut node_bones = vec![None; nodes];
        let mut bones = Vec::with_capacity(order.len());
        for &node in &order {
            let json_node = &root.nodes[node];
            let (t, r, s) = transforms[node];
            let bind = Transform {
                rotation: Quat::from_array(r),
                translation: Vec3::from_array(t),
                scale: Vec3::from_array(s),
            };
            let what = if json_node.matrix.is_some() {
                "matrix does not decompose into a finite translation, rotation and scale"
            } else {
                "translation, rotation or scale is not finite"
            };
            if !(bind.rotation.is_finite()
                && bind.translation.is_finite()
                && bind.scale.is_finite())
            {
                return Err(self.error(format!("nodes[{node}]"), what));
            }
            if bind.rotation.length() < MIN_QUATERNION_LENGTH {
                return Err(self.error(
                    format!("nodes[{node}]"),
                    "rest rotation is a zero-length quaternion",
                ));
            }
            let node_name = match json_node.name.as_deref() {
                Some(name) if !name.is_empty() => Cow::Borrowed(name),
                _ => Cow::Owned(format!("node{node}")),
            };
            node_bones[node] = Some(bones.len());
            bones.push(Bone {
                name: match &prefixes[node] {
                    Some(character) => format!("{character}/{node_name}"),
                    None => node_name.into_owned(),
                },
                parent: parents[node].and_then(|p| node_bones[p]),
                bind,
            });
        }
        let skeleton = Skeleton::new(bones).map_err(|e| self.invalid_clip(e))?;
        Ok(Rig {
            skeleton,
            node_bones,
            parents,
            prefixes,
            skin_characters,
        })
    }

    /// The character name each bone is prefixed with (`None`: no prefix),
    /// indexed by node, and each skin's character name; all `None` unless
    /// the skins make two characters or more. `order` lists the bones'
    /// nodes parents first; `characters` already joins skins that share a
    /// joint.
    fn character_prefixes(
        &self,
        root: &Root,
        order: &[usize],
        parents: &[Option<usize>],
        joint_skin: &[Option<usize>],
        mut characters: UnionFind,
    ) -> (Vec<Option<String>>, Vec<Option<String>>) {
        let nodes = parents.len();
        // A joint below another skin's joint (a face skin under the body's
        // head) is the same rig: join through each joint's nearest joint
        // ancestor, found parents first.
        let mut nearest_joint: Vec<Option<usize>> = vec![None; nodes];
        for &node in order {
            if let Some(parent) = parents[node] {
                nearest_joint[node] = match joint_skin[parent] {
                    Some(_) => Some(parent),
                    None => nearest_joint[parent],
                };
            }
            let ancestor_skin = nearest_joint[node].and_then(|a| joint_skin[a]);
            if let (Some(skin), Some(other)) = (joint_skin[node], ancestor_skin) {
                characters.union(skin, other);
            }
        }
        // Each character is named after its lowest-index skin.
        let skins = root.skins.len();
        let mut named: Vec<Option<usize>> = vec![None; skins];
        let mut firsts = Vec::new();
        for skin in 0..skins {
            let group = characters.find(skin);
            if named[group].is_none() {
                named[group] = Some(skin);
                firsts.push(skin);
            }
        }
        if firsts.len() < 2 {
            return (vec![None; nodes], vec![None; skins]);
        }
        let skin_name = |skin: usize| match root.skins[skin].name.as_deref() {
            Some(name) if !name.is_empty() => Some(name),
            _ => None,
        };
        let mut character_names: Vec<Option<String>> = vec![None; skins];
        for &skin in &firsts {
            let name = match skin_name(skin) {
                Some(name)
                    if firsts
                        .iter()
                        .filter(|&&o| skin_name(o) == Some(name))
                        .count()
                        > 1 =>
                {
                    format!("{name}#{skin}")
                }
                Some(name) => name.to_string(),
                None => format!("skin{skin}"),
            };
            character_names[characters.find(skin)] = Some(name);
        }

        #[derive(Clone, Copy, PartialEq)]
        enum Owner {
            Nobody,
            One(usize),
            Several,
        }
        let mut owner = vec![Owner::Nobody; nodes];
        for &node in order {
            if let Some(skin) = joint_skin[node] {
                owner[node] = Owner::One(characters.find(skin));
            }
        }
        // Up: a node above joints of one character only is that character's.
        for &node in order.iter().rev() {
            let Some(parent) = parents[node] else {
                continue;
            };
            if joint_skin[parent].is_some() {
                continue;
            }
            owner[parent] = match (owner[parent], owner[node]) {
                (mine, Owner::Nobody) => mine,
                (Owner::Nobody, theirs) => theirs,
                (mine, theirs) if mine == theirs => mine,
                _ => Owner::Several,
            };
        }
        // Down: a node with no joint below follows its parent.
        for &node in order {
            if owner[node] == Owner::Nobody {
                if let Some(parent) = parents[node] {
                    if let Owner::One(group) = owner[parent] {
                        owner[node] = Owner::One(group);
                    }
                }
            }
        }
        let prefixes = owner
            .into_iter()
            .map(|o| match o {
                Owner::One(group) => character_names[group].clone(),
                Owner::Nobody | Owner::Several => None,
            })
            .collect();
        let skin_characters = (0..skins)
            .map(|skin| character_names[characters.find(skin)].clone())
            .collect();
        (prefixes, skin_characters)
    }
}

/// The skeleton and how the document's nodes map to it.
pub(super) struct Rig {
    pub(super) skeleton: Skeleton,
    /// Node to bone index, for the nodes that are bones.
    pub(super) node_bones: Vec<Option<usize>>,
    /// Each node's parent node.
    pub(super) parents: Vec<Option<usize>>,
    /// The character prefix of each bone's node (`None` for other nodes).
    prefixes: Vec<Option<String>>,
    /// Each skin's character name, when the skins make several characters.
    skin_characters: Vec<Option<String>>,
}

impl Rig {
    /// What a node's float tracks are named after, prefixed like bones: a
    /// bone's name; for another node, its name prefixed with its skin's
    /// character (a skinned mesh), else with the character of the nearest
    /// bone above it (a mesh in a hand, under a character's armature).
    pub(super) fn node_label(&self, root: &Root, node: usize) -> String {
        if let Some(bone) = self.node_bones.get(node).copied().flatten() {
            if let Some(b) = self.skeleton.bones().get(bone) {
                return b.name.clone();
            }
        }
        let name = match root.nodes.get(node).and_then(|n| n.name.as_deref()) {
            Some(name) if !name.is_empty() => name.to_string(),
            _ => format!("node{node}"),
        };
        let skin = root.nodes.get(node).and_then(|n| n.skin).map(|s| s.value());
        let prefix = match skin {
            Some(skin) => self.skin_characters.get(skin).cloned().flatten(),
            None => {
                // The nearest bone above, walking at most once round the nodes.
                let mut cursor = self.parents.get(node).copied().flatten();
                let mut prefix = None;
                for _ in 0..self.parents.len() {
                    let Some(at) = cursor else { break };
                    if self.node_bones.get(at).copied().flatten().is_some() {
                        prefix = self.prefixes.get(at).cloned().flatten();
                        break;
                    }
                    cursor = self.parents.get(at).copied().flatten();
                }
                prefix
            }
        };
        match prefix {
            Some(character) => format!("{character}/{name}"),
            None => name,
        }
    }
}

/// Disjoint sets of skins: the characters.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(len: usize) -> UnionFind {
        UnionFind {
            parent: (0..len).collect(),
        }
    }

    fn find(&mut self, mut item: usize) -> usize {
        while self.parent[item] != item {
            // Path halving keeps later finds short.
            self.parent[item] = self.parent[self.parent[item]];
            item = self.parent[item];
        }
        item
    }

    /// Joins two sets; the lower representative stays.
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        let (low, high) = (a.min(b), a.max(b));
        self.parent[high] = low;
    }
}

#[cfg(test)]
mod tests {
    use std::f32::consts::FRAC_PI_2;

    use glam::{Quat, Vec3};

    use serde_json::json;

    use super::super::test_doc::*;

    #[test]
    fn skeleton_adds_ancestors_and_orders_parents_first() {
        let h = std::f32::consts::FRAC_1_SQRT_2;
        // Children come before their parents in the node array, and the skin
        // leaves out the root.
        let mut doc = Doc::with_nodes(json!([
            {"name": "forearm", "children": [1], "scale": [2.0, 2.0, 2.0]},
            {"name": "hand", "matrix": [
                0.0, 1.0, 0.0, 0.0,
                -1.0, 0.0, 0.0, 0.0,
                0.0, 0.0, 1.0, 0.0,
                1.0, 2.0, 3.0, 1.0
            ]},
            {"name": "root", "children": [3, 4], "translation": [0.0, 1.0, 0.0]},
            {"children": [0], "rotation": [0.0, h, 0.0, h]},
            {"name": "prop"}
        ]));
        doc.skins.push(json!({"joints": [1, 0, 3]}));
        doc.channel(0, 1, "translation", "LINEAR", &[0.0, 1.0], &[0.0; 6]);
        let clips = doc.parse().unwrap();
        let skeleton = clips[0].skeleton();
        let names: Vec<&str> = skeleton.bones().iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["root", "node3", "forearm", "hand"]);
        let parents: Vec<_> = skeleton.bones().iter().map(|b| b.parent).collect();
        assert_eq!(parents, [None, Some(0), Some(1), Some(2)]);

        let bind = skeleton.bind_pose();
        assert_vec3(bind[0].translation, Vec3::Y, "root translation");
        assert_quat(
            bind[1].rotation,
            Quat::from_rotation_y(FRAC_PI_2),
            "node3 rotation",
        );
        assert_vec3(bind[2].scale, Vec3::splat(2.0), "forearm scale");
        assert_vec3(
            bind[3].translation,
            Vec3::new(1.0, 2.0, 3.0),
            "hand translation",
        );
        assert_quat(
            bind[3].rotation,
            Quat::from_rotation_z(FRAC_PI_2),
            "hand rotation",
        );
        assert_vec3(bind[3].scale, Vec3::ONE, "hand scale");
    }

    #[test]
    fn without_a_skin_the_animated_nodes_and_their_ancestors_are_bones() {
        let mut doc = Doc::with_nodes(json!([
            {"name": "lamp"},
            {"name": "arm"},
            {"name": "base", "children": [1]}
        ]));
        doc.channel(0, 1, "rotation", "LINEAR", &[0.0], &[0.0, 0.0, 0.0, 1.0]);
        let clips = doc.parse().unwrap();
        let skeleton = clips[0].skeleton();
        let names: Vec<&str> = skeleton.bones().iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["base", "arm"]);
        assert_eq!(skeleton.parent(1), Some(0));
    }

    #[test]
    fn several_skins_are_characters_named_by_their_skin() {
        // Two rigs under one shared root, each with an armature node; Ann
        // has a body and a face skin (one character); Bob holds a prop; a
        // camera is animated on its own.
        let mut doc = Doc::with_nodes(json!([
            {"name": "world", "children": [1, 5, 8]},
            {"name": "Armature", "children": [2]},
            {"name": "hips", "children": [3]},
            {"name": "head", "children": [4]},
            {"name": "jaw"},
            {"name": "Armature", "children": [6]},
            {"name": "hips", "children": [7]},
            {"children": [9]},
            {"name": "camera"},
            {"name": "sword"}
        ]));
        doc.skins.push(json!({"name": "Ann", "joints": [2, 3]}));
        doc.skins.push(json!({"joints": [6, 7]}));
        doc.skins.push(json!({"name": "Ann face", "joints": [4]}));
        doc.channel(0, 9, "translation", "LINEAR", &[0.0, 1.0], &[0.0; 6]);
        doc.channel(0, 8, "translation", "LINEAR", &[0.0, 1.0], &[0.0; 6]);
        let clips = doc.parse().unwrap();
        assert_eq!(
            bone_names(&clips),
            [
                "world",
                "Ann/Armature",
                "Ann/hips",
                "Ann/head",
                "Ann/jaw",
                "skin1/Armature",
                "skin1/hips",
                "skin1/node7",
                "skin1/sword",
                "camera"
            ]
        );

        // Same skin names: told apart by skin index.
        doc.skins[1]["name"] = json!("Ann");
        let clips = doc.parse().unwrap();
        assert_eq!(bone_names(&clips)[1], "Ann#0/Armature");
        assert_eq!(bone_names(&clips)[5], "Ann#1/Armature");

        // Skins sharing a joint are one character: no prefixes.
        doc.skins[1] = json!({"name": "Bob", "joints": [6, 7, 2]});
        let clips = doc.parse().unwrap();
        assert_eq!(bone_names(&clips)[1..3], ["Armature", "hips"]);
        assert_eq!(clips[0].num_bones(), 10);
    }
}
