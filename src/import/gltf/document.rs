//! The document: JSON or GLB bytes parsed and validated, with every
//! problem named by its JSON path; extensions that leave animation alone
//! are allowed.

use gltf::json::validation::Validate;
use gltf::json::{self, Root};

use super::buffers::le_u32;
use super::floats::RawJson;
use super::Context;
use crate::error::Result;

impl Context<'_> {
    /// Deserializes the document and validates the parts this importer
    /// reads; also returns what the gltf crate's JSON model leaves out
    /// (pointer channels, mesh `extras.targetNames`), read from the raw JSON.
    pub(super) fn parse_document(&self, bytes: &[u8]) -> Result<(gltf::Gltf, RawJson)> {
        let is_glb = bytes.starts_with(b"glTF");
        if is_glb {
            // The gltf crate subtracts the header size from the declared
            // length unchecked, which underflows on a corrupt header.
            match le_u32(bytes, 8) {
                None => return Err(self.error("GLB header", "file ends inside the 12-byte header")),
                Some(length) if length < 12 => {
                    return Err(self.error(
                        "GLB header",
                        format!("declared length {length} is shorter than the 12-byte header"),
                    ))
                }
                Some(_) => {}
            }
        }
        let deserialize_error = |e: serde_json::Error| {
            let full = e.to_string();
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
            let location = match (e.line(), is_glb) {
                (0, _) => "document".to_string(),
                (line, false) => format!("line {line} column {}", e.column()),
                (line, true) => format!("JSON chunk line {line} column {}", e.column()),
            };
            self.error(location, message)
        };
        let crate_error = |e: gltf::Error| match e {
            gltf::Error::Binary(e) => self.error("GLB container", e.to_string()),
            gltf::Error::Deserialize(e) => deserialize_error(e),
            other => self.error("document", other.to_string()),
        };
        let (mut value, blob) = if is_glb {
            let glb = gltf::Glb::from_slice(bytes).map_err(crate_error)?;
            let value: serde_json::Value =
                serde_json::from_slice(&glb.json).map_err(deserialize_error)?;
            (value, glb.bin.map(|bin| bin.into_owned()))
        } else {
            let value: serde_json::Value =
                serde_json::from_slice(bytes).map_err(deserialize_error)?;
            (value, None)
        };
        let (raw, patched) = RawJson::extract(&mut value);
        let document = if patched {
            // Pointer channels have no `target.node`, which the gltf crate
            // requires: the patched value has a placeholder that nothing
            // reads. Its errors have no line: the text was not parsed.
            let root: Root = serde_json::from_value(value).map_err(deserialize_error)?;
            gltf::Gltf {
                document: gltf::Document::from_json_without_validation(root),
                blob,
            }
        } else {
            drop(value);
            gltf::Gltf::from_slice_without_validation(bytes).map_err(crate_error)?
        };
        self.validate(document.document.as_json(), &raw)?;
        Ok((document, raw))
    }

    /// Runs the gltf crate's validation on what this importer reads. The whole
    /// document is not validated: the crate's mesh check indexes accessors
    /// unchecked and would panic on a bad index, and meshes, materials and
    /// textures do not matter to animation anyway.
    pub(super) fn validate(&self, root: &Root, raw: &RawJson) -> Result<()> {
        let mut problems = Vec::new();
        let mut report = |path: &dyn Fn() -> json::Path, error: json::validation::Error| {
            let path = path();
            // An unknown channel path is refused (or skipped with `lenient`)
            // by `classify_channels`, with a message that says what to do;
            // a pointer channel's node is a placeholder.
            let channel_path =
                path.as_str().starts_with("animations[") && path.as_str().ends_with(".target.path");
            let placeholder = raw.is_pointer_node_path(path.as_str());
            if !(channel_path || placeholder) {
                problems.push((path, error))
            }
        };
        let at = |field: &'static str| move || json::Path::new().field(field);
        root.accessors.validate(root, at("accessors"), &mut report);
        root.animations
            .validate(root, at("animations"), &mut report);
        root.buffers.validate(root, at("buffers"), &mut report);
        root.buffer_views
            .validate(root, at("bufferViews"), &mut report);
        root.nodes.validate(root, at("nodes"), &mut report);
        root.skins.validate(root, at("skins"), &mut report);
        if let Some((path, error)) = problems.first() {
            let mut message = error.to_string();
            if problems.len() > 1 {
                let more: Vec<String> = problems[1..]
                    .iter()
                    .take(3)
                    .map(|(p, e)| format!("{p}: {e}"))
                    .collect();
                message += &format!(
                    " ({} more problems: {}{})",
                    problems.len() - 1,
                    more.join("; "),
                    if problems.len() > 4 { "; ..." } else { "" }
                );
            }
            return Err(self.error(path.to_string(), message));
        }
        for (index, name) in root.extensions_required.iter().enumerate() {
            if !extension_leaves_animation_alone(name) {
                return Err(self.error(
                    format!("extensionsRequired[{index}]"),
                    format!("required extension {name} is not supported"),
                ));
            }
        }
        Ok(())
    }
}

/// Required extensions that touch neither nodes, skins, animations nor the
/// meaning of buffer bytes, so a file needing them still imports correctly;
/// and `KHR_animation_pointer`, whose channels are imported (a camera's
/// field of view) or refused one by one.
/// Anything else (e.g. meshopt buffer compression) is refused rather than
/// read as garbage.
fn extension_leaves_animation_alone(name: &str) -> bool {
    name.starts_with("KHR_materials_")
        || name.starts_with("KHR_texture_")
        || name.starts_with("EXT_texture_")
        || matches!(
            name,
            "KHR_draco_mesh_compression"
                | "KHR_mesh_quantization"
                | "KHR_lights_punctual"
                | "KHR_animation_pointer"
                | "EXT_mesh_gpu_instancing"
        )
}

#[cfg(test)]
mod tests {

    use serde_json::{json, Value};

    use super::super::parse_gltf;
    use super::super::test_doc::*;

    use crate::clip::ClipError;

    use crate::error::Error;

    #[test]
    fn malformed_documents_name_the_offending_element() {
        let good = || one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        let edited = |edit: &dyn Fn(&mut Value)| {
            let mut root = good().json();
            edit(&mut root);
            parse_json(&root, 30.0)
        };

        let (at, message) = gltf_error(parse_gltf(
            b"{\"asset\": [",
            None,
            "bad.gltf",
            &at_rate(30.0),
        ));
        assert!(at.starts_with("line 1 column"), "{at}");
        assert!(!message.is_empty());

        // Accessor 1 is the output: too many elements, or an offset past the view.
        assert_eq!(
            location(edited(&|r| r["accessors"][1]["count"] = json!(3))),
            "accessors[1]"
        );
        assert_eq!(
            location(edited(
                &|r| r["accessors"][1]["byteOffset"] = json!(u64::MAX)
            )),
            "accessors[1]"
        );
        assert_eq!(
            location(edited(&|r| r["bufferViews"][1]["byteLength"] = json!(1000))),
            "bufferViews[1]"
        );
        assert_eq!(
            location(edited(&|r| r["bufferViews"][0]["byteStride"] = json!(8))),
            "accessors[0]"
        );
        assert_eq!(
            location(edited(&|r| r["accessors"][1]["sparse"] = json!({
                "count": 1,
                "indices": {"bufferView": 0, "componentType": 5125},
                "values": {"bufferView": 1}
            }))),
            "accessors[1].sparse"
        );
        assert_eq!(
            location(edited(&|r| r["accessors"][1]["type"] = json!("VEC4"))),
            "accessors[1]"
        );
        assert_eq!(
            location(edited(&|r| r["accessors"][1]["componentType"] = json!(1234))),
            "accessors[1].componentType"
        );

        let bytes = good().bin.len();
        let (at, message) = gltf_error(edited(&|r| {
            r["buffers"][0]["byteLength"] = json!(bytes + 1)
        }));
        assert_eq!(at, "buffers[0]");
        assert!(message.contains("fewer than its byteLength"), "{message}");
        assert_eq!(
            location(edited(
                &|r| r["buffers"][0]["uri"] = json!("data:application/octet-stream;base64,@@@@")
            )),
            "buffers[0].uri"
        );

        let input = "animations[0].samplers[0].input";
        let output = "animations[0].samplers[0].output";
        let times = |t: &[f32]| one_channel(t, &vec![0.0; 3 * t.len()]).parse();
        assert_eq!(location(times(&[0.0, 1.0, 1.0])), input);
        assert_eq!(location(times(&[0.0, 2.0, 1.0])), input);
        assert_eq!(location(times(&[0.0, f32::INFINITY])), input);
        assert_eq!(location(times(&[])), input);

        let nan = one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 1.0, f32::NAN, 0.0]).parse();
        let (at, message) = gltf_error(nan);
        assert_eq!(at, output);
        assert!(message.contains("not finite"), "{message}");
        let (at, message) = gltf_error(one_channel(&[0.0, 1.0, 2.0], &[0.0; 6]).parse());
        assert_eq!(at, output);
        assert!(message.contains("need 3"), "{message}");
        let mut cubic = one_channel(&[0.0, 1.0], &[0.0; 6]);
        cubic.animations[0]["samplers"][0]["interpolation"] = json!("CUBICSPLINE");
        assert_eq!(location(cubic.parse()), output);
        let zero_quat = {
            let mut doc = Doc::with_nodes(json!([{}]));
            doc.channel(0, 0, "rotation", "LINEAR", &[0.0], &[0.0; 4]);
            doc.parse()
        };
        assert_eq!(location(zero_quat), output);

        assert_eq!(
            location(edited(
                &|r| r["animations"][0]["channels"][0]["target"]["node"] = json!(7)
            )),
            "animations[0].channels[0].target.node"
        );
        assert_eq!(
            location(edited(
                &|r| r["animations"][0]["samplers"][0]["input"] = json!(9)
            )),
            "animations[0].samplers[0].input"
        );
        assert_eq!(
            location(edited(&|r| r["animations"] = json!([]))),
            "animations"
        );
        let (at, message) = gltf_error(edited(&|r| r["animations"] = json!([])));
        assert_eq!(
            (at.as_str(), message.as_str()),
            ("animations", "document has no animations")
        );
    }

    #[test]
    fn malformed_hierarchies_and_sizes_are_errors() {
        let doc = |nodes: Value| {
            let mut doc = Doc::with_nodes(nodes);
            doc.skins.push(json!({"joints": [0]}));
            doc.channel(0, 0, "translation", "LINEAR", &[0.0], &[0.0; 3]);
            doc.parse()
        };
        let (at, message) = gltf_error(doc(json!([{"children": [1]}, {"children": [0]}])));
        assert!(at.starts_with("nodes["), "{at}");
        assert!(message.contains("cycle"), "{message}");
        assert_eq!(
            location(doc(json!([{}, {"children": [0]}, {"children": [0]}]))),
            "nodes[2].children[0]"
        );
        assert_eq!(
            location(doc(json!([{"children": [0]}]))),
            "nodes[0].children[0]"
        );
        assert_eq!(
            location(doc(json!([{"children": [5]}]))),
            "nodes[0].children[0]"
        );
        let zeros = vec![0.0; 16];
        assert_eq!(location(doc(json!([{"matrix": zeros}]))), "nodes[0]");

        let long = one_channel(&[0.0, 1.0e9], &[0.0; 6]);
        let (at, message) = gltf_error(long.parse());
        assert_eq!(at, "animations[0]");
        assert!(message.contains("limit of 10000000"), "{message}");

        let good = one_channel(&[0.0, 1.0], &[0.0; 6]);
        for rate in [0.0, -30.0, f32::NAN, f32::INFINITY] {
            assert!(matches!(
                parse_json(&good.json(), rate),
                Err(Error::InvalidClip {
                    source: ClipError::BadSampleRate(_),
                    ..
                })
            ));
        }

        let mut glb = good.glb();
        glb[8..12].copy_from_slice(&4u32.to_le_bytes());
        assert_eq!(
            location(parse_gltf(&glb, None, "x.glb", &at_rate(30.0))),
            "GLB header"
        );
    }

    #[test]
    fn irrelevant_parts_do_not_stop_the_import() {
        let mut root = one_channel(&[0.0, 1.0], &[0.0; 6]).json();
        // The gltf crate's own validation would index accessors[99] here.
        root["meshes"] = json!([{"primitives": [{"attributes": {"POSITION": 99}}]}]);
        root["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
        root["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
        assert_eq!(parse_json(&root, 30.0).unwrap().len(), 1);

        root["extensionsRequired"] = json!(["EXT_meshopt_compression"]);
        assert_eq!(location(parse_json(&root, 30.0)), "extensionsRequired[0]");
    }
}
