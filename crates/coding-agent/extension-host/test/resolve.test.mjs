/**
 * Module resolution through the host's jiti, as optimize.mjs leaves it: an extension's
 * `import "./x.js"` of its own `x.ts` takes the shortcut, and wherever jiti would pick another
 * file (a real `x.js`, an `x.js.ts`) it still does.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { getJiti } from "../lib/loader.mjs";
import { hostDir } from "./fake-pi.mjs";

const jitiFile = createRequire(path.join(hostDir, "package.json")).resolve("jiti/package.json").replace(/package\.json$/, "dist/jiti.cjs");

describe("resolving an extension's own modules", () => {
	let dir;
	const write = (name, text) => {
		fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
		fs.writeFileSync(path.join(dir, name), text);
	};
	before(() => {
		dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pi-resolve-test-")));
		write("twin.ts", 'export const from: string = "twin.ts";\n');
		write("both.js", 'export const from = "both.js";\n');
		write("both.ts", 'export const from: string = "both.ts";\n');
		write("odd.js.ts", 'export const from: string = "odd.js.ts";\n');
		write("odd.ts", 'export const from: string = "odd.ts";\n');
		write("lib/deep.mts", 'export const from: string = "lib/deep.mts";\n');
		write("real/linked.ts", 'export const from: string = "real/linked.ts";\n');
		fs.symlinkSync(path.join(dir, "real", "linked.ts"), path.join(dir, "linked.ts"));
		write(
			"main.ts",
			[
				'import { from as twin } from "./twin.js";',
				'import { from as both } from "./both.js";',
				'import { from as odd } from "./odd.js";',
				'import { from as deep } from "./lib/deep.mjs";',
				'import { from as linked } from "./linked.js";',
				"export default { twin, both, odd, deep, linked };",
			].join("\n"),
		);
	});
	after(() => fs.rmSync(dir, { recursive: true, force: true }));

	it("loads the TypeScript twin of a .js import, and a real .js first", async () => {
		const loaded = await getJiti().import(path.join(dir, "main.ts"), { default: true });
		assert.deepEqual(loaded, {
			twin: "twin.ts",
			both: "both.js",
			odd: "odd.js.ts",
			deep: "lib/deep.mts",
			linked: "real/linked.ts",
		});
	});

	it("resolves the twin to its real path, as node's resolver does", () => {
		const resolved = getJiti().resolve("./linked.js", { parentURL: new URL(`file://${path.join(dir, "main.ts")}`) });
		assert.equal(resolved, path.join(dir, "real", "linked.ts"));
	});

	it("runs with the shortcut installed when optimize.mjs ran", { skip: !fs.existsSync(`${jitiFile}.pi-orig`) }, () => {
		assert.match(fs.readFileSync(jitiFile, "utf8"), /piResolveTsTwin/);
	});
});
