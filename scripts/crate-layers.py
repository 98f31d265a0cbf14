#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that the Rust crate forms layers.

The crate root (rust/uintr/uintr.rs) lists its layers, lowest first, in a
block of its doc comment:

    //! Layers, lowest first ...:
    //!
    //! 1. model: decode, frame, ...
    //! 2. raw: glue, regs, ...

This script reads every module's references to other modules of the crate
(`use crate::a::...`, `use crate::{a, b::c}`, `crate::a::x` in code,
`$crate::a` in macros; comments and doc links are not references), prints
the graph layer by layer and fails when a module

  - reaches a module of a higher layer (up),
  - is not in any layer, or is listed twice,
  - or takes part in a cycle of references within its layer (sideways:
    within a layer, references must go one way too).

usage: crate-layers.py [crate-dir]     (default: rust/uintr)
"""

import os
import re
import sys

LAYER_LINE = re.compile(r"^//!\s*(\d+)\.\s*(\w+):\s*(.*)$")


def read_layers(root_file):
    """[(name, [modules])], lowest first, from the crate root's list."""
    layers = []
    in_list = False
    current = None
    with open(root_file) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("//! Layers, lowest first"):
                in_list = True
                continue
            if not in_list:
                continue
            if not line.startswith("//!"):
                break
            m = LAYER_LINE.match(line)
            if m:
                current = (m.group(2), [])
                layers.append(current)
                rest = m.group(3)
            elif line.startswith("//!    "):
                if current is None:
                    continue  # the layer's description
                rest = line[3:]
            elif line.strip() == "//!" and not layers:
                continue
            else:
                if layers:
                    break
                continue
            # Module names end at a full stop or an opening parenthesis
            # (the layer's description follows).
            names = re.split(r"[.(;]", rest, maxsplit=1)[0]
            current[1].extend(n.strip() for n in names.split(",") if n.strip())
            if re.search(r"[.(;]", rest):
                current = None
    return layers


def strip_comments(text):
    """The code of a Rust file, without comments and string literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def uses_of(code):
    """The crate's modules a file's code names."""
    names = set()
    for m in re.finditer(r"\buse\s+crate::(\{[^;]*\}|\w+)", code):
        what = m.group(1)
        if what.startswith("{"):
            # Top-level items of the group: a, b::c, d::{e, f}.
            depth, item = 0, ""
            for ch in what[1:-1] + ",":
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                if ch == "," and depth == 0:
                    names.add(item.strip().split("::")[0])
                    item = ""
                else:
                    item += ch
        else:
            names.add(what)
    for m in re.finditer(r"(?<![\w:])\$?crate::(\w+)", code):
        names.add(m.group(1))
    names.discard("")
    return names


def modules_of(crate):
    mods = {}
    for fn in sorted(os.listdir(crate)):
        if fn.endswith(".rs") and fn != "uintr.rs":
            with open(os.path.join(crate, fn)) as f:
                mods[fn[:-3]] = strip_comments(f.read())
    return mods


def cycles(nodes, edges):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in nodes:
                continue
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

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    crate = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "rust", "uintr")
    layers = read_layers(os.path.join(crate, "uintr.rs"))
    mods = modules_of(crate)
    errors = []
    if not layers:
        print("crate-layers: uintr.rs lists no layers")
        return 1

    layer_of = {}
    for rank, (name, members) in enumerate(layers):
        for mod in members:
            if mod in layer_of:
                errors.append(f"{mod} is in two layers")
            layer_of[mod] = rank
    for mod in mods:
        if mod not in layer_of:
            errors.append(f"{mod} is in no layer")
    for mod in layer_of:
        if mod not in mods:
            errors.append(f"layer list names {mod}, which has no file")

    edges = {m: {u for u in uses_of(code) if u in mods and u != m}
             for m, code in mods.items()}

    for rank, (name, members) in enumerate(layers):
        print(f"{rank + 1}. {name}")
        for mod in members:
            if mod not in mods:
                continue
            below = sorted(edges[mod], key=lambda u: (layer_of.get(u, 99), u))
            shown = ", ".join(
                f"{u}" if layer_of.get(u, 99) < rank else
                f"{u} (same layer)" if layer_of.get(u) == rank else
                f"{u} (UP)" for u in below)
            print(f"   {mod} -> {shown or '(nothing)'}")
            for u in below:
                if layer_of.get(u, 99) > rank:
                    up = layers[layer_of[u]][0] if u in layer_of else "no layer"
                    errors.append(f"{mod} ({name}) reaches up to {u} ({up})")
        same = {m: {u for u in edges[m] if layer_of.get(u) == rank}
                for m in members if m in mods}
        for comp in cycles(set(same), same):
            errors.append(f"cycle within {name}: {' <-> '.join(comp)}")

    for err in errors:
        print(f"crate-layers: {err}")
    n_edges = sum(len(e) for e in edges.values())
    print(f"crate-layers: {len(mods)} modules, {len(layers)} layers, "
          f"{n_edges} references, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
