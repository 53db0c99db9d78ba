//! The CLI reference's synopsis (`docs/cli.md`) lists every flag each
//! subcommand's `--help` shows, so the two cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

const SUBCOMMANDS: [&str; 9] = [
    "batch", "demo", "export", "inspect", "pack", "play", "stats", "verify", "view",
];

/// The long flags `cinestream <subcommand> --help` lists, each with its
/// short form when it has one.
fn help_flags(subcommand: &str) -> BTreeMap<String, Option<String>> {
    let out = Command::new(env!("CARGO_BIN_EXE_cinestream"))
        .args([subcommand, "--help"])
        .output()
        .expect("running cinestream");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter_map(|line| {
            // Option lines read "  -o, --output <OUTPUT>" or "      --json".
            let line = line.trim_start();
            let (short, rest) = match line.strip_prefix('-') {
                Some(rest) if !rest.starts_with('-') => {
                    let (short, rest) = rest.split_once(", ")?;
                    (Some(format!("-{short}")), rest)
                }
                Some(_) => (None, line),
                None => return None,
            };
            let flag = rest.split([' ', '=', '<']).next()?;
            (flag.starts_with("--") && flag != "--help" && flag != "--version")
                .then(|| (flag.to_string(), short))
        })
        .collect()
}

/// The synopsis lines of `docs/cli.md`'s "Synopsis" block, by subcommand:
/// a line starting `cinestream <subcommand>` and its indented continuations;
/// a line starting `IMPORT` and its continuations are the flags `[IMPORT]`
/// stands for.
fn cli_synopsis() -> BTreeMap<String, String> {
    let readme = include_str!("../../docs/cli.md");
    let start = readme.find("## Synopsis").expect("a Synopsis section");
    let block = readme[start..]
        .split("```sh")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block in the Synopsis section");
    let mut synopsis: BTreeMap<String, String> = BTreeMap::new();
    let mut current = None;
    for line in block.lines() {
        if let Some(rest) = line.strip_prefix("cinestream ") {
            let name = rest.split_whitespace().next().unwrap_or("").to_string();
            current = Some(name);
        } else if line.starts_with("IMPORT") {
            current = Some("IMPORT".to_string());
        } else if !line.starts_with(' ') {
            current = None;
        }
        if let Some(name) = &current {
            let entry = synopsis.entry(name.clone()).or_default();
            entry.push_str(line);
            entry.push(' ');
        }
    }
    synopsis
}

#[test]
fn every_flag_of_every_subcommand_is_in_the_cli_reference() {
    let synopsis = cli_synopsis();
    let mut missing = Vec::new();
    for subcommand in SUBCOMMANDS {
        let mut listed = synopsis.get(subcommand).cloned().unwrap_or_default();
        if listed.contains("[IMPORT]") {
            listed += synopsis.get("IMPORT").map_or("", String::as_str);
        }
        let words: BTreeSet<&str> = listed
            .split(|c: char| c.is_whitespace() || "[]|<>=".contains(c))
            .collect();
        for (flag, short) in help_flags(subcommand) {
            let short_listed = short.is_some_and(|s| words.contains(s.as_str()));
            if !words.contains(flag.as_str()) && !short_listed {
                missing.push(format!("{subcommand} {flag}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "flags --help shows but docs/cli.md's synopsis does not: {missing:?}"
    );
}

#[test]
fn the_flag_reader_sees_flags() {
    // Guards the test above against reading nothing.
    let flags = help_flags("pack");
    assert_eq!(flags["--output"].as_deref(), Some("-o"));
    for flag in ["--output", "--lz4", "--json", "--unit"] {
        assert!(flags.contains_key(flag), "{flags:?}");
    }
}
