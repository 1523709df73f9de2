#!/usr/bin/env python3
"""Check a headless-Chromium rendering of a `pi --export` HTML page.

Verifies that the screenshot PNG decodes (pure Python: zlib + PNG row filters), has the
expected size and is not blank, that the dumped DOM shows the session's first user prompt,
every tool call name and the final assistant answer, that thinking blocks sit in collapsed
<details>, and (optionally) that the browser console logged no script or CSP errors.

Exits 0 when every check passes, 1 with one line per failure otherwise.
"""

import argparse
import json
import re
import struct
import sys
import zlib
from collections import Counter
from html.parser import HTMLParser

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class CheckError(Exception):
    pass


# --------------------------------------------------------------------------- PNG


def read_png(path):
    """Decode an 8-bit, non-interlaced RGB/RGBA/gray PNG into (width, height, channels, rows)."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(PNG_SIGNATURE):
        raise CheckError(f"{path}: not a PNG file (bad signature)")
    pos = len(PNG_SIGNATURE)
    header = None
    idat = []
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        if pos + 12 + length > len(data):
            raise CheckError(f"{path}: truncated PNG ({len(data)} bytes)")
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise CheckError(f"{path}: CRC mismatch in {kind.decode('latin-1')} chunk")
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None or not idat:
        raise CheckError(f"{path}: missing IHDR or IDAT chunk")
    width, height, depth, color_type, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(color_type)
    if depth != 8 or channels is None:
        raise CheckError(f"{path}: unsupported PNG (bit depth {depth}, color type {color_type})")
    if interlace:
        raise CheckError(f"{path}: interlaced PNGs are not supported")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    if len(raw) != height * (stride + 1):
        raise CheckError(f"{path}: image data has {len(raw)} bytes, expected {height * (stride + 1)}")
    rows = []
    prev = bytes(stride)
    bpp = channels
    for y in range(height):
        start = y * (stride + 1)
        ftype = raw[start]
        line = raw[start + 1 : start + 1 + stride]
        if ftype == 0:
            cur = bytes(line)
        elif ftype == 1:
            out = bytearray(line)
            for i in range(bpp, stride):
                out[i] = (out[i] + out[i - bpp]) & 0xFF
            cur = bytes(out)
        elif ftype == 2:
            cur = bytes((a + b) & 0xFF for a, b in zip(line, prev))
        elif ftype == 3:
            out = bytearray(line)
            for i in range(stride):
                left = out[i - bpp] if i >= bpp else 0
                out[i] = (out[i] + ((left + prev[i]) >> 1)) & 0xFF
            cur = bytes(out)
        elif ftype == 4:
            out = bytearray(line)
            for i in range(stride):
                a = out[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                if pa <= pb and pa <= pc:
                    pred = a
                elif pb <= pc:
                    pred = b
                else:
                    pred = c
                out[i] = (out[i] + pred) & 0xFF
            cur = bytes(out)
        else:
            raise CheckError(f"{path}: bad filter type {ftype} on row {y}")
        rows.append(cur)
        prev = cur
    return width, height, channels, rows


def to_rgb(pixel, channels):
    if channels >= 3:
        return tuple(pixel[:3])
    return (pixel[0],) * 3


def luminance(rgb):
    r, g, b = rgb
    return 0.299 * r + 0.587 * g + 0.114 * b


def hex_rgb(text):
    return tuple(int(text[i : i + 2], 16) for i in (1, 3, 5))


def near(a, b, tolerance=4):
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


def check_png(args, failures, notes):
    width, height, channels, rows = read_png(args.png)
    notes.append(f"png: {width}x{height}, {channels} channels")
    if (width, height) != (args.width, args.height):
        failures.append(f"screenshot is {width}x{height}, expected {args.width}x{args.height}")
    counts = Counter()
    for row in rows:
        counts.update(row[i : i + channels] for i in range(0, len(row), channels))
    total = width * height
    colors = {}
    for pixel, n in counts.items():
        rgb = to_rgb(pixel, channels)
        colors[rgb] = colors.get(rgb, 0) + n
    dominant, dominant_n = max(colors.items(), key=lambda kv: kv[1])
    corner = to_rgb(rows[2][2 * channels : 3 * channels], channels)
    corner_n = colors.get(corner, 0)
    notes.append(
        f"png: {len(colors)} distinct colors; dominant #{bytes(dominant).hex()} "
        f"{100 * dominant_n / total:.1f}%; page corner #{bytes(corner).hex()} {100 * corner_n / total:.1f}%"
    )
    if len(colors) < 64:
        failures.append(f"screenshot looks blank: only {len(colors)} distinct colors")
    if dominant_n < 0.25 * total:
        failures.append(f"no dominant background color (top color covers {100 * dominant_n / total:.1f}%)")
    if corner_n < 0.10 * total:
        failures.append(f"the page background (corner color) covers only {100 * corner_n / total:.1f}%")
    if args.page_bgs:
        if not any(near(corner, bg) for bg in args.page_bgs):
            wanted = ", ".join("#" + bytes(bg).hex() for bg in args.page_bgs)
            failures.append(f"page background #{bytes(corner).hex()} is none of the page's --bg colors ({wanted})")
    base = luminance(corner)
    ink = sum(n for rgb, n in colors.items() if abs(luminance(rgb) - base) > 60)
    notes.append(f"png: {100 * ink / total:.2f}% high-contrast (text) pixels")
    if ink < 0.003 * total:
        failures.append(f"screenshot has almost no text pixels ({ink} high-contrast pixels)")
    black = colors.get((0, 0, 0), 0)
    if luminance(corner) > 8 and black > 0.01 * total:
        failures.append(
            f"{100 * black / total:.1f}% of the screenshot is pure black: unpainted areas?"
        )


# --------------------------------------------------------------------------- DOM

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SKIP = {"script", "style", "template", "noscript", "head", "title"}


class DomText(HTMLParser):
    """Collects the visible text, and separately the text folded inside closed <details>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []  # (tag, open-attribute present)
        self.visible = []
        self.folded = []

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            if tag == "br":
                self.handle_data(" ")
            return
        self.stack.append((tag, any(name == "open" for name, _ in attrs)))

    def handle_startendtag(self, tag, attrs):
        if tag == "br":
            self.handle_data(" ")

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def hidden(self):
        for i, (tag, is_open) in enumerate(self.stack):
            if tag == "details" and not is_open:
                child = self.stack[i + 1][0] if i + 1 < len(self.stack) else None
                if child != "summary":
                    return True
        return False

    def handle_data(self, data):
        if any(tag in SKIP for tag, _ in self.stack):
            return
        (self.folded if self.hidden() else self.visible).append(data)
        # Block boundaries: keep words from gluing together.
        (self.folded if self.hidden() else self.visible).append(" ")


def words(text):
    return re.findall(r"[0-9A-Za-z]+", text)


def contains_words(haystack_words, needle):
    """Whether the words of `needle` (markdown code fence lines left out) occur consecutively."""
    prose = "\n".join(l for l in needle.splitlines() if not re.match(r"\s*(```|~~~)", l))
    wanted = words(prose)
    if not wanted:
        return True
    return f" {' '.join(wanted)} " in f" {' '.join(haystack_words)} "


def session_expectations(path):
    """First user prompt, tool call names, final assistant text and thinking texts."""
    prompt = None
    tools = []
    answer = None
    thinking = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            entry = json.loads(line)
            if entry.get("type") != "message":
                continue
            message = entry.get("message", {})
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            if message.get("role") == "user" and prompt is None and text.strip():
                prompt = text
            elif message.get("role") == "assistant":
                for block in blocks:
                    if block.get("type") == "toolCall" and block.get("name") not in tools:
                        tools.append(block.get("name"))
                    if block.get("type") == "thinking" and block.get("thinking", "").strip():
                        thinking.append(block["thinking"])
                if text.strip():
                    answer = text
    return prompt, tools, answer, thinking


def short(text, limit=60):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_dom(args, failures, notes):
    with open(args.dom, encoding="utf-8") as f:
        dom = f.read()
    if "<body" not in dom:
        failures.append("dumped DOM has no <body>")
        return
    parser = DomText()
    parser.feed(dom)
    visible = words("".join(parser.visible))
    folded = words("".join(parser.folded))
    prompt, tools, answer, thinking = session_expectations(args.session)
    notes.append(f"dom: {len(visible)} visible words, {len(folded)} folded words")
    if prompt is None:
        failures.append(f"{args.session}: no user prompt found")
    elif not contains_words(visible, prompt):
        failures.append(f"user prompt not shown: {short(prompt)!r}")
    if not tools:
        notes.append("dom: session has no tool calls")
    for tool in tools:
        if tool not in visible:
            failures.append(f"tool call name not shown: {tool!r}")
    if answer is None:
        failures.append(f"{args.session}: no assistant answer found")
    elif not contains_words(visible, answer):
        failures.append(f"assistant answer not shown: {short(answer)!r}")
    for text in thinking:
        if contains_words(visible, text):
            failures.append(f"thinking is not collapsed: {short(text)!r}")
        elif not contains_words(folded, text):
            failures.append(f"thinking missing from the page: {short(text)!r}")
    notes.append(
        f"dom: prompt, {len(tools)} tool name(s), answer and {len(thinking)} collapsed thinking block(s) checked"
    )


def check_console(args, failures, notes):
    with open(args.console, encoding="utf-8", errors="replace") as f:
        lines = [l.rstrip() for l in f if ":CONSOLE" in l]
    for line in lines:
        message = line.split("] ", 1)[-1]
        if "Uncaught" in message or "Refused to" in message:
            failures.append(f"browser console: {message}")
    notes.append(f"console: {len(lines)} message(s)")


def page_backgrounds(html_path):
    """The `--bg: #rrggbb` values the exported page declares (one per color scheme)."""
    with open(html_path, encoding="utf-8") as f:
        css = f.read()
    return [hex_rgb(m) for m in re.findall(r"--bg:\s*(#[0-9a-fA-F]{6})\b", css)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--png", required=True, help="screenshot to check")
    ap.add_argument("--dom", required=True, help="output of chromium --dump-dom")
    ap.add_argument("--session", required=True, help="the exported session .jsonl")
    ap.add_argument("--html", help="the exported page (its --bg colors are expected as page background)")
    ap.add_argument("--console", help="chromium stderr with --enable-logging=stderr")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--height", type=int, default=1600)
    ap.add_argument("-q", "--quiet", action="store_true", help="print only failures")
    args = ap.parse_args()
    args.page_bgs = page_backgrounds(args.html) if args.html else []

    failures, notes = [], []
    for check in (check_png, check_dom) + ((check_console,) if args.console else ()):
        try:
            check(args, failures, notes)
        except (CheckError, OSError, ValueError, struct.error, zlib.error) as e:
            failures.append(str(e))
    if not args.quiet:
        for note in notes:
            print(f"  {note}")
    if failures:
        for failure in failures:
            print(f"FAIL: {failure}", file=sys.stderr)
        return 1
    print(f"ok: {args.png} and the DOM of {args.session} look right")
    return 0


if __name__ == "__main__":
    sys.exit(main())
