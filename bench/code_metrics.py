#!/usr/bin/env python3
"""The code counts issue 59 asks for, before and after: functions of 100 lines
or more (by folder), files that name a sum's `.added` terms, and the engine/
and storage/ headers the front ends (tools/, python/src/) include past api/.

A function is found by its braces: a definition at namespace or class level
(a line ending in `{` after a parameter list, not a control statement, a
class or a lambda) through its matching `}`; lambdas count in the function
that holds them. Strings, characters and comments are skipped when matching.
A heuristic, not a parser; it is checked against the tree by eye.

Usage: bench/code_metrics.py [--csv out/bench/code_metrics.csv] [--list]
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ("engine", "api", "storage", "tools", "python/src")
LONG = 100

CONTROL = re.compile(r"^\s*(?:\}\s*)?(?:if|for|while|switch|catch|else|do|try)\b")
NOT_FUNCTION = re.compile(r"^\s*(?:namespace|class|struct|union|enum)\b|=\s*\[|\]\s*\(|^\s*\[|\bextern\s+\"C\"")
STRING = re.compile(r'R"(\w*)\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
COMMENT = re.compile(r"//[^\n]*|/\*(?:.|\n)*?\*/")


def blank_literals(text):
    """The text with strings, characters and comments replaced by spaces (newlines kept)."""
    def blank(match):
        return re.sub(r"[^\n]", " ", match.group(0))
    pattern = re.compile(COMMENT.pattern + "|" + STRING.pattern)
    return pattern.sub(blank, text)


def functions(path):
    """(first line, lines, header) of each function defined at namespace or class level."""
    lines = blank_literals(path.read_text(encoding="utf-8")).split("\n")
    found = []
    depth = 0
    scopes = []  # for each open brace: True where it opened a function body
    start = None
    signature = []
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        in_function = any(scopes)
        if not in_function:
            signature = (signature + [stripped])[-4:] if stripped else signature
        for character in line:
            if character == "{":
                opens_function = False
                if not in_function:
                    head = " ".join(signature)
                    before_brace = line[: line.index("{")] if "{" in line else line
                    opens_function = (")" in head and not CONTROL.search(before_brace)
                                      and not NOT_FUNCTION.search(before_brace)
                                      and not re.search(r"\)\s*(?:const\s*)?=\s*$", before_brace))
                    if opens_function:
                        start = number
                        header = head
                scopes.append(opens_function)
                in_function = any(scopes)
            elif character == "}":
                if scopes and scopes.pop() and not any(scopes):
                    found.append((start, number - start + 1, header))
                    signature = []
                in_function = any(scopes)
        if not in_function and stripped.endswith((";", "}")):
            signature = []
    return found


def source_files(folder):
    base = ROOT / folder
    return sorted(p for p in base.rglob("*") if p.suffix in (".cpp", ".h", ".hpp", ".cc")) if base.exists() else []


def main():
    arguments = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    arguments.add_argument("--csv", default=str(ROOT / "out" / "bench" / "code_metrics.csv"))
    arguments.add_argument("--list", action="store_true", help="list each long function")
    options = arguments.parse_args()

    rows = []
    long_functions = []
    for folder in SOURCES:
        count = 0
        for path in source_files(folder):
            for first, length, header in functions(path):
                if length >= LONG:
                    count += 1
                    long_functions.append((length, f"{path.relative_to(ROOT)}:{first}", header))
        rows.append((f"functions of {LONG}+ lines in {folder}/", count))
    added = [p for folder in SOURCES for p in source_files(folder) if ".added" in p.read_text(encoding="utf-8")]
    rows.append(("files naming .added", len(added)))
    include = re.compile(r'^\s*#\s*include\s+"((?:engine|storage)/[^"]+)"', re.M)
    for folder in ("tools", "python/src"):
        headers = {match for p in source_files(folder) for match in include.findall(p.read_text(encoding="utf-8"))}
        rows.append((f"engine/ and storage/ headers included in {folder}/", len(headers)))

    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    if options.list:
        for length, where, header in sorted(long_functions, reverse=True):
            print(f"{length:5d}  {where}  {header[:100]}")
    csv = pathlib.Path(options.csv)
    csv.parent.mkdir(parents=True, exist_ok=True)
    with csv.open("w", encoding="utf-8") as out:
        out.write("metric,value\n")
        for name, value in rows:
            out.write(f"{name},{value}\n")
    print(f"wrote {csv}", file=sys.stderr)


if __name__ == "__main__":
    main()
