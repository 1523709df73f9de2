#!/usr/bin/env python3
"""Turns a raw run record (driver.py) into the normalized record that is compared.

    python3 normalize.py RAW.json [SCENARIO.json] > NORMALIZED.json

The normalized record has these sections, each compared on its own by compare.py:

  stream    every stdout line of pi and every line the driver sent, in order, as
            {"out": obj} / {"in": obj} / {"out_raw": text} (non-JSON stdout)
  requests  a digest of each request pi sent to the model server (see `digest_request`)
  session   the entries of the session files pi wrote, in file-creation order
  files     files the scenario asked to collect from the work dir after the run
  exit      pi's exit code, and `error` when the driver gave up (timeout, early exit)
  stderr    pi's stderr lines (informational, compared only with --stderr; node
            warnings and the order of interleaved writes make it noisy)

What is replaced by placeholders (values that differ on every run or between the two pis
by construction):
  <ROOT>          the scratch folder of the run (agent dir, cwd and HOME are inside it),
                  also in its session-dir encoding (`--tmp-ext-oracle-x-work--`)
  <PI_PKG>        the TypeScript pi package folder (the examples live there)
  <NPM>           target/ext-oracle/npm (third-party extensions)
  <EXAMPLES_DEPS> target/ext-oracle/examples-deps (examples with their npm dependencies)
  <REPO>          the repository root
  <MOCK>          the mock server's host:port
  <UUID1>, ...    UUIDs (ui request ids, session ids...), numbered by first appearance so
                  a request id still matches its response id
  <ID1>, ...      8-hex session entry ids (id, parentId, entryId, firstKeptEntryId,
                  targetId fields), numbered by first appearance, also inside texts
  <ISO>           ISO-8601 date-times, also the `2026-11-25T10-25-55-209Z` file-name form
  <DATE>          plain YYYY-MM-DD dates of today (the system prompt's "Current date")
  <TS>            epoch-millisecond numbers in `timestamp`-like fields
  <DUR>           durations (`durationMs`, `duration`, `elapsed...`, pi 1.6.0's bash
                  structuredContent `wall_time_seconds`)
  <PID>           process ids (`pid` fields)
  <UUID3:8>       the first 8 characters of a known UUID standing alone (short ids)
  <VERSION>       the running pi's version string
What is dropped:
  message_start (assistant): content, usage, stopReason, responseId
                  the live partial message, serialized late by the TS pi when an
                  extension handler of an earlier event is still running; its content
                  then depends on timing (seen with git-checkpoint). message_end has it.
  message_update.message and message_update.assistantMessageEvent.partial
                  the cumulative message so far; it is derived from the deltas, which are
                  kept, and the final value is in message_end. Dropping it keeps the
                  golden files reviewable (it is quadratic in the reply length).
  pi 1.5's additions to the RPC output, which ours speaks and 0.73.1 (the oracle) does not:
                  message_update.usage, toolcall_start id/toolName, tool_execution_end
                  durationMs, agent_end willRetry, the agent_settled, bash_execution_update and
                  entry_appended lines, the persisted system message (its message_start/end
                  and its place in agent_end and get_messages lists), the
                  {disposition} data of prompt/steer/follow_up responses, the id of an
                  unknown-command response and node 22's "(line L column C)" in parse
                  errors. Removing them keeps the comparison about extension behaviour.
  pi-ai 1.6's message fields, which 0.73.1 did not write: `rawStopReason`, `durationMs`
                  and `thinkingLevel` of assistant and tool-result messages, `usage.reasoning`,
                  `usage.cacheWrite1h` and `usage.cost.totalFromProvider`, wherever a message
                  appears (events, answers, session entries). tests/message_fields_16.rs
                  compares them with pi 1.6.0.
  pi 1.6's built-in extension commands (`mcp`, sourceInfo.source "builtin") in
                  get_commands answers: 0.73.1 had no built-in extensions. The ts16_compat
                  tests compare that list with pi 1.6.0.
What is rewritten:
  the write tool's "Successfully wrote N bytes to P" (0.73.1) becomes pi 1.6.0's
                  "Successfully wrote to P", the text ours gives (also in golden files
                  as compare.py reads them).
  request headers and transport parameters (stream, stream_options, store,
                  max_completion_tokens, ...): client-library details, covered by the
                  ts_compat tests, not extension behaviour.
  the pi's base system prompt and built-in tool schemas: ours are worded differently
                  on purpose; requests keep only what differs from the same pi's prompt
                  without extensions (the baseline, see `digest_request`).
Scenario files can add `normalize` rules for values an extension computes from things
that differ by construction (each rule carries a `why`):
  {"replace": [{"pattern": REGEX, "with": TEXT, "why": ...}],
   "dropOut": [{"match": {field: REGEX...}, "why": ...}],
   "volatileFields": [FIELD, ...], "volatileWhy": ...}   (values become <V1>, <V2>...)
"""
from __future__ import annotations

import json
from datetime import datetime
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import driver  # noqa: E402  (paths)

UUID_RE = re.compile(r"(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-f])", re.I)
ISO_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:[.-]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?")
DATE_RE = re.compile(r"\b20\d{2}-\d{2}-\d{2}\b")
MOCK_RE = re.compile(r"127\.0\.0\.1:\d+")
WROTE_RE = re.compile(r"^Successfully wrote \d+ bytes to ")
ENTRY_ID_FIELDS = {"id", "parentId", "entryId", "firstKeptEntryId", "targetId", "leafId", "newLeafId",
                   "oldLeafId", "fromId", "parentSession"}
TS_FIELDS = {"timestamp", "createdAt", "updatedAt", "modified", "created", "mtime", "startedAt", "endedAt",
             "lastModified", "time"}
DUR_FIELDS = {"durationMs", "duration", "elapsed", "elapsedMs", "tookMs", "wall_time_seconds"}
PID_FIELDS = {"pid", "ppid"}
# message_start of an assistant message carries the live partial message: the TS pi
# serializes the event only after the extension handlers of earlier events (e.g. an
# async turn_start handler running git) have finished, by which time more of the reply
# may have streamed in. What it holds then depends on timing; message_end has the final.
PARTIAL_FIELDS = {"content", "usage", "stopReason", "responseId", "errorMessage"}
VERSIONS = ["0.73.1"]


class Normalizer:
    def __init__(self, record: dict, scenario: dict | None = None):
        self.uuids: dict[str, str] = {}
        self.ids: dict[str, str] = {}
        self.paths: list[tuple[str, str]] = []
        root = record.get("root")
        if root:
            enc = root.strip("/").replace("/", "-")
            self.paths += [(root, "<ROOT>"), ("/private" + root, "<ROOT>"), (enc, "<ROOT>")]
        self.paths += [
            (str(driver.PI_PKG), "<PI_PKG>"),
            (str(driver.PI_PKG.resolve()), "<PI_PKG>"),
            (str(driver.NPM_DIR), "<NPM>"),
            (str(driver.EXAMPLES_DEPS), "<EXAMPLES_DEPS>"),
            (str(driver.REPO), "<REPO>"),
        ]
        # longest first so that nested paths win
        self.paths.sort(key=lambda p: -len(p[0]))
        versions = sorted(set(VERSIONS) | set(record.get("versions") or []), key=len, reverse=True)
        self.version_re = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, versions)) + r")(?![\w.])") \
            if versions else None
        rules = (scenario or {}).get("normalize", {})
        self.replace = [(re.compile(r["pattern"]), r["with"]) for r in rules.get("replace", [])]
        self.drop_out = [{k: re.compile(v) for k, v in r["match"].items()} for r in rules.get("dropOut", [])]
        self.entry_id_re = None
        self.uuid_prefix_re = None
        # values of these fields are random per run (an extension's own ids); each value
        # becomes <V1>, <V2>... wherever it appears
        self.volatile_fields = set(rules.get("volatileFields", []))
        self.volatile: dict[str, str] = {}
        self.volatile_re = None

    # -- ids --------------------------------------------------------------------------
    def learn_ids(self, obj, key=None):
        """Collects, in order of appearance: 8-hex entry ids from id fields, UUIDs in any
        string, and the values of the scenario's volatile fields."""
        if isinstance(obj, dict):
            for k, v in obj.items():
                self.learn_ids(v, k)
        elif isinstance(obj, list):
            for v in obj:
                self.learn_ids(v, key)
        elif isinstance(obj, str):
            if key in ENTRY_ID_FIELDS and re.fullmatch(r"[0-9a-f]{8}", obj) and obj not in self.ids:
                self.ids[obj] = "<ID%d>" % (len(self.ids) + 1)
            for m in UUID_RE.finditer(obj):
                self._uuid(m)
            if key in self.volatile_fields and obj and obj not in self.volatile:
                self.volatile[obj] = "<V%d>" % (len(self.volatile) + 1)

    def finish_learning(self):
        if self.ids:
            self.entry_id_re = re.compile(r"\b(" + "|".join(map(re.escape, self.ids)) + r")\b")
        # the first 8 characters of a known UUID standing alone (a short session id)
        self.uuid_prefix = {u[:8]: p[:-1] + ":8>" for u, p in self.uuids.items()}
        if self.uuid_prefix:
            self.uuid_prefix_re = re.compile(r"(?<![0-9a-f<])(" + "|".join(self.uuid_prefix) + r")(?![0-9a-f])")
        if self.volatile:
            self.volatile_re = re.compile("|".join(map(re.escape, sorted(self.volatile, key=len, reverse=True))))

    def _uuid(self, m):
        u = m.group(0).lower()
        if u not in self.uuids:
            self.uuids[u] = "<UUID%d>" % (len(self.uuids) + 1)
        return self.uuids[u]

    # -- values -----------------------------------------------------------------------
    def text(self, s: str) -> str:
        for p, rep in self.paths:
            if p and p in s:
                s = s.replace(p, rep)
        s = UUID_RE.sub(self._uuid, s)
        if self.uuid_prefix_re is not None:
            s = self.uuid_prefix_re.sub(lambda m: self.uuid_prefix[m.group(1)], s)
        if self.volatile_re is not None:
            s = self.volatile_re.sub(lambda m: self.volatile[m.group(0)], s)
        s = ISO_RE.sub("<ISO>", s)
        s = DATE_RE.sub("<DATE>", s)
        s = MOCK_RE.sub("<MOCK>", s)
        if self.entry_id_re is not None:
            s = self.entry_id_re.sub(lambda m: self.ids[m.group(0)], s)
        if self.version_re is not None:
            s = self.version_re.sub("<VERSION>", s)
        for pat, rep in self.replace:
            s = pat.sub(rep, s)
        return rewritten(s)

    def value(self, obj, key=None):
        if isinstance(obj, dict):
            return {k: self.value(v, k) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.value(v, key) for v in obj]
        if isinstance(obj, bool) or obj is None:
            return obj
        if isinstance(obj, (int, float)):
            if key in TS_FIELDS and obj > 1_000_000_000_000:
                return "<TS>"
            if key == "created" and 1_000_000_000 < obj < 100_000_000_000:  # epoch seconds of a
                return "<TS>"  # mock-llm chunk, as provider_stream_event shows it (debug-provider)
            if key in DUR_FIELDS:
                return "<DUR>"
            if key in PID_FIELDS:
                return "<PID>"
            return obj
        if isinstance(obj, str):
            if key in TS_FIELDS and ISO_RE.fullmatch(obj):
                return "<ISO>"
            return self.text(obj)
        return obj

    # -- sections -----------------------------------------------------------------------
    def out_line(self, obj: dict):
        obj = without_16_message_fields(as_073(obj))
        if obj.get("type") == "message_start" and (obj.get("message") or {}).get("role") == "assistant":
            obj = dict(obj)
            obj["message"] = {k: v for k, v in obj["message"].items() if k not in PARTIAL_FIELDS}
        if obj.get("type") == "message_update":
            obj = dict(obj)
            obj.pop("message", None)
            ev = obj.get("assistantMessageEvent")
            if isinstance(ev, dict):
                ev = dict(ev)
                ev.pop("partial", None)
                obj["assistantMessageEvent"] = ev
        return self.value(obj)

    def dropped(self, obj: dict) -> bool:
        if obj.get("type") in ("agent_settled", "bash_execution_update", "entry_appended"):
            return True
        if obj.get("type") in ("message_start", "message_end") and is_system(obj.get("message")):
            return True
        for rule in self.drop_out:
            if all(k in obj and isinstance(obj[k], str) and pat.search(obj[k]) for k, pat in rule.items()):
                return True
        return False

    def stream(self, log: list) -> list:
        out = []
        for e in log:
            if e["dir"] == "in":
                out.append({"in": self.value(e["obj"])} if "obj" in e else {"in_raw": self.text(e["raw"])})
            elif e["dir"] == "out":
                if "obj" in e:
                    if self.dropped(e["obj"]):
                        continue
                    out.append({"out": self.out_line(e["obj"])})
                else:
                    out.append({"out_raw": self.text(e["raw"])})
        return out


PARSE_POSITION_RE = re.compile(r" \(line \d+ column \d+\)$")


def as_073(obj: dict) -> dict:
    """An RPC output line without pi 1.5's additions (see the module doc)."""
    kind = obj.get("type")
    if kind == "message_update":
        obj = {k: v for k, v in obj.items() if k != "usage"}
        ev = obj.get("assistantMessageEvent")
        if isinstance(ev, dict) and ev.get("type") == "toolcall_start":
            obj["assistantMessageEvent"] = {k: v for k, v in ev.items() if k not in ("id", "toolName")}
    elif kind == "tool_execution_end":
        obj = {k: v for k, v in obj.items() if k != "durationMs"}
    elif kind == "agent_end":
        obj = {k: v for k, v in obj.items() if k != "willRetry"}
        if isinstance(obj.get("messages"), list):
            obj["messages"] = [m for m in obj["messages"] if not is_system(m)]
    elif kind == "response":
        data = obj.get("data")
        if obj.get("command") in ("prompt", "steer", "follow_up") and isinstance(data, dict) \
                and set(data) == {"disposition"}:
            obj = {k: v for k, v in obj.items() if k != "data"}
        error = obj.get("error")
        if isinstance(error, str) and error.startswith("Unknown command:"):
            obj = {k: v for k, v in obj.items() if k != "id"}
        if obj.get("command") == "parse" and isinstance(error, str):
            obj = dict(obj, error=PARSE_POSITION_RE.sub("", error))
        if obj.get("command") == "get_commands" and isinstance(data, dict) \
                and isinstance(data.get("commands"), list):
            kept = [c for c in data["commands"]
                    if not (isinstance(c, dict) and (c.get("sourceInfo") or {}).get("source") == "builtin")]
            obj = dict(obj, data=dict(data, commands=kept))
            data = obj["data"]
        if isinstance(data, dict) and isinstance(data.get("messages"), list):
            kept = [m for m in data["messages"] if not is_system(m)]
            obj = dict(obj, data=dict(data, messages=kept))
    return without_system_messages(obj)


MESSAGE_FIELDS_16 = {"rawStopReason", "durationMs", "thinkingLevel"}
USAGE_FIELDS_16 = {"reasoning", "cacheWrite1h"}


def without_16_message_fields(value):
    """`value` without pi-ai 1.6's message and usage fields (see the module doc)."""
    if isinstance(value, list):
        return [without_16_message_fields(v) for v in value]
    if not isinstance(value, dict):
        return value
    drop = set()
    if value.get("role") in ("assistant", "toolResult"):
        drop |= MESSAGE_FIELDS_16
    if "totalTokens" in value and isinstance(value.get("cost"), dict):
        drop |= USAGE_FIELDS_16
    if {"input", "output", "total"} <= set(value) and "totalFromProvider" in value:
        drop.add("totalFromProvider")
    return {k: without_16_message_fields(v) for k, v in value.items() if k not in drop}


def rewritten(value):
    """`value` (a normalized record or part of one, a golden file too) with 0.73.1's
    texts in pi 1.6.0's words (see "What is rewritten" in the module doc)."""
    if isinstance(value, str):
        return WROTE_RE.sub("Successfully wrote to ", value)
    if isinstance(value, list):
        return [rewritten(v) for v in value]
    if isinstance(value, dict):
        return {k: rewritten(v) for k, v in value.items()}
    return value


def without_system_messages(value):
    """`value` with system messages taken out of every `messages` list in it (a child pi's
    transcript shown by an extension has them too)."""
    if isinstance(value, dict):
        return {k: ([without_system_messages(m) for m in v if not is_system(m)]
                    if k == "messages" and isinstance(v, list) else without_system_messages(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [without_system_messages(v) for v in value]
    return value


def is_system(message) -> bool:
    """pi 1.5's persisted system message (a session record 0.73.1 does not have)."""
    return isinstance(message, dict) and message.get("role") == "system"


# -- provider requests ------------------------------------------------------------------
def message_digest(m: dict) -> dict:
    """Role, text and tool calls of one OpenAI chat message, independent of the wire
    details (string vs part list, null content)."""
    d = {"role": m.get("role")}
    c = m.get("content")
    if isinstance(c, list):
        texts, images = [], 0
        for part in c:
            if isinstance(part, dict) and part.get("type") == "text":
                texts.append(part.get("text", ""))
            elif isinstance(part, dict) and part.get("type") in ("image_url", "image"):
                images += 1
        d["text"] = "\n".join(texts)
        if images:
            d["images"] = images
    elif isinstance(c, str):
        d["text"] = c
    if m.get("tool_calls"):
        calls = []
        for tc in m["tool_calls"]:
            fn = tc.get("function", {})
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = fn.get("arguments")
            calls.append({"id": tc.get("id"), "name": fn.get("name"), "arguments": args})
        d["tool_calls"] = calls
    if m.get("tool_call_id"):
        d["tool_call_id"] = m["tool_call_id"]
    return d


def split_system(body: dict) -> tuple[str, list]:
    msgs = body.get("messages") or []
    system = ""
    rest = []
    for m in msgs:
        if m.get("role") in ("system", "developer") and not rest and not system:
            c = m.get("content")
            system = c if isinstance(c, str) else "\n".join(p.get("text", "") for p in c or [])
        else:
            rest.append(m)
    return system, rest


def tool_entries(body: dict) -> list:
    out = []
    for t in body.get("tools") or []:
        fn = t.get("function", t)
        out.append({"name": fn.get("name"), "description": fn.get("description"),
                    "parameters": fn.get("parameters")})
    return out


TOOL_LINE = re.compile(r"^- ([A-Za-z0-9_.:-]+): ")


# Where each pi's system prompt starts its list of tools: 0.73.1's "Available tools:"
# line, 1.6.0's (and ours) `<tools>` section.
TOOLS_HEADINGS = {"Available tools:", "<tools>"}


def tools_listed(system: str) -> list:
    """Names in the system prompt's list of tools (lines `- name: text`)."""
    out, inside = [], False
    for line in system.split("\n"):
        if line.strip() in TOOLS_HEADINGS:
            inside = True
            continue
        if inside:
            m = TOOL_LINE.match(line)
            if m:
                out.append(m.group(1))
            elif out or not line.strip():
                break
    return out


def is_summarization(body: dict, rest: list) -> bool:
    """pi's own compaction / branch-summary request: no tools, the last user message is
    the transcript in <conversation> tags. Both pis word these prompts themselves."""
    if body.get("tools"):
        return False
    users = [m for m in rest if m.get("role") == "user"]
    return bool(users) and message_digest(users[-1]).get("text", "").startswith("<conversation>")


# The first line of each pi's skills catalog: its own wording (not in the baselines,
# which have no skills), so not something an extension added.
OWN_CATALOG_INTROS = {
    "The following skills provide specialized instructions for specific tasks.",
    "Skills are task-specific instruction sets. When the task at hand fits a skill's "
    "description below, load that skill's file with the read tool before you start, and "
    "follow it.",
}


# The tags of pi 1.6.0's (and our) `skills` section around the catalog: the pi's own
# layout, absent from the baselines (no skills), and not in 0.73.1's prompt.
OWN_SKILLS_SECTION_TAGS = {"<skills>", "</skills>"}


def without_catalog_intro(lines: list) -> list:
    """Drops each pi's own introduction of the skills catalog (from its first line up to
    `<available_skills>`) and the `skills` section's tags: worded by each pi, absent from
    the baselines (no skills)."""
    out, skipping = [], False
    for line in lines:
        if line in OWN_SKILLS_SECTION_TAGS:
            continue
        if line in OWN_CATALOG_INTROS:
            skipping = True
        if skipping and line.strip() == "<available_skills>":
            skipping = False
        if not skipping:
            out.append(line)
    return out


def digest_request(req: dict, base: dict | None, alt_tools: dict | None = None) -> dict:
    """`base` is what the same pi sends without any extension (see `baseline_of`):
    {"system": its default system prompt, "vocab": every line of its system prompts
    with the default tools, all built-in tools and no tools, "tools": {name: entry}}.
    The digest keeps
      system:   "<BASE>" when equal to the default prompt; else the names listed under
                "Available tools:" and the lines that are not the pi's own text (what an
                extension added: before_agent_start text, promptSnippet/promptGuidelines
                lines, ...). Lines the pi itself writes (guidelines that follow the
                active tools) are worded differently by each pi and left out.
      tools:    the tool names in order; a tool equal to the pi's built-in of that name
                is just its name, others (extension tools, overridden built-ins) in full.
                `alt_tools` (for our pi: the TypeScript pi's built-ins) also count as
                built-ins: an extension that re-registers the TypeScript pi's own tool
                (createBashTool, ...) sends exactly that tool from either pi.
      messages: role / text / tool calls / tool_call_id of each non-system message.
    pi's own summarization requests (compaction) are reduced to {"kind": "summarization"}."""
    body = req.get("body") or {}
    system, rest = split_system(body)
    d: dict = {"path": req.get("path")}
    if is_summarization(body, rest):
        d["kind"] = "summarization"
        return d
    if base is None:
        d["system"] = system
    elif system == base["system"]:
        d["system"] = "<BASE>"
    else:
        vocab = set(base["vocab"])
        d["system"] = {"tools_listed": tools_listed(system),
                       "added": [l for l in without_catalog_intro(system.split("\n"))
                                 if l.strip() and l not in vocab]}
    tools = []
    for t in tool_entries(body):
        b = (base or {}).get("tools", {}).get(t["name"])
        alt = (alt_tools or {}).get(t["name"])
        if (b is not None and b == t) or (alt is not None and alt == t):
            tools.append(t["name"])
        else:
            tools.append(t)
    d["tools"] = tools
    d["messages"] = [message_digest(m) for m in rest]
    return d


def baseline_of(records: list) -> dict | None:
    """From baseline runs without extensions (default tools first, then variants with
    other tool sets): the default system prompt, the vocabulary of the pi's own prompt
    lines, and its built-in tool entries."""
    base = None
    for record in records:
        reqs = [r for r in record.get("requests") or [] if not r.get("path", "").startswith("/_mock")]
        if not reqs:
            continue
        body = reqs[0].get("body") or {}
        system, _ = split_system(body)
        n = Normalizer(record)
        system = n.text(system)
        if base is None:
            base = {"system": system, "vocab": [], "tools": {}}
        for line in system.split("\n"):
            if line not in base["vocab"]:
                base["vocab"].append(line)
        for t in tool_entries(body):
            base["tools"].setdefault(t["name"], n.value(t))
    return base


# -- whole record -------------------------------------------------------------------------
def iso_seconds(text):
    """Epoch seconds of an ISO-8601 entry timestamp (`None` when it is not one)."""
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def without_system_record(record: dict) -> dict:
    """The record as 0.73.1 would have it without pi 1.5's persisted system message: its
    session entries go (their children hang from their parent), compactions lose their
    `systemMessage` checkpoint, and get_state / get_session_stats counts leave out the
    system messages the session file had by then."""
    record = dict(record)
    # When each system message was written, per session file (of the files as they ended).
    written = {s.get("file"): [iso_seconds(e.get("timestamp")) for e in s["entries"]
                               if e.get("type") == "message" and is_system(e.get("message"))]
               for s in record.get("sessions", [])}
    sessions = []
    for s in record.get("sessions", []):
        parent_of = {e.get("id"): e.get("parentId") for e in s["entries"]
                     if e.get("type") == "message" and is_system(e.get("message"))}
        def up(pid):
            while pid in parent_of:
                pid = parent_of[pid]
            return pid
        entries = []
        for e in s["entries"]:
            if e.get("id") in parent_of:
                continue
            e = dict(e)
            if e.get("parentId") in parent_of:
                e["parentId"] = up(e["parentId"])
            if e.get("type") == "compaction":
                e.pop("systemMessage", None)
            entries.append(e)
        sessions.append(dict(s, entries=entries))
    if "sessions" in record:
        record["sessions"] = sessions
    # The log's clock is relative: anchor it at the first message timestamp it carries.
    offset = None
    for e in record.get("log", []):
        m = (e.get("obj") or {}).get("message") if isinstance(e.get("obj"), dict) else None
        if isinstance(m, dict) and isinstance(m.get("timestamp"), (int, float)):
            offset = m["timestamp"] / 1000 - e.get("t", 0)
            break
    log = []
    for e in record.get("log", []):
        obj = e.get("obj")
        if e.get("dir") == "out" and isinstance(obj, dict) and obj.get("type") == "response" \
                and obj.get("command") in ("get_state", "get_session_stats") \
                and isinstance(obj.get("data"), dict):
            data = obj["data"]
            key = "messageCount" if obj["command"] == "get_state" else "totalMessages"
            times = written.get(data.get("sessionFile"), [])
            if isinstance(data.get(key), int) and times and offset is not None:
                now = offset + e.get("t", 0) + 0.05
                system = sum(1 for w in times if w is not None and w <= now)
                e = dict(e, obj=dict(obj, data=dict(data, **{key: data[key] - system})))
        log.append(e)
    if "log" in record:
        record["log"] = log
    return record


def normalize(record: dict, scenario: dict | None = None, baseline: dict | None = None,
              alt_tools: dict | None = None) -> dict:
    record = without_system_record(record)
    n = Normalizer(record, scenario)
    for e in record.get("log", []):
        # dropped lines must not take a number (their count may vary)
        if "obj" in e and not (e["dir"] == "out" and n.dropped(e["obj"])):
            n.learn_ids(e["obj"])
    for s in record.get("sessions", []):
        n.learn_ids(s["entries"])
    n.finish_learning()
    stream = n.stream(record.get("log", []))
    sessions = []
    for i, s in enumerate(record.get("sessions", []), 1):
        sessions.append({"session_file": i, "name": n.text(Path(s["file"]).name)})
        sessions += [n.value(without_16_message_fields(e)) for e in s["entries"]]
    requests = []
    for r in record.get("requests", []):
        if r.get("path", "").startswith("/_mock"):
            continue
        requests.append(digest_request(n.value(r), baseline, alt_tools))
    stderr = [n.text(l) for l in (record.get("stderr") or "").splitlines()
              if l.strip() and not re.match(r"\(node:\d+\) ", l)]
    return {
        "scenario": record.get("scenario"),
        "exit": record.get("exit"),
        "error": record.get("error"),
        "notes": record.get("notes", []) + (
            ["unused ui answers: %s" % json.dumps(record["unused_answers"])] if record.get("unused_answers") else []),
        "stream": stream,
        "requests": requests,
        "session": sessions,
        "files": {k: (n.text(v) if isinstance(v, str) else v) for k, v in (record.get("files") or {}).items()},
        "stderr": stderr,
    }


def dumps(norm: dict) -> str:
    """One JSON value per line inside each section, so that golden diffs are readable."""
    lines = ["{"]
    keys = list(norm)
    for i, k in enumerate(keys):
        v = norm[k]
        comma = "," if i < len(keys) - 1 else ""
        if isinstance(v, list) and v:
            lines.append("  %s: [" % json.dumps(k))
            for j, item in enumerate(v):
                lines.append("    " + json.dumps(item, ensure_ascii=False, sort_keys=False) + ("," if j < len(v) - 1 else ""))
            lines.append("  ]" + comma)
        else:
            lines.append("  %s: %s%s" % (json.dumps(k), json.dumps(v, ensure_ascii=False), comma))
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv):
    rec = json.load(open(argv[0]))
    sc = driver.load_scenario(argv[1]) if len(argv) > 1 else None
    sys.stdout.write(dumps(normalize(rec, sc)))


if __name__ == "__main__":
    main(sys.argv[1:])
