#!/usr/bin/env python3
"""Checks that the repository cites only itself and public sources.

usage: scripts/check-citations.py [FILE ...]   (default: every text file git tracks, and new
                                                 ones it does not ignore)

The project's issue tracker and its first design document are not in the repository, so a
newcomer cannot follow a citation of them; docs/contract.md holds the rules and targets they
set. A file fails when it cites:

- an issue or pull request of this project: "issue 14", "Issues 4 and 14", "issue #14", or a
  bare "#14" (but see other projects, below);
- the first design document: DESIGN as an upper-case word (its file name), a "design
  contract", "section N" of a document, or a section sign with no URL just before it;
- STYLE.md, which does not exist;
- the "seed" workload by that name: the benchmarks' is the ecosystem workload (docs/contract.md,
  "Benchmark method");
- "rule N" anywhere but in docs/contract.md itself, unless docs/contract.md comes just before it
  ("docs/contract.md, rule 11", in code) or it is the text of a link into contract.md
  ("[rule 11](contract.md#rule-11-thread-safety)", in Markdown); a rule number that
  docs/contract.md does not have; a Markdown link whose text and anchor name different rules.

Other projects' GitHub issues are public sources and pass: `owner/repo#N`, and a bare `#N` in
the same block (lines between blank lines: a paragraph, a list or a table in Markdown, a
comment or a few statements in code) as an `owner/repo#N` or a github.com address, which it
continues (`smol-rs/async-channel#45, #49`; docs/comparison.md's tables and lists). A bare `#N`
that follows `](` is a Markdown anchor, not an issue.

Phrases are matched across line breaks: each block's lines are joined after their comment
markers (`//`, `///`, `//!`, `#`, `*`) are dropped. Exits 1 and lists every finding.
"""

import os
import re
import subprocess
import sys

CONTRACT = "docs/contract.md"
# Files that are not prose or code of ours, and this file, whose docstring names the patterns.
SKIP = re.compile(r"^(LICENSE|.*\.lock|go\.sum|tests/fuzz/corpus/.*|scripts/check-citations\.py)$")
COMMENT = re.compile(r"^\s*(?://[/!]?|#+(?=\s|$)|/?\*+/?(?=\s|$)|>)?\s*")
REPO_ISSUE = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*#\d+|github\.com/")
RULES = re.compile(r"\brules?\s+(\d+)((?:\s*(?:,|and|or|to)\s*\d+)*)", re.I)

FORBIDDEN = [
    (re.compile(r"\bissues?\s+#?\d+", re.I),
     "an issue of this project (its tracker is not in the repository): cite docs/contract.md, "
     "or write owner/repo#N for another project's"),
    (re.compile(r"\bDESIGN\b"),
     "the first design document (not in the repository): cite docs/contract.md"),
    (re.compile(r"\bdesign\s+contract\b", re.I),
     "the first design document (not in the repository): cite docs/contract.md"),
    (re.compile(r"\bsection\s+\d+(?![.\d])", re.I),
     "a numbered section of a document: cite docs/contract.md, a rule by number or a section by "
     "its title"),
    (re.compile(r"\bSTYLE\.md\b", re.I), "STYLE.md does not exist"),
    (re.compile(r"\bseed\s+workload\b", re.I),
     'say "the ecosystem workload" (docs/contract.md, "Benchmark method")'),
]
BARE_ISSUE = re.compile(r"(?<![\w&/.-])(?<!\]\()#\d+\b")
SECTION_SIGN = re.compile(r"§")


def contract_rules():
    numbers = set()
    with open(CONTRACT, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^#{2,6}\s+Rule\s+(\d+):", line)
            if m:
                numbers.add(int(m.group(1)))
    return numbers


def blocks(path):
    """(text, offsets) per block: the block's lines, comment markers dropped, joined by spaces;
    offsets[i] = (position in text where line i of the block starts, line number)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = f.read()
    except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
        return
    if "\0" in data:
        return
    current, offsets, pos = [], [], 0
    for number, line in enumerate(data.split("\n"), 1):
        if not line.strip():
            if current:
                yield " ".join(current), offsets
            current, offsets, pos = [], [], 0
            continue
        text = COMMENT.sub("", line, count=1).rstrip()
        offsets.append((pos, number, line))
        current.append(text)
        pos += len(text) + 1
    if current:
        yield " ".join(current), offsets


def line_of(offsets, at):
    found = offsets[0]
    for o in offsets:
        if o[0] <= at:
            found = o
    return found[1], found[2]


def check(path, rules):
    out = []
    is_contract = os.path.normpath(path) == CONTRACT
    for text, offsets in blocks(path):

        def report(at, what, why):
            number, _ = line_of(offsets, at)
            out.append((number, f"{path}:{number}: {what!r}: {why}"))

        for pattern, why in FORBIDDEN:
            for m in pattern.finditer(text):
                report(m.start(), m.group(0), why)
        if not REPO_ISSUE.search(text):
            for m in BARE_ISSUE.finditer(text):
                report(m.start(), m.group(0),
                       "a bare #N with no owner/repo#N in its block: write owner/repo#N for "
                       "another project's issue; this project's are not in the repository")
        for m in SECTION_SIGN.finditer(text):
            if "http" not in text[max(0, m.start() - 30):m.start()]:
                report(m.start(), text[max(0, m.start() - 20):m.end() + 3].strip(),
                       "a section of a document not in the repository: cite docs/contract.md")
        if is_contract:
            continue
        for m in RULES.finditer(text):
            before = text[max(0, m.start() - 40):m.start()]
            linked = re.match(r"\]\([^)\s]*contract\.md#", text[m.end():])
            if "contract.md" not in before and not linked:
                report(m.start(), m.group(0),
                       'a rule number without docs/contract.md: write "docs/contract.md, rule '
                       'N" (code) or link contract.md#rule-N-... (Markdown)')
                continue
            cited = [int(n) for n in re.findall(r"\d+", m.group(0))]
            missing = [n for n in cited if n not in rules]
            if missing:
                report(m.start(), m.group(0), f"docs/contract.md has no rule {missing[0]}")
        for m in re.finditer(r"\[rules?\s+(\d+)\]\([^)#\s]*contract\.md#rule-(\d+)-", text, re.I):
            if m.group(1) != m.group(2):
                report(m.start(), m.group(0), "the link text and the anchor name different rules")
    return [text for _, text in sorted(out, key=lambda f: f[0])]


def main(argv):
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                         text=True, check=True).stdout.strip()
    os.chdir(top)
    # Tracked files, and new ones not yet added (not ignored): in CI's fresh clone, the same.
    listed = ["git", "ls-files", "--cached", "--others", "--exclude-standard"]
    files = argv or subprocess.run(listed, capture_output=True, text=True,
                                   check=True).stdout.split("\n")
    files = [f for f in files if f and not SKIP.match(f) and os.path.isfile(f)]
    rules = contract_rules()
    findings = []
    for path in files:
        findings += check(path, rules)
    for f in findings:
        print(f)
    print(f"check-citations: {len(files)} files, {len(findings)} citation(s) of documents or "
          f"issues outside the repository")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
