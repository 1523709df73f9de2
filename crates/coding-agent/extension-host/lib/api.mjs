/**
 * The `pi` object (ExtensionAPI) each extension factory receives.
 *
 * Registration methods write into the extension's record (and, after init, tell pi through
 * a `registrations` notification); action methods delegate to the shared Runtime, which
 * throws while factories run. `exec` runs in the host; `events` is the shared in-host bus.
 */
import { STALE_MESSAGE } from "./context.mjs";
import { execCommand } from "./exec.mjs";

/**
 * @param {ReturnType<typeof import("./registry.mjs").createExtensionRecord>} extension
 * @param {import("./runtime.mjs").Runtime} runtime
 * @param {{cwd: () => string, eventBus: object}} env
 */
export function createExtensionAPI(extension, runtime, env) {
	// As pi: once the extensions loaded again (session replacement, reload) this load's
	// `pi` object throws instead of acting on the new session.
	const generation = runtime.generation;
	const assertActive = () => {
		if (runtime.generation !== generation) throw new Error(STALE_MESSAGE);
	};
	const registered = () => {
		if (runtime.bound) runtime.registry.changed();
	};
	return {
		/** Returns a function that removes this registration only (pi 1.6.0). */
		on(event, handler) {
			assertActive();
			const list = extension.handlers.get(event) ?? [];
			list.push(handler);
			extension.handlers.set(event, list);
			registered();
			let subscribed = true;
			return () => {
				if (!subscribed) return;
				subscribed = false;
				const current = extension.handlers.get(event) ?? [];
				const at = current.indexOf(handler);
				if (at === -1) return;
				current.splice(at, 1);
				if (current.length === 0) extension.handlers.delete(event);
				registered();
			};
		},
		registerTool(tool) {
			assertActive();
			extension.tools.set(tool.name, tool);
			runtime.refreshTools();
		},
		registerCommand(name, options) {
			assertActive();
			extension.commands.set(name, { name, sourceInfo: extension.sourceInfo, ...options });
			registered();
		},
		registerShortcut(shortcut, options) {
			assertActive();
			extension.shortcuts.set(shortcut, { shortcut, extensionPath: extension.path, ...options });
			registered();
		},
		registerFlag(name, options) {
			assertActive();
			extension.flags.set(name, { name, extensionPath: extension.path, ...options });
			if (options?.default !== undefined && !runtime.flagValues.has(name)) runtime.flagValues.set(name, options.default);
			registered();
		},
		registerMessageRenderer(customType, renderer) {
			assertActive();
			extension.messageRenderers.set(customType, renderer);
			registered();
		},
		getFlag(name) {
			assertActive();
			if (!extension.flags.has(name)) return undefined;
			return runtime.flagValues.get(name);
		},
		sendMessage(message, options) {
			assertActive();
			runtime.sendMessage(message, options);
		},
		sendUserMessage(content, options) {
			assertActive();
			runtime.sendUserMessage(content, options);
		},
		appendEntry(customType, data) {
			assertActive();
			runtime.appendEntry(customType, data);
		},
		setSessionName(name) {
			assertActive();
			runtime.setSessionName(name);
		},
		getSessionName() {
			assertActive();
			return runtime.getSessionName();
		},
		setLabel(entryId, label) {
			assertActive();
			runtime.setLabel(entryId, label);
		},
		exec(command, args, options) {
			assertActive();
			return execCommand(command, args, options?.cwd ?? env.cwd(), options);
		},
		getActiveTools() {
			assertActive();
			return runtime.getActiveTools();
		},
		getAllTools() {
			assertActive();
			return runtime.getAllTools();
		},
		setActiveTools(toolNames) {
			assertActive();
			runtime.setActiveTools(toolNames);
		},
		getCommands() {
			assertActive();
			return runtime.getCommands();
		},
		setModel(model) {
			assertActive();
			return runtime.setModel(model);
		},
		getThinkingLevel() {
			assertActive();
			return runtime.getThinkingLevel();
		},
		setThinkingLevel(level) {
			assertActive();
			runtime.setThinkingLevel(level);
		},
		registerProvider(name, config) {
			assertActive();
			runtime.registerProvider(name, config, extension.path);
		},
		unregisterProvider(name) {
			assertActive();
			runtime.unregisterProvider(name, extension.path);
		},
		events: env.eventBus,
	};
}
