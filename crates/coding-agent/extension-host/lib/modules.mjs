/**
 * The module ids extensions may import that the host provides (jiti `virtualModules`).
 *
 * Covers what pi 0.73.1 aliases (`@mariozechner/pi-coding-agent`, `pi-agent-core`, `pi-tui`,
 * `pi-ai`, `pi-ai/oauth`, `typebox` + `/compile` + `/value`, `@sinclair/typebox` mapped to
 * typebox) and more: every subpath export of pi-ai and typebox, `@sinclair/typebox/*`, pi-ai
 * 1.x's `/models`, `/compat` and `/providers/all`, and the same packages under the newer
 * `@earendil-works/` scope. Each entry is a lazy getter,
 * so a package loads (natively, once) only when an extension imports it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import facade from "../modules/pi-coding-agent.mjs";
import { loadModule, resolveSpecifier, supportsRequireEsm } from "./native.mjs";
import { ensureKeybindings } from "./theme.mjs";

const SCOPES = ["@mariozechner", "@earendil-works"];

/** Subpath exports (without ".") of an installed package, e.g. ["oauth", "anthropic"]. */
function subpathsOf(pkg) {
	try {
		const entry = resolveSpecifier(pkg);
		let dir = path.dirname(entry);
		while (!fs.existsSync(path.join(dir, "package.json"))) dir = path.dirname(dir);
		const exportsField = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).exports;
		if (!exportsField || typeof exportsField !== "object") return [];
		return Object.keys(exportsField)
			.filter((key) => key.startsWith("./") && !key.includes("*") && !key.endsWith(".json"))
			.map((key) => key.slice(2));
	} catch {
		return [];
	}
}

/** Lists of the ids the host provides, each mapped to the real specifier it loads. */
export function providedModuleIds() {
	const map = new Map();
	for (const scope of SCOPES) {
		map.set(`${scope}/pi-tui`, "@mariozechner/pi-tui");
		map.set(`${scope}/pi-agent-core`, "@mariozechner/pi-agent-core");
		map.set(`${scope}/pi-ai`, "@mariozechner/pi-ai");
		for (const sub of subpathsOf("@mariozechner/pi-ai")) map.set(`${scope}/pi-ai/${sub}`, `@mariozechner/pi-ai/${sub}`);
		// pi-ai 1.x's subpaths for the catalog functions (`clampThinkingLevel`, `getModel`),
		// the old global API and the built-in APIs: this pi-ai's root exports all of them.
		for (const sub of ["models", "compat", "providers/all"]) map.set(`${scope}/pi-ai/${sub}`, "@mariozechner/pi-ai");
	}
	map.set("typebox", "typebox");
	map.set("@sinclair/typebox", "typebox");
	for (const sub of subpathsOf("typebox")) {
		map.set(`typebox/${sub}`, `typebox/${sub}`);
		map.set(`@sinclair/typebox/${sub}`, `typebox/${sub}`);
	}
	// Older @sinclair/typebox subpath names.
	map.set("@sinclair/typebox/compiler", "typebox/compile");
	map.set("@sinclair/typebox/errors", "typebox/error");
	return map;
}

/**
 * pi-ai's index costs ~0.4 s (all providers). Extensions often import only `Type` (typebox's)
 * or `StringEnum` from it: those two come from their light sources, any other name loads
 * the real index. Proxy, so `import *` and `in` keep working.
 */
function createPiAiModule() {
	const light = {
		Type: () => loadModule("typebox").Type,
		StringEnum: () => loadDistOf("@mariozechner/pi-ai", "utils/typebox-helpers.js").StringEnum,
	};
	const full = () => loadModule("@mariozechner/pi-ai");
	return new Proxy(
		{},
		{
			get(_target, name) {
				if (name === "__esModule") return true;
				if (typeof name !== "string" || name === "default" || name === "then") return undefined;
				if (light[name]) return light[name]();
				return full()[name];
			},
			has(_target, name) {
				if (name === "__esModule" || name in light) return true;
				if (typeof name !== "string" || name === "default" || name === "then") return false;
				return name in full();
			},
			ownKeys() {
				return Reflect.ownKeys(full());
			},
			getOwnPropertyDescriptor(_target, name) {
				// Also asked by the engine after every `get` (proxy invariants): stay lazy.
				if (typeof name !== "string" || name === "default" || name === "then") return undefined;
				if (light[name]) return { configurable: true, enumerable: true, writable: false, value: light[name]() };
				const mod = full();
				return name in mod ? { configurable: true, enumerable: true, writable: false, value: mod[name] } : undefined;
			},
		},
	);
}

/** Load a file of an installed package by its path relative to the package's entry folder. */
function loadDistOf(pkg, rel) {
	return loadModule(path.join(path.dirname(resolveSpecifier(pkg)), rel));
}

/** The `virtualModules` object for jiti: lazy getters returning the real modules. */
export function createVirtualModules() {
	const virtualModules = {};
	let piAi;
	for (const [id, spec] of providedModuleIds()) {
		Object.defineProperty(virtualModules, id, {
			enumerable: true,
			get() {
				if (spec === "@mariozechner/pi-tui") ensureKeybindings();
				if (spec === "@mariozechner/pi-ai" && supportsRequireEsm) return (piAi ??= createPiAiModule());
				return loadModule(spec);
			},
		});
	}
	for (const scope of SCOPES) {
		Object.defineProperty(virtualModules, `${scope}/pi-coding-agent`, { enumerable: true, value: facade });
	}
	return virtualModules;
}

/** What to import up front on nodes without require(esm): every provided package. */
export function preloadSpecs() {
	return [...new Set(providedModuleIds().values()), "chalk"];
}
