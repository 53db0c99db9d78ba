#!/usr/bin/env python3
"""The library's public items, one per line, from rustdoc's item list.

    cargo doc --no-deps -p cinestream --all-features
    python3 .ci/public_api.py target/doc/cinestream/all.html > docs/public-api.txt

`.ci/run` builds the docs, writes the list and fails when it differs from
docs/public-api.txt, so that every item added to (or taken from) the public
API is a reviewed change of that file. Each line is the item's kind and its
one path; methods and fields are not listed (their types are).
"""
import html
import re
import sys

KINDS = {
    "struct": "struct", "enum": "enum", "trait": "trait", "fn": "fn",
    "type": "type", "constant": "const", "macro": "macro", "static": "static",
    "union": "union", "traitalias": "trait alias", "primitive": "primitive",
}

def main():
    page = open(sys.argv[1], encoding="utf-8").read()
    items = []
    for href, name in re.findall(r'<li><a href="([^"]+)">([^<]+)</a></li>', page):
        kind = href.rsplit("/", 1)[-1].split(".", 1)[0]
        items.append(f"{KINDS.get(kind, kind)} cinestream::{html.unescape(name)}")
    if not items:
        sys.exit(f"no items found in {sys.argv[1]}: has rustdoc's all.html changed?")
    for line in sorted(items):
        print(line)

main()
