/**
 * The facade's read and bash tool factories give pi 1.6.0's results (the expected values
 * were checked against pi 1.6.0's own factories on the same inputs): structuredContent,
 * isError results of bash, 1.6.0's line counting, the ctx passed through.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import facade from "../modules/pi-coding-agent.mjs";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-tools16-"));
fs.writeFileSync(path.join(dir, "a.txt"), "line one\nline two\n");
fs.writeFileSync(path.join(dir, "big.txt"), `${Array.from({ length: 2500 }, (_, i) => `line ${i}`).join("\n")}\n`);
fs.writeFileSync(
	path.join(dir, "p.png"),
	Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64"),
);

describe("pi 1.6.0 read tool", () => {
	it("carries the text as structuredContent", async () => {
		const result = await facade.createReadTool(dir).execute("c1", { path: "a.txt" });
		assert.deepEqual(result, {
			content: [{ type: "text", text: "line one\nline two\n" }],
			details: undefined,
			structuredContent: "line one\nline two\n",
		});
	});

	it("keeps the notice in structuredContent and counts lines as 1.6.0", async () => {
		const result = await facade.createReadToolDefinition(dir).execute("c1", { path: "big.txt" });
		assert.match(result.structuredContent, /\n\n\[Showing lines 1-2000 of 2501\. Use offset=2001 to continue\.\]$/);
		assert.equal(result.structuredContent, result.content[0].text);
		assert.equal(result.details.truncation.totalLines, 2500);
		const limited = await facade.createReadTool(dir).execute("c1", { path: "a.txt", limit: 1 });
		assert.equal(limited.structuredContent, "line one\n\n[2 more lines in file. Use offset=2 to continue.]");
	});

	it("gives an image as {type, data, mimeType, note}, and flags a model without images", async () => {
		const ctx = { cwd: dir, model: { id: "m", provider: "p", input: ["text"] } };
		const result = await facade.createReadToolDefinition("/").execute("c1", { path: "p.png" }, undefined, undefined, ctx);
		assert.equal(result.content[1].type, "image");
		assert.deepEqual(result.structuredContent, {
			type: "image",
			data: result.content[1].data,
			mimeType: "image/png",
			note: "Read image file [image/png]",
		});
		assert.deepEqual(result.details, { imageUnsupportedByModel: "m" });
	});

	it("throws on errors (no structuredContent)", async () => {
		await assert.rejects(facade.createReadTool(dir).execute("c1", { path: "missing.txt" }), /ENOENT/);
		await assert.rejects(facade.createReadTool(dir).execute("c1", { path: "a.txt", offset: 9 }), {
			message: "Offset 9 is beyond end of file (3 lines total)",
		});
	});

	it("has 1.6.0's schema, outputSchema and description", () => {
		const tool = facade.createReadTool(dir);
		assert.match(tool.description, /\(jpg, png, gif, webp, bmp\)/);
		assert.ok(tool.outputSchema);
		assert.deepEqual(tool.constrainedSampling, { type: "json_schema", strict: "prefer" });
		assert.equal(typeof facade.createReadToolDefinition(dir).renderResult, "function");
	});
});

describe("pi 1.6.0 bash tool", () => {
	it("carries {output, truncated, exit_code, wall_time_seconds}", async () => {
		const updates = [];
		const result = await facade.createBashTool(dir).execute("c1", { command: "echo hi" }, undefined, (u) => updates.push(u));
		assert.deepEqual(result.content, [{ type: "text", text: "hi\n" }]);
		assert.equal(result.details, undefined);
		assert.equal(typeof result.structuredContent.wall_time_seconds, "number");
		assert.deepEqual(
			{ ...result.structuredContent, wall_time_seconds: 0 },
			{ output: "hi\n", truncated: false, exit_code: 0, wall_time_seconds: 0 },
		);
		assert.equal(result.isError, undefined);
		assert.deepEqual(updates[0], { content: [], details: undefined });
	});

	it("returns a non-zero exit as an isError result with its structuredContent", async () => {
		const result = await facade.createBashToolDefinition(dir).execute("c1", { command: "echo no; exit 3" });
		assert.deepEqual(result.content, [{ type: "text", text: "no\n\n\nCommand exited with code 3" }]);
		assert.equal(result.isError, true);
		assert.equal(result.structuredContent.exit_code, 3);
		assert.equal(result.structuredContent.output, "no\n");
	});

	it("keeps the whole output (up to 1 MiB) in structuredContent when the text is truncated", async () => {
		const result = await facade.createBashTool(dir).execute("c1", { command: "seq 1 3000" });
		assert.equal(result.details.truncation.totalLines, 3000);
		assert.match(result.content[0].text, /\[Showing lines 1001-3000 of 3000\. Full output: /);
		assert.equal(result.structuredContent.truncated, false);
		assert.equal(result.structuredContent.output.split("\n").length, 3001);
		assert.equal(result.structuredContent.full_output_path, undefined);
	});

	it("throws on timeout and abort (no structuredContent)", async () => {
		await assert.rejects(facade.createBashTool(dir).execute("c1", { command: "sleep 5", timeout: 0.2 }), {
			message: "Command timed out after 0.2 seconds",
		});
	});

	it("runs in ctx.cwd with the session environment, through the wrapped tool too", async () => {
		const ctx = {
			cwd: dir,
			model: { id: "m1", provider: "p1" },
			thinkingLevel: "low",
			sessionManager: { getSessionId: () => "S1", getSessionFile: () => undefined },
		};
		const command = 'echo "$PWD $PI_SESSION_ID $PI_PROVIDER $PI_MODEL $PI_REASONING_LEVEL"';
		const result = await facade.createBashTool("/").execute("c1", { command }, undefined, undefined, ctx);
		assert.equal(result.content[0].text, `${fs.realpathSync(dir)} S1 p1 m1 low\n`);
		const hidden = await facade
			.createBashTool("/", { exposeSessionEnvironment: false })
			.execute("c1", { command: 'echo "[$PI_SESSION_ID]"' }, undefined, undefined, ctx);
		assert.equal(hidden.content[0].text, "[]\n");
	});

	it("applies spawnHook and has 1.6.0's prompt guideline", async () => {
		const tool = facade.createBashTool(dir, {
			spawnHook: (context) => ({ ...context, env: { ...context.env, HOOKED: "yes" } }),
		});
		assert.deepEqual(tool.promptGuidelines, ["You can inspect PI_* environment variables for current model and session details."]);
		const result = await tool.execute("c1", { command: "echo $HOOKED" });
		assert.equal(result.structuredContent.output, "yes\n");
	});
});

describe("tool_execute of the 1.6.0 factories' tools", () => {
	it("passes structuredContent and isError: true on to pi", async () => {
		const { startHost } = await import("./fake-pi.mjs");
		const { pi } = await startHost(["builtin-tools.ts"]);
		try {
			const file = path.join(os.tmpdir(), `pi-tools16-${process.pid}.txt`);
			fs.writeFileSync(file, "x\n");
			const read = await pi.call("tool_execute", { toolName: "read16", toolCallId: "r", params: { path: file } });
			assert.deepEqual(read, { content: [{ type: "text", text: "x\n" }], structuredContent: "x\n" });
			fs.rmSync(file);
			const ok = await pi.call("tool_execute", { toolName: "bash", toolCallId: "b", params: { command: "echo ok" } });
			assert.deepEqual({ ...ok, structuredContent: { ...ok.structuredContent, wall_time_seconds: 0 } }, {
				content: [{ type: "text", text: "ok\n" }],
				structuredContent: { output: "ok\n", truncated: false, exit_code: 0, wall_time_seconds: 0 },
			});
			const failed = await pi.call("tool_execute", { toolName: "bash", toolCallId: "b2", params: { command: "exit 4" } });
			assert.equal(failed.isError, true);
			assert.deepEqual(failed.content, [{ type: "text", text: "(no output)\n\nCommand exited with code 4" }]);
			assert.equal(failed.structuredContent.exit_code, 4);
		} finally {
			pi.stop();
		}
	});
});
