/**
 * What extensions get for `import ... from "@mariozechner/pi-coding-agent"` (or the
 * `@earendil-works/` name).
 *
 * Importing the real package index costs ~1.2 s and ~90 MB because it pulls in the whole
 * agent. This facade exposes every name of the real index (0.73.1), plus `theme` and the
 * names pi 1.6.0's index added (./pi-coding-agent-16.mjs), as lazy getters: the first
 * access of a name loads only the dist file that defines it (found by following the
 * index's re-export chain), so `getAgentDir` costs a few ms and `DynamicBorder` only the
 * theme. Values are the real implementations, not copies.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { distPath, loadDist, piPackageDir, supportsRequireEsm } from "../lib/native.mjs";
import { ensureKeybindings } from "../lib/theme.mjs";
import { DIST as DIST_16, OWN as OWN_16, STRICT_FACTORIES, withStrictSampling } from "./pi-coding-agent-16.mjs";

const distDir = path.join(piPackageDir, "dist");
const parsed = new Map();

/** Parse the export / import statements of a compiled dist file (plain tsc output). */
function parseFile(file) {
	if (parsed.has(file)) return parsed.get(file);
	const text = fs.readFileSync(file, "utf8");
	const info = { reexports: new Map(), stars: [], imports: new Map(), localExports: new Map(), declared: new Set() };
	const specList = (list) =>
		list
			.split(",")
			.map((part) => part.replace(/\/\/.*$/gm, "").trim())
			.filter((part) => part && !part.startsWith("type "))
			.map((part) => {
				const [orig, alias] = part.split(/\s+as\s+/);
				return [orig.trim(), (alias ?? orig).trim()];
			});
	for (const m of text.matchAll(/export\s*\{([^}]*)\}\s*from\s*["']([^"']+)["']/g)) {
		const source = path.resolve(path.dirname(file), m[2]);
		for (const [orig, alias] of specList(m[1])) info.reexports.set(alias, { source, name: orig });
	}
	for (const m of text.matchAll(/export\s*\*\s*from\s*["']([^"']+)["']/g)) {
		info.stars.push(path.resolve(path.dirname(file), m[1]));
	}
	for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*["'](\.[^"']+)["']/g)) {
		const source = path.resolve(path.dirname(file), m[2]);
		for (const [orig, alias] of specList(m[1])) info.imports.set(alias, { source, name: orig });
	}
	for (const m of text.matchAll(/export\s*\{([^}]*)\}\s*;/g)) {
		for (const [orig, alias] of specList(m[1])) info.localExports.set(alias, orig);
	}
	for (const m of text.matchAll(/export\s+(?:async\s+)?(?:function\*?|class|const|let|var)\s+([A-Za-z_$][\w$]*)/g)) {
		info.declared.add(m[1]);
	}
	parsed.set(file, info);
	return info;
}

/** Follow re-exports from `file` to the file that defines `name`. */
function resolveExport(file, name, depth = 0) {
	if (depth > 20 || !fs.existsSync(file)) return undefined;
	const info = parseFile(file);
	if (info.declared.has(name)) return { file, name };
	const re = info.reexports.get(name);
	if (re) return resolveExport(re.source, re.name, depth + 1) ?? { file: re.source, name: re.name };
	const local = info.localExports.get(name);
	if (local !== undefined) {
		const imported = info.imports.get(local);
		if (imported) return resolveExport(imported.source, imported.name, depth + 1) ?? { file: imported.source, name: imported.name };
		return { file, name: local };
	}
	for (const star of info.stars) {
		const found = resolveExport(star, name, depth + 1);
		if (found) return found;
	}
	return undefined;
}

/** Names exported by the real index, in the order it lists them. */
function indexNames() {
	const info = parseFile(path.join(distDir, "index.js"));
	return [...info.reexports.keys(), ...info.declared];
}

/** Extra names the real index lacks but extensions reach for: `theme`, and 1.6.0's. */
const EXTRAS = { theme: { file: distPath("modes/interactive/theme/theme.js"), name: "theme" } };
for (const [name, file] of Object.entries(DIST_16)) EXTRAS[name] ??= { file: distPath(file), name };

/** The dist files the extras live in (preloaded where node cannot require ES modules). */
export const EXTRA_DIST_FILES = [...new Set(Object.values(EXTRAS).map((extra) => path.relative(distDir, extra.file)))];

function loadValue(name) {
	const value = loadRawValue(name);
	return STRICT_FACTORIES.has(name) ? withStrictSampling(value) : value;
}

function loadRawValue(name) {
	if (OWN_16[name]) return OWN_16[name]();
	// Without require(esm) the host preloaded the whole index and the extras' files.
	if (!supportsRequireEsm) {
		const extra = EXTRAS[name];
		return extra ? loadDist(path.relative(distDir, extra.file))[extra.name] : loadDist("index.js")[name];
	}
	const target = EXTRAS[name] ?? resolveExport(path.join(distDir, "index.js"), name);
	if (!target) return loadDist("index.js")[name];
	const rel = path.relative(distDir, target.file);
	if (rel.startsWith("modes") || rel.startsWith("core/keybindings")) ensureKeybindings();
	const mod = loadDist(rel);
	return target.name in mod ? mod[target.name] : loadDist("index.js")[name];
}

/** Build the facade object: one lazy, self-replacing getter per export. */
function buildFacade() {
	const facade = {};
	Object.defineProperty(facade, "__esModule", { value: true });
	const names = new Set([...indexNames(), ...Object.keys(EXTRAS), ...Object.keys(OWN_16)]);
	for (const name of names) {
		Object.defineProperty(facade, name, {
			configurable: true,
			enumerable: true,
			get() {
				const value = loadValue(name);
				Object.defineProperty(facade, name, { value, enumerable: true, configurable: true, writable: false });
				return value;
			},
		});
	}
	return facade;
}

const facade = buildFacade();
export default facade;
