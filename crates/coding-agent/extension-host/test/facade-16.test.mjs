/**
 * The names pi 1.6.0's package index added, as the facade gives them to extensions.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import facade from "../modules/pi-coding-agent.mjs";
import { DIST, OWN } from "../modules/pi-coding-agent-16.mjs";

describe("pi 1.6.0 exports", () => {
	it("every added name is there", () => {
		for (const name of [...Object.keys(DIST), ...Object.keys(OWN)]) {
			assert.notEqual(facade[name], undefined, name);
		}
		assert.equal(facade.CONFIG_DIR_NAME, ".pi");
		assert.equal(typeof facade.getDocsPath(), "string");
	});

	it("gives the built-in tool factories' tools strict sampling as 1.6.0", () => {
		for (const name of ["createReadTool", "createBashToolDefinition", "createEditTool", "createWriteToolDefinition"]) {
			const tool = facade[name](os.tmpdir());
			assert.deepEqual(tool.constrainedSampling, { type: "json_schema", strict: "prefer" }, name);
			assert.equal(typeof tool.execute, "function", name);
		}
		assert.equal(facade.createGrepTool(os.tmpdir()).constrainedSampling, undefined);
	});

	it("formats read ranges as 1.6.0", () => {
		const range = facade.formatReadLineRange;
		assert.equal(range(undefined, undefined), "");
		assert.equal(range(5, undefined), ":5");
		assert.equal(range(undefined, 3), ":1-3");
		assert.equal(range("10", "2"), ":10-11");
		assert.equal(range("x", 2), "");
	});

	it("makes a unified patch with file headers only", () => {
		const patch = facade.generateUnifiedPatch("a.txt", "one\ntwo\n", "one\nthree\n");
		assert.equal(patch, "--- a.txt\n+++ a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n");
	});

	it("reads a stored credential, a byte order mark and all", () => {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "facade16-"));
		const auth = path.join(dir, "auth.json");
		fs.writeFileSync(auth, '\uFEFF{"mock":{"type":"api_key","key":"k"}}');
		assert.deepEqual(facade.readStoredCredential("mock", auth), { type: "api_key", key: "k" });
		assert.equal(facade.readStoredCredential("other", auth), undefined);
		assert.equal(facade.readStoredCredential("mock", path.join(dir, "missing.json")), undefined);
		fs.rmSync(dir, { recursive: true });
	});

	it("keeps the small helpers' meaning", () => {
		assert.equal(facade.isPowerShellToolResult({ toolName: "powershell" }), true);
		assert.equal(facade.isPowerShellToolResult({ toolName: "bash" }), false);
		assert.equal(facade.VIRTUAL_MODEL_STATE_ENTRY, "pi.virtual-model-state");
		const error = new facade.CredentialSynchronizationError("p", "login", { type: "api_key" });
		assert.equal(error.message, "Credential login committed for p, but local synchronization failed");
		assert.equal(error.name, "CredentialSynchronizationError");
	});
});
