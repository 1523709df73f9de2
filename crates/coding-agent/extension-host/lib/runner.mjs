/**
 * Event dispatch: runs every handler of an event (extensions in load order, handlers in
 * registration order) and combines their results with pi 0.73.1's runner rules.
 *
 * One `event` request from pi = one call here, whose return value is the JSON answer
 * (`null` when there is nothing to report). Handler errors become `extension_error`
 * notifications and dispatch goes on, except in `tool_call`, where an error blocks the tool.
 */
import { createContext } from "./context.mjs";
import { createTrustContext } from "./trust-context.mjs";

const SESSION_BEFORE = new Set(["session_before_switch", "session_before_fork", "session_before_compact", "session_before_tree"]);
const WITH_SIGNAL = new Set(["session_before_compact", "session_before_tree"]);

/**
 * @param {object} core
 * @param {{type: string}} event the payload pi built
 * @param {{signal: AbortSignal}} abort the request's abort handle: its signal (aborted by
 *   pi's `cancel`) is made only when something reads it
 */
export async function dispatchEvent(core, event, abort) {
	if (WITH_SIGNAL.has(event.type)) event.signal = abort.signal;
	const options = {
		get signal() {
			return abort.signal;
		},
	};
	const ctx = createContext(core, options);
	const run = RULES[event.type] ?? (SESSION_BEFORE.has(event.type) ? emitSessionBefore : emitPlain);
	return run(core, event, ctx, abort);
}

function reportError(core, ext, eventType, err) {
	core.runtime.emitError({
		extensionPath: ext.path,
		event: eventType,
		error: err instanceof Error ? err.message : String(err),
		stack: err instanceof Error ? err.stack : undefined,
	});
}

/** Run each handler with `makeEvent()` and feed its result to `onResult`; stop when it returns true. */
async function each(core, type, makeEvent, ctx, onResult) {
	for (const { ext, handler } of core.registry.handlersFor(type)) {
		try {
			const pending = handler(makeEvent(), ctx);
			const result = await pending;
			if (onResult(result, ext) === true) return true;
		} catch (err) {
			reportError(core, ext, type, err);
		}
	}
	return false;
}

async function emitPlain(core, event, ctx) {
	await each(core, event.type, () => event, ctx, () => false);
	return null;
}

async function emitSessionBefore(core, event, ctx) {
	let result = null;
	await each(core, event.type, () => event, ctx, (handlerResult) => {
		if (!handlerResult) return false;
		result = handlerResult;
		return Boolean(handlerResult.cancel);
	});
	return result;
}

async function emitToolCall(core, event, ctx) {
	for (const { handler } of core.registry.handlersFor("tool_call")) {
		let handlerResult;
		try {
			handlerResult = await handler(event, ctx);
		} catch (err) {
			const reason = err instanceof Error ? err.message : `Extension failed, blocking execution: ${String(err)}`;
			return { block: true, reason, input: event.input };
		}
		if (handlerResult?.block) {
			return {
				block: true,
				...(handlerResult.reason !== undefined ? { reason: handlerResult.reason } : {}),
				...(handlerResult.terminate === true ? { terminate: true } : {}),
				input: event.input,
			};
		}
	}
	return { block: false, input: event.input };
}

async function emitToolResult(core, event, ctx) {
	const current = { ...event };
	let modified = false;
	await each(core, "tool_result", () => current, ctx, (r) => {
		if (!r) return false;
		for (const key of ["content", "details", "isError"]) {
			if (r[key] !== undefined) {
				current[key] = r[key];
				modified = true;
			}
		}
		return false;
	});
	return modified ? { content: current.content, details: current.details, isError: current.isError } : null;
}

async function emitMessageEnd(core, event, ctx) {
	let message = event.message;
	let modified = false;
	await each(core, "message_end", () => ({ ...event, message }), ctx, (r, ext) => {
		if (!r?.message) return false;
		if (r.message.role !== message.role) {
			core.runtime.emitError({
				extensionPath: ext.path,
				event: "message_end",
				error: "message_end handlers must return a message with the same role",
			});
			return false;
		}
		message = r.message;
		modified = true;
		return false;
	});
	return modified ? { message } : null;
}

async function emitContext(core, event, ctx) {
	let messages = structuredClone(event.messages ?? []);
	await each(core, "context", () => ({ type: "context", messages }), ctx, (r) => {
		if (r?.messages) messages = r.messages;
		return false;
	});
	return { messages };
}

async function emitBeforeProviderRequest(core, event, ctx) {
	let payload = event.payload;
	await each(core, "before_provider_request", () => ({ type: "before_provider_request", payload }), ctx, (r) => {
		if (r !== undefined) payload = r;
		return false;
	});
	return { payload };
}

/** `context_with_system` (pi 1.6.0): chained like `context`, on the full transcript. */
async function emitContextWithSystem(core, event, ctx) {
	let messages = event.messages ?? [];
	let changed = false;
	for (const { ext, handler } of core.registry.handlersFor("context_with_system")) {
		try {
			const hadLeadingSystemMessage = messages[0]?.role === "system";
			const returned = (await handler({ type: "context_with_system", messages }, ctx))?.messages;
			if (returned) {
				messages = returned;
				changed = true;
			}
			if (hadLeadingSystemMessage && messages[0]?.role !== "system") {
				core.runtime.emitError({
					extensionPath: ext.path,
					event: "context_with_system",
					error:
						"Handler removed the leading system message; the request has no prompt or initial tool declarations. Keep it at index 0 or replace a dropped prefix with getCurrentSystemMessage().",
				});
			}
		} catch (err) {
			reportError(core, ext, "context_with_system", err);
		}
	}
	return changed ? { messages } : null;
}

/**
 * `turn_end` and `agent_before_settle` (pi 1.6.0's actionable boundaries): each handler
 * sees the entries and continuation proposed so far; a returned `entries` or `continue`
 * replaces that field. Answers the proposal when a handler made one, else `null`.
 */
async function emitBoundary(core, event, ctx) {
	let entries = Array.isArray(event.entries) ? event.entries : [];
	let shouldContinue = event.continue === true;
	let proposed = false;
	await each(core, event.type, () => ({ ...event, entries, continue: shouldContinue }), ctx, (r) => {
		if (r?.entries !== undefined) {
			entries = r.entries;
			proposed = true;
		}
		if (r?.continue !== undefined) {
			shouldContinue = r.continue;
			proposed = true;
		}
		return false;
	});
	// A handler may also have pushed onto the array it was given.
	if (!proposed && entries.length === 0 && !shouldContinue) return null;
	return { entries, continue: shouldContinue };
}

/** `before_provider_headers` (pi 1.6.0): handlers change `event.headers` in place. */
async function emitBeforeProviderHeaders(core, event, ctx) {
	const headers = event.headers ?? {};
	await each(core, "before_provider_headers", () => ({ type: "before_provider_headers", headers }), ctx, () => false);
	return { headers };
}

async function emitBeforeAgentStart(core, event, baseCtx, abort) {
	let systemPrompt = event.systemPrompt;
	const ctx = createContext(core, {
		get signal() {
			return abort.signal;
		},
		getSystemPrompt: () => systemPrompt,
	});
	const messages = [];
	let promptModified = false;
	// pi 1.6.0: handlers may change `event.systemPromptOptions` in place (add a section,
	// say); every handler gets the same object, and pi renders the prompt from it.
	const options = event.systemPromptOptions;
	const optionsBefore = JSON.stringify(options);
	// pi 1.6.0: a run a custom message starts has `messageType: "custom"` and no prompt.
	const makeEvent = () => ({
		type: "before_agent_start",
		messageType: event.messageType ?? "user",
		...(event.messageType === "custom" ? { message: event.message } : { prompt: event.prompt, images: event.images }),
		systemPrompt,
		systemPromptOptions: options,
	});
	await each(core, "before_agent_start", makeEvent, ctx, (r) => {
		if (!r) return false;
		if (r.message) messages.push(r.message);
		if (r.systemPrompt !== undefined) {
			systemPrompt = r.systemPrompt;
			promptModified = true;
		}
		return false;
	});
	const optionsModified = options !== undefined && JSON.stringify(options) !== optionsBefore;
	if (messages.length === 0 && !promptModified && !optionsModified) return null;
	return {
		...(messages.length > 0 ? { messages } : {}),
		...(promptModified ? { systemPrompt } : {}),
		...(optionsModified ? { systemPromptOptions: options } : {}),
	};
}

async function emitResourcesDiscover(core, event, ctx) {
	const out = { skillPaths: [], promptPaths: [], themePaths: [] };
	await each(core, "resources_discover", () => ({ type: "resources_discover", cwd: event.cwd, reason: event.reason }), ctx, (r, ext) => {
		for (const key of ["skillPaths", "promptPaths", "themePaths"]) {
			if (r?.[key]?.length) out[key].push(...r[key].map((path) => ({ path, extensionPath: ext.path })));
		}
		return false;
	});
	return out;
}

/**
 * `user_bash` fails closed (pi 1.6.0): the first defined answer decides; a handler that
 * throws or answers anything but exactly one valid `{operations}` or `{result}` is reported
 * and answered `{failed: message}`, so pi runs nothing and no later handler is asked.
 */
async function emitUserBash(core, event, ctx) {
	for (const { ext, handler } of core.registry.handlersFor("user_bash")) {
		try {
			const result = await handler(event, ctx);
			if (result === undefined) continue;
			if (!isUserBashEventResult(result)) {
				throw new Error(
					"Invalid user_bash handler result: return undefined for local execution or exactly one valid { operations } or { result } object",
				);
			}
			return core.bashOperations.describe(result);
		} catch (err) {
			reportError(core, ext, "user_bash", err);
			return { failed: err instanceof Error ? err.message : String(err) };
		}
	}
	return null;
}

/** pi 1.6.0's check of a user_bash answer: `{operations: {exec()}}` or a BashResult. */
export function isUserBashEventResult(value) {
	if (typeof value !== "object" || value === null) return false;
	const hasOperations = value.operations !== undefined;
	const hasResult = value.result !== undefined;
	if (hasOperations === hasResult) return false;
	if (hasOperations) {
		return typeof value.operations === "object" && value.operations !== null && typeof value.operations.exec === "function";
	}
	const result = value.result;
	if (typeof result !== "object" || result === null) return false;
	return (
		typeof result.output === "string" &&
		"exitCode" in result &&
		(result.exitCode === undefined || typeof result.exitCode === "number") &&
		typeof result.cancelled === "boolean" &&
		typeof result.truncated === "boolean" &&
		(result.fullOutputPath === undefined || typeof result.fullOutputPath === "string")
	);
}

async function emitInput(core, event, ctx) {
	let text = event.text;
	let images = event.images;
	let handled = false;
	const makeEvent = () => ({ type: "input", text, images, source: event.source, streamingBehavior: event.streamingBehavior });
	await each(core, "input", makeEvent, ctx, (r) => {
		if (r?.action === "handled") {
			handled = true;
			return true;
		}
		if (r?.action === "transform") {
			text = r.text;
			images = r.images ?? images;
		}
		return false;
	});
	if (handled) return { action: "handled" };
	if (text !== event.text || images !== event.images) {
		return { action: "transform", text, ...(images !== undefined ? { images } : {}) };
	}
	return { action: "continue" };
}

/**
 * `project_trust` (pi 1.6.0): the first handler answering `trusted: "yes"` or `"no"` decides;
 * `"undecided"` falls through. Handlers get a trust context (cwd, mode, hasUI and prompts),
 * not the session's; their errors come back with the answer, as startup warnings.
 */
async function emitProjectTrust(core, event) {
	const ctx = createTrustContext(event);
	const errors = [];
	for (const { ext, handler } of core.registry.handlersFor("project_trust")) {
		try {
			const result = await handler({ type: "project_trust", cwd: event.cwd }, ctx);
			if (result.trusted === "undecided") continue;
			return { result: { trusted: result.trusted, ...(result.remember === true ? { remember: true } : {}) }, errors };
		} catch (err) {
			errors.push({ extensionPath: ext.path, error: err instanceof Error ? err.message : String(err) });
		}
	}
	return { errors };
}

/** `cache_warming_decision`: the last handler that returns an action wins. */
async function emitCacheWarmingDecision(core, event, ctx) {
	let action;
	await each(core, event.type, () => event, ctx, (result) => {
		if (result?.action !== undefined) action = result.action;
		return false;
	});
	return action === undefined ? null : { action };
}

const RULES = {
	project_trust: emitProjectTrust,
	cache_warming_decision: emitCacheWarmingDecision,
	tool_call: emitToolCall,
	tool_result: emitToolResult,
	message_end: emitMessageEnd,
	context: emitContext,
	before_provider_request: emitBeforeProviderRequest,
	before_provider_headers: emitBeforeProviderHeaders,
	context_with_system: emitContextWithSystem,
	turn_end: emitBoundary,
	agent_before_settle: emitBoundary,
	before_agent_start: emitBeforeAgentStart,
	resources_discover: emitResourcesDiscover,
	user_bash: emitUserBash,
	input: emitInput,
};
