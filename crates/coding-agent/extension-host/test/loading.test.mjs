/**
 * Loading: the init answer (registrations per extension), pi's error messages for a throwing
 * factory, a missing default export and an action called during loading, and the flags
 * notification feeding getFlag.
 */
import assert from "node:assert/strict";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { fixturesDir, startHost } from "./fake-pi.mjs";

const fixture = (name) => path.join(fixturesDir, name);

describe("loading extensions", () => {
	let pi;
	let result;
	before(async () => {
		({ pi, result } = await startHost(["good.ts", "throws.ts", "no-default.ts", "load-action.ts"]));
	});
	after(() => pi.stop());

	it("reports what a good extension registered", () => {
		assert.equal(result.extensions.length, 1);
		const good = result.extensions[0];
		assert.equal(good.path, fixture("good.ts"));
		assert.deepEqual(good.handlers, ["session_start", "tool_call"]);
		assert.deepEqual(good.commands, [
			{ name: "hello", description: "Say hello", extensionPath: fixture("good.ts"), hasArgumentCompletions: false },
		]);
		assert.deepEqual(good.flags, [
			{ name: "loud", description: "Be loud", type: "boolean", default: false, extensionPath: fixture("good.ts") },
		]);
		assert.deepEqual(good.shortcuts, [{ shortcut: "ctrl+shift+g", description: "Greet" }]);
		assert.deepEqual(good.messageRenderers, ["greeting"]);
		const [tool] = good.tools;
		assert.equal(tool.name, "greet");
		assert.equal(tool.promptSnippet, "greet people");
		assert.deepEqual(tool.promptGuidelines, ["Greet politely."]);
		assert.equal(tool.executionMode, "sequential");
		assert.equal(tool.hasPrepareArguments, true);
		assert.equal(tool.hasRenderCall, true);
		assert.equal(tool.hasRenderResult, false);
		assert.deepEqual(tool.parameters, { type: "object", required: ["name"], properties: { name: { type: "string" } } });
	});

	it("reports a throwing factory with its path and message", () => {
		const error = result.errors.find((e) => e.path === fixture("throws.ts"));
		assert.equal(error?.error, "Failed to load extension: factory exploded");
	});

	it("reports a module without a default export", () => {
		const error = result.errors.find((e) => e.path === fixture("no-default.ts"));
		assert.equal(error?.error, `Extension does not export a valid factory function: ${fixture("no-default.ts")}`);
	});

	it("refuses action methods during loading with pi's error", () => {
		const error = result.errors.find((e) => e.path === fixture("load-action.ts"));
		assert.equal(
			error?.error,
			"Failed to load extension: Extension runtime not initialized. Action methods cannot be called during extension loading.",
		);
	});

	it("prepares tool arguments and executes the tool", async () => {
		assert.deepEqual(await pi.call("tool_prepare", { toolName: "greet", args: "Bob" }), { name: "Bob" });
		const out = await pi.call("tool_execute", { toolName: "greet", toolCallId: "t1", params: { name: "Ann" } });
		assert.deepEqual(out, { content: [{ type: "text", text: "Hello, Ann!" }], details: { name: "Ann" } });
	});

	it("rejects a second init", async () => {
		const response = await pi.request("init", { extensions: [] });
		assert.match(response.error, /already initialised/);
	});
});

describe("conflicts", () => {
	it("reports tools and flags registered twice; the first registration wins", async () => {
		const { pi, result } = await startHost(["good.ts", "dup.ts"]);
		try {
			assert.deepEqual(result.conflicts, [
				{ path: fixture("dup.ts"), error: `Tool "greet" conflicts with ${fixture("good.ts")}` },
				{ path: fixture("dup.ts"), error: `Flag "--loud" conflicts with ${fixture("good.ts")}` },
			]);
			const out = await pi.call("tool_execute", { toolName: "greet", toolCallId: "t", params: { name: "Z" } });
			assert.equal(out.content[0].text, "Hello, Z!");
			// Duplicate command names are numbered like pi does.
			const frame = await pi.request("command", { name: "hello:2", args: "" });
			assert.equal(frame.result, null);
			assert.match((await pi.request("command", { name: "hello", args: "" })).error, /Unknown extension command/);
		} finally {
			await pi.stop();
		}
	});
});

describe("flags", () => {
	it("gives the default, then the value from the flags notification", async () => {
		const { pi } = await startHost(["flags.ts"]);
		try {
			await pi.call("command", { name: "flag", args: "" });
			pi.notify("flags", { values: { loud: true, name: "x" } });
			await pi.call("command", { name: "flag", args: "" });
			const entries = pi.framesOf("request").filter((f) => f.method === "appendEntry");
			assert.deepEqual(
				entries.map((f) => f.params.data),
				[
					{ loud: false, other: null },
					{ loud: true, other: null },
				],
			);
		} finally {
			await pi.stop();
		}
	});
});

describe("nodes without require(esm)", () => {
	it("preloads the provided packages and works the same", async () => {
		const { pi, result } = await startHost(["good.ts", "tools.ts"], {}, { PI_EXT_HOST_NO_REQUIRE_ESM: "1" });
		try {
			assert.deepEqual(result.errors, []);
			await pi.call("command", { name: "ask", args: "" });
			const entry = await pi.waitFor((f) => f.type === "request" && f.params?.customType === "ask-results");
			assert.equal(entry.params.data.accent, true);
		} finally {
			await pi.stop();
		}
	});
});

describe("reload", () => {
	it("runs every factory again in the same process; the earlier `pi` objects go stale", async () => {
		const { pi } = await startHost(["counter.ts"]);
		try {
			const run = () => pi.call("tool_execute", { toolName: "counter", toolCallId: "t", params: {} });
			assert.equal((await run()).content[0].text, "1:1");
			const before = await run();
			assert.equal(before.content[0].text, "1:2");
			assert.equal(before.details.first, "active");
			// `/reload`: pi asks for fresh modules first.
			pi.notify("clear_module_cache");
			const result = await pi.call("reload", { extensions: [{ path: fixture("counter.ts") }] });
			assert.deepEqual(result.extensions.map((e) => e.path), [fixture("counter.ts")]);
			assert.deepEqual(result.errors, []);
			const after = await run();
			assert.equal(after.content[0].text, "2:1");
			assert.match(after.details.first, /^This extension ctx is stale after session replacement or reload/);
		} finally {
			pi.stop();
		}
	});

	it("keeps the modules for a session replaced in the same folder, with a fresh `pi`", async () => {
		const { pi } = await startHost(["counter.ts"]);
		try {
			const run = () => pi.call("tool_execute", { toolName: "counter", toolCallId: "t", params: {} });
			assert.equal((await run()).content[0].text, "1:1");
			await pi.call("reload", { extensions: [{ path: fixture("counter.ts") }] });
			const after = await run();
			assert.equal(after.content[0].text, "2:2");
			assert.match(after.details.first, /^This extension ctx is stale after session replacement or reload/);
		} finally {
			pi.stop();
		}
	});
});
