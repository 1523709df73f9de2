/**
 * `ui_prompt_start` / `ui_prompt_end` (pi 1.6.0): extensions hear when pi waits on a dialog
 * or custom screen an extension opened, so status integrations can say "waiting for the
 * user". Nested or overlapping prompts make one span, named by the outer prompt. The
 * events are notifications: handlers are not awaited before the prompt shows or closes.
 */

const PROMPTS = ["select", "confirm", "input", "editor", "custom"];

/**
 * Wraps the blocking methods of `ui` so each call runs inside a prompt span.
 * @param {object} ui a `ctx.ui` object (rpc or interactive)
 * @param {(event: object) => void} emit sends an event to every extension's handlers
 */
export function withPromptSpans(ui, emit) {
	let depth = 0;
	let outer;
	const enter = (kind, title) => {
		if (depth++ === 0) {
			outer = { type: "ui_prompt_start", reason: "ui_prompt", kind, ...(typeof title === "string" ? { title } : {}) };
			emit(outer);
		}
	};
	const leave = () => {
		if (--depth === 0) emit({ ...outer, type: "ui_prompt_end" });
	};
	for (const kind of PROMPTS) {
		const original = ui[kind];
		if (typeof original !== "function") continue;
		ui[kind] = (...args) => {
			enter(kind, kind === "custom" ? undefined : args[0]);
			let pending;
			try {
				pending = Promise.resolve(original.apply(ui, args));
			} catch (err) {
				leave();
				throw err;
			}
			return pending.finally(leave);
		};
	}
	return ui;
}
