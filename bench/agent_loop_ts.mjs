// The TypeScript side of the loop-overhead comparison (bench/agent_loop_compare.sh): the
// same scenarios as crates/agent/benches/loop_overhead.rs — an instant stream function,
// an instant `noop` tool, and a sink that only counts events.
// usage: node agent_loop_ts.mjs [iterations=20000]
import { runAgentLoop } from "@mariozechner/pi-agent-core";
import { createAssistantMessageEventStream } from "@mariozechner/pi-ai";

const iterations = Number(process.argv[2] ?? 20000);
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: "instant", name: "instant", api: "instant", provider: "instant", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 };

function instantStream(calls) {
  return (_model, context) => {
    const stream = createAssistantMessageEventStream();
    const last = context.messages[context.messages.length - 1];
    const m = { role: "assistant", content: [], api: "instant", provider: "instant", model: "instant", usage, stopReason: "stop", timestamp: Date.now() };
    stream.push({ type: "start", partial: m });
    if (calls > 0 && last.role === "user") {
      for (let i = 0; i < calls; i++) {
        const call = { type: "toolCall", id: `call_${i}`, name: "noop", arguments: { value: `v${i}` } };
        m.content.push(call);
        stream.push({ type: "toolcall_start", contentIndex: i, partial: m });
        stream.push({ type: "toolcall_end", contentIndex: i, toolCall: call, partial: m });
      }
      m.stopReason = "toolUse";
    } else {
      m.content.push({ type: "text", text: "done" });
      stream.push({ type: "text_start", contentIndex: 0, partial: m });
      stream.push({ type: "text_delta", contentIndex: 0, delta: "done", partial: m });
      stream.push({ type: "text_end", contentIndex: 0, content: "done", partial: m });
    }
    stream.push({ type: m.stopReason === "toolUse" ? "done" : "done", reason: m.stopReason, message: m });
    stream.end();
    return stream;
  };
}

const noop = {
  name: "noop", label: "noop", description: "does nothing",
  parameters: { type: "object", properties: { value: { type: "string" } } },
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

for (const calls of [0, 1, 10]) {
  const config = { model, convertToLlm: (ms) => ms.filter((m) => ["user", "assistant", "toolResult"].includes(m.role)) };
  const context = { systemPrompt: "sys", messages: [], tools: [noop] };
  const run = async () => {
    let events = 0;
    await runAgentLoop([{ role: "user", content: [{ type: "text", text: "go" }], timestamp: Date.now() }], context, config, () => { events++; }, undefined, instantStream(calls));
  };
  for (let i = 0; i < 2000; i++) await run();
  const started = performance.now();
  for (let i = 0; i < iterations; i++) await run();
  const us = ((performance.now() - started) * 1000) / iterations;
  const name = calls === 0 ? "turn_text_only" : `turn_with_${calls}_tool_calls`;
  console.log(`ts   agent_loop/${name}: ${us.toFixed(2)} µs per run`);
}
