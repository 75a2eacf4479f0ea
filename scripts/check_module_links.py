#!/usr/bin/env python3
"""Checks that CMakeLists.txt links each module to exactly what its files include.

    scripts/check_module_links.py [SOURCE_DIR]

Every `baton_module(NAME DEPS...)` line names the libraries NAME links. The script reads the
#include lines of src/NAME/ and reports, per module:
  - a baton module it includes ("X/...") but does not link: it builds today only because some
    other link brings X along, and breaks when that one changes;
  - a baton module it links but never includes: a dependency arrow the code does not have,
    which docs/ARCHITECTURE.md's module table would then misstate;
  - a package it links but never includes (fmt, nlohmann_json, Boost, PCRE2, ...), and a
    package it includes that nothing it links provides.
Exit status 0 when all modules agree, 1 otherwise (one line per disagreement).
"""
import pathlib
import re
import sys

# Which link item provides the headers of each include root.
PACKAGES = {
    "fmt": "fmt::fmt",
    "nlohmann": "nlohmann_json::nlohmann_json",
    "boost": "Boost::headers",
    "pcre2.h": "PkgConfig::PCRE2",
    "xxhash.h": "PkgConfig::XXHASH",
    "Python.h": "PkgConfig::PYEMBED",
    "curl": "PkgConfig::CURL",
    "openssl": "PkgConfig::LIBCRYPTO",
    "httplib.h": "PkgConfig::HTTPLIB",
}
# Link items a module needs without an include that names them.
IMPLICIT = {"Threads::Threads"}


def read_modules(cmake_text):
    modules = {}
    # The calls may span lines: join each `baton_module(...)` up to its closing parenthesis.
    for m in re.finditer(r"^baton_module\(([^)]*)\)", cmake_text, re.M):
        words = m.group(1).split()
        modules[words[0]] = words[1:]
    return modules


def read_includes(module_dir):
    local, packages = set(), set()
    for path in sorted(module_dir.rglob("*")):
        if path.suffix not in (".cpp", ".h", ".inc"):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
            if not m:
                continue
            name = m.group(2)
            root = name.split("/")[0]
            if m.group(1) == '"' and "/" in name:
                local.add(root)
            elif root in PACKAGES:
                packages.add(PACKAGES[root])
    return local, packages


def provided(module, modules, seen=None):
    """Every link item that linking `module` brings (PUBLIC links are transitive)."""
    seen = set() if seen is None else seen
    for dep in modules.get(module, []):
        if dep in seen:
            continue
        seen.add(dep)
        if dep.startswith("baton_"):
            provided(dep[len("baton_"):], modules, seen)
    return seen


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
    modules = read_modules((root / "CMakeLists.txt").read_text(encoding="utf-8"))
    if not modules:
        print("check_module_links: no baton_module(...) calls found in CMakeLists.txt")
        return 1
    problems = []
    for name, deps in modules.items():
        local, packages = read_includes(root / "src" / name)
        local.discard(name)
        linked = {d[len("baton_"):] for d in deps if d.startswith("baton_")}
        for x in sorted(local - linked):
            problems.append(f"{name}: includes {x}/ but does not link baton_{x}")
        for x in sorted(linked - local):
            problems.append(f"{name}: links baton_{x} but includes nothing from src/{x}/")
        linked_packages = {d for d in deps if not d.startswith("baton_")} - IMPLICIT
        for p in sorted(linked_packages - packages):
            problems.append(f"{name}: links {p} but includes none of its headers")
        for p in sorted(packages - provided(name, modules)):
            problems.append(f"{name}: includes headers of {p} but nothing it links provides them")
    for p in problems:
        print(p)
    if not problems:
        print(f"check_module_links: {len(modules)} modules link exactly what they include")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
