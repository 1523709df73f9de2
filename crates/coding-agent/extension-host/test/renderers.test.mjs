/**
 * registerToolRenderer resolvers (load order, next(), built-in tools, a throwing resolver)
 * and registerEntryRenderer (entry_render), as pi 1.6.0's runner resolves them.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startHost } from "./fake-pi.mjs";

describe("tool and entry renderers", () => {
	let pi;
	let result;
	let n = 0;
	const text = async (frame) => {
		if (!frame) return frame;
		const lines = await pi.call("component_render", { componentId: frame.componentId, width: 40 });
		return lines.map((l) => l.replace(/\x1b\[[0-9;]*m/g, "").trimEnd()).join("\n");
	};
	const call = async (toolName, kind = "call", args = {}) =>
		text(
			await pi.call("tool_render", {
				toolName,
				toolCallId: `t${++n}`,
				kind,
				args,
				context: {},
				...(kind === "result" ? { result: { content: [{ type: "text", text: "out" }] } } : {}),
			}),
		);
	before(async () => {
		({ pi, result } = await startHost(["renderers-a.ts", "renderers-b.ts"], { mode: "interactive" }));
	});
	after(() => pi.stop());

	it("reports resolvers and entry renderer types", () => {
		const [a, b] = result.extensions;
		assert.equal(a.toolRenderers, true);
		assert.deepEqual(a.entryRenderers, ["card", "nothing"]);
		assert.equal(b.toolRenderers, true);
		assert.deepEqual(b.entryRenderers, ["card"]);
	});

	it("asks resolvers in load order; next() is the later ones, then the tool", async () => {
		// The first resolver wraps what the second (next) and the tool give.
		assert.equal(await call("plain", "call", { q: "x" }), "A(below) plain x");
		// An unregistered tool: the second resolver's next() is nothing.
		assert.equal(await call("remote__lookup", "call", { q: "y" }), "A(none) remote__lookup y");
		// Both pass on: the registered tool's own renderer.
		assert.equal(await call("drawn"), "drawn by the tool");
		// Nobody draws it: pi's default (null).
		assert.equal(await call("unknown"), null);
	});

	it("gives pi's own renderers of built-in tools through next()", async () => {
		// The second resolver replaces read's call only; its result stays pi's (null).
		assert.equal(await call("read"), "B read");
		assert.equal(await call("read", "result"), null);
		// Untouched built-in tools are drawn by pi.
		assert.equal(await call("bash"), null);
		assert.equal(await call("ls", "result"), null);
	});

	it("draws the call by default when a resolver throws", async () => {
		assert.equal(await call("boom"), null);
	});

	it("resolves once per tool call", async () => {
		const frame = { toolName: "plain", toolCallId: "same", kind: "call", args: { q: "1" }, context: {} };
		const first = await pi.call("tool_render", frame);
		const second = await pi.call("tool_render", { ...frame, args: { q: "2" } });
		assert.equal(await text(second), "A(below) plain 2");
		assert.notEqual(first, null);
	});

	it("draws custom entries with the first extension's renderer", async () => {
		const entry = { type: "custom", id: "e1", customType: "card", data: { n: 1 } };
		assert.equal(await text(await pi.call("entry_render", { entry, expanded: false })), 'card {"n":1}');
		assert.equal(await text(await pi.call("entry_render", { entry, expanded: true })), 'card {"n":1} (expanded)');
		assert.equal(await pi.call("entry_render", { entry: { ...entry, customType: "other" } }), null);
		assert.equal(await pi.call("entry_render", { entry: { ...entry, customType: "nothing" } }), null);
	});

	it("answers a throwing entry renderer with pi's error line", async () => {
		const entry = { type: "custom", id: "e2", customType: "card", data: { fail: true } };
		const lines = (await text(await pi.call("entry_render", { entry }))).split("\n");
		assert.deepEqual(lines, ["", " [card] renderer failed: no card", ""]);
	});
});
