/**
 * Native loading of the host-provided packages (pi-tui, pi-ai, pi-agent-core, typebox and
 * single dist files of pi-coding-agent), shared by the host and every extension.
 *
 * Modules load lazily and synchronously with `require(esm)` (node >= 20.19 / 22.12), so an
 * extension that never touches pi-ai never pays for it. On older nodes `preloadAll()`
 * imports everything up front instead. Each module is loaded once, by node's own loader,
 * so extensions and the host share one instance of every class and global.
 */
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);

/**
 * Whether this node can `require()` an ES module synchronously (`PI_EXT_HOST_NO_REQUIRE_ESM=1`
 * forces the preloading path, for tests).
 */
export const supportsRequireEsm =
	Boolean(process.features?.require_module) && process.env.PI_EXT_HOST_NO_REQUIRE_ESM !== "1";

/** Absolute path of the installed `@mariozechner/pi-coding-agent` package. */
export const piPackageDir = path.resolve(
	path.dirname(fileURLToPath(import.meta.resolve("@mariozechner/pi-coding-agent"))),
	"..",
);

const cache = new Map();
const debug = process.env.PI_EXT_HOST_DEBUG === "1";
const afterLoad = new Map();

/** Resolve a package specifier (honouring `exports` import conditions) to a file path. */
export function resolveSpecifier(spec) {
	return fileURLToPath(import.meta.resolve(spec));
}

/** Load a file (absolute path) natively and synchronously. */
function loadFile(file) {
	if (cache.has(file)) return cache.get(file);
	if (!supportsRequireEsm) {
		throw new Error(`Module ${file} was not preloaded and this node cannot require() ES modules`);
	}
	const started = debug ? performance.now() : 0;
	const mod = require(file);
	if (debug) process.stderr.write(`[pi-ext-host] loaded ${file} in ${Math.round(performance.now() - started)} ms\n`);
	cache.set(file, mod);
	const hook = afterLoad.get(file);
	if (hook) {
		afterLoad.delete(file);
		hook(mod);
	}
	return mod;
}

/** Load a package specifier such as `@mariozechner/pi-tui` or `typebox/compile`. */
export function loadModule(spec) {
	return loadFile(resolveSpecifier(spec));
}

/** Load a file of the pi-coding-agent package by its path under `dist/`. */
export function loadDist(relPath) {
	return loadFile(path.join(piPackageDir, "dist", relPath));
}

/** Absolute path of a pi-coding-agent dist file. */
export function distPath(relPath) {
	return path.join(piPackageDir, "dist", relPath);
}

/** Run `hook(module)` once, right after the module behind `spec` first loads. */
export function onFirstLoad(spec, hook) {
	const file = resolveSpecifier(spec);
	if (cache.has(file)) hook(cache.get(file));
	else afterLoad.set(file, hook);
}

/** Import the given specifiers / dist paths asynchronously (for nodes without require(esm)). */
export async function preloadAll(specs, distFiles = []) {
	const files = [...specs.map(resolveSpecifier), ...distFiles.map(distPath)];
	for (const file of files) {
		if (cache.has(file)) continue;
		const mod = await import(file);
		cache.set(file, mod);
		const hook = afterLoad.get(file);
		if (hook) {
			afterLoad.delete(file);
			hook(mod);
		}
	}
}
