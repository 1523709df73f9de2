/**
 * The real pi theme (pi-coding-agent's `theme.js`) and keybindings, set up lazily.
 *
 * theme.js costs ~0.7 s to import (typebox compiler, cli-highlight), so nothing imports it
 * up front. theme.js keeps the current Theme in `globalThis[Symbol.for(...)]`; the host
 * installs an accessor there, so the first read of the theme from anywhere (ctx.ui.theme,
 * DynamicBorder, getMarkdownTheme, ...) loads theme.js and runs `initTheme(<init themeName>)`.
 */
import { loadDist, loadModule } from "./native.mjs";

const THEME_FILE = "modes/interactive/theme/theme.js";
const THEME_KEY = Symbol.for("@mariozechner/pi-coding-agent:theme");

let themeName = "dark";
let forceColor = false;
let themeValue;
let initialising = false;
let keybindingsInstalled = false;

Object.defineProperty(globalThis, THEME_KEY, {
	configurable: true,
	get() {
		if (themeValue === undefined && !initialising) initialiseTheme();
		return themeValue;
	},
	set(value) {
		themeValue = value;
	},
});

function initialiseTheme() {
	initialising = true;
	try {
		if (forceColor && !process.env.NO_COLOR) {
			// The host's stdout is not the user's terminal: bold/italic colour as pi's TUI would.
			try {
				loadModule("chalk").default.level = 3;
			} catch {
				// theme.fg/bg still work (raw ANSI); only chalk styles stay plain
			}
		}
		loadDist(THEME_FILE).initTheme(themeName, false);
	} finally {
		initialising = false;
	}
}

/** Set the theme name (from init or a later `state`) and whether to force colours. */
export function configureTheme({ name, color } = {}) {
	if (color !== undefined) forceColor = color;
	if (!name || name === themeName) return;
	themeName = name;
	if (themeValue !== undefined) loadDist(THEME_FILE).setTheme(name, false);
}

/** The theme.js module with the theme initialised. */
export function themeModule() {
	const mod = loadDist(THEME_FILE);
	if (themeValue === undefined) initialiseTheme();
	return mod;
}

/** The current Theme instance. */
export function currentTheme() {
	themeModule();
	return themeValue;
}

/** The current theme name. */
export function currentThemeName() {
	return themeName;
}

/**
 * Install pi's app keybindings (with the user's keybindings.json) as pi-tui's global
 * keybindings, as pi's main() does, so keyHint()/SelectList/CustomEditor see app actions.
 */
export function ensureKeybindings() {
	if (keybindingsInstalled) return;
	keybindingsInstalled = true;
	const { KeybindingsManager } = loadDist("core/keybindings.js");
	loadModule("@mariozechner/pi-tui").setKeybindings(KeybindingsManager.create());
}

/** The KeybindingsManager given to component factories. */
export function keybindings() {
	ensureKeybindings();
	return loadModule("@mariozechner/pi-tui").getKeybindings();
}
