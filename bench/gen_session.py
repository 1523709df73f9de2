#!/usr/bin/env python3
"""Writes a synthetic pi session file (JSONL v3) for the big-session benchmarks.

usage: gen_session.py OUT.jsonl CWD [--messages N] [--tool-bytes B] [--target-mb MB]
                      [--image-kb KB] [--image-every K] [--seed S]

One linear branch of turns, each four message entries:
  user text -> assistant read tool call -> tool result -> assistant text.
--target-mb keeps adding turns until the file reaches that size (it overrides
--messages; long texts are then slices of one random megabyte of words). --image-kb puts a base64 PNG-like image of that size into every K-th tool
result (the "heavy with images" variant). Usage numbers stay small so that no automatic
compaction triggers; the text has newlines and quotes so that readers meet escapes.
"""
import argparse
import base64
import json
import random
import uuid
from datetime import datetime, timedelta, timezone

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi "
         "omicron pi rho sigma tau upsilon phi chi psi omega function return const let "
         "value index array string number \"quoted\" path/to/file.rs").split()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("cwd")
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--tool-bytes", type=int, default=8000)
    parser.add_argument("--target-mb", type=float, default=0)
    parser.add_argument("--image-kb", type=int, default=0)
    parser.add_argument("--image-every", type=int, default=4)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()

    rnd = random.Random(args.seed)
    clock = datetime(2026, 1, 1, tzinfo=timezone.utc)
    used = set()
    parent = None
    written = 0
    count = 0

    def new_id():
        while True:
            value = "%08x" % rnd.getrandbits(32)
            if value not in used:
                used.add(value)
                return value

    def iso(moment):
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (moment.microsecond // 1000)

    def millis(moment):
        return int(moment.timestamp() * 1000)

    corpus = None

    def text(size):
        # A gigabyte of words one by one takes too long: big files slice a corpus made once.
        nonlocal corpus
        if args.target_mb and size > 1000:
            if corpus is None:
                corpus = slow_text(1 << 20)
            start = rnd.randrange(len(corpus) - size)
            return corpus[start:start + size]
        return slow_text(size)

    def slow_text(size):
        parts, total = [], 0
        while total < size:
            word = rnd.choice(WORDS)
            parts.append(word)
            total += len(word) + 1
            if rnd.random() < 0.08:
                parts.append("\n")
        return " ".join(parts)[:size]

    def usage():
        return {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

    image_payload = None
    if args.image_kb:
        raw = bytes(rnd.getrandbits(8) for _ in range(args.image_kb * 768))
        image_payload = base64.b64encode(raw).decode()

    with open(args.out, "w") as out:
        def write(line):
            nonlocal written
            data = json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n"
            out.write(data)
            written += len(data.encode())

        def entry(kind, **fields):
            nonlocal parent, clock
            clock += timedelta(milliseconds=rnd.randint(5, 400))
            line = {"type": kind, "id": new_id(), "parentId": parent, "timestamp": iso(clock)}
            line.update(fields)
            parent = line["id"]
            write(line)

        def message(body):
            nonlocal count
            body["timestamp"] = millis(clock)
            entry("message", message=body)
            count += 1

        session_id = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
        write({"type": "session", "version": 3, "id": session_id, "timestamp": iso(clock),
               "cwd": args.cwd})
        entry("model_change", provider="mock", modelId="mock-model")
        entry("thinking_level_change", thinkingLevel="off")
        turn = 0
        target = args.target_mb * 1024 * 1024
        while (written < target) if target else (count < args.messages):
            turn += 1
            message({"role": "user", "content": [{"type": "text", "text": text(120)}]})
            call = "call_%d_%s" % (turn, new_id())
            path = "file_%d.txt" % turn
            message({"role": "assistant",
                     "content": [{"type": "text", "text": text(60)},
                                 {"type": "toolCall", "id": call, "name": "read",
                                  "arguments": {"path": path}}],
                     "api": "openai-completions", "provider": "mock", "model": "mock-model",
                     "usage": usage(), "stopReason": "toolUse"})
            content = [{"type": "text", "text": text(args.tool_bytes)}]
            if image_payload and turn % args.image_every == 0:
                content.append({"type": "image", "data": image_payload, "mimeType": "image/png"})
            message({"role": "toolResult", "toolCallId": call, "toolName": "read",
                     "content": content, "isError": False})
            message({"role": "assistant", "content": [{"type": "text", "text": text(200)}],
                     "api": "openai-completions", "provider": "mock", "model": "mock-model",
                     "usage": usage(), "stopReason": "stop"})
    print("wrote %s: %d message entries, %.1f MB" % (args.out, count, written / 1048576))


if __name__ == "__main__":
    main()
