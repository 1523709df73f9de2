/**
 * ctx.ui.theme: outside interactive mode pi sends the theme it painted (pi 1.6.0's
 * non-interactive theme, `Theme::host_spec`) and the host paints with it as 1.6.0 does;
 * without one the host loads pi-coding-agent's theme of the given name.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { startHost } from "./fake-pi.mjs";

async function paint(fields) {
	const { pi } = await startHost(["theme.ts"], fields);
	try {
		await pi.call("command", { name: "paint", args: "" });
		const entry = await pi.waitFor((f) => f.type === "request" && f.params?.customType === "painted");
		return entry.params.data;
	} finally {
		await pi.stop();
	}
}

describe("ctx.ui.theme", () => {
	it("paints with the theme pi sends: palette indices, faint neutrals, default colours", async () => {
		const theme = {
			name: "system",
			mode: "256color",
			fg: { accent: "\x1b[38;5;5m", muted: "\x1b[39m", text: "\x1b[39m" },
			bg: { selectedBg: "\x1b[49m" },
			dim: ["muted"],
		};
		const painted = await paint({ mode: "rpc", themeName: "dark", theme });
		assert.deepEqual(painted, {
			accent: "\x1b[38;5;5ma\x1b[39m",
			muted: "\x1b[39m\x1b[2mm\x1b[22;39m",
			text: "\x1b[39mt\x1b[39m",
			mutedAnsi: "\x1b[39m\x1b[2m",
			selected: "\x1b[49ms\x1b[49m",
			mode: "256color",
		});
	});

	it("loads the named theme when pi sends none", async () => {
		const painted = await paint({ mode: "print", themeName: "dark" });
		assert.match(painted.accent, /^\x1b\[38;[25];[0-9;]+ma\x1b\[39m$/);
		assert.doesNotMatch(painted.muted, /\x1b\[2m/);
	});
});
