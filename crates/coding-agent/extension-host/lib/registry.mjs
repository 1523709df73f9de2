/**
 * The loaded extensions and what they registered, and how pi sees them.
 *
 * Lookups follow pi 0.73.1's runner: extensions in load order; the first extension that
 * registered a tool name or message renderer wins; command invocation names are numbered
 * `name:1`, `name:2` when several extensions register the same name; the last extension
 * that registered a shortcut key (case-insensitive) wins. `describe()` is the per-extension
 * summary of the init answer and of later `registrations` notifications.
 */

import { hasBuiltinPrompt } from "./builtin-prompts.mjs";

export class Registry {
	constructor() {
		/** @type {Array<ReturnType<typeof createExtensionRecord>>} */
		this.extensions = [];
		/** @type {Map<string, {config: object, extensionPath: string}>} */
		this.providers = new Map();
		this.onChange = null;
		this.dirty = false;
	}

	/** Forget every extension (before they load again). */
	reset() {
		this.extensions = [];
		this.providers = new Map();
		this.dirty = false;
	}

	add(extension) {
		this.extensions.push(extension);
	}

	/** Mark the registrations as changed (after init); flushed before the next frame to pi. */
	changed() {
		if (this.dirty) return;
		this.dirty = true;
		queueMicrotask(() => this.flush());
	}

	flush() {
		if (!this.dirty) return;
		this.dirty = false;
		this.onChange?.(this.describe());
	}

	handlersFor(eventType) {
		const out = [];
		for (const ext of this.extensions) {
			for (const handler of ext.handlers.get(eventType) ?? []) out.push({ ext, handler });
		}
		return out;
	}

	findTool(name) {
		for (const ext of this.extensions) {
			const tool = ext.tools.get(name);
			if (tool) return { ext, tool };
		}
		return undefined;
	}

	findMessageRenderer(customType) {
		for (const ext of this.extensions) {
			const renderer = ext.messageRenderers.get(customType);
			if (renderer) return { ext, renderer };
		}
		return undefined;
	}

	findEntryRenderer(customType) {
		for (const ext of this.extensions) {
			const renderer = ext.entryRenderers.get(customType);
			if (renderer) return { ext, renderer };
		}
		return undefined;
	}

	/**
	 * pi 1.6.0's `resolveToolRenderers`: the first resolver (extensions in load order) gets
	 * `next()` = what the later ones, then `base()`, choose. Asked anew for each tool call.
	 */
	resolveToolRenderer(toolName, base) {
		const resolvers = this.extensions.flatMap((ext) => ext.toolRenderers);
		const resolve = (index) => (index < resolvers.length ? resolvers[index](toolName, () => resolve(index + 1)) : base());
		return resolve(0);
	}

	findShortcut(key) {
		const wanted = String(key).toLowerCase();
		let found;
		for (const ext of this.extensions) {
			for (const [shortcutKey, shortcut] of ext.shortcuts) {
				if (shortcutKey.toLowerCase() === wanted) found = { ext, shortcut };
			}
		}
		return found;
	}

	/** All shortcuts, last registration per key winning: [{key, ext, shortcut}]. */
	allShortcuts() {
		const byKey = new Map();
		for (const ext of this.extensions) {
			for (const [key, shortcut] of ext.shortcuts) byKey.set(key.toLowerCase(), { key, ext, shortcut });
		}
		return [...byKey.values()];
	}

	/** Commands with their invocation names, numbered like pi's runner. */
	resolveCommands() {
		const commands = [];
		const counts = new Map();
		for (const ext of this.extensions) {
			for (const command of ext.commands.values()) {
				commands.push({ command, ext });
				counts.set(command.name, (counts.get(command.name) ?? 0) + 1);
			}
		}
		const seen = new Map();
		const taken = new Set();
		return commands.map(({ command, ext }) => {
			const occurrence = (seen.get(command.name) ?? 0) + 1;
			seen.set(command.name, occurrence);
			let invocationName = (counts.get(command.name) ?? 0) > 1 ? `${command.name}:${occurrence}` : command.name;
			if (taken.has(invocationName)) {
				let suffix = occurrence;
				do {
					suffix++;
					invocationName = `${command.name}:${suffix}`;
				} while (taken.has(invocationName));
			}
			taken.add(invocationName);
			return { ...command, invocationName, ext };
		});
	}

	findCommand(name) {
		return this.resolveCommands().find((command) => command.invocationName === name);
	}

	setProvider(name, config, extensionPath) {
		this.providers.set(name, { config, extensionPath });
	}

	deleteProvider(name) {
		this.providers.delete(name);
	}

	/**
	 * pi's resource-loader diagnostics: a tool or flag name registered by a second extension
	 * (both stay loaded; the first registration wins). `[{path, error}]`.
	 */
	conflicts() {
		const out = [];
		const owners = { tool: new Map(), flag: new Map() };
		for (const ext of this.extensions) {
			for (const [kind, names, label] of [
				["tool", ext.tools.keys(), (n) => `Tool "${n}"`],
				["flag", ext.flags.keys(), (n) => `Flag "--${n}"`],
			]) {
				for (const name of names) {
					const owner = owners[kind].get(name);
					if (owner && owner !== ext.path) out.push({ path: ext.path, error: `${label(name)} conflicts with ${owner}` });
					else owners[kind].set(name, ext.path);
				}
			}
		}
		return out;
	}

	/** The per-extension registration summary sent to pi. */
	describe() {
		return this.extensions.map(describeExtension);
	}
}

/** A fresh, empty extension record (the TypeScript pi's `Extension`). */
export function createExtensionRecord(info, resolvedPath) {
	const baseDir = info.baseDir ?? (info.path.startsWith("<") ? undefined : dirnameOf(resolvedPath));
	return {
		path: info.path,
		resolvedPath,
		sourceInfo: info.sourceInfo ?? {
			path: info.path,
			source: info.source ?? "local",
			scope: "temporary",
			origin: "top-level",
			baseDir,
		},
		handlers: new Map(),
		tools: new Map(),
		messageRenderers: new Map(),
		entryRenderers: new Map(),
		toolRenderers: [],
		commands: new Map(),
		flags: new Map(),
		shortcuts: new Map(),
	};
}

function dirnameOf(file) {
	const index = file.lastIndexOf("/");
	return index > 0 ? file.slice(0, index) : "/";
}

function describeExtension(ext) {
	return {
		path: ext.path,
		handlers: [...ext.handlers.entries()].filter(([, list]) => list.length > 0).map(([event]) => event),
		tools: [...ext.tools.values()].map((tool) => describeTool(tool, ext.path)),
		commands: [...ext.commands.values()].map((command) => ({
			name: command.name,
			...(command.description !== undefined ? { description: command.description } : {}),
			extensionPath: ext.path,
			hasArgumentCompletions: typeof command.getArgumentCompletions === "function",
		})),
		flags: [...ext.flags.values()].map((flag) => ({
			name: flag.name,
			...(flag.description !== undefined ? { description: flag.description } : {}),
			type: flag.type,
			...(flag.default !== undefined ? { default: flag.default } : {}),
			extensionPath: ext.path,
		})),
		shortcuts: [...ext.shortcuts.values()].map((shortcut) => ({
			shortcut: shortcut.shortcut,
			...(shortcut.description !== undefined ? { description: shortcut.description } : {}),
		})),
		messageRenderers: [...ext.messageRenderers.keys()],
		entryRenderers: [...ext.entryRenderers.keys()],
		toolRenderers: ext.toolRenderers.length > 0,
	};
}

/** A ToolDef: the JSON view of a registered tool definition. */
export function describeTool(tool, extensionPath) {
	return {
		name: tool.name,
		label: tool.label,
		description: tool.description,
		parameters: toJsonSchema(tool.parameters),
		// A built-in re-registered with its factory's texts keeps the built-in's prompt lines.
		...(hasBuiltinPrompt(tool)
			? { builtinPrompt: true }
			: {
					...(tool.promptSnippet !== undefined ? { promptSnippet: tool.promptSnippet } : {}),
					...(tool.promptGuidelines !== undefined ? { promptGuidelines: tool.promptGuidelines } : {}),
				}),
		...(tool.executionMode !== undefined ? { executionMode: tool.executionMode } : {}),
		...(tool.constrainedSampling !== undefined ? { constrainedSampling: tool.constrainedSampling } : {}),
		...(tool.renderShell !== undefined ? { renderShell: tool.renderShell } : {}),
		...(tool.defaultActive === false ? { defaultActive: false } : {}),
		hasPrepareArguments: typeof tool.prepareArguments === "function",
		hasRenderCall: typeof tool.renderCall === "function",
		hasRenderResult: typeof tool.renderResult === "function",
		extensionPath,
	};
}

/** TypeBox schemas are JSON Schema objects (symbol-keyed metadata drops out). */
function toJsonSchema(schema) {
	if (schema === undefined) return { type: "object", properties: {} };
	return JSON.parse(JSON.stringify(schema, (_k, v) => (typeof v === "function" || typeof v === "bigint" ? undefined : v)));
}
