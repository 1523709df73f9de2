/**
 * Autocomplete providers extensions stack (`ctx.ui.addAutocompleteProvider`): pi is told
 * once, asks with `autocomplete`, and gets their suggestions or null (its own completion).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startHost } from "./fake-pi.mjs";

describe("autocomplete providers", () => {
	let pi;
	before(async () => {
		({ pi } = await startHost(["autocomplete.ts"], { mode: "interactive" }));
	});
	after(() => pi.stop());

	it("tells pi, then answers with the stacked provider's suggestions or defers", async () => {
		await pi.call("event", { event: { type: "session_start", reason: "startup" } });
		await pi.waitFor((f) => f.type === "ui" && f.method === "setAutocomplete" && f.params.active === true);
		const found = await pi.call("autocomplete", { lines: ["fix #4"], cursorLine: 0, cursorCol: 6, force: false });
		assert.deepEqual(found, { prefix: "#4", items: [{ value: "#42", label: "#42", description: "the answer" }] });
		const deferred = await pi.call("autocomplete", { lines: ["/hotk"], cursorLine: 0, cursorCol: 5, force: false });
		assert.equal(deferred, null);
	});
});
