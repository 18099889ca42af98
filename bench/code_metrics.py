#!/usr/bin/env python3
"""The code counts issue 59 asks for, before and after: functions of 100 lines
or more (by folder), files that name a sum's `.added` terms, the engine/
and storage/ headers the front ends (tools/, python/src/) include past api/,
defaults written more than once, and rules written in both front ends.

A default is written more than once where the parameter schema
(api/parameter_schema.cpp) gives it as a literal (not from the engine's or
the API's struct that uses it), where a command-line option of the schema's
sets its own Boost default_value, or where Python's estimator writes a
schema parameter's default again as a literal. A rule is a refusal that names
two or more of the schema's parameters (the command line's `--option`
spellings in tools/; Python's keywords, `name` or name=, in python/gpstream/
and python/src/); one written in both front ends names the same parameters
in each.

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


SCHEMA = ROOT / "api" / "parameter_schema.cpp"
# A schema entry: whole/positive/choice/path("name", "option", default...) or {.name = "name", .option = ...}.
ENTRY = re.compile(r'\b(?:whole|positive|choice|path)\(\s*"(\w+)",\s*"([\w-]+)"(?:,\s*("[^"]*"|[^,]+))?')
DESIGNATED = re.compile(r'\.name = "(\w+)",\s*\.option = "([\w-]+)"')


def schema_parameters():
    """{name: option} of the schema, and the names whose default the schema writes as a literal."""
    text = SCHEMA.read_text(encoding="utf-8")
    options, literal = {}, []
    for match in ENTRY.finditer(text):
        name, option, default = match.group(1), match.group(2), match.group(3)
        options[name] = option
        if default is not None and default.startswith('"') and default != '""' and not match.group(0).startswith("path"):
            literal.append(name)
    for match in DESIGNATED.finditer(text):
        options[match.group(1)] = match.group(2)
    literal += re.findall(r'\.name = "(\w+)",[^}]*?\.default_text = "[^"]+"', text)
    return options, literal


def repeated_defaults(options, literal):
    """Where a default is written beside the one the schema takes: (place, parameter)."""
    found = [("api/parameter_schema.cpp", name) for name in literal]
    by_option = {option: name for name, option in options.items()}
    boost_default = re.compile(r'\(\s*"([\w-]+)(?:,\w)?",\s*po::value\([^)]*\)\s*->\s*default_value\(')
    for path in source_files("tools"):
        for option in boost_default.findall(path.read_text(encoding="utf-8")):
            if option in by_option:
                found.append((str(path.relative_to(ROOT)), by_option[option]))
    # The schema's defaults as docs/commands.md's generated table gives them (a test keeps it the schema's).
    table = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    defaults = dict(re.findall(r"^\| `(\w+)` \| `--[\w-]+` \| [^|]* \| `([^`]+)` \|", table, re.M))
    estimator = ROOT / "python" / "gpstream" / "_estimator.py"
    signature = re.search(r"def __init__\((.*?)\):", estimator.read_text(encoding="utf-8"), re.S).group(1)
    for name, value in re.findall(r"(\w+)=([^,\n]+)", signature):
        if name in defaults and value.strip("\"'") == defaults[name]:
            found.append(("python/gpstream/_estimator.py", name))
    return found


def statements(path, opener):
    """The text of each statement of `path` that starts with `opener` (a throw, a raise), to its end."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in re.finditer(opener, text):
        end = text.find(";\n" if path.suffix != ".py" else ")\n", match.end())
        found.append(text[match.start(): end if end >= 0 else len(text)])
    return found


def rules(options):
    """For each front end, the sets of schema parameters its refusals name (two or more)."""
    by_option = {option: name for name, option in options.items()}
    command_line = set()
    for path in source_files("tools"):
        for statement in statements(path, r"UsageError\(|GPSTREAM_CHECK|GPSTREAM_THROW|reject_options\("):
            words = "".join(re.findall(r'"((?:\\.|[^"\\])*)"', statement))
            named = frozenset(by_option[o] for o in re.findall(r"--([a-z][\w-]*)", words) if o in by_option)
            if len(named) >= 2:
                command_line.add(named)
    # Python names a parameter as its keyword: `name` (the API's messages) or name=value.
    python = set()
    python_files = [(p, r"raise \w+\(") for p in sorted((ROOT / "python" / "gpstream").glob("*.py"))]
    python_files += [(p, r"throw |GPSTREAM_CHECK|GPSTREAM_THROW") for p in source_files("python/src")]
    for path, opener in python_files:
        for statement in statements(path, opener):
            named = frozenset(n for n in re.findall(r"`(\w+)`|\b(\w+)=", statement) for n in n if n in options)
            if len(named) >= 2:
                python.add(named)
    return command_line, python


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

    schema, literal = schema_parameters()
    repeated = repeated_defaults(schema, literal)
    rows.append(("defaults written more than once", len(repeated)))
    command_line, python = rules(schema)
    rows.append(("rules naming 2+ parameters in tools/", len(command_line)))
    rows.append(("rules naming 2+ parameters in python/", len(python)))
    rows.append(("rules written in both front ends", len(command_line & python)))

    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    if options.list:
        for length, where, header in sorted(long_functions, reverse=True):
            print(f"{length:5d}  {where}  {header[:100]}")
        for where, name in repeated:
            print(f"default of `{name}` written again in {where}")
        for front_end, found in (("tools/", command_line), ("python/", python)):
            for named in sorted(found, key=sorted):
                print(f"rule in {front_end}: {', '.join(sorted(named))}")
    csv = pathlib.Path(options.csv)
    csv.parent.mkdir(parents=True, exist_ok=True)
    with csv.open("w", encoding="utf-8") as out:
        out.write("metric,value\n")
        for name, value in rows:
            out.write(f"{name},{value}\n")
    print(f"wrote {csv}", file=sys.stderr)


if __name__ == "__main__":
    main()
