/**
 * `project_trust` (pi 1.6.0): the first yes/no answer decides, undecided falls through,
 * errors come back with the answer instead of as extension_error, and handlers get the
 * limited trust context.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import { startHost } from "./fake-pi.mjs";
import { createTrustContext } from "../lib/trust-context.mjs";

describe("project_trust", () => {
	let pi;
	const emit = (cwd, mode = "print", hasUI = false) => pi.call("event", { event: { type: "project_trust", cwd, mode, hasUI } });
	before(async () => {
		({ pi } = await startHost(["trust.ts"]));
	});
	after(() => pi.stop());

	it("skips undecided answers and keeps remember", async () => {
		assert.deepEqual(await emit("/p/ok"), { result: { trusted: "yes", remember: true }, errors: [] });
	});

	it("reports a throwing handler and a handler returning nothing, then goes on", async () => {
		const answer = await emit("/p/broken");
		assert.equal(answer.errors.length, 1);
		assert.match(answer.errors[0].extensionPath, /trust\.ts$/);
		assert.equal(answer.errors[0].error, "cannot decide");
		assert.deepEqual(answer.result, { trusted: "yes", remember: true });
		assert.equal(pi.framesOf("extension_error").length, 0);
	});

	it("gives handlers {type, cwd} and the trust context; without a UI prompts answer defaults", async () => {
		const answer = await emit("/p/ctx", "rpc");
		assert.deepEqual(answer.result, { trusted: "no" });
		// A handler must return an answer: nothing is an error (pi reads `result.trusted`).
		const other = await emit("/p/nothing");
		assert.deepEqual(other.result, { trusted: "yes", remember: true });
		assert.deepEqual(
			other.errors.map((e) => e.error),
			["Cannot read properties of undefined (reading 'trusted')"],
		);
	});
});

describe("trust context", () => {
	it("asks on the terminal in the terminal UI", async () => {
		const input = new PassThrough();
		const output = new PassThrough();
		let written = "";
		output.on("data", (chunk) => {
			written += chunk;
		});
		const ctx = createTrustContext({ cwd: "/p", mode: "interactive", hasUI: true }, { input, output });
		assert.equal(ctx.mode, "tui");
		const choice = ctx.ui.select("Trust?", ["Yes", "No"]);
		input.write("2\n");
		assert.equal(await choice, "No");
		assert.match(written, /Trust\?\n {2}1\. Yes\n {2}2\. No\nChoose 1-2: /);
		const confirmed = ctx.ui.confirm("Sure?", "really");
		input.write("y\n");
		assert.equal(await confirmed, true);
		ctx.ui.notify("quiet in the UI");
		assert.doesNotMatch(written, /quiet in the UI/);
	});

	it("answers defaults and writes notices elsewhere", async () => {
		const output = new PassThrough();
		let written = "";
		output.on("data", (chunk) => {
			written += chunk;
		});
		const ctx = createTrustContext({ cwd: "/p", mode: "json", hasUI: false }, { input: new PassThrough(), output });
		assert.equal(await ctx.ui.select("t", ["a"]), undefined);
		assert.equal(await ctx.ui.confirm("t", "m"), false);
		assert.equal(await ctx.ui.input("t"), undefined);
		ctx.ui.notify("hello", "warning");
		assert.equal(written, "hello\n");
	});
});
