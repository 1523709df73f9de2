#!/usr/bin/env python3
"""The upstream ledger: docs/upstream/<version>.md, one file per pi release since 0.73.1,
one row per changelog item, each with its status here.

  scripts/upstream-ledger.py update [CHANGELOG.md]   add rows for new items, keep the rest
  scripts/upstream-ledger.py check  [CHANGELOG.md]   fail unless every item has a row with
                                                     a status, and every test named exists
  scripts/upstream-ledger.py counts [CHANGELOG.md]   ✓ / n/a / open per section

The changelog is pi-coding-agent's, by default the one scripts/install-ts-pi-16.sh installs
(target/ts-pi-16).
A row is `| id | item | status | evidence |`:
  - id: the section's letter and a hash of the item's text (stable while the text is);
  - status: `✓` (evidence: the tests that show it, as `crate/tests/file.rs::test_name`
    or `crate/src/...rs::test_name`), `n/a` (evidence: why it cannot apply here) or `open`
    (evidence: what is missing). JavaScript tests are named by their `it("…")` text.
"""

import hashlib
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LEDGER = ROOT / "docs" / "upstream"
FIRST = (0, 74, 0)
SECTIONS = {
    "New Features": "F",
    "Breaking Changes": "B",
    "Breaking": "B",
    "Added": "A",
    "Changed": "C",
    "Removed": "R",
    "Fixed": "X",
}
STATUSES = ("✓", "n/a", "open")
UNCHECKED = "not yet checked against ours"


def default_changelog():
    """The changelog of the pi scripts/install-ts-pi-16.sh installed, else the reference's."""
    installed = ROOT / "target" / "ts-pi-16" / "pi-coding-agent" / "CHANGELOG.md"
    if installed.is_file():
        return installed
    cache = Path(os.environ.get("PI_REFERENCE_CACHE", Path.home() / ".cache/pi-rs-reference"))
    return cache / "pi-1.6.0" / "pi-coding-agent" / "CHANGELOG.md"


def version_key(text):
    return tuple(int(part) for part in text.split("."))


def parse(changelog):
    """Releases from FIRST on, newest first: (version, date, [(section, text)])."""
    releases = []
    release = section = None
    item = None

    def close_item():
        nonlocal item
        if item is not None and release is not None and section is not None:
            release[2].append((section, " ".join(item)))
        item = None

    for line in changelog.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## \[(\d+\.\d+\.\d+)\](?: - (\S+))?", line)
        if heading:
            close_item()
            if version_key(heading.group(1)) < FIRST:
                break
            release = (heading.group(1), heading.group(2) or "", [])
            releases.append(release)
            section = None
            continue
        sub = re.match(r"^### (.+?)\s*$", line)
        if sub:
            close_item()
            section = SECTIONS.get(sub.group(1))
            continue
        if line.startswith("- "):
            close_item()
            item = [line[2:].strip()]
        elif item is not None and line.startswith("  ") and line.strip():
            item.append(line.strip())
        elif not line.strip():
            close_item()
    close_item()
    return releases


def item_id(section, text):
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
    return f"{section}-{digest}"


def short(text, limit=160):
    """The item as a table cell: links dropped, pipes escaped, cut at `limit`."""
    text = re.sub(r"\s*\(\[#\d+\]\([^)]*\)(?: by \[@[^\]]+\]\([^)]*\))?(?:, \[#\d+\]\([^)]*\))*\)", "", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = text.replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


ROW = re.compile(r"^\| (?P<id>[A-Z]-[0-9a-f]{8}) \| (?P<item>.*?) \| (?P<status>[^|]*?) \| (?P<evidence>.*?) \|$")


def read_rows(path):
    rows = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            match = ROW.match(line)
            if match:
                rows[match["id"]] = (match["status"].strip(), match["evidence"].strip())
    return rows


SECTION_NAMES = {"F": "New Features", "B": "Breaking Changes", "A": "Added", "C": "Changed", "R": "Removed", "X": "Fixed"}


def render(version, date, items, rows):
    lines = [f"# pi {version} ({date})", "", f"Status of each item of pi {version}'s changelog in pi-rs. "
             "Statuses: `✓` with the tests that show it, `n/a` with the reason, `open` with what is missing.", ""]
    for code, name in SECTION_NAMES.items():
        entries = [(item_id(s, t), t) for s, t in items if s == code]
        if not entries:
            continue
        lines += [f"## {name}", "", "| id | item | status | evidence |", "|---|---|---|---|"]
        for ident, text in entries:
            status, evidence = rows.get(ident, ("open", UNCHECKED))
            lines.append(f"| {ident} | {short(text)} | {status} | {evidence} |")
        lines.append("")
    return "\n".join(lines)


def update(releases):
    LEDGER.mkdir(parents=True, exist_ok=True)
    for version, date, items in releases:
        path = LEDGER / f"{version}.md"
        path.write_text(render(version, date, items, read_rows(path)), encoding="utf-8")
    print(f"upstream-ledger: {len(releases)} releases in {LEDGER.relative_to(ROOT)}")


def test_exists(reference):
    """`path::name`: the file exists and defines the test `name` (a Rust `fn name(`, or a
    JavaScript `it("name"`)."""
    path, name = reference.split("::", 1)
    file = ROOT / path
    if not file.is_file():
        return False
    text = file.read_text(encoding="utf-8")
    if path.endswith((".mjs", ".js")):
        return f'it("{name}"' in text
    return re.search(rf"\bfn {re.escape(name)}\s*\(", text) is not None


def check(releases):
    problems = []
    for version, _date, items in releases:
        path = LEDGER / f"{version}.md"
        rows = read_rows(path)
        if not path.exists():
            problems.append(f"{path.name}: missing (run `scripts/upstream-ledger.py update`)")
            continue
        for section, text in items:
            ident = item_id(section, text)
            if ident not in rows:
                problems.append(f"{version} {ident}: no row for \"{short(text, 70)}\"")
                continue
            status, evidence = rows[ident]
            if status not in STATUSES:
                problems.append(f"{version} {ident}: status `{status}` is not one of {', '.join(STATUSES)}")
            elif not evidence:
                problems.append(f"{version} {ident}: `{status}` needs evidence")
            elif re.match(r"^(✓|n/a|open) \|", evidence):
                problems.append(f"{version} {ident}: a second status column (`{status} | {evidence[:12]}…`)")
            elif status == "✓":
                tests = re.findall(r"`([^`]+?\.(?:rs|mjs|js)::[^`]+)`", evidence)
                if not tests:
                    problems.append(f"{version} {ident}: ✓ names no test (`path::test_name`)")
                for test in tests:
                    if not test_exists(test):
                        problems.append(f"{version} {ident}: the test `{test}` does not exist")
    for problem in problems:
        print(problem)
    if problems:
        print(f"upstream-ledger: {len(problems)} problems")
        return 1
    print(f"upstream-ledger: every item of {len(releases)} releases has a row with a status")
    return 0


def counts(releases):
    totals = {}
    for version, _date, items in releases:
        rows = read_rows(LEDGER / f"{version}.md")
        for section, text in items:
            status = rows.get(item_id(section, text), ("missing", ""))[0]
            totals.setdefault(section, {}).setdefault(status, 0)
            totals[section][status] += 1
    print(f"{'section':<18}{'✓':>6}{'n/a':>6}{'open':>6}{'missing':>9}")
    for code, name in SECTION_NAMES.items():
        got = totals.get(code, {})
        print(f"{name:<18}{got.get('✓', 0):>6}{got.get('n/a', 0):>6}{got.get('open', 0):>6}{got.get('missing', 0):>9}")
    return 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("update", "check", "counts"):
        print(__doc__.strip())
        return 2
    changelog = Path(sys.argv[2]) if len(sys.argv) > 2 else default_changelog()
    if not changelog.is_file():
        print(f"upstream-ledger: no changelog at {changelog} (run scripts/install-ts-pi-16.sh)")
        return 2
    releases = parse(changelog)
    return {"update": update, "check": check, "counts": counts}[sys.argv[1]](releases)


if __name__ == "__main__":
    sys.exit(main())
