/**
 * `ctx` objects: ExtensionContext (handlers, tools, shortcuts) and ExtensionCommandContext
 * (commands), and the ReplacedSessionContext given to `withSession` callbacks.
 *
 * Getters read the state mirror at call time. `ctx.signal` is the AbortSignal of the pi
 * request being served (aborted by pi's `cancel`). A command ctx becomes stale after a
 * successful newSession / fork / switchSession / reload and then throws pi's stale-ctx error.
 */
import { loadDist } from "./native.mjs";

export const STALE_MESSAGE =
	"This extension ctx is stale after session replacement or reload. Do not use a captured pi or command ctx after ctx.newSession(), ctx.fork(), ctx.switchSession(), or ctx.reload(). For newSession, fork, and switchSession, move post-replacement work into withSession and use the ctx passed to withSession. For reload, do not use the old ctx after await ctx.reload().";

/**
 * @param {object} core the host's shared objects (channel, state, runtime, ui, ...)
 * @param {{signal?: AbortSignal, getSystemPrompt?: () => string, stale?: {message?: string}}} [options]
 */
export function createContext(core, options = {}) {
	const stale = options.stale ?? {};
	const assertActive = () => {
		if (stale.message) throw new Error(stale.message);
	};
	const { state, runtime } = core;
	return {
		get ui() {
			assertActive();
			return core.ui;
		},
		/** `"tui"`, `"rpc"`, `"json"` or `"print"` (pi 1.6.0 calls the interactive mode "tui"). */
		get mode() {
			assertActive();
			return core.mode === "interactive" ? "tui" : core.mode;
		},
		get hasUI() {
			assertActive();
			return core.hasUI;
		},
		get cwd() {
			assertActive();
			return state.cwd;
		},
		get sessionManager() {
			assertActive();
			return state.session;
		},
		get modelRegistry() {
			assertActive();
			return core.modelRegistry;
		},
		get model() {
			assertActive();
			return state.model ?? undefined;
		},
		/** The session's model scope (`--models`, `enabledModels`): `[{model, thinkingLevel?}]`. */
		get scopedModels() {
			assertActive();
			return state.scopedModels;
		},
		get thinkingLevel() {
			assertActive();
			return state.thinkingLevel;
		},
		isIdle: () => {
			assertActive();
			return state.isIdle;
		},
		/** The effective project trust decision pi made at startup (true without project resources). */
		isProjectTrusted: () => {
			assertActive();
			return core.projectTrusted;
		},
		get signal() {
			assertActive();
			return options.signal;
		},
		abort: () => {
			assertActive();
			// Counted, so a batch of tool_call events stops at it (see dispatch.mjs `events`).
			core.abortRequests = (core.abortRequests ?? 0) + 1;
			runtime.fireAndForget("abort", {}, "abort");
		},
		hasPendingMessages: () => {
			assertActive();
			return state.hasPendingMessages;
		},
		shutdown: () => {
			assertActive();
			runtime.fireAndForget("shutdown", {}, "shutdown");
		},
		getContextUsage: () => {
			assertActive();
			return state.contextUsage ?? undefined;
		},
		compact: (compactOptions) => {
			assertActive();
			core.channel.request("compact", { customInstructions: compactOptions?.customInstructions }).then(
				(result) => compactOptions?.onComplete?.(result),
				(err) => compactOptions?.onError?.(err instanceof Error ? err : new Error(String(err))),
			);
		},
		getSystemPrompt: () => {
			assertActive();
			return options.getSystemPrompt ? options.getSystemPrompt() : state.systemPrompt;
		},
	};
}

/** The command context: ctx plus session control. */
export function createCommandContext(core, options = {}) {
	const stale = options.stale ?? {};
	const ctx = Object.defineProperties({}, Object.getOwnPropertyDescriptors(createContext(core, { ...options, stale })));
	const assertActive = () => {
		if (stale.message) throw new Error(stale.message);
	};
	const request = (method, params) => core.channel.request(method, params);
	/** The base system prompt inputs (see normalizePromptOptions in lib/state.mjs). */
	ctx.getSystemPromptOptions = () => {
		assertActive();
		return core.state.systemPromptOptions;
	};
	/** After pi replaced the session: this ctx goes stale, withSession gets a fresh one. */
	const afterReplacement = async (result, withSession) => {
		const cancelled = result?.cancelled === true;
		if (!cancelled) {
			stale.message ??= STALE_MESSAGE;
			if (withSession) await withSession(createReplacedSessionContext(core));
		}
		return { cancelled };
	};
	ctx.waitForIdle = async () => {
		assertActive();
		await request("waitForIdle", {});
	};
	ctx.newSession = async (newOptions) => {
		assertActive();
		const params = {};
		if (newOptions?.parentSession !== undefined) params.parentSession = newOptions.parentSession;
		if (newOptions?.setup) params.setupEntries = await runSetup(core, newOptions.setup);
		return afterReplacement(await request("newSession", params), newOptions?.withSession);
	};
	ctx.fork = async (entryId, forkOptions) => {
		assertActive();
		const result = await request("fork", { entryId, position: forkOptions?.position ?? "before" });
		return afterReplacement(result, forkOptions?.withSession);
	};
	ctx.navigateTree = async (targetId, treeOptions) => {
		assertActive();
		const result = await request("navigateTree", {
			targetId,
			summarize: treeOptions?.summarize,
			customInstructions: treeOptions?.customInstructions,
			replaceInstructions: treeOptions?.replaceInstructions,
			label: treeOptions?.label,
		});
		return { cancelled: result?.cancelled === true };
	};
	ctx.switchSession = async (sessionPath, switchOptions) => {
		assertActive();
		return afterReplacement(await request("switchSession", { sessionPath }), switchOptions?.withSession);
	};
	ctx.reload = async () => {
		assertActive();
		await request("reload", {});
		stale.message ??= STALE_MESSAGE;
	};
	return ctx;
}

/** A fresh command ctx for the replacement session, whose send methods are awaitable. */
export function createReplacedSessionContext(core) {
	const ctx = createCommandContext(core, {});
	ctx.sendMessage = async (message, options) => {
		await core.channel.request("sendMessage", { message, options: options ?? {} });
	};
	ctx.sendUserMessage = async (content, options) => {
		await core.channel.request("sendUserMessage", { content, options: options ?? {} });
	};
	return ctx;
}

/**
 * Run a newSession `setup(sessionManager)` callback against pi's own in-memory
 * SessionManager and return the entries it appended, for pi to write into the new session.
 */
async function runSetup(core, setup) {
	const { SessionManager } = loadDist("core/session-manager.js");
	const manager = SessionManager.inMemory(core.state.cwd);
	await setup(manager);
	return manager.getEntries();
}
