/**
 * What crosses the channel beyond events: custom providers (queued during load, streamed
 * on request), user_bash operations kept in the host, and registrations made after init.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { startHost } from "./fake-pi.mjs";

describe("bridges", () => {
	let pi;
	let result;
	const fakePiBinary = path.join(os.tmpdir(), `fake-pi-${process.pid}.sh`);
	before(async () => {
		fs.writeFileSync(fakePiBinary, '#!/bin/sh\necho "rust pi $*"\nexit 4\n', { mode: 0o755 });
		({ pi, result } = await startHost(["bridges.ts"], {}, { PI_EXT_HOST_PI: fakePiBinary }));
	});
	after(async () => {
		await pi.stop();
		fs.rmSync(fakePiBinary, { force: true });
	});

	it("reports providers registered during loading in the init answer", () => {
		assert.equal(result.providers.length, 1);
		const [provider] = result.providers;
		assert.equal(provider.name, "echo-provider");
		assert.equal(provider.config.hasStreamSimple, true);
		assert.equal(provider.config.models[0].id, "echo-1");
		assert.equal(provider.config.streamSimple, undefined);
	});

	it("streams a provider's events and answers with the final message", async () => {
		const { id, response } = pi.start_request("provider_stream", {
			provider: "echo-provider",
			model: { id: "echo-1", provider: "echo-provider" },
			context: { messages: [{ role: "user", content: "hi" }] },
			options: {},
		});
		const frame = await response;
		assert.deepEqual(frame.result.message.content, [{ type: "text", text: "echo from echo-1: hi" }]);
		const events = pi.framesOf("provider_event").filter((f) => f.id === id);
		assert.deepEqual(
			events.map((f) => f.event.type),
			["start", "text_delta", "done"],
		);
	});

	it("keeps user_bash operations in the host and runs them on bash_exec", async () => {
		assert.equal(await pi.call("event", { event: { type: "user_bash", command: "ls", excludeFromContext: false, cwd: "/" } }), null);
		const answer = await pi.call("event", { event: { type: "user_bash", command: "remote ls", excludeFromContext: false, cwd: "/" } });
		assert.deepEqual(Object.keys(answer), ["operations"]);
		const { id, response } = pi.start_request("bash_exec", { handle: answer.operations.handle, command: "remote ls", cwd: "/" });
		assert.deepEqual((await response).result, { exitCode: 7 });
		assert.deepEqual(
			pi.framesOf("bash_data").filter((f) => f.id === id).map((f) => f.data),
			["ran remote ls\n"],
		);
	});

	it("announces a tool registered after init before answering the event", async () => {
		const { response } = pi.start_request("event", { event: { type: "session_start", reason: "startup" } });
		const frame = await response;
		const registrations = pi.framesOf("registrations");
		assert.equal(registrations.length, 1);
		assert.ok(pi.frames.indexOf(registrations[0]) < pi.frames.indexOf(frame));
		assert.deepEqual(
			registrations[0].extensions[0].tools.map((t) => t.name),
			["late_tool"],
		);
		const out = await pi.call("tool_execute", { toolName: "late_tool", toolCallId: "l1", params: {} });
		assert.deepEqual(out.content, [{ type: "text", text: "late" }]);
	});

	it("lets `node process.argv[1] ...` start the Rust pi (PI_EXT_HOST_PI)", async () => {
		await pi.call("command", { name: "child-pi", args: "" });
		const entry = await pi.waitFor((f) => f.type === "request" && f.params?.customType === "child-pi");
		assert.deepEqual(entry.params.data, { stdout: "rust pi --mode json\n", code: 4 });
	});
});
