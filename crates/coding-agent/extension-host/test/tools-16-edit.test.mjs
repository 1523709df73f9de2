/**
 * The facade's edit, find, grep, ls and write factories declare and answer as pi 1.6.0's
 * (the expected values were taken from pi 1.6.0's own factories on the same inputs), and
 * a built-in re-registered with a factory's prompt texts keeps the built-in's prompt lines.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { hasBuiltinPrompt } from "../lib/builtin-prompts.mjs";
import facade from "../modules/pi-coding-agent.mjs";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-edit16-"));

describe("pi 1.6.0 edit tool", () => {
	it("repairs legacy arguments and gives diff, patch and firstChangedLine", async () => {
		fs.writeFileSync(path.join(dir, "f.txt"), "alpha\nbeta\ngamma\ndelta\n");
		const def = facade.createEditToolDefinition("/nowhere");
		const args = def.prepareArguments({ path: "f.txt", oldText: "beta\n", newText: "BETA\n" });
		assert.deepEqual(args, { path: "f.txt", edits: [{ oldText: "beta\n", newText: "BETA\n" }] });
		// ctx.cwd wins over the folder the tool was made for.
		const result = await def.execute("c1", args, undefined, undefined, { cwd: dir });
		assert.deepEqual(result, {
			content: [{ type: "text", text: "Successfully replaced 1 block(s) in f.txt." }],
			details: {
				diff: " 1 alpha\n-2 beta\n+2 BETA\n 3 gamma\n 4 delta",
				patch: "--- f.txt\n+++ f.txt\n@@ -1,4 +1,4 @@\n alpha\n-beta\n+BETA\n gamma\n delta\n",
				firstChangedLine: 2,
			},
		});
		assert.equal(fs.readFileSync(path.join(dir, "f.txt"), "utf8"), "alpha\nBETA\ngamma\ndelta\n");
	});

	it("edits through the caller's operations", async () => {
		const files = new Map([["/remote/r.txt", "one\r\ntwo\r\n"]]);
		const operations = {
			readFile: async (file) => Buffer.from(files.get(file)),
			writeFile: async (file, content) => void files.set(file, content),
			access: async (file) => {
				if (!files.has(file)) throw Object.assign(new Error("missing"), { code: "ENOENT" });
			},
		};
		const tool = facade.createEditTool("/remote", { operations });
		const result = await tool.execute("c2", { path: "r.txt", edits: [{ oldText: "two", newText: "TWO" }] });
		assert.equal(files.get("/remote/r.txt"), "one\r\nTWO\r\n");
		assert.equal(result.details.patch, "--- r.txt\n+++ r.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
	});

	it("declares 1.6.0's schema and prompt texts", () => {
		const def = facade.createEditToolDefinition(dir);
		assert.equal(
			def.parameters.properties.edits.items.properties.newText.description,
			"Replacement text for this targeted edit.",
		);
		assert.deepEqual(def.constrainedSampling, { type: "json_schema", strict: "prefer" });
		assert.equal(def.promptGuidelines.length, 2);
	});
});

describe("pi 1.6.0 find, grep, ls and write declarations", () => {
	it("have 1.6.0's parameter descriptions and run in ctx.cwd", async () => {
		const find = facade.createFindToolDefinition("/nowhere");
		assert.equal(
			find.parameters.properties.pattern.description,
			"Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. Without '/', e.g. '*.ts', it matches file names at any depth",
		);
		const ls = facade.createLsTool("/nowhere");
		fs.writeFileSync(path.join(dir, "listed.txt"), "x");
		const listed = await ls.execute("c3", {}, undefined, undefined, { cwd: dir });
		assert.match(listed.content[0].text, /listed\.txt/);
		const write = facade.createWriteToolDefinition(dir);
		assert.deepEqual(write.promptGuidelines, ["Use write only for new files or complete rewrites."]);
	});
});

describe("built-in prompt texts", () => {
	it("are recognised on a re-registered built-in, not once changed", () => {
		const bash = facade.createBashToolDefinition(dir);
		assert.equal(hasBuiltinPrompt(bash), true);
		assert.equal(hasBuiltinPrompt({ ...bash, promptSnippet: "Run commands on the build host" }), false);
		assert.equal(hasBuiltinPrompt({ ...facade.createEditToolDefinition(dir) }), true);
		assert.equal(hasBuiltinPrompt({ ...bash, name: "remote_bash" }), false);
	});
});
