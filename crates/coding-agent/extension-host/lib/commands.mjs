/**
 * Slash commands, their argument completions, and keyboard shortcuts, run on pi's request.
 *
 * `command {name, args}` finds the command by invocation name (`name`, or `name:N` when
 * several extensions registered it) and awaits its handler with a command context; a
 * thrown error is the request's error. Shortcuts run with a plain context.
 */
import { createCommandContext, createContext } from "./context.mjs";
import { loadModule } from "./native.mjs";
import { ensureKeybindings } from "./theme.mjs";

export async function runCommand(core, frame, signal) {
	const command = core.registry.findCommand(frame.name);
	if (!command) throw new Error(`Unknown extension command: ${frame.name}`);
	const ctx = createCommandContext(core, { signal });
	await command.handler(frame.args ?? "", ctx);
	return null;
}

export async function commandCompletions(core, frame) {
	const command = core.registry.findCommand(frame.name);
	if (typeof command?.getArgumentCompletions !== "function") return null;
	const items = await command.getArgumentCompletions(frame.prefix ?? "");
	return items ?? null;
}

export async function runShortcut(core, frame, signal) {
	const found = core.registry.findShortcut(frame.shortcut);
	if (!found) throw new Error(`Unknown extension shortcut: ${frame.shortcut}`);
	await found.shortcut.handler(createContext(core, { signal }));
	return null;
}

/**
 * For custom editors (pi's onExtensionShortcut): if raw key `data` matches an extension
 * shortcut, start its handler and return true.
 */
export function runShortcutForKey(core, data) {
	const shortcuts = core.registry.allShortcuts();
	if (shortcuts.length === 0) return false;
	ensureKeybindings();
	const { matchesKey } = loadModule("@mariozechner/pi-tui");
	for (const { ext, shortcut, key } of shortcuts) {
		if (!matchesKey(data, key)) continue;
		Promise.resolve()
			.then(() => shortcut.handler(createContext(core, {})))
			.catch((err) =>
				core.runtime.emitError({
					extensionPath: ext.path,
					event: "shortcut",
					error: err instanceof Error ? err.message : String(err),
					stack: err instanceof Error ? err.stack : undefined,
				}),
			);
		return true;
	}
	return false;
}
