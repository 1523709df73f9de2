/**
 * Event dispatch with two extensions (ext-a.ts then ext-b.ts): pi 0.73.1's combination
 * rules, extension_error for throwing handlers, and events without handlers.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { fixturesDir, startHost } from "./fake-pi.mjs";

const A = path.join(fixturesDir, "ext-a.ts");
const B = path.join(fixturesDir, "ext-b.ts");

describe("combination rules", () => {
	let pi;
	const emit = (event) => pi.call("event", { event });
	const appended = (customType) =>
		pi.framesOf("request").filter((f) => f.method === "appendEntry" && f.params.customType === customType);
	before(async () => {
		({ pi } = await startHost(["ext-a.ts", "ext-b.ts"]));
	});
	after(() => pi.stop());

	it("tool_call: handlers mutate the input in place, in order", async () => {
		const result = await emit({ type: "tool_call", toolName: "bash", toolCallId: "t1", input: { command: "ls" } });
		assert.deepEqual(result, { block: false, input: { command: "echo patched && echo B" } });
	});

	it("tool_call: the first block wins and later handlers do not run", async () => {
		const result = await emit({ type: "tool_call", toolName: "danger", toolCallId: "t2", input: {} });
		assert.deepEqual(result, { block: true, reason: "A says no", input: {} });
		assert.equal(appended("b-ran").length, 0);
	});

	it("tool_call: a thrown error blocks with its message and is no extension_error", async () => {
		const result = await emit({ type: "tool_call", toolName: "thrower", toolCallId: "t3", input: {} });
		assert.deepEqual(result, { block: true, reason: "A threw", input: {} });
		assert.equal(pi.framesOf("extension_error").filter((f) => f.event === "tool_call").length, 0);
	});

	it("context: chained over a deep clone", async () => {
		const messages = [{ role: "user", content: "hi", timestamp: 0 }];
		const result = await emit({ type: "context", messages });
		assert.deepEqual(
			result.messages.map((m) => m.content),
			["hi", "from A", "from B, saw 2"],
		);
	});

	it("input: a transform is chained and `handled` stops", async () => {
		assert.deepEqual(await emit({ type: "input", text: "hello", source: "interactive" }), { action: "handled" });
		assert.deepEqual(await emit({ type: "input", text: "other", source: "rpc" }), { action: "continue" });
	});

	it("tool_result: results merge in sequence", async () => {
		const result = await emit({
			type: "tool_result",
			toolName: "x",
			toolCallId: "t",
			input: {},
			content: [{ type: "text", text: "orig" }],
			details: null,
			isError: false,
		});
		assert.deepEqual(result, {
			content: [{ type: "text", text: "A" }],
			details: { b: true, sawContent: [{ type: "text", text: "A" }] },
			isError: false,
		});
	});

	it("session_before_compact: the first cancel wins and stops the dispatch", async () => {
		const result = await emit({ type: "session_before_compact", preparation: {}, branchEntries: [] });
		assert.deepEqual(result, { cancel: true });
		assert.equal(appended("compact-after-cancel").length, 0);
	});

	it("message_end: a different role is an extension_error, same-role replacements chain", async () => {
		const message = { role: "assistant", content: [{ type: "text", text: "wrong-role" }] };
		const result = await emit({ type: "message_end", message });
		assert.deepEqual(result, { message: { role: "assistant", content: [{ type: "text", text: "replaced by B" }] } });
		const error = await pi.waitFor((f) => f.type === "extension_error" && f.event === "message_end");
		assert.equal(error.extensionPath, A);
		assert.equal(error.error, "message_end handlers must return a message with the same role");
	});

	it("before_agent_start: messages collect, the system prompt chains, getSystemPrompt sees it", async () => {
		const result = await emit({ type: "before_agent_start", prompt: "p", systemPrompt: "SYS", systemPromptOptions: {} });
		assert.deepEqual(result, { messages: [{ customType: "a", content: "A", display: true }], systemPrompt: "SYS +A +B" });
	});

	it("a throwing handler becomes extension_error and the dispatch goes on", async () => {
		assert.equal(await emit({ type: "agent_end", messages: [] }), null);
		const error = await pi.waitFor((f) => f.type === "extension_error" && f.event === "agent_end");
		assert.equal(error.extensionPath, A);
		assert.equal(error.error, "A agent_end failed");
		assert.match(error.stack, /A agent_end failed/);
		await pi.waitFor((f) => f.type === "request" && f.params?.customType === "b-agent-end");
	});

	it("resources_discover: paths are unioned with their extension path", async () => {
		const result = await emit({ type: "resources_discover", cwd: "/", reason: "startup" });
		assert.deepEqual(result, {
			skillPaths: [
				{ path: "/skills/a", extensionPath: A },
				{ path: "/skills/b", extensionPath: B },
			],
			promptPaths: [{ path: "/prompts/b", extensionPath: B }],
			themePaths: [],
		});
	});

	it("before_provider_request: replacements chain, in-place edits are kept", async () => {
		assert.deepEqual(await emit({ type: "before_provider_request", payload: { x: 1 } }), { payload: { x: 1, a: true, b: true } });
	});

	it("events nobody handles answer null", async () => {
		assert.equal(await emit({ type: "turn_start", turnIndex: 0, timestamp: 1 }), null);
	});
});
