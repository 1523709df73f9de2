/**
 * The shared extension runtime: what every extension's `pi` object delegates its actions to.
 *
 * Until pi has answered `init` (i.e. while factories run) the action methods throw pi's
 * "Extension runtime not initialized" error and `registerProvider` queues, exactly as the
 * TypeScript loader's stubs do. After `bind()` the actions become requests to pi. Actions
 * that are fire-and-forget in the TypeScript pi stay so here: their failures become
 * `extension_error` notifications from `<runtime>`. Synchronous getters read the state mirror.
 */

import { checkVirtualModel, describeVirtualModel } from "./virtual-models.mjs";

const NOT_INITIALIZED = "Extension runtime not initialized. Action methods cannot be called during extension loading.";

function notInitialized() {
	throw new Error(NOT_INITIALIZED);
}

export class Runtime {
	/**
	 * @param {{channel: import("./channel.mjs").Channel, state: import("./state.mjs").StateMirror, registry: import("./registry.mjs").Registry}} deps
	 */
	constructor({ channel, state, registry }) {
		this.channel = channel;
		this.state = state;
		this.registry = registry;
		this.bound = false;
		/** Bumped when the extensions load again; `pi` objects of older loads are stale. */
		this.generation = 0;
		/** @type {Map<string, boolean|string>} */
		this.flagValues = new Map();
		this.pendingProviderRegistrations = [];
		/** Virtual models by `provider/id`: `{definition, extensionPath}`. */
		this.virtualModels = new Map();
		this.pendingVirtualModels = [];
	}

	/** Called once pi has the init answer: actions go to pi from now on. */
	bind() {
		this.bound = true;
	}

	/** Before the extensions load again: older `pi` objects go stale, actions queue as while loading. */
	invalidate() {
		this.generation++;
		this.bound = false;
		this.pendingProviderRegistrations = [];
		this.virtualModels = new Map();
		this.pendingVirtualModels = [];
	}

	/** `pi.registerVirtualModel`: kept here with its route; pi gets the catalog entry. */
	registerVirtualModel(definition, extensionPath = "<unknown>") {
		checkVirtualModel(definition);
		const key = `${definition.provider}/${definition.id}`;
		this.virtualModels.set(key, { definition, extensionPath });
		const model = describeVirtualModel(definition, extensionPath);
		if (!this.bound) {
			this.pendingVirtualModels = this.pendingVirtualModels.filter((m) => `${m.provider}/${m.id}` !== key);
			this.pendingVirtualModels.push(model);
			return;
		}
		this.channel.request("registerVirtualModel", { model }).catch((err) => {
			this.emitError({ extensionPath, event: "register_virtual_model", error: err instanceof Error ? err.message : String(err) });
		});
	}

	unregisterVirtualModel(provider, id, extensionPath = "<unknown>") {
		const key = `${provider}/${id}`;
		this.virtualModels.delete(key);
		if (!this.bound) {
			this.pendingVirtualModels = this.pendingVirtualModels.filter((m) => `${m.provider}/${m.id}` !== key);
			return;
		}
		this.channel.request("unregisterVirtualModel", { provider, id }).catch((err) => {
			this.emitError({ extensionPath, event: "unregister_virtual_model", error: err instanceof Error ? err.message : String(err) });
		});
	}

	/** The virtual models registered while loading, as reported in the init answer. */
	takePendingVirtualModels() {
		const pending = this.pendingVirtualModels;
		this.pendingVirtualModels = [];
		return pending;
	}

	emitError(error) {
		this.channel.notify("extension_error", {
			extensionPath: error.extensionPath,
			event: error.event,
			error: error.error,
			...(error.stack ? { stack: error.stack } : {}),
		});
	}

	/** Send an action request whose result nobody awaits; failures become extension_error. */
	fireAndForget(method, params, event) {
		this.channel.request(method, params).catch((err) => {
			this.emitError({ extensionPath: "<runtime>", event, error: err instanceof Error ? err.message : String(err) });
		});
	}

	guard() {
		if (!this.bound) notInitialized();
	}

	sendMessage(message, options) {
		this.guard();
		this.fireAndForget("sendMessage", { message, options: options ?? {} }, "send_message");
	}

	sendUserMessage(content, options) {
		this.guard();
		this.fireAndForget("sendUserMessage", { content, options: options ?? {} }, "send_user_message");
	}

	appendEntry(customType, data) {
		this.guard();
		this.fireAndForget("appendEntry", { customType, data }, "append_entry");
	}

	setSessionName(name) {
		this.guard();
		this.state.session.pendingName = String(name);
		this.fireAndForget("setSessionName", { name }, "set_session_name");
	}

	getSessionName() {
		this.guard();
		return this.state.session.getSessionName();
	}

	setLabel(entryId, label) {
		this.guard();
		const session = this.state.session;
		if (session.byId.has(entryId)) {
			if (label) session.labelsById.set(entryId, label);
			else session.labelsById.delete(entryId);
		}
		this.fireAndForget("setLabel", { entryId, label: label ?? null }, "set_label");
	}

	getActiveTools() {
		this.guard();
		return [...this.state.activeTools];
	}

	getAllTools() {
		this.guard();
		return this.state.allTools.map((tool) => ({ ...tool }));
	}

	setActiveTools(toolNames) {
		this.guard();
		this.state.setActiveToolsLocally(toolNames);
		this.fireAndForget("setActiveTools", { toolNames }, "set_active_tools");
	}

	/** registerTool after load: pi learns the new tool from the `registrations` notification. */
	refreshTools() {
		if (this.bound) this.registry.changed();
	}

	getCommands() {
		this.guard();
		const fromExtensions = this.registry.resolveCommands().map((command) => ({
			name: command.invocationName,
			description: command.description,
			source: "extension",
			sourceInfo: command.sourceInfo,
		}));
		// pi's own commands: its built-in extensions' (`/llama`, `/mcp`, sourceInfo.source
		// "builtin", after the loaded extensions' as in pi 1.6.0), prompt templates, skills.
		const others = this.state.commands.filter(
			(command) => command.source !== "extension" || command.sourceInfo?.source === "builtin",
		);
		return [...fromExtensions, ...others];
	}

	setModel(model) {
		if (!this.bound) return Promise.reject(new Error("Extension runtime not initialized"));
		if (!model) return Promise.resolve(false);
		return this.channel.request("setModel", { provider: model.provider, id: model.id }).then((ok) => ok === true);
	}

	getThinkingLevel() {
		this.guard();
		return this.state.thinkingLevel;
	}

	setThinkingLevel(level) {
		this.guard();
		this.state.thinkingLevel = level;
		this.fireAndForget("setThinkingLevel", { level }, "set_thinking_level");
	}

	registerProvider(name, config, extensionPath = "<unknown>") {
		this.registry.setProvider(name, config, extensionPath);
		if (!this.bound) {
			this.pendingProviderRegistrations.push({ name, config, extensionPath });
			return;
		}
		this.channel.request("registerProvider", { name, config: describeProviderConfig(config) }).catch((err) => {
			this.emitError({ extensionPath, event: "register_provider", error: err instanceof Error ? err.message : String(err) });
		});
		// pi 1.6.0 refreshes the catalogs offline after every registration.
		if (typeof config?.refreshModels === "function") void this.catalogs?.refresh({ allowNetwork: false }).catch(() => {});
	}

	/**
	 * A refreshed catalog of provider `name`: its registration with these models goes to pi
	 * (queued while loading), leaving the extension's own registration as it was.
	 */
	publishProviderModels(name, config) {
		if (!this.bound) {
			const queued = this.pendingProviderRegistrations.find((r) => r.name === name);
			if (queued) queued.config = config;
			else this.pendingProviderRegistrations.push({ name, config, extensionPath: "<unknown>" });
			return Promise.resolve();
		}
		return this.channel.request("registerProvider", { name, config: describeProviderConfig(config) }).then(() => {});
	}

	unregisterProvider(name, extensionPath = "<unknown>") {
		this.registry.deleteProvider(name);
		if (!this.bound) {
			this.pendingProviderRegistrations = this.pendingProviderRegistrations.filter((r) => r.name !== name);
			return;
		}
		this.channel.request("unregisterProvider", { name }).catch((err) => {
			this.emitError({ extensionPath, event: "unregister_provider", error: err instanceof Error ? err.message : String(err) });
		});
	}

	/** The providers queued during loading, as reported in the init answer. */
	takePendingProviders() {
		const pending = this.pendingProviderRegistrations;
		this.pendingProviderRegistrations = [];
		return pending.map(({ name, config }) => ({ name, config: describeProviderConfig(config) }));
	}
}

/** A provider config as JSON: functions dropped, their presence flagged. */
export function describeProviderConfig(config) {
	const plain = JSON.parse(JSON.stringify(config ?? {}, (_k, v) => (typeof v === "function" ? undefined : v)));
	plain.hasStreamSimple = typeof config?.streamSimple === "function";
	if (config?.oauth) plain.oauth = { name: config.oauth.name, hasModifyModels: typeof config.oauth.modifyModels === "function" };
	return plain;
}
