//! Buffers and accessors: the GLB `BIN` chunk, base64 `data:` URIs and files
//! confined to the document's directory, and accessors bounds-checked and
//! read as keys and vectors.

use std::borrow::Cow;
use std::path::Path;

use base64::Engine as _;
use glam::Vec4;
use gltf::json::accessor::{ComponentType, Type};
use gltf::json::validation::Checked;
use gltf::json::{self, Root};

use super::{Context, MAX_BUFFER_BYTES};
use crate::error::{Error, Result};

/// One accessor, bounds-checked: `count` elements of `components` values of
/// `component` type, element `i` starting at `i * stride` in `bytes`.
pub(super) struct AccessorData<'b> {
    index: usize,
    bytes: &'b [u8],
    count: usize,
    stride: usize,
    component: ComponentType,
    components: usize,
    normalized: bool,
}

impl Context<'_> {
    /// Resolves every buffer to its bytes, cut to the declared `byteLength`.
    pub(super) fn load_buffers<'b>(
        &self,
        root: &Root,
        blob: Option<&'b [u8]>,
        base_dir: Option<&Path>,
    ) -> Result<Vec<Cow<'b, [u8]>>> {
        let mut buffers = Vec::with_capacity(root.buffers.len());
        for (index, buffer) in root.buffers.iter().enumerate() {
            let uri_location = || format!("buffers[{index}].uri");
            let declared = buffer.byte_length.0;
            if declared > MAX_BUFFER_BYTES {
                return Err(self.error(
                    format!("buffers[{index}].byteLength"),
                    format!(
                        "byteLength {declared} is over the limit of {MAX_BUFFER_BYTES} bytes \
                         (1 GiB) a buffer may have"
                    ),
                ));
            }
            let data: Cow<'b, [u8]> = match buffer.uri.as_deref() {
                None => Cow::Borrowed(blob.ok_or_else(|| {
                    self.error(
                        format!("buffers[{index}]"),
                        "buffer has no uri and the file has no GLB BIN chunk",
                    )
                })?),
                Some(uri) if uri.starts_with("data:") => Cow::Owned(
                    decode_data_uri(uri, declared)
                        .map_err(|message| self.error(uri_location(), message))?,
                ),
                Some(uri) => {
                    let Some(dir) = base_dir else {
                        return Err(self.error(
                            uri_location(),
                            "external buffer not allowed without a base directory",
                        ));
                    };
                    let relative = relative_path(uri)
                        .map_err(|message| self.error(uri_location(), message))?;
                    Cow::Owned(self.read_buffer_file(
                        dir,
                        uri,
                        &relative,
                        declared,
                        &uri_location,
                    )?)
                }
            };
            let data = match usize::try_from(declared) {
                Ok(length) if length <= data.len() => match data {
                    Cow::Borrowed(bytes) => Cow::Borrowed(&bytes[..length]),
                    Cow::Owned(mut bytes) => {
                        bytes.truncate(length);
                        Cow::Owned(bytes)
                    }
                },
                _ => {
                    return Err(self.error(
                        format!("buffers[{index}]"),
                        format!(
                            "buffer holds {} bytes, fewer than its byteLength {declared}",
                            data.len()
                        ),
                    ))
                }
            };
            buffers.push(data);
        }
        Ok(buffers)
    }

    /// Reads the first `declared` bytes of the external buffer `uri`
    /// (`relative` is its decoded path), opened beneath `dir`, the
    /// document's directory, by file descriptor (see [`super::beneath`]):
    /// the path must be relative and stay beneath `dir` through every `..`
    /// and link. Then the opened file itself is checked, never its path
    /// again: only a regular file is read (never a FIFO, device or
    /// directory, which could block or never end), and one shorter than
    /// `declared` is refused before it is read.
    pub(super) fn read_buffer_file(
        &self,
        dir: &Path,
        uri: &str,
        relative: &str,
        declared: u64,
        uri_location: &dyn Fn() -> String,
    ) -> Result<Vec<u8>> {
        use std::io::Read as _;

        let shown = crate::display::escaped(uri);
        let refuse = |message: String| self.error(uri_location(), message);
        let relative_path = Path::new(relative);
        if relative_path.has_root()
            || relative_path
                .components()
                .any(|c| matches!(c, std::path::Component::Prefix(_)))
        {
            return Err(refuse(format!(
                "URI '{shown}' is an absolute path: buffer URIs must be relative to the \
                 document's directory"
            )));
        }
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let joined = dir.join(relative_path);
        let io_error = |source| Error::Io {
            path: joined.clone(),
            source,
        };
        let file = super::beneath::open(dir, relative_path).map_err(|e| match e {
            super::beneath::Beneath::Outside(why) => refuse(format!(
                "URI '{shown}' leads outside the document's directory {}: {why}; buffer \
                 files must be inside the directory of the document (after following \
                 '..' and links)",
                crate::display::escaped(&dir.display().to_string())
            )),
            super::beneath::Beneath::Io(source) => io_error(source),
        })?;
        let metadata = file.metadata().map_err(io_error)?;
        if !metadata.is_file() {
            return Err(refuse(format!(
                "URI '{shown}' is {}, not a regular file: only regular files are read as \
                 buffers",
                crate::files::kind_name(metadata.file_type())
            )));
        }
        let length = metadata.len();
        if length < declared {
            return Err(refuse(format!(
                "URI '{shown}' holds {length} bytes, fewer than its buffer's byteLength {declared}"
            )));
        }
        // `declared` is at most MAX_BUFFER_BYTES, checked by the caller;
        // still, memory the system cannot give is an error, not an abort.
        let mut bytes = Vec::new();
        usize::try_from(declared)
            .ok()
            .and_then(|n| bytes.try_reserve_exact(n).ok())
            .ok_or_else(|| {
                refuse(format!(
                    "URI '{shown}': cannot allocate the {declared} bytes of its byteLength"
                ))
            })?;
        // A file cut short meanwhile gives fewer bytes: the caller refuses
        // it against the byteLength.
        file.take(declared)
            .read_to_end(&mut bytes)
            .map_err(io_error)?;
        Ok(bytes)
    }

    /// Finds an accessor's bytes, checking it against its buffer view and the
    /// view against its buffer. `used_at` is the JSON path that names it.
    pub(super) fn accessor<'b>(
        &self,
        root: &Root,
        buffers: &'b [Cow<'_, [u8]>],
        index: usize,
        used_at: &str,
    ) -> Result<AccessorData<'b>> {
        let accessor = root.accessors.get(index).ok_or_else(|| {
            self.error(
                used_at,
                format!(
                    "names accessor {index}, but there are only {}",
                    root.accessors.len()
                ),
            )
        })?;
        let at = format!("accessors[{index}]");
        if accessor.sparse.is_some() {
            return Err(self.error(format!("{at}.sparse"), "sparse accessors are not supported"));
        }
        let Checked::Valid(json::accessor::GenericComponentType(component)) =
            accessor.component_type
        else {
            return Err(self.error(format!("{at}.componentType"), "unknown component type"));
        };
        let Checked::Valid(kind) = accessor.type_ else {
            return Err(self.error(format!("{at}.type"), "unknown accessor type"));
        };
        let components = match kind {
            Type::Scalar => 1,
            Type::Vec2 => 2,
            Type::Vec3 => 3,
            Type::Vec4 => 4,
            Type::Mat2 => 4,
            Type::Mat3 => 9,
            Type::Mat4 => 16,
        };
        let element = components * component_size(component);
        let view_index = accessor
            .buffer_view
            .ok_or_else(|| self.error(at.clone(), "accessor has no bufferView"))?
            .value();
        let view = root.buffer_views.get(view_index).ok_or_else(|| {
            self.error(
                format!("{at}.bufferView"),
                format!(
                    "names buffer view {view_index}, but there are only {}",
                    root.buffer_views.len()
                ),
            )
        })?;
        let view_at = format!("bufferViews[{view_index}]");
        let buffer_index = view.buffer.value();
        let buffer = buffers.get(buffer_index).ok_or_else(|| {
            self.error(
                format!("{view_at}.buffer"),
                format!(
                    "names buffer {buffer_index}, but there are only {}",
                    buffers.len()
                ),
            )
        })?;
        let view_offset = view.byte_offset.map_or(0, |o| o.0);
        let view_length = view.byte_length.0;
        let view_bytes = view_offset
            .checked_add(view_length)
            .and_then(|end| {
                let start = usize::try_from(view_offset).ok()?;
                let end = usize::try_from(end).ok()?;
                buffer.get(start..end)
            })
            .ok_or_else(|| {
                self.error(
                    view_at.clone(),
                    format!(
                        "byteOffset {view_offset} + byteLength {view_length} runs past the \
                         {} bytes of buffers[{buffer_index}]",
                        buffer.len()
                    ),
                )
            })?;
        let stride = match view.byte_stride {
            Some(stride) if stride.0 < element => {
                return Err(self.error(
                    format!("{view_at}.byteStride"),
                    format!(
                        "byteStride {} is smaller than the {element}-byte elements of {at}",
                        stride.0
                    ),
                ))
            }
            Some(stride) => stride.0,
            None => element,
        };
        let offset = accessor.byte_offset.map_or(0, |o| o.0);
        let count = accessor.count.0;
        // Bytes the last element ends at, relative to the view.
        let needed = match count.checked_sub(1) {
            None => Some(offset),
            Some(last) => last
                .checked_mul(stride as u64)
                .and_then(|n| n.checked_add(offset))
                .and_then(|n| n.checked_add(element as u64)),
        };
        let bytes = needed
            .and_then(|end| {
                let start = usize::try_from(offset).ok()?;
                let end = usize::try_from(end).ok()?;
                view_bytes.get(start..end)
            })
            .ok_or_else(|| {
                self.error(
                    at.clone(),
                    format!(
                        "{count} elements of {element} bytes (stride {stride}) from byteOffset \
                         {offset} run past the {view_length} bytes of {view_at}"
                    ),
                )
            })?;
        Ok(AccessorData {
            index,
            bytes,
            // `count` elements fit in `bytes`, so it fits in usize.
            count: usize::try_from(count).unwrap_or(usize::MAX),
            stride,
            component,
            components,
            normalized: accessor.normalized,
        })
    }

    /// Checks that an accessor holds `components`-vectors of floats, or of
    /// normalized integers when `allow_normalized`.
    fn check_vectors(
        &self,
        data: &AccessorData<'_>,
        components: usize,
        allow_normalized: bool,
        used_at: &str,
    ) -> Result<()> {
        let integer_ok = allow_normalized
            && data.normalized
            && matches!(
                data.component,
                ComponentType::I8 | ComponentType::U8 | ComponentType::I16 | ComponentType::U16
            );
        if data.components != components || !(data.component == ComponentType::F32 || integer_ok) {
            let normalized = "or normalized BYTE, UNSIGNED_BYTE, SHORT or UNSIGNED_SHORT";
            let kind = match components {
                1 => "SCALAR",
                3 => "VEC3",
                _ => "VEC4",
            };
            let expected = match allow_normalized {
                true => format!("{kind} of FLOAT {normalized}"),
                false => format!("{kind} of FLOAT"),
            };
            return Err(self.error(
                format!("accessors[{}]", data.index),
                format!(
                    "used as {used_at}, which needs {expected}; found {} components of {}{}",
                    data.components,
                    component_name(data.component),
                    if data.normalized { " (normalized)" } else { "" }
                ),
            ));
        }
        Ok(())
    }

    /// Reads an accessor of `components`-vectors as floats. Integer
    /// components are accepted only when `allow_normalized` and the accessor
    /// is normalized (the spec allows that for rotations).
    pub(super) fn read_vectors(
        &self,
        data: &AccessorData<'_>,
        components: usize,
        allow_normalized: bool,
        used_at: &str,
    ) -> Result<Vec<Vec4>> {
        self.check_vectors(data, components, allow_normalized, used_at)?;
        let size = component_size(data.component);
        let mut values = Vec::with_capacity(data.count);
        for element in 0..data.count {
            let mut value = Vec4::ZERO;
            for c in 0..components {
                let at = element * data.stride + c * size;
                value[c] = read_component(data.bytes, at, data.component).ok_or_else(|| {
                    // Unreachable after the bounds check in `accessor`.
                    self.error(
                        format!("accessors[{}]", data.index),
                        "element runs past the accessor's bytes",
                    )
                })?;
            }
            values.push(value);
        }
        Ok(values)
    }

    /// Reads a SCALAR accessor as floats, as [`Context::read_vectors`] does
    /// (integer components only when `allow_normalized` and normalized).
    pub(super) fn read_scalars(
        &self,
        data: &AccessorData<'_>,
        allow_normalized: bool,
        used_at: &str,
    ) -> Result<Vec<f32>> {
        self.check_vectors(data, 1, allow_normalized, used_at)?;
        let size = component_size(data.component);
        (0..data.count)
            .map(|element| {
                read_component(data.bytes, element * data.stride, data.component).ok_or_else(
                    || {
                        self.error(
                            format!("accessors[{}]", data.index),
                            format!("element {element} runs past the accessor's bytes ({size}-byte components)"),
                        )
                    },
                )
            })
            .collect()
    }

    /// The length of the longest vector of a VEC3 accessor of floats,
    /// read in place (nothing is allocated); a non-finite component is an
    /// error. `used_at` names what uses it.
    pub(super) fn longest_vec3(&self, data: &AccessorData<'_>, used_at: &str) -> Result<f64> {
        self.check_vectors(data, 3, false, used_at)?;
        let size = component_size(data.component);
        let mut longest = 0.0f64;
        for element in 0..data.count {
            let mut squared = 0.0f64;
            for c in 0..3 {
                let at = element * data.stride + c * size;
                let value = read_component(data.bytes, at, data.component).ok_or_else(|| {
                    self.error(
                        format!("accessors[{}]", data.index),
                        "element runs past the accessor's bytes",
                    )
                })?;
                if !value.is_finite() {
                    return Err(self.error(
                        format!("accessors[{}]", data.index),
                        format!("used as {used_at}: element {element} is not finite"),
                    ));
                }
                squared += f64::from(value) * f64::from(value);
            }
            longest = longest.max(squared.sqrt());
        }
        Ok(longest)
    }

    /// Reads and checks a sampler's key times: finite, strictly increasing.
    pub(super) fn read_times(
        &self,
        root: &Root,
        buffers: &[Cow<'_, [u8]>],
        animation: usize,
        sampler: usize,
    ) -> Result<Vec<f32>> {
        let at = format!("animations[{animation}].samplers[{sampler}].input");
        let input = root.animations[animation].samplers[sampler].input.value();
        let data = self.accessor(root, buffers, input, &at)?;
        let times: Vec<f32> = self
            .read_vectors(&data, 1, false, &at)?
            .into_iter()
            .map(|v| v.x)
            .collect();
        if times.is_empty() {
            return Err(self.error(at, "input has no keys"));
        }
        if let Some(key) = times.iter().position(|t| !t.is_finite()) {
            return Err(self.error(at, format!("key {key} time {} is not finite", times[key])));
        }
        if times[0] < 0.0 {
            if !self.lenient {
                return Err(self.error(
                    at,
                    format!(
                        "key 0 time {} s is negative; glTF timelines start at 0 (--lenient \
                         samples from 0 and drops what comes before)",
                        times[0]
                    ),
                ));
            }
            tracing::warn!(
                source = self.source_name,
                "{at}: keys start at {} s, before 0; the part before 0 is not sampled",
                times[0]
            );
        }
        if let Some(key) = times.windows(2).position(|w| w[1] <= w[0]) {
            return Err(self.error(
                at,
                format!(
                    "key times must strictly increase, but key {} at {} s follows {} s",
                    key + 1,
                    times[key + 1],
                    times[key]
                ),
            ));
        }
        Ok(times)
    }
}

fn component_size(component: ComponentType) -> usize {
    match component {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

fn component_name(component: ComponentType) -> &'static str {
    match component {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

/// One component as a float; normalized integers map per the glTF spec.
fn read_component(bytes: &[u8], at: usize, component: ComponentType) -> Option<f32> {
    let byte = || bytes.get(at).copied();
    let two = || Some([*bytes.get(at)?, *bytes.get(at + 1)?]);
    Some(match component {
        ComponentType::F32 => f32::from_bits(le_u32(bytes, at)?),
        ComponentType::I8 => (f32::from(byte()? as i8) / 127.0).max(-1.0),
        ComponentType::U8 => f32::from(byte()?) / 255.0,
        ComponentType::I16 => (f32::from(i16::from_le_bytes(two()?)) / 32767.0).max(-1.0),
        ComponentType::U16 => f32::from(u16::from_le_bytes(two()?)) / 65535.0,
        ComponentType::U32 => return None,
    })
}

pub(super) fn le_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let four = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([four[0], four[1], four[2], four[3]]))
}

/// Decodes a `data:[<media type>];base64,<payload>` URI of a buffer whose
/// `byteLength` is `declared`: a payload encoding more than `declared`
/// bytes plus the padding a 4-byte alignment allows is refused before it is
/// decoded.
fn decode_data_uri(uri: &str, declared: u64) -> std::result::Result<Vec<u8>, String> {
    let (header, payload) = uri
        .split_once(',')
        .ok_or("data URI has no ',' before its payload")?;
    if !header.ends_with(";base64") {
        return Err("only base64 data URIs (';base64,') are supported".to_string());
    }
    // Four base64 characters hold three bytes.
    let encoded = payload.trim().len() as u64;
    let most = encoded.div_ceil(4) * 3;
    if most > declared.saturating_add(3).saturating_add(3) {
        return Err(format!(
            "data URI '{header},...' has {encoded} base64 characters, up to {most} bytes, \
             more than its buffer's byteLength {declared} (and 3 bytes of padding)"
        ));
    }
    // Some exporters drop the padding; the payload is unambiguous without it.
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine
        .decode(payload.trim())
        .map_err(|e| format!("invalid base64 payload: {e}"))
}

/// Turns a relative URI reference into a path: percent escapes are decoded,
/// other schemes (`http:` and the like) refused.
pub(super) fn relative_path(uri: &str) -> std::result::Result<String, String> {
    let scheme_end = uri.find(':');
    let path_start = uri.find(['/', '\\', '?', '#']);
    if let Some(colon) = scheme_end {
        // A single letter before ':' is a Windows drive, not a scheme.
        if colon > 1 && path_start.is_none_or(|p| colon < p) {
            return Err(format!(
                "unsupported URI scheme '{}': only relative file paths and data URIs are read",
                &uri[..colon]
            ));
        }
    }
    let bytes = uri.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                decoded.push((high * 16 + low) as u8);
                i += 3;
            }
            (b, _, _) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded).map_err(|_| "URI does not decode to UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    use crate::test_support::temp_dir::TempDir;
    use std::f32::consts::FRAC_PI_2;

    use glam::{Quat, Vec3};

    use serde_json::{json, Value};

    use super::super::test_doc::*;
    use super::super::{load_gltf, parse_gltf};
    use super::*;

    use crate::error::Error;

    #[test]
    fn normalized_integer_rotations_are_read() {
        let mut doc = one_channel(&[0.0], &[0.0; 3]);
        // A quarter turn about Z as normalized shorts: (0, 0, 0.7071, 0.7071).
        let view = doc.views.len();
        let offset = doc.bin.len();
        for c in [0i16, 0, 23170, 23170] {
            doc.bin.extend_from_slice(&c.to_le_bytes());
        }
        doc.views
            .push(json!({"buffer": 0, "byteOffset": offset, "byteLength": 8}));
        doc.accessors.push(json!({
            "bufferView": view, "componentType": 5122, "normalized": true, "count": 1, "type": "VEC4"
        }));
        let output = doc.accessors.len() - 1;
        doc.animations[0]["samplers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"input": 0, "output": output}));
        doc.animations[0]["channels"]
            .as_array_mut()
            .unwrap()
            .push(json!({"sampler": 1, "target": {"node": 0, "path": "rotation"}}));
        let clips = doc.parse().unwrap();
        assert_quat(
            clips[0].pose(0)[0].rotation,
            Quat::from_rotation_z(FRAC_PI_2),
            "rotation",
        );

        // The same data not normalized is refused.
        doc.accessors[output]["normalized"] = json!(false);
        let (at, message) = gltf_error(doc.parse());
        assert_eq!(at, format!("accessors[{output}]"));
        assert!(message.contains("normalized"), "{message}");
    }

    #[test]
    fn glb_reads_its_bin_chunk() {
        let doc = one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 0.0, 3.0, 0.0]);
        let bytes = doc.glb();
        let clips = parse_gltf(&bytes, None, "walk.glb", &at_rate(30.0)).unwrap();
        assert_eq!(clips[0].name(), "walk#0");
        assert_vec3(
            clips[0].pose(10)[0].translation,
            Vec3::new(0.0, 1.0, 0.0),
            "t = 1/3",
        );

        // Every truncation fails cleanly.
        for length in 0..bytes.len() {
            assert!(parse_gltf(&bytes[..length], None, "walk.glb", &at_rate(30.0)).is_err());
        }
        // A GLB without BIN chunk cannot satisfy a buffer without uri.
        let mut root: Value =
            serde_json::from_slice(&bytes[20..20 + le_u32(&bytes, 12).unwrap() as usize]).unwrap();
        root["buffers"][0]["byteLength"] = json!(0);
        let no_bin = glb_bytes(&serde_json::to_vec(&root).unwrap(), &[]);
        let no_bin = &no_bin[..no_bin.len() - 8];
        let mut no_bin = no_bin.to_vec();
        let length = no_bin.len() as u32;
        no_bin[8..12].copy_from_slice(&length.to_le_bytes());
        assert_eq!(
            location(parse_gltf(&no_bin, None, "x.glb", &at_rate(30.0))),
            "buffers[0]"
        );
    }

    #[test]
    fn external_buffers_resolve_next_to_the_document() {
        let dir = TempDir::new("external");
        let mut doc = one_channel(&[0.0, 1.0], &[0.0, 0.0, 0.0, 0.0, 0.0, 6.0]);
        doc.animations[0]["name"] = json!("dolly");
        std::fs::write(dir.0.join("take 1.bin"), &doc.bin).unwrap();
        let mut root = doc.json_without_buffer();
        root["buffers"] = json!([{"byteLength": doc.bin.len(), "uri": "take%201.bin"}]);
        let path = dir.0.join("shot.gltf");
        std::fs::write(&path, serde_json::to_vec(&root).unwrap()).unwrap();
        let clips = load_gltf(&path, &at_rate(30.0)).unwrap();
        assert_eq!(clips[0].name(), "dolly");
        assert_vec3(
            clips[0].pose(15)[0].translation,
            Vec3::new(0.0, 0.0, 3.0),
            "t = 0.5",
        );

        // Without a base directory the same document is refused.
        let bytes = serde_json::to_vec(&root).unwrap();
        let (at, message) = gltf_error(parse_gltf(&bytes, None, "shot.gltf", &at_rate(30.0)));
        assert_eq!(at, "buffers[0].uri");
        assert!(message.contains("without a base directory"), "{message}");

        // A missing file is an I/O error naming the file.
        root["buffers"][0]["uri"] = json!("missing.bin");
        std::fs::write(&path, serde_json::to_vec(&root).unwrap()).unwrap();
        match load_gltf(&path, &at_rate(30.0)) {
            Err(Error::Io { path, .. }) => assert!(path.ends_with("missing.bin"), "{path:?}"),
            other => panic!("expected an I/O error, got {other:?}"),
        }

        root["buffers"][0]["uri"] = json!("https://example.com/take.bin");
        std::fs::write(&path, serde_json::to_vec(&root).unwrap()).unwrap();
        assert_eq!(location(load_gltf(&path, &at_rate(30.0))), "buffers[0].uri");
    }
}
