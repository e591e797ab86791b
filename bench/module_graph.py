#!/usr/bin/env python3
"""Circles between the files of each crate, and each crate's longest chain of imports.

Usage: python3 bench/module_graph.py [--list]   (from the checkout's root)

For each crate under crates/, reads the `use crate::...` and `use super::...` lines of its
src/ files (outside an inline `#[cfg(test)] mod`), resolves each to the file of the module it
names (the longest module path that is a file: `a/b.rs` or `a/b/mod.rs`), and draws an arrow
from the importing file to that file. A file importing its own module is no arrow. Prints,
per crate with more than one file, its files, its arrows, the circles (strongly connected
groups of more than one file) and the floors (the longest chain of arrows, in files). With
--list it names the files of each circle and the longest chain.

It reads text, not the compiler's resolution: paths written inline (`crate::x::f()` without
a `use`) and re-exports through `pub use` are not followed, so it measures the imports a
reader sees at the top of each file, which is the rule CONTRIBUTING.md states. A `pub use`
line is not an arrow: it re-exports a module's item as its parent's face, so a `lib.rs` that
re-exports `child::Item` while `child` imports `crate::Other` is no circle.
"""

import argparse
import os
import re
import sys

TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(#\[[^\]]*\]\s*)*mod\s+\w+\s*\{")
USE = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?use\s+([^;]+);", re.M)


def module_files(src):
    """Maps each module path (a tuple of names; () is the crate root) to its file."""
    mods = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            if parts and parts[0] == "bin":
                continue
            mods[tuple(parts)] = os.path.join(root, f)
    return mods


def own_module(path, src):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)


def use_paths(text):
    """Every path of the file's use lines, with braces expanded."""
    text = TEST_MOD.split(text)[0]
    text = re.sub(r"//[^\n]*", "", text)
    for m in USE.finditer(text):
        if m.group(1):
            # `pub use` re-exports a module's item as its parent's face: no code of the
            # parent uses it, so it is no arrow (the module's own imports still are).
            continue
        yield from expand(re.sub(r"\s+", "", m.group(3)))


def expand(tree):
    """`a::{b,c::{d}}` -> a::b, a::c::d (an `as` rename dropped)."""
    depth, i = 0, tree.find("{")
    if i < 0:
        yield tree.split("as")[0] if "as" in tree and not tree.startswith("as") else tree
        return
    prefix, inner = tree[:i], tree[i + 1 : tree.rfind("}")]
    part, parts = "", []
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += ch
    parts.append(part)
    for p in parts:
        if p in ("", "self"):
            yield prefix.rstrip(":")
        else:
            yield from expand(prefix + p)


def resolve(path, here, mods):
    names = path.split("::")
    if names[0] == "crate":
        base, rest = (), names[1:]
    elif names[0] in ("super", "self"):
        base = here
        while names and names[0] in ("super", "self"):
            if names[0] == "super":
                base = base[:-1]
            names = names[1:]
        rest = names
    elif here + (names[0],) in mods:
        base, rest = here, names
    else:
        return None
    target = base
    for n in rest:
        if target + (n,) in mods:
            target = target + (n,)
        else:
            break
    return mods.get(target)


def crate_graph(src):
    mods = module_files(src)
    edges = {f: set() for f in mods.values()}
    for f in mods.values():
        here = own_module(f, src)
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        for p in use_paths(text):
            t = resolve(p, here, mods)
            if t and t != f:
                edges[f].add(t)
    return edges


def circles(edges):
    """Tarjan's strongly connected components of more than one file."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def longest_chain(edges):
    memo = {}

    def chain(v, seen):
        if v in memo:
            return memo[v]
        best = [v]
        for w in edges[v]:
            if w in seen:
                continue
            c = chain(w, seen | {w})
            if len(c) + 1 > len(best):
                best = [v] + c
        memo[v] = best
        return best

    return max((chain(v, {v}) for v in edges), key=len, default=[])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    root = os.path.join(os.getcwd(), "crates")
    total = 0
    for crate in sorted(os.listdir(root)):
        src = os.path.join(root, crate, "src")
        if not os.path.isdir(src):
            continue
        edges = crate_graph(src)
        if len(edges) < 2:
            continue
        found = circles(edges)
        total += len(found)
        chain = longest_chain(edges)
        arrows = sum(len(e) for e in edges.values())
        print(f"{crate}: {len(edges)} files, {arrows} arrows, {len(found)} circles, {len(chain)} floors")
        if args.list:
            for c in found:
                print("  circle: " + " <-> ".join(os.path.relpath(f, src) for f in c))
            print("  longest: " + " -> ".join(os.path.relpath(f, src) for f in chain))
    print(f"circles between files: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
