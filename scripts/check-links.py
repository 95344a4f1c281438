#!/usr/bin/env python3
"""Checks that every relative link in the repository's Markdown resolves.

usage: scripts/check-links.py [FILE.md ...]   (default: every tracked *.md file)

A link `[text](target)` or `[text](target#anchor)` whose target is not a URL (no scheme) must
name a file or directory that exists, relative to the Markdown file; an anchor into a Markdown
file must match one of its headings as GitHub turns them into anchors (lower case, punctuation
dropped, spaces to hyphens, repeats numbered -1, -2, ...). A link that leaves the repository
fails too: the docs speak of this project only. Exits 1 and lists every broken link.
"""

import os
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def anchors(path, cache={}):
    """The GitHub anchors of a Markdown file's headings."""
    if path in cache:
        return cache[path]
    seen, out = {}, set()
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            m = None if in_fence else HEADING.match(line)
            if not m:
                continue
            text = re.sub(r"`([^`]*)`", r"\1", m.group(2))
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
            slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
    cache[path] = out
    return out


def links(path):
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            line = re.sub(r"`[^`]*`", "", line)  # code spans hold no links
            for m in LINK.finditer(line):
                yield number, m.group(1)


def main(argv):
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                         text=True, check=True).stdout.strip()
    os.chdir(top)
    files = argv or subprocess.run(["git", "ls-files", "*.md"], capture_output=True, text=True,
                                   check=True).stdout.split()
    broken = []
    for md in files:
        for number, target in links(md):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            where = f"{md}:{number}: {target}"
            if os.path.relpath(os.path.abspath(dest), top).startswith(".."):
                broken.append(f"{where}: leaves the repository")
            elif not os.path.exists(dest):
                broken.append(f"{where}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                broken.append(f"{where}: no heading #{anchor} in {dest}")
    for b in broken:
        print(b)
    print(f"check-links: {len(files)} files, {len(broken)} broken link(s)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
