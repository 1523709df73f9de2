// The TypeScript pi-ai side of bench/sse_compare.sh: complete() against the replay server.
// usage: node ts_sse_client.mjs <api> <base-url> <runs>
import { complete } from "@mariozechner/pi-ai";

const [api, baseUrl, runsText] = process.argv.slice(2);
const runs = Number(runsText ?? 10);
const model = {
  id: "bench-model", name: "Bench", api, provider: "bench", baseUrl, reasoning: false,
  input: ["text"], cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  contextWindow: 200000, maxTokens: 32000,
};
const context = { systemPrompt: "bench", messages: [{ role: "user", content: "go", timestamp: Date.now() }] };
const times = [];
for (let i = 0; i < runs; i++) {
  const started = performance.now();
  const message = await complete(model, context, { apiKey: "bench-key" });
  times.push(performance.now() - started);
  if (message.stopReason === "error" || message.stopReason === "aborted") throw new Error(`run failed: ${message.errorMessage}`);
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ impl: "ts", api, runs, median_ms: +times[Math.floor(times.length / 2)].toFixed(2), min_ms: +times[0].toFixed(2) }));
