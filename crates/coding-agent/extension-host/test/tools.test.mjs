/**
 * Tools on pi's request: execute with streamed updates, cancel through the signal, thrown
 * errors as the request's error; pi.exec run by the host.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startHost } from "./fake-pi.mjs";

describe("tools", () => {
	let pi;
	before(async () => {
		({ pi } = await startHost(["tools.ts"]));
	});
	after(() => pi.stop());

	it("streams updates as tool_update notifications before the result", async () => {
		const { id, response } = pi.start_request("tool_execute", { toolName: "counter", toolCallId: "c1", params: { upTo: 3 } });
		const frame = await response;
		assert.deepEqual(frame.result, { content: [{ type: "text", text: "done" }], details: { count: 3 } });
		const updates = pi.framesOf("tool_update").filter((f) => f.id === id);
		assert.deepEqual(
			updates.map((f) => f.partialResult.details.i),
			[1, 2, 3],
		);
		const responseIndex = pi.frames.indexOf(frame);
		assert.ok(pi.frames.indexOf(updates[2]) < responseIndex);
	});

	it("aborts the tool's signal on cancel", async () => {
		const { id, response } = pi.start_request("tool_execute", {
			toolName: "counter",
			toolCallId: "c2",
			params: { upTo: 1, wait: true },
		});
		await pi.waitFor((f) => f.type === "tool_update" && f.id === id);
		pi.notify("cancel", { id });
		const frame = await response;
		assert.deepEqual(frame.result, { content: [{ type: "text", text: "cancelled" }], details: { aborted: true } });
	});

	it("answers a thrown error as the request's error", async () => {
		const frame = await pi.request("tool_execute", { toolName: "failing", toolCallId: "c3", params: {} });
		assert.equal(frame.error, "tool failed on purpose");
	});

	it("fails for an unknown tool", async () => {
		const frame = await pi.request("tool_execute", { toolName: "nope", toolCallId: "c4", params: {} });
		assert.match(frame.error, /not registered/);
	});

	it("runs pi.exec in the host", async () => {
		await pi.call("command", { name: "exec", args: "" });
		const entry = await pi.waitFor((f) => f.type === "request" && f.params?.customType === "exec");
		assert.deepEqual(entry.params.data, { stdout: "out\n", stderr: "err\n", code: 3, killed: false, truncated: false });
	});
});
