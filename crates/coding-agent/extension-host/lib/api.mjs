/**
 * The `pi` object (ExtensionAPI) each extension factory receives.
 *
 * Registration methods write into the extension's record (and, after init, tell pi through
 * a `registrations` notification); action methods delegate to the shared Runtime, which
 * throws while factories run. `exec` runs in the host; `events` is the shared in-host bus.
 *
 * As in pi 1.6.0, what a factory does beyond its own record waits for the factory to
 * succeed: flag defaults, provider registrations and bus subscriptions made while it runs
 * take effect on `commit()`, and `discard()` (it threw) drops them and makes its `pi` throw.
 * Registrations that cannot work are rejected when made (a tool without an object parameter
 * schema, a command without a name or handler, a flag default of the wrong type).
 */
import { STALE_MESSAGE } from "./context.mjs";
import { execCommand } from "./exec.mjs";

/**
 * @param {ReturnType<typeof import("./registry.mjs").createExtensionRecord>} extension
 * @param {import("./runtime.mjs").Runtime} runtime
 * @param {{cwd: () => string, eventBus: object}} env
 * @returns {{api: object, commit: () => void, discard: () => void}}
 */
export function createExtensionAPI(extension, runtime, env) {
	// As pi: once the extensions loaded again (session replacement, reload) this load's
	// `pi` object throws instead of acting on the new session.
	const generation = runtime.generation;
	/** "loading" while the factory runs, then "active" or "failed". */
	let loadState = "loading";
	const pendingFlagValues = new Map();
	const pendingChanges = [];
	const loadingUnsubscribers = [];
	const assertActive = () => {
		if (loadState === "failed") {
			throw new Error(`Extension "${extension.path}" failed to load and its API is no longer active.`);
		}
		if (runtime.generation !== generation) throw new Error(STALE_MESSAGE);
	};
	/** Runs `change` now, or once the factory succeeded when it is still running. */
	const applyRuntimeChange = (change) => {
		if (loadState === "loading") pendingChanges.push(change);
		else change();
	};
	const registered = () => {
		if (runtime.bound) runtime.registry.changed();
	};
	const api = {
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
			if (typeof tool?.parameters !== "object" || tool.parameters === null || Array.isArray(tool.parameters)) {
				throw new Error(
					`Tool "${tool?.name}" registered by extension "${extension.path}" must define an object parameter schema.`,
				);
			}
			extension.tools.set(tool.name, tool);
			runtime.refreshTools();
		},
		registerCommand(name, options) {
			assertActive();
			if (typeof name !== "string" || name.length === 0) {
				throw new Error(
					`Command registered by extension "${extension.path}" must have a non-empty string name. Use pi.registerCommand("name", { description, handler }).`,
				);
			}
			if (typeof options?.handler !== "function") {
				throw new Error(`Command "/${name}" registered by extension "${extension.path}" must define handler().`);
			}
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
			if (options?.default !== undefined && typeof options.default !== options.type) {
				throw new Error(`Invalid default for flag "${name}": expected ${options.type}, got ${typeof options.default}`);
			}
			extension.flags.set(name, { name, extensionPath: extension.path, ...options });
			if (options?.default !== undefined && !runtime.flagValues.has(name)) {
				if (loadState !== "loading") runtime.flagValues.set(name, options.default);
				else if (!pendingFlagValues.has(name)) pendingFlagValues.set(name, options.default);
			}
			registered();
		},
		registerMessageRenderer(customType, renderer) {
			assertActive();
			extension.messageRenderers.set(customType, renderer);
			registered();
		},
		/** Draws `pi.appendEntry` entries of `customType` in the transcript (pi 1.6.0). */
		registerEntryRenderer(customType, renderer) {
			assertActive();
			extension.entryRenderers.set(customType, renderer);
			registered();
		},
		/** `(toolName, next) => renderer | undefined` for any tool's calls (pi 1.6.0). */
		registerToolRenderer(resolver) {
			assertActive();
			extension.toolRenderers.push(resolver);
			registered();
		},
		getFlag(name) {
			assertActive();
			if (!extension.flags.has(name)) return undefined;
			return runtime.flagValues.has(name) ? runtime.flagValues.get(name) : pendingFlagValues.get(name);
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
			if (typeof name === "string" && !config) throw new Error("Provider config is required when registering by name");
			applyRuntimeChange(() => runtime.registerProvider(name, config, extension.path));
		},
		unregisterProvider(name) {
			assertActive();
			applyRuntimeChange(() => runtime.unregisterProvider(name, extension.path));
		},
		/** A selectable model whose `route(request, ctx)` picks the physical model per request. */
		registerVirtualModel(model) {
			assertActive();
			applyRuntimeChange(() => runtime.registerVirtualModel(model, extension.path));
		},
		unregisterVirtualModel(provider, id) {
			assertActive();
			applyRuntimeChange(() => runtime.unregisterVirtualModel(provider, id, extension.path));
		},
		events: {
			emit(channel, data) {
				assertActive();
				env.eventBus.emit(channel, data);
			},
			/** A throwing handler is reported as an extension error (`events:<channel>`), not printed. */
			on(channel, handler) {
				assertActive();
				const unsubscribe = env.eventBus.on(channel, async (data) => {
					try {
						await handler(data);
					} catch (error) {
						runtime.emitError({
							extensionPath: extension.path,
							event: `events:${channel}`,
							error: error instanceof Error ? error.message : String(error),
							stack: error instanceof Error ? error.stack : undefined,
						});
					}
				});
				if (loadState === "loading") loadingUnsubscribers.push(unsubscribe);
				return unsubscribe;
			},
		},
	};
	const clearPending = () => {
		pendingFlagValues.clear();
		pendingChanges.length = 0;
		loadingUnsubscribers.length = 0;
	};
	return {
		api,
		/** The factory succeeded: its flag defaults and provider changes take effect. */
		commit() {
			if (loadState !== "loading") return;
			for (const [name, value] of pendingFlagValues) {
				if (!runtime.flagValues.has(name)) runtime.flagValues.set(name, value);
			}
			for (const change of pendingChanges) change();
			loadState = "active";
			clearPending();
		},
		/** The factory threw: its bus subscriptions end, the rest is dropped, its `pi` throws. */
		discard() {
			if (loadState !== "loading") return;
			loadState = "failed";
			for (const unsubscribe of loadingUnsubscribers) unsubscribe();
			clearPending();
		},
	};
}
