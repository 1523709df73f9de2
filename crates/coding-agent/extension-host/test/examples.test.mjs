/**
 * Every example extension shipped with pi 0.73.1 (`examples/extensions`, or the folder in
 * `PI_EXT_EXAMPLES_DIR`) loads in one host, in each mode, with no load error except the ones
 * that need their own `npm install` (sandbox/, with-deps/ when `ms` is not installed).
 * Skipped when the folder is absent.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { describe, it } from "node:test";
import { discoverExtensions, examplesDir } from "./examples.mjs";
import { FakePi } from "./fake-pi.mjs";

const dir = examplesDir();
const present = fs.existsSync(dir);
/** Examples whose dependencies are not part of pi: they need `npm install` in their folder. */
const NEEDS_INSTALL = /\/(sandbox|with-deps)\//;

describe("pi's example extensions", { skip: present ? false : `no examples at ${dir}` }, () => {
	for (const mode of ["print", "rpc", "interactive"]) {
		it(`all load in ${mode} mode`, async () => {
			const paths = discoverExtensions(dir);
			assert.ok(paths.length >= 70, `found only ${paths.length} examples`);
			const pi = await new FakePi().start();
			try {
				const result = await pi.init(paths, { mode });
				const unexpected = result.errors.filter((e) => !NEEDS_INSTALL.test(e.path));
				assert.deepEqual(unexpected, []);
				assert.equal(result.extensions.length + result.errors.length, paths.length);
				const count = (key) => result.extensions.reduce((n, ext) => n + ext[key].length, 0);
				assert.ok(count("commands") >= 40, "commands registered");
				assert.ok(count("tools") >= 20, "tools registered");
				assert.ok(result.providers.length >= 1, "providers queued during load");
				// A session start runs every session_start handler without crashing the host.
				await pi.call("event", { event: { type: "session_start", reason: "startup" } });
				assert.equal((await pi.call("ping")).pong, true);
			} finally {
				await pi.stop();
			}
		});
	}
});
