/**
 * The `pi` object (ExtensionAPI) each extension factory receives.
 *
 * Registration methods write into the extension's record (and, after init, tell pi through
 * a `registrations` notification); action methods delegate to the shared Runtime, which
 * throws while factories run. `exec` runs in the host; `events` is the shared in-host bus.
 */
import { execCommand } from "./exec.mjs";

/**
 * @param {ReturnType<typeof import("./registry.mjs").createExtensionRecord>} extension
 * @param {import("./runtime.mjs").Runtime} runtime
 * @param {{cwd: () => string, eventBus: object}} env
 */
export function createExtensionAPI(extension, runtime, env) {
	const registered = () => {
		if (runtime.bound) runtime.registry.changed();
	};
	return {
		on(event, handler) {
			const list = extension.handlers.get(event) ?? [];
			list.push(handler);
			extension.handlers.set(event, list);
			registered();
		},
		registerTool(tool) {
			extension.tools.set(tool.name, tool);
			runtime.refreshTools();
		},
		registerCommand(name, options) {
			extension.commands.set(name, { name, sourceInfo: extension.sourceInfo, ...options });
			registered();
		},
		registerShortcut(shortcut, options) {
			extension.shortcuts.set(shortcut, { shortcut, extensionPath: extension.path, ...options });
			registered();
		},
		registerFlag(name, options) {
			extension.flags.set(name, { name, extensionPath: extension.path, ...options });
			if (options?.default !== undefined && !runtime.flagValues.has(name)) runtime.flagValues.set(name, options.default);
			registered();
		},
		registerMessageRenderer(customType, renderer) {
			extension.messageRenderers.set(customType, renderer);
			registered();
		},
		getFlag(name) {
			if (!extension.flags.has(name)) return undefined;
			return runtime.flagValues.get(name);
		},
		sendMessage(message, options) {
			runtime.sendMessage(message, options);
		},
		sendUserMessage(content, options) {
			runtime.sendUserMessage(content, options);
		},
		appendEntry(customType, data) {
			runtime.appendEntry(customType, data);
		},
		setSessionName(name) {
			runtime.setSessionName(name);
		},
		getSessionName() {
			return runtime.getSessionName();
		},
		setLabel(entryId, label) {
			runtime.setLabel(entryId, label);
		},
		exec(command, args, options) {
			return execCommand(command, args, options?.cwd ?? env.cwd(), options);
		},
		getActiveTools() {
			return runtime.getActiveTools();
		},
		getAllTools() {
			return runtime.getAllTools();
		},
		setActiveTools(toolNames) {
			runtime.setActiveTools(toolNames);
		},
		getCommands() {
			return runtime.getCommands();
		},
		setModel(model) {
			return runtime.setModel(model);
		},
		getThinkingLevel() {
			return runtime.getThinkingLevel();
		},
		setThinkingLevel(level) {
			runtime.setThinkingLevel(level);
		},
		registerProvider(name, config) {
			runtime.registerProvider(name, config, extension.path);
		},
		unregisterProvider(name) {
			runtime.unregisterProvider(name, extension.path);
		},
		events: env.eventBus,
	};
}
