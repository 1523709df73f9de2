/**
 * Loading extensions: one shared jiti instance (TypeScript without a build step, with an
 * on-disk transform cache), the host-provided packages as lazy virtual modules, and each
 * extension's default export awaited as its factory with its own `pi` object.
 *
 * Like pi 0.73.1 the module cache is off (`moduleCache: false`): every extension evaluates
 * its own copy of its files and npm dependencies, so one extension's module state never
 * leaks into another's. Errors use pi's messages ("Failed to load extension: ...",
 * "Extension does not export a valid factory function: ...").
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { createExtensionAPI } from "./api.mjs";
import { createVirtualModules } from "./modules.mjs";
import { createExtensionRecord } from "./registry.mjs";

const hostDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// jiti's CommonJS entry: importing its ES entry would make node lex its 190 kB bundle for
// named exports on every start.
const { createJiti } = createRequire(import.meta.url)("jiti");

let sharedJiti;

/** The jiti cache folder: `PI_EXT_HOST_CACHE`, else the host's node_modules/.cache/jiti. */
function cacheDir() {
	if (process.env.PI_EXT_HOST_CACHE) return process.env.PI_EXT_HOST_CACHE;
	const modules = path.join(hostDir, "node_modules");
	return fs.existsSync(modules) ? path.join(modules, ".cache", "jiti") : true;
}

export function getJiti() {
	sharedJiti ??= createJiti(import.meta.url, {
		moduleCache: process.env.PI_EXT_HOST_MODULE_CACHE === "1",
		fsCache: cacheDir(),
		virtualModules: createVirtualModules(),
	});
	return sharedJiti;
}

// Factories already imported, by file, for the folder they were loaded in: a session
// replaced in the same folder runs them again without evaluating their modules again
// (module state survives, each run still gets a fresh `pi`), as pi 0.79.9 does. `/reload`
// and a change of folder start afresh.
const factoryCache = new Map();
let factoryCacheCwd;

/** Forgets the imported factories (`/reload`): the next load evaluates every module again. */
export function clearFactoryCache() {
	factoryCache.clear();
	factoryCacheCwd = undefined;
}

/** The factory a file exports (imported once per folder), or whatever else it exports. */
async function importFactory(file, cwd) {
	if (factoryCacheCwd !== cwd) {
		clearFactoryCache();
		factoryCacheCwd = cwd;
	}
	const cached = factoryCache.get(file);
	if (cached) return cached;
	const factory = await getJiti().import(file, { default: true });
	if (typeof factory === "function") factoryCache.set(file, factory);
	return factory;
}

/** pi's path normalisation: unicode spaces, `~`, relative to cwd. */
export function resolveExtensionPath(extPath, cwd) {
	const normalized = extPath.replace(/[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g, " ");
	let expanded = normalized;
	if (normalized.startsWith("~/")) expanded = path.join(os.homedir(), normalized.slice(2));
	else if (normalized.startsWith("~")) expanded = path.join(os.homedir(), normalized.slice(1));
	return path.isAbsolute(expanded) ? expanded : path.resolve(cwd, expanded);
}

/** The file a path names through its links; the path itself when it cannot be read. */
function realPath(file) {
	try {
		return fs.realpathSync(file);
	} catch {
		return file;
	}
}

/**
 * Load one extension; returns `{extension}` or `{error}`.
 * @param {{path: string, source?: string, baseDir?: string, sourceInfo?: object}} info
 * @param {object} core
 */
export async function loadExtension(info, core) {
	const resolvedPath = resolveExtensionPath(info.path, core.state.cwd);
	try {
		// A linked entry loads from where it lives, so its own node_modules resolve (pi 1.6.0).
		const factory = await importFactory(realPath(resolvedPath), core.state.cwd);
		if (typeof factory !== "function") {
			return { error: `Extension does not export a valid factory function: ${info.path}` };
		}
		const extension = createExtensionRecord(info, resolvedPath);
		const load = createExtensionAPI(extension, core.runtime, { cwd: () => core.state.cwd, eventBus: core.eventBus });
		try {
			await factory(load.api);
		} catch (err) {
			load.discard();
			throw err;
		}
		load.commit();
		return { extension };
	} catch (err) {
		const message = err instanceof Error ? err.message : String(err);
		return { error: `Failed to load extension: ${message}` };
	}
}

/** Load extensions in order; the ones that fail are reported and skipped. */
export async function loadExtensions(infos, core) {
	const errors = [];
	const timings = [];
	for (const info of infos) {
		const started = performance.now();
		const { extension, error } = await loadExtension(info, core);
		timings.push({ path: info.path, ms: Math.round(performance.now() - started) });
		if (error) errors.push({ path: info.path, error });
		else core.registry.add(extension);
	}
	return { errors, timings };
}
