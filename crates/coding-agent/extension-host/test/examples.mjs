/**
 * Finds the entry points of pi's example extensions with pi's discovery rules: direct
 * `*.ts` / `*.js` files, and subdirectories with a `package.json` `pi.extensions` list or
 * an `index.ts` / `index.js`. Default folder: the examples shipped in the installed
 * pi-coding-agent package; `PI_EXT_EXAMPLES_DIR` overrides it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { hostDir } from "./fake-pi.mjs";

export function examplesDir() {
	return (
		process.env.PI_EXT_EXAMPLES_DIR ??
		path.join(hostDir, "node_modules", "@mariozechner", "pi-coding-agent", "examples", "extensions")
	);
}

export function discoverExtensions(dir) {
	const found = [];
	for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
		const full = path.join(dir, entry.name);
		if (entry.isFile() && /\.(ts|js)$/.test(entry.name)) {
			found.push(full);
		} else if (entry.isDirectory()) {
			const pkgPath = path.join(full, "package.json");
			if (fs.existsSync(pkgPath)) {
				const declared = JSON.parse(fs.readFileSync(pkgPath, "utf8")).pi?.extensions ?? [];
				const entries = declared.map((p) => path.resolve(full, p)).filter((p) => fs.existsSync(p));
				if (entries.length > 0) {
					found.push(...entries);
					continue;
				}
			}
			for (const index of ["index.ts", "index.js"]) {
				if (fs.existsSync(path.join(full, index))) {
					found.push(path.join(full, index));
					break;
				}
			}
		}
	}
	return found;
}
