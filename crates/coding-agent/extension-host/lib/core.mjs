/**
 * The host's shared objects (`core`), and `init`: set up mode, state, theme and UI, load
 * the extensions, answer with what they registered, then bind the runtime so actions
 * reach pi.
 */
import { createContext } from "./context.mjs";
import { createEventBus } from "./event-bus.mjs";
import { loadExtensions } from "./loader.mjs";
import { Catalogs } from "./catalogs.mjs";
import { createModelRegistry } from "./model-registry.mjs";
import { EXTRA_DIST_FILES } from "../modules/pi-coding-agent.mjs";
import { preloadSpecs } from "./modules.mjs";
import { preloadAll, supportsRequireEsm } from "./native.mjs";
import { Registry } from "./registry.mjs";
import { dispatchEvent } from "./runner.mjs";
import { Runtime } from "./runtime.mjs";
import { StateMirror } from "./state.mjs";
import { BashOperations } from "./bash-operations.mjs";
import { runShortcutForKey } from "./commands.mjs";
import { configureTheme } from "./theme.mjs";
import { ComponentTable } from "./ui/components.mjs";
import { createInteractiveUI } from "./ui/interactive.mjs";
import { createNoopUI } from "./ui/noop.mjs";
import { withPromptSpans } from "./ui/prompt-span.mjs";
import { createRpcUI } from "./ui/rpc.mjs";
import { TerminalInput } from "./ui/terminal-input.mjs";

export function createCore(channel) {
	const state = new StateMirror();
	const registry = new Registry();
	const runtime = new Runtime({ channel, state, registry });
	const send = (method, params) => channel.notify("ui", { method, params });
	const terminalInput = new TerminalInput(send);
	const core = {
		channel,
		state,
		registry,
		runtime,
		mode: "print",
		hasUI: false,
		/** `ctx.isProjectTrusted()`: pi's effective trust decision (init's `projectTrusted`). */
		projectTrusted: true,
		ui: createNoopUI(),
		eventBus: createEventBus(),
		terminalInput,
		components: new ComponentTable({ channel, state, terminalInput }),
		bashOperations: new BashOperations(),
		catalogs: new Catalogs({ registry, publishModels: (name, config) => runtime.publishProviderModels(name, config) }),
		initialised: false,
		loadTimings: [],
	};
	runtime.catalogs = core.catalogs;
	// What a virtual model's route() gets as ctx outside an event (direct requests).
	runtime.createContext = () => createContext(core);
	core.modelRegistry = createModelRegistry({ state, channel, runtime, registry, catalogs: core.catalogs });
	registry.onChange = (extensions) => channel.notify("registrations", { extensions });
	channel.beforeResponse = () => registry.flush();
	return core;
}

/** Handle `init`: returns the init answer. */
export async function initialise(core, frame) {
	if (core.initialised) throw new Error("Extension host already initialised");
	core.initialised = true;
	const mode = frame.mode ?? "print";
	core.mode = mode;
	if (typeof frame.projectTrusted === "boolean") core.projectTrusted = frame.projectTrusted;
	if (frame.agentDir) process.env.PI_CODING_AGENT_DIR = frame.agentDir;
	core.state.apply(frame.state ?? {});
	if (frame.cwd) core.state.cwd = frame.cwd;
	if (!core.state.session.cwd) core.state.session.cwd = core.state.cwd;
	configureTheme({
		name: frame.themeName ?? core.state.themeName ?? "dark",
		color: mode === "interactive",
		spec: frame.theme ?? undefined,
	});
	core.state.onChange((update) => {
		if (update.themeName) configureTheme({ name: update.themeName });
	});
	if (mode === "rpc") {
		core.ui = createRpcUI(core.channel);
		core.hasUI = true;
	} else if (mode === "interactive") {
		core.ui = createInteractiveUI({
			channel: core.channel,
			state: core.state,
			components: core.components,
			terminalInput: core.terminalInput,
			runShortcutFor: (data) => runShortcutForKey(core, data),
		});
		core.hasUI = true;
	}
	if (core.hasUI) withPromptSpans(core.ui, (event) => emitNotification(core, event));
	for (const [name, value] of Object.entries(frame.flagValues ?? {})) core.runtime.flagValues.set(name, value);
	if (!supportsRequireEsm) {
		await preloadAll(preloadSpecs(), ["index.js", "core/keybindings.js", "core/session-manager.js", ...EXTRA_DIST_FILES]);
	}
	return loadAndBind(core, frame.extensions ?? []);
}

/**
 * Handle `refresh_catalogs`: pi runs in RPC or interactive mode with the session ready, so
 * the dynamic catalogs refresh from the network in the background (15 s at most), as pi
 * 1.6.0 does once running; startup only waited for the offline pass.
 */
export function refreshCatalogsInBackground(core) {
	if (process.env.PI_OFFLINE !== undefined) return;
	void core.catalogs.refresh({ signal: AbortSignal.timeout(15_000) }).catch(() => {});
}

/** Load the extensions, bind the runtime, and answer with what they registered. */
async function loadAndBind(core, extensions) {
	const { errors, timings } = await loadExtensions(extensions, core);
	core.loadTimings = timings;
	// The offline pass of the dynamic catalogs: stored models are there before pi starts.
	await core.catalogs.refresh({ allowNetwork: false }).catch(() => {});
	const result = {
		extensions: core.registry.describe(),
		errors,
		conflicts: core.registry.conflicts(),
		providers: core.runtime.takePendingProviders(),
		virtualModels: core.runtime.takePendingVirtualModels(),
	};
	core.runtime.bind();
	return result;
}

/**
 * Handle `reload {extensions}`: as pi does on /reload and when it replaces the session
 * (new, resume, fork), every factory runs again, here in the same process (packages stay
 * loaded). The earlier instances' `pi` objects go stale and their bus subscriptions end.
 * Answers like `init`.
 */
export async function reloadExtensions(core, frame) {
	core.runtime.invalidate();
	core.eventBus.clear();
	core.registry.reset();
	return loadAndBind(core, frame.extensions ?? []);
}

/** Handle the `flags` notification: the final flag values after pi parsed its command line. */
export function applyFlags(core, values) {
	for (const [name, value] of Object.entries(values ?? {})) core.runtime.flagValues.set(name, value);
}

/** Runs a notification event's handlers without waiting for them (errors are reported). */
function emitNotification(core, event) {
	const abort = new AbortController();
	void dispatchEvent(core, event, abort).catch(() => {});
}
