#!/usr/bin/env python3
"""Function and file sizes of the workspace's Rust code, outside tests.

Usage: python3 bench/sizes.py [--fn-limit 80] [--file-limit 600] [--list]

Counts, for crates/*/src and crates/*/examples (not tests/, benches/ or an inline
`#[cfg(test)] mod`): the functions longer than --fn-limit lines (from the `fn` line to its
closing brace) and the files longer than --file-limit lines before their inline test module.
With --list it names each one, longest first. The count is by matching braces in the text
(string and char literals and line comments skipped), so a macro that opens a brace it does
not close can mislead it; it is a measure for the sizes in CONTRIBUTING.md, not a parser.
"""

import argparse
import os
import re

FN_LINE = re.compile(
    r'\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"C"\s+)?fn\s+(\w+)'
)
TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(#\[[^\]]*\]\s*)*mod\s+\w+\s*\{")


def code_of(line):
    """The line without string/char literals and its line comment."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//")[0]


def function_length(lines, start):
    """Lines from `start` to the brace that closes the function, or None for a declaration."""
    depth = 0
    opened = False
    for j in range(start, len(lines)):
        code = code_of(lines[j])
        if not opened and ";" in code and "{" not in code:
            return None
        for c in code:
            if c == "{":
                depth += 1
                opened = True
            elif c == "}":
                depth -= 1
        if opened and depth <= 0:
            return j - start + 1
    return None


def source_files(root):
    for crate in sorted(os.listdir(os.path.join(root, "crates"))):
        for part in ("src", "examples"):
            top = os.path.join(root, "crates", crate, part)
            for folder, _, files in os.walk(top):
                for name in sorted(files):
                    if name.endswith(".rs") and not name.endswith("_tests.rs") and name != "tests.rs":
                        yield os.path.relpath(os.path.join(folder, name), root)


def measure(root):
    functions, files = [], []
    for path in source_files(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        test_mod = TEST_MOD.search(text)
        if test_mod:
            text = text[: test_mod.start()]
        lines = text.split("\n")
        files.append((len(lines), path))
        for i, line in enumerate(lines):
            m = FN_LINE.match(line)
            if m:
                n = function_length(lines, i)
                if n:
                    functions.append((n, f"{path}:{i + 1}", m.group(7)))
    return sorted(functions, reverse=True), sorted(files, reverse=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fn-limit", type=int, default=80)
    ap.add_argument("--file-limit", type=int, default=600)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    functions, files = measure(root)
    long_fns = [f for f in functions if f[0] > args.fn_limit]
    over_100 = [f for f in functions if f[0] > 100]
    long_files = [f for f in files if f[0] > args.file_limit]
    print(f"functions: {len(functions)}, over {args.fn_limit} lines: {len(long_fns)}, over 100: {len(over_100)}")
    print(f"files: {len(files)}, over {args.file_limit} lines before their tests: {len(long_files)}")
    if args.list:
        for n, where, name in long_fns:
            print(f"  fn {n:4} {where} {name}")
        for n, path in long_files:
            print(f"  file {n:4} {path}")


if __name__ == "__main__":
    main()
