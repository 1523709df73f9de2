/**
 * `pi.exec` as the host runs it: exit codes as a shell reports them, a signal included.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { execCommand } from "../lib/exec.mjs";

describe("pi.exec", () => {
	it("reports a normal exit's code and output", async () => {
		const result = await execCommand("sh", ["-c", "echo out; echo err >&2; exit 3"], "/", {});
		assert.deepEqual(result, { stdout: "out\n", stderr: "err\n", code: 3, killed: false });
	});

	it("reports a child ended by a signal as 128 + the signal number", async () => {
		const terminated = await execCommand("sh", ["-c", "kill -TERM $$"], "/", {});
		assert.equal(terminated.code, 143);
		const killed = await execCommand("sh", ["-c", "kill -KILL $$"], "/", {});
		assert.equal(killed.code, 137);
	});

	it("reports a timed-out command as killed by SIGTERM", async () => {
		const result = await execCommand("sleep", ["5"], "/", { timeout: 50 });
		assert.equal(result.killed, true);
		assert.equal(result.code, 143);
	});
});
