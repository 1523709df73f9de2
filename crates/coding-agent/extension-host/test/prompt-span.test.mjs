/**
 * `ui_prompt_start` / `ui_prompt_end` around the blocking `ctx.ui` calls (pi 1.6.0).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { withPromptSpans } from "../lib/ui/prompt-span.mjs";

/** A ui whose dialogs wait until `answer` is called; `events` collects what was emitted. */
function fakeUI() {
	const waiting = [];
	const ask = (value) => new Promise((resolve) => waiting.push(() => resolve(value)));
	const ui = {
		select: () => ask("a"),
		confirm: () => ask(true),
		input: () => ask("typed"),
		editor: () => ask("edited"),
		custom: () => ask(undefined),
		notify: () => {},
	};
	const events = [];
	withPromptSpans(ui, (event) => events.push(event));
	return { ui, events, answer: () => waiting.shift()() };
}

describe("prompt spans", () => {
	it("a dialog is one span named by its kind and title", async () => {
		const { ui, events, answer } = fakeUI();
		const pending = ui.confirm("Proceed?", "Really?");
		assert.deepEqual(events, [{ type: "ui_prompt_start", reason: "ui_prompt", kind: "confirm", title: "Proceed?" }]);
		answer();
		assert.equal(await pending, true);
		assert.deepEqual(events[1], { type: "ui_prompt_end", reason: "ui_prompt", kind: "confirm", title: "Proceed?" });
		assert.equal(events.length, 2);
	});

	it("overlapping prompts make one span, named by the outer one", async () => {
		const { ui, events, answer } = fakeUI();
		const first = ui.select("Pick", ["a", "b"]);
		const second = ui.custom(() => ({}));
		answer();
		await first;
		assert.equal(events.length, 1, "the span stays open while the custom screen waits");
		answer();
		await second;
		assert.deepEqual(
			events.map((e) => [e.type, e.kind, e.title]),
			[
				["ui_prompt_start", "select", "Pick"],
				["ui_prompt_end", "select", "Pick"],
			],
		);
	});

	it("non-blocking calls open no span", () => {
		const { ui, events } = fakeUI();
		ui.notify("hello");
		assert.deepEqual(events, []);
	});
});
