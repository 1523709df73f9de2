/**
 * Registration as pi 1.6.0 checks and commits it: registrations that cannot work throw when
 * made; what a factory does beyond its own record (flag defaults, providers, bus
 * subscriptions) takes effect only when the factory succeeds; a bus handler's error is an
 * extension error.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createExtensionAPI } from "../lib/api.mjs";
import { createEventBus } from "../lib/event-bus.mjs";
import { createExtensionRecord } from "../lib/registry.mjs";

const PATH = "/ext/x.ts";

function setup() {
	const providers = [];
	const errors = [];
	const runtime = {
		generation: 0,
		bound: false,
		flagValues: new Map(),
		registry: { changed() {} },
		refreshTools() {},
		registerProvider: (name, config, extensionPath) => providers.push({ name, extensionPath }),
		unregisterProvider() {},
		emitError: (error) => errors.push(error),
	};
	const eventBus = createEventBus();
	const extension = createExtensionRecord({ path: PATH }, PATH);
	const load = createExtensionAPI(extension, runtime, { cwd: () => "/", eventBus });
	return { load, runtime, eventBus, extension, providers, errors };
}

describe("registration checks", () => {
	it("rejects a flag default that does not match the flag's type", () => {
		const { load } = setup();
		assert.throws(() => load.api.registerFlag("level", { type: "string", default: 3 }), {
			message: 'Invalid default for flag "level": expected string, got number',
		});
		assert.doesNotThrow(() => load.api.registerFlag("loud", { type: "boolean", default: false }));
	});

	it("rejects a tool without an object parameter schema", () => {
		const { load } = setup();
		for (const parameters of [undefined, null, [], "x"]) {
			assert.throws(() => load.api.registerTool({ name: "bare", parameters }), {
				message: `Tool "bare" registered by extension "${PATH}" must define an object parameter schema.`,
			});
		}
	});

	it("rejects a command without a string name or a handler", () => {
		const { load } = setup();
		assert.throws(() => load.api.registerCommand({ handler() {} }), /must have a non-empty string name/);
		assert.throws(() => load.api.registerCommand("", { handler() {} }), /must have a non-empty string name/);
		assert.throws(() => load.api.registerCommand("x", { description: "d" }), {
			message: `Command "/x" registered by extension "${PATH}" must define handler().`,
		});
	});
});

describe("a factory's effects", () => {
	it("take effect when the factory succeeds", () => {
		const { load, runtime, providers } = setup();
		load.api.registerFlag("name", { type: "string", default: "d" });
		load.api.registerProvider("p", { baseUrl: "http://x" });
		assert.equal(runtime.flagValues.has("name"), false);
		assert.equal(load.api.getFlag("name"), "d");
		assert.deepEqual(providers, []);
		load.commit();
		assert.equal(runtime.flagValues.get("name"), "d");
		assert.deepEqual(providers, [{ name: "p", extensionPath: PATH }]);
	});

	it("are dropped when the factory throws, and its pi object stops working", async () => {
		const { load, runtime, eventBus, providers } = setup();
		const heard = [];
		load.api.registerFlag("name", { type: "string", default: "d" });
		load.api.registerProvider("p", { baseUrl: "http://x" });
		load.api.events.on("ping", (data) => heard.push(data));
		load.discard();
		eventBus.emit("ping", 1);
		await new Promise((resolve) => setImmediate(resolve));
		assert.deepEqual(heard, []);
		assert.equal(runtime.flagValues.has("name"), false);
		assert.deepEqual(providers, []);
		assert.throws(() => load.api.on("input", () => {}), {
			message: `Extension "${PATH}" failed to load and its API is no longer active.`,
		});
	});
});

describe("pi.events", () => {
	it("reports a throwing handler as an extension error of events:<channel>", async () => {
		const { load, errors } = setup();
		load.api.events.on("boom", () => {
			throw new Error("bus handler failed");
		});
		load.commit();
		load.api.events.emit("boom", {});
		await new Promise((resolve) => setImmediate(resolve));
		assert.equal(errors.length, 1);
		assert.equal(errors[0].extensionPath, PATH);
		assert.equal(errors[0].event, "events:boom");
		assert.equal(errors[0].error, "bus handler failed");
	});
});
