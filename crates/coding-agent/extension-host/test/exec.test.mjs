/**
 * `pi.exec` as the host runs it: exit codes as a shell reports them, a signal included.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { constants } from "node:buffer";
import { DEFAULT_EXEC_MAX_BUFFER, execCommand } from "../lib/exec.mjs";

describe("pi.exec", () => {
	it("reports a normal exit's code and output", async () => {
		const result = await execCommand("sh", ["-c", "echo out; echo err >&2; exit 3"], "/", {});
		assert.deepEqual(result, { stdout: "out\n", stderr: "err\n", code: 3, killed: false, truncated: false });
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

	it("caps stdout and stderr together at maxBuffer bytes and marks the result truncated", async () => {
		const result = await execCommand("sh", ["-c", "printf abc; printf def >&2; exec sleep 30"], "/", { maxBuffer: 4 });
		assert.equal(result.truncated, true);
		assert.equal(result.stdout.length + result.stderr.length, 4);
		assert.ok("abc".startsWith(result.stdout) && "def".startsWith(result.stderr), JSON.stringify(result));
		assert.equal(result.killed, true);
		assert.equal(result.code, 143);
	});

	it("turns the exit code 0 of a truncated run into 1", async () => {
		const result = await execCommand("sh", ["-c", "printf 0123456789"], "/", { maxBuffer: 0 });
		assert.equal(result.truncated, true);
		assert.equal(result.stdout, "");
		assert.notEqual(result.code, 0);
	});

	it("caps output at 256 MiB by default", async () => {
		assert.equal(DEFAULT_EXEC_MAX_BUFFER, Math.min(256 * 1024 * 1024, constants.MAX_STRING_LENGTH));
	});

	it("rejects a maxBuffer that is not a byte count", async () => {
		for (const maxBuffer of [-1, 1.5, constants.MAX_STRING_LENGTH + 1]) {
			await assert.rejects(execCommand("true", [], "/", { maxBuffer }), RangeError);
		}
	});

	it("keeps a UTF-8 character whole when it is split between chunks", async () => {
		const script = "for i in 1 2 3; do printf '\\303'; sleep 0.05; printf '\\251'; done";
		const result = await execCommand("sh", ["-c", script], "/", {});
		assert.equal(result.stdout, "\u00e9\u00e9\u00e9");
	});

	it("reports why a command could not be spawned on stderr", async () => {
		const result = await execCommand("pi-no-such-command-37", [], "/", {});
		assert.deepEqual(result, {
			stdout: "",
			stderr: "spawn pi-no-such-command-37 ENOENT",
			code: 1,
			killed: false,
			truncated: false,
		});
	});

	it("sends SIGKILL 5 s after a SIGTERM the command ignores", async () => {
		const started = Date.now();
		const result = await execCommand("sh", ["-c", "trap '' TERM; exec sleep 30"], "/", { timeout: 50 });
		const took = Date.now() - started;
		assert.equal(result.killed, true);
		assert.equal(result.code, 137);
		assert.ok(took >= 5000 && took < 15000, `took ${took} ms`);
	});
});
