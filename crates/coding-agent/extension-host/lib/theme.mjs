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
/** A theme painted by pi (`Theme::host_spec`), used instead of `themeName` until a name comes. */
let themeSpec;
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
		const mod = loadDist(THEME_FILE);
		if (themeSpec) themeValue = themeFromSpec(mod, themeSpec);
		else mod.initTheme(themeName, false);
	} finally {
		initialising = false;
	}
}

/**
 * A Theme of pi-coding-agent's class painted as pi 1.6.0's Theme does: each key's opening
 * sequence from the spec (`\e[39m` for the terminal default), and the faint keys as
 * `<colour>\e[2m…\e[22;39m` (1.6.0's system theme without terminal colours: its neutrals).
 */
function themeFromSpec(mod, spec) {
	const theme = new mod.Theme({}, {}, spec.mode, { name: spec.name });
	theme.fgColors = new Map(Object.entries(spec.fg ?? {}));
	theme.bgColors = new Map(Object.entries(spec.bg ?? {}));
	const dim = new Set(spec.dim ?? []);
	if (dim.size > 0) {
		theme.fg = function (color, text) {
			const ansi = this.getFgAnsi(color);
			return dim.has(color) ? `${ansi}${text}\x1b[22;39m` : `${ansi}${text}\x1b[39m`;
		};
		const plainFgAnsi = theme.getFgAnsi;
		theme.getFgAnsi = function (color) {
			const ansi = plainFgAnsi.call(this, color);
			return dim.has(color) ? `${ansi}\x1b[2m` : ansi;
		};
	}
	return theme;
}

/**
 * Set the theme: a name (from init or a later `state`: pi-coding-agent's theme of that name)
 * or a spec painted by pi (init outside interactive mode), and whether to force colours.
 */
export function configureTheme({ name, color, spec } = {}) {
	if (color !== undefined) forceColor = color;
	if (spec) {
		themeSpec = spec;
		if (spec.name) themeName = spec.name;
		if (themeValue !== undefined) themeValue = themeFromSpec(loadDist(THEME_FILE), spec);
		return;
	}
	if (!name || name === themeName) return;
	themeName = name;
	themeSpec = undefined;
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
