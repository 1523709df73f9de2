/**
 * Interactive mode: remote components (ui.custom with overlay options and done, widget
 * factories, tool renderers), the state mirror behind ctx.sessionManager and friends, and
 * session replacement (newSession with setup and withSession, stale ctx).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startHost } from "./fake-pi.mjs";

describe("interactive mode", () => {
	let pi;
	const entry = (customType) => pi.waitFor((f) => f.type === "request" && f.params?.customType === customType);
	before(async () => {
		({ pi } = await startHost(["interactive.ts"], {
			mode: "interactive",
			state: { terminal: { rows: 33, columns: 100 } },
		}));
	});
	after(() => pi.stop());

	it("shows ui.custom as a remote component until done", async () => {
		pi.onRequest = (frame) => (frame.method === "ui.custom" ? new Promise(() => {}) : null);
		const command = pi.request("command", { name: "counter", args: "" });
		const custom = await pi.waitFor((f) => f.type === "request" && f.method === "ui.custom");
		assert.deepEqual(custom.params, {
			componentId: custom.params.componentId,
			overlay: true,
			overlayOptions: { anchor: "center", width: 40 },
		});
		const id = custom.params.componentId;
		let lines = await pi.call("component_render", { componentId: id, width: 50 });
		assert.match(lines[0], /\x1b\[38;2;[0-9;]+mkeys=0\x1b\[39m/);
		assert.equal(lines[1], "width=50 rows=33");
		await pi.call("component_input", { componentId: id, data: "x" });
		await pi.waitFor((f) => f.type === "ui" && f.method === "requestRender" && f.params.componentId === id);
		lines = await pi.call("component_render", { componentId: id, width: 50 });
		assert.match(lines[0], /keys=1/);
		await pi.call("component_input", { componentId: id, data: "q" });
		await pi.waitFor((f) => f.type === "ui" && f.method === "done" && f.params.componentId === id);
		assert.equal((await command).result, null);
		assert.deepEqual((await entry("counter")).params.data, { result: 1 });
		assert.deepEqual(await pi.call("component_render", { componentId: id, width: 50 }), []);
	});

	it("turns a widget factory into a component", async () => {
		await pi.call("command", { name: "widget", args: "" });
		const widget = await pi.waitFor((f) => f.type === "ui" && f.method === "setWidget");
		assert.equal(widget.params.widgetKey, "w");
		assert.equal(widget.params.widgetPlacement, "belowEditor");
		const lines = await pi.call("component_render", { componentId: widget.params.componentId, width: 20 });
		assert.match(lines[0], /widget!/);
		const status = await pi.waitFor((f) => f.type === "ui" && f.method === "setStatus");
		assert.deepEqual(status.params, { statusKey: "s", statusText: "status text" });
	});

	it("renders tool calls and results, keeping state and the last component", async () => {
		const call = { toolName: "shown", toolCallId: "r1", kind: "call", args: { x: "X" }, context: {} };
		const first = await pi.call("tool_render", call);
		const second = await pi.call("tool_render", call);
		assert.equal(second.componentId, first.componentId);
		assert.deepEqual(await pi.call("component_render", { componentId: first.componentId, width: 30 }), ["call X #1" + " ".repeat(21)]);
		const result = await pi.call("tool_render", {
			...call,
			kind: "result",
			result: { content: [], details: { ok: 1 } },
			context: { expanded: true, isPartial: false },
		});
		const lines = await pi.call("component_render", { componentId: result.componentId, width: 40 });
		assert.equal(lines[0].trimEnd(), 'result expanded=true {"ok":1}');
		assert.equal(await pi.call("tool_render", { ...call, toolName: "unknown" }), null);
	});

	it("reads the session and state mirror", async () => {
		const t = (s) => `2026-01-01T00:00:0${s}.000Z`;
		pi.notify("state", {
			model: { provider: "p", id: "m1" },
			isIdle: false,
			contextUsage: { tokens: 10, contextWindow: 100, percent: 10 },
			activeTools: ["read", "bash"],
			allTools: [{ name: "read" }, { name: "bash" }],
			thinkingLevel: "high",
			session: {
				reset: true,
				header: { type: "session", id: "s1", cwd: "/x", timestamp: t(0) },
				sessionFile: "/x/s1.jsonl",
				entries: [
					{ type: "message", id: "a", parentId: null, timestamp: t(1), message: { role: "user", content: "1" } },
					{ type: "message", id: "b", parentId: "a", timestamp: t(2), message: { role: "assistant", content: [] } },
					{ type: "message", id: "c", parentId: "a", timestamp: t(3), message: { role: "user", content: "2" } },
					{ type: "label", id: "d", parentId: "c", timestamp: t(4), targetId: "a", label: "start" },
					{ type: "session_info", id: "e", parentId: "d", timestamp: t(5), name: " named " },
				],
			},
		});
		await pi.call("command", { name: "session", args: "" });
		assert.deepEqual((await entry("session")).params.data, {
			leaf: "e",
			branch: ["a", "c", "d", "e"],
			label: "start",
			name: "named",
			tree: [["a", ["b", "c"]]],
			file: "/x/s1.jsonl",
			model: "m1",
			idle: false,
			usage: { tokens: 10, contextWindow: 100, percent: 10 },
			tools: ["read", "bash"],
			thinking: "high",
		});
	});

	it("runs newSession setup before and withSession after pi replaced the session", async () => {
		pi.onRequest = (frame) => {
			if (frame.method !== "newSession") return null;
			pi.notify("state", { session: { reset: true, sessionFile: "/x/new.jsonl", entries: frame.params.setupEntries } });
			return { cancelled: false };
		};
		await pi.call("command", { name: "replace", args: "" });
		const request = pi.framesOf("request").find((f) => f.method === "newSession");
		assert.equal(request.params.setupEntries.length, 1);
		assert.equal(request.params.setupEntries[0].customType, "seed");
		assert.deepEqual((await entry("with-session")).params.data, { file: "/x/new.jsonl" });
		assert.deepEqual((await entry("after-replace")).params.data, {
			result: { cancelled: false },
			stale: "This extension ctx is stale after sess",
		});
	});
});
