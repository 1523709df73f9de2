/**
 * The host's mirror of pi's state, fed by `state` frames, read by the synchronous getters of
 * `pi` and `ctx` (model, thinking level, model scope, tools, commands, idle flag, context
 * usage, system prompt and its inputs, session, model registry, terminal size, editor text).
 *
 * A `state` frame carries only the fields that changed. Actions that pi applies later
 * (setActiveTools, setThinkingLevel, setSessionName, setEditorText, setToolsExpanded) are
 * applied here at once too, so a getter right after the call sees the new value, as in
 * the TypeScript pi; pi's next `state` frame is authoritative.
 */
import { SessionMirror } from "./session-mirror.mjs";

const SIMPLE_FIELDS = [
	"model",
	"thinkingLevel",
	"isIdle",
	"hasPendingMessages",
	"activeTools",
	"allTools",
	"commands",
	"systemPrompt",
	"contextUsage",
	"terminal",
	"editorText",
	"toolsExpanded",
	"footer",
	"cwd",
	"scopedModels",
];

export class StateMirror {
	constructor() {
		this.model = null;
		this.thinkingLevel = "off";
		this.isIdle = true;
		this.hasPendingMessages = false;
		this.activeTools = [];
		this.allTools = [];
		this.commands = [];
		this.systemPrompt = "";
		this.contextUsage = null;
		this.terminal = { rows: 24, columns: 80 };
		this.editorText = "";
		this.toolsExpanded = false;
		this.footer = { gitBranch: null, availableProviderCount: 0 };
		this.cwd = process.cwd();
		/** `[{model, thinkingLevel?}]`, empty without a model scope. */
		this.scopedModels = [];
		/** The base system prompt inputs (`ctx.getSystemPromptOptions()`). */
		this.systemPromptOptions = normalizePromptOptions({ cwd: this.cwd });
		this.models = { all: [], available: [] };
		this.themeName = undefined;
		this.session = new SessionMirror();
		/** Listeners called with the frame after each update. */
		this.listeners = new Set();
	}

	/** Apply a `state` frame (or the `state` object of `init`). */
	apply(frame) {
		if (!frame || typeof frame !== "object") return;
		for (const field of SIMPLE_FIELDS) {
			if (frame[field] !== undefined) this[field] = frame[field];
		}
		if (frame.models !== undefined) {
			this.models = {
				all: frame.models?.all ?? this.models.all,
				available: frame.models?.available ?? this.models.available,
			};
		}
		if (frame.systemPromptOptions !== undefined) this.systemPromptOptions = normalizePromptOptions(frame.systemPromptOptions);
		if (frame.themeName !== undefined) this.themeName = frame.themeName;
		if (frame.session) this.session.apply(frame.session);
		for (const listener of this.listeners) listener(frame);
	}

	onChange(listener) {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/** setActiveTools as pi applies it: unknown names are dropped (when the tool list is known). */
	setActiveToolsLocally(names) {
		const known = new Set(this.allTools.map((tool) => tool.name));
		this.activeTools = known.size > 0 ? names.filter((name) => known.has(name)) : [...names];
	}

	findModel(provider, modelId) {
		return this.models.all.find((m) => m.provider === provider && m.id === modelId);
	}

	hasConfiguredAuth(model) {
		if (!model) return false;
		return this.models.available.some((m) => m.provider === model.provider && m.id === model.id);
	}
}

/**
 * pi 1.6.0's `normalizeBuildSystemPromptOptions`: every field present, in its order (the
 * optional prompts as `undefined`), so `Object.keys` of `ctx.getSystemPromptOptions()` reads
 * as in pi. Like pi's, the object is not copied per call; changing it does not change the
 * prompt pi builds here, and pi's next changed value replaces it.
 */
export function normalizePromptOptions(input) {
	return {
		customPrompt: input.customPrompt,
		forceSystemPrompt: input.forceSystemPrompt,
		selectedTools: input.selectedTools ?? ["read", "bash", "edit", "write"],
		hiddenTools: input.hiddenTools ?? [],
		toolSnippets: input.toolSnippets ?? {},
		toolGuidelines: input.toolGuidelines ?? {},
		promptGuidelines: input.promptGuidelines ?? [],
		appendSystemPrompt: input.appendSystemPrompt ?? "",
		sections: input.sections ?? {},
		cwd: input.cwd,
		contextFiles: input.contextFiles ?? [],
		skills: input.skills ?? [],
	};
}
