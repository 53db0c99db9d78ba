//! Writes a clip as an ACL raw clip (`.acl.sjson`, version 5) the way ACL's
//! own writer lays it out, for tests that need ACL input without ACL: bones
//! with their bind poses and a `vertex_distance` each, then one track per
//! bone with every sample's rotation, translation and scale. Shares no code
//! with the importer.

use cinestream::Clip;

/// The clip as ACL text; `shells[b]` is bone `b`'s vertex distance and
/// `threshold` an optional `settings.error_threshold`.
pub fn acl_text(clip: &Clip, shells: &[f64], threshold: Option<f64>) -> String {
    let mut out = format!(
        "version = 5\n\nclip =\n{{\n\tname = \"{}\"\n\tnum_samples = {}\n\tsample_rate = {}\n\tis_binary_exact = false\n}}\n\n",
        clip.name(),
        clip.num_samples(),
        clip.sample_rate()
    );
    if let Some(t) = threshold {
        out += &format!("settings =\n{{\n\terror_threshold = {t}\n}}\n\n");
    }
    out += "bones =\n[\n";
    let bones = clip.skeleton().bones();
    for (b, bone) in bones.iter().enumerate() {
        let parent = bone.parent.map_or("", |p| bones[p].name.as_str());
        let r = bone.bind.rotation;
        let t = bone.bind.translation;
        let s = bone.bind.scale;
        out += &format!(
            "\t{{\n\t\tname = \"{}\"\n\t\tparent = \"{parent}\"\n\t\tvertex_distance = {}\n\t\tbind_rotation = [ {}, {}, {}, {} ]\n\t\tbind_translation = [ {}, {}, {} ]\n\t\tbind_scale = [ {}, {}, {} ]\n\t}}\n",
            bone.name, shells[b], r.x, r.y, r.z, r.w, t.x, t.y, t.z, s.x, s.y, s.z
        );
    }
    out += "]\n\ntracks =\n[\n";
    for (b, bone) in bones.iter().enumerate() {
        out += &format!(
            "\t{{\n\t\tname = \"{}\"\n\t\trotations =\n\t\t[\n",
            bone.name
        );
        for t in clip.bone_track(b) {
            let r = t.rotation;
            out += &format!("\t\t\t[ {}, {}, {}, {} ]\n", r.x, r.y, r.z, r.w);
        }
        out += "\t\t]\n\t\ttranslations =\n\t\t[\n";
        for t in clip.bone_track(b) {
            let v = t.translation;
            out += &format!("\t\t\t[ {}, {}, {} ]\n", v.x, v.y, v.z);
        }
        out += "\t\t]\n\t\tscales =\n\t\t[\n";
        for t in clip.bone_track(b) {
            let v = t.scale;
            out += &format!("\t\t\t[ {}, {}, {} ]\n", v.x, v.y, v.z);
        }
        out += "\t\t]\n\t}\n";
    }
    out + "]\n"
}
