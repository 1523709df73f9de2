#!/usr/bin/env node
// One timed ACP session for bench/acp_compare.py: spawns the agent (argv after the SDK
// folder), and prints {"initMs", "firstChunkMs"}: from the spawn to the answer of
// `initialize`, and to the first chunk of the answer to a prompt ("hi", answered by the
// mock with ANSWER; the first message chunk after the prompt is sent).
//
//   node bench/acp_start.mjs SDK_DIR CWD ANSWER PROGRAM ARGS...
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";

const [sdkDir, cwd, answer, program, ...args] = process.argv.slice(2);
const acp = await import(join(sdkDir, "node_modules/@agentclientprotocol/sdk/dist/acp.js"));
const started = performance.now();
const child = spawn(program, args, { cwd, stdio: ["pipe", "pipe", process.env.ACP_BENCH_STDERR ? "inherit" : "ignore"], env: process.env });
let firstChunk;
let prompting = false;
const chunk = new Promise((resolve) => {
  firstChunk = resolve;
});
const client = {
  async sessionUpdate(params) {
    const update = params.update;
    if (prompting && update.sessionUpdate === "agent_message_chunk" && answer.startsWith(String(update.content?.text ?? "-"))) {
      firstChunk(performance.now() - started);
    }
  },
  async requestPermission() {
    return { outcome: { outcome: "cancelled" } };
  },
};
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const connection = new acp.ClientSideConnection(() => client, stream);
await connection.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
const initMs = performance.now() - started;
const { sessionId } = await connection.newSession({ cwd, mcpServers: [] });
prompting = true;
const prompted = connection.prompt({ sessionId, prompt: [{ type: "text", text: "hi" }] });
const firstChunkMs = await chunk;
await prompted;
child.kill();
process.stdout.write(JSON.stringify({ initMs, firstChunkMs }) + "\n");
process.exit(0);
