/**
 * Routing of pi's frames to the host's handlers.
 *
 * Requests that run extension code get an abort handle, kept by request id until the
 * handler settles, so pi's `cancel {id}` can abort `ctx.signal` / the tool's signal. Its
 * AbortController is made on first use: most events never read their signal, and making
 * one costs more than the rest of a no-op handler's round trip.
 */

/** An AbortController made when its signal is first read or it is aborted. */
class LazyAbort {
	#controller;
	get signal() {
		this.#controller ??= new AbortController();
		return this.#controller.signal;
	}
	abort() {
		this.#controller ??= new AbortController();
		this.#controller.abort();
	}
}
import { commandCompletions, runCommand, runShortcut } from "./commands.mjs";
import { applyFlags, initialise, refreshCatalogsInBackground, reloadExtensions } from "./core.mjs";
import { clearFactoryCache } from "./loader.mjs";
import { streamProvider } from "./providers.mjs";
import { dispatchEvent } from "./runner.mjs";
import { routeVirtualModel } from "./virtual-models.mjs";
import {
	disposeToolRender,
	executeTool,
	prepareToolArguments,
	renderEntry,
	renderMessage,
	renderTool,
} from "./tools.mjs";

/** Request handlers: (core, frame, signal) => result (`event` gets the lazy abort handle). */
const REQUESTS = {
	init: (core, frame) => initialise(core, frame),
	reload: (core, frame) => reloadExtensions(core, frame),
	event: (core, frame, abort) => dispatchEvent(core, frame.event ?? {}, abort),
	/** Several events in one exchange, each dispatched after the previous one settled. */
	events: async (core, frame, abort) => {
		const answers = [];
		const aborts = core.abortRequests ?? 0;
		for (const event of frame.events ?? []) {
			// After a handler's ctx.abort() the later calls are not asked (pi 1.6.0 gives them
			// "Operation aborted" without their tool_call hooks).
			if ((core.abortRequests ?? 0) !== aborts) {
				answers.push(null);
				continue;
			}
			answers.push((await dispatchEvent(core, event ?? {}, abort)) ?? null);
		}
		return answers;
	},
	tool_execute: executeTool,
	tool_prepare: prepareToolArguments,
	route_model: routeVirtualModel,
	tool_render: renderTool,
	message_render: renderMessage,
	entry_render: renderEntry,
	command: runCommand,
	command_completions: commandCompletions,
	shortcut: runShortcut,
	component_render: (core, frame) => core.components.render(frame.componentId, frame.width ?? 80),
	component_input: (core, frame) => {
		core.components.input(frame.componentId, frame.data ?? "");
		return null;
	},
	terminal_input: (core, frame) => core.terminalInput.handle(frame.data ?? ""),
	autocomplete: async (core, frame, signal) => (await core.ui.autocomplete?.(frame, signal)) ?? null,
	provider_stream: streamProvider,
	bash_exec: (core, frame, signal) => core.bashOperations.exec(core, frame, signal),
	ping: () => ({ pong: true, rss: process.memoryUsage().rss }),
	stats: (core) => {
		const cpu = process.cpuUsage();
		return { rss: process.memoryUsage().rss, cpuMs: Math.round((cpu.user + cpu.system) / 1000), loadTimings: core.loadTimings };
	},
};

/** Notification handlers: (core, frame) => void. */
const NOTIFICATIONS = {
	state: (core, frame) => core.state.apply(frame),
	flags: (core, frame) => applyFlags(core, frame.values),
	refresh_catalogs: (core) => refreshCatalogsInBackground(core),
	clear_module_cache: () => clearFactoryCache(),
	component_dispose: (core, frame) => core.components.dispose(frame.componentId),
	component_focus: (core, frame) => core.components.focus(frame.componentId, frame.focused !== false),
	component_invalidate: (core, frame) => core.components.invalidate(frame.componentId),
	component_set_text: (core, frame) => core.components.setText(frame.componentId, String(frame.text ?? "")),
	tool_render_dispose: (core, frame) => disposeToolRender(core, frame.toolCallId),
};

export function createDispatcher(core, { onShutdown }) {
	const controllers = new Map();
	return {
		async onRequest(frame) {
			const handler = REQUESTS[frame.type];
			if (!handler) throw new Error(`Unknown request type: ${frame.type}`);
			if (frame.type !== "init" && !core.initialised) throw new Error("Extension host not initialised");
			const abort = new LazyAbort();
			controllers.set(frame.id, abort);
			try {
				const lazy = frame.type === "event" || frame.type === "events";
				return await handler(core, frame, lazy ? abort : abort.signal);
			} finally {
				controllers.delete(frame.id);
			}
		},
		onNotification(frame) {
			if (frame.type === "cancel") {
				controllers.get(frame.id)?.abort();
				return;
			}
			if (frame.type === "shutdown") {
				onShutdown();
				return;
			}
			const handler = NOTIFICATIONS[frame.type];
			if (handler) handler(core, frame);
			else core.channel.log(`unknown notification type: ${frame.type}`);
		},
	};
}
