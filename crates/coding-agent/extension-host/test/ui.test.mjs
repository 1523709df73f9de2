/**
 * ctx.ui per mode: rpc dialogs as `ui.*` requests answered by pi, notifications as `ui`
 * frames, timeouts settling locally with `ui_cancel`; print mode resolving at once; command
 * errors and argument completions.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startHost } from "./fake-pi.mjs";

describe("rpc mode UI", () => {
	it("round-trips ui.select from a command", async () => {
		const { pi } = await startHost(["tools.ts"], { mode: "rpc" });
		try {
			pi.onRequest = (frame) => (frame.method === "ui.select" ? "b" : null);
			assert.equal(await pi.call("command", { name: "pick", args: "" }), null);
			const select = pi.framesOf("request").find((f) => f.method === "ui.select");
			assert.deepEqual(select.params, { title: "Pick one", options: ["a", "b"] });
			const notify = pi.framesOf("ui").find((f) => f.method === "notify");
			assert.deepEqual(notify.params, { message: "picked b", notifyType: "info" });
		} finally {
			await pi.stop();
		}
	});

	it("settles a timed-out dialog with the default and sends ui_cancel", async () => {
		const { pi } = await startHost(["tools.ts"], { mode: "rpc" });
		try {
			pi.onRequest = (frame) => (frame.method === "ui.confirm" ? new Promise(() => {}) : null);
			await pi.call("command", { name: "timed", args: "" });
			const confirm = pi.framesOf("request").find((f) => f.method === "ui.confirm");
			assert.equal(confirm.params.timeout, 50);
			const cancel = await pi.waitFor((f) => f.type === "ui_cancel");
			assert.equal(cancel.id, confirm.id);
			const entry = await pi.waitFor((f) => f.type === "request" && f.params?.customType === "timed");
			assert.deepEqual(entry.params.data, { ok: false });
		} finally {
			await pi.stop();
		}
	});
});

describe("print mode UI", () => {
	it("resolves every dialog at once and has no UI", async () => {
		const { pi } = await startHost(["tools.ts"], { mode: "print" });
		try {
			const started = Date.now();
			await pi.call("command", { name: "ask", args: "" });
			assert.ok(Date.now() - started < 2000);
			const entry = await pi.waitFor((f) => f.type === "request" && f.params?.customType === "ask-results");
			assert.deepEqual(entry.params.data, { confirm: false, hasUI: false, editorText: "", accent: true });
			assert.equal(pi.framesOf("request").filter((f) => f.method.startsWith("ui.")).length, 0);
		} finally {
			await pi.stop();
		}
	});
});

describe("commands", () => {
	it("answers a thrown error and gives argument completions", async () => {
		const { pi } = await startHost(["tools.ts"]);
		try {
			const frame = await pi.request("command", { name: "broken", args: "" });
			assert.equal(frame.error, "command broke");
			assert.deepEqual(await pi.call("command_completions", { name: "ask", prefix: "x" }), [{ value: "x-done", label: "done" }]);
			assert.equal(await pi.call("command_completions", { name: "pick", prefix: "x" }), null);
		} finally {
			await pi.stop();
		}
	});
});
