/**
 * `pi.on()` returns a function that removes only that registration (pi 1.6.0).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startHost } from "./fake-pi.mjs";

describe("pi.on unsubscribe", () => {
	let pi;
	before(async () => {
		({ pi } = await startHost(["once.ts"]));
	});
	after(() => pi.stop());

	it("a handler that unsubscribes runs once, the other keeps running", async () => {
		const appended = (customType) =>
			pi.framesOf("request").filter((f) => f.method === "appendEntry" && f.params.customType === customType).length;
		for (let i = 0; i < 3; i++) await pi.call("event", { event: { type: "agent_end", messages: [] } });
		assert.equal(appended("once-ran"), 1);
		assert.equal(appended("kept-ran"), 3);
	});
});
