/**
 * `ctx.ui` in interactive mode. Dialogs are `ui.*` requests that pi's TUI shows; simple
 * calls are `ui` notifications; everything built from pi-tui Components becomes a remote
 * component (see components.mjs): `custom`, widget / footer / header factories and
 * `setEditorComponent`. Synchronous getters (editor text, tools expanded) read the state
 * mirror; the theme is the real one, switchable by name or instance.
 */
import { currentTheme, keybindings, themeModule } from "../theme.mjs";
import { plainOverlayOptions } from "./components.mjs";
import { createDialogs } from "./dialogs.mjs";

/** The app actions pi's default editor handles; a custom editor forwards them to pi. */
const EDITOR_ACTIONS = [
	"app.clear",
	"app.suspend",
	"app.thinking.cycle",
	"app.model.cycleForward",
	"app.model.cycleBackward",
	"app.model.select",
	"app.tools.expand",
	"app.thinking.toggle",
	"app.editor.external",
	"app.message.followUp",
	"app.message.dequeue",
	"app.session.new",
	"app.session.tree",
	"app.session.fork",
	"app.session.resume",
];

/**
 * @param {{channel: object, state: object, components: import("./components.mjs").ComponentTable,
 *   terminalInput: import("./terminal-input.mjs").TerminalInput, runShortcutFor: (data: string) => boolean}} deps
 */
/**
 * The provider extensions' autocomplete providers wrap: it defers to pi's own completion
 * (null suggestions); applying a completion replaces the prefix before the cursor, as
 * pi-tui's default does.
 */
const PI_COMPLETION = {
	async getSuggestions() {
		return null;
	},
	applyCompletion(lines, cursorLine, cursorCol, item, prefix) {
		const line = lines[cursorLine] ?? "";
		const start = Math.max(0, cursorCol - prefix.length);
		const next = [...lines];
		next[cursorLine] = line.slice(0, start) + item.value + line.slice(cursorCol);
		return { lines: next, cursorLine, cursorCol: start + item.value.length };
	},
	shouldTriggerFileCompletion() {
		return true;
	},
};

export function createInteractiveUI({ channel, state, components, terminalInput, runShortcutFor }) {
	const dialogs = createDialogs(channel);
	const send = dialogs.send;
	const statuses = new Map();
	const widgets = new Map();
	const slots = { footer: undefined, header: undefined, editor: undefined };
	let editorFactory;
	/** Autocomplete providers extensions stacked, innermost first, and the built chain. */
	const autocomplete = { factories: [], chain: undefined };
	const branchListeners = new Set();
	let lastBranch = state.footer?.gitBranch ?? null;
	state.onChange((frame) => {
		const branch = state.footer?.gitBranch ?? null;
		if (frame.footer !== undefined && branch !== lastBranch) {
			lastBranch = branch;
			for (const listener of branchListeners) listener();
		}
	});
	const footerData = {
		getGitBranch: () => state.footer?.gitBranch ?? null,
		getExtensionStatuses: () => statuses,
		getAvailableProviderCount: () => state.footer?.availableProviderCount ?? 0,
		onBranchChange(callback) {
			branchListeners.add(callback);
			return () => branchListeners.delete(callback);
		},
	};

	/** Create a component from `build(tui)` under a fresh id, registered in the table. */
	const createComponent = (build, onDispose) => {
		const id = components.allocate();
		const component = build(components.createTui(id));
		components.register(id, component, onDispose);
		return id;
	};

	const replaceSlot = (slot, method, factory, build, prepare) => {
		if (slots[slot] !== undefined) components.dispose(slots[slot]);
		slots[slot] = undefined;
		if (!factory) {
			send(method, {});
			return;
		}
		slots[slot] = createComponent(build);
		prepare?.(components.get(slots[slot]), slots[slot]);
		send(method, { componentId: slots[slot] });
	};

	const wireEditor = (editor, id) => {
		editor.setText?.(state.editorText ?? "");
		editor.onSubmit = (text) => send("editorSubmit", { componentId: id, text });
		editor.onChange = (text) => {
			state.editorText = text;
			send("editorChange", { componentId: id, text });
		};
		const action = (name) => () => send("editorAction", { componentId: id, action: name });
		if ("actionHandlers" in editor && editor.actionHandlers instanceof Map) {
			editor.onEscape ??= action("app.interrupt");
			editor.onCtrlD ??= action("app.exit");
			editor.onPasteImage ??= action("app.clipboard.pasteImage");
			editor.onExtensionShortcut ??= (data) => runShortcutFor(data);
			for (const name of EDITOR_ACTIONS) {
				if (!editor.actionHandlers.has(name)) editor.actionHandlers.set(name, action(name));
			}
		}
	};

	const ui = {
		select: dialogs.select,
		confirm: dialogs.confirm,
		input: dialogs.input,
		editor: dialogs.editor,
		notify(message, type) {
			send("notify", { message, ...(type !== undefined ? { notifyType: type } : {}) });
		},
		onTerminalInput(handler) {
			return terminalInput.add(handler);
		},
		setStatus(key, text) {
			if (text === undefined) statuses.delete(key);
			else statuses.set(key, text);
			send("setStatus", { statusKey: key, ...(text !== undefined ? { statusText: text } : {}) });
		},
		setWorkingMessage(message) {
			send("setWorkingMessage", message !== undefined ? { message } : {});
		},
		setWorkingVisible(visible) {
			send("setWorkingVisible", { visible: Boolean(visible) });
		},
		setWorkingIndicator(options) {
			send("setWorkingIndicator", options !== undefined ? { options } : {});
		},
		setHiddenThinkingLabel(label) {
			send("setHiddenThinkingLabel", label !== undefined ? { label } : {});
		},
		setWidget(key, content, options) {
			if (widgets.has(key)) components.dispose(widgets.get(key));
			widgets.delete(key);
			const placement = options?.placement !== undefined ? { widgetPlacement: options.placement } : {};
			if (content === undefined || Array.isArray(content)) {
				send("setWidget", { widgetKey: key, ...(content ? { widgetLines: content } : {}), ...placement });
				return;
			}
			const id = createComponent((tui) => content(tui, currentTheme()));
			widgets.set(key, id);
			send("setWidget", { widgetKey: key, componentId: id, ...placement });
		},
		setFooter(factory) {
			replaceSlot("footer", "setFooter", factory, (tui) => factory(tui, currentTheme(), footerData));
		},
		setHeader(factory) {
			replaceSlot("header", "setHeader", factory, (tui) => {
				const header = factory(tui, currentTheme());
				if (typeof header?.setExpanded === "function") header.setExpanded(state.toolsExpanded === true);
				return header;
			});
		},
		setTitle(title) {
			send("setTitle", { title });
		},
		custom(factory, options) {
			return showCustom(factory, options);
		},
		pasteToEditor(text) {
			send("pasteToEditor", { text });
		},
		setEditorText(text) {
			state.editorText = text;
			if (slots.editor !== undefined) components.get(slots.editor)?.setText?.(text);
			send("set_editor_text", { text });
		},
		getEditorText() {
			if (slots.editor !== undefined) {
				const editor = components.get(slots.editor);
				const text = editor?.getExpandedText?.() ?? editor?.getText?.();
				if (typeof text === "string") return text;
			}
			return state.editorText ?? "";
		},
		addAutocompleteProvider(factory) {
			if (typeof factory !== "function") return;
			autocomplete.factories.push(factory);
			// As pi 1.6 sets its provider up: each wrapper once, its triggerCharacters gathered.
			const triggers = [];
			autocomplete.chain = autocomplete.factories.reduce((current, wrap) => {
				const provider = wrap(current) ?? current;
				if (Array.isArray(provider.triggerCharacters)) triggers.push(...provider.triggerCharacters.map(String));
				return provider;
			}, PI_COMPLETION);
			send("setAutocomplete", { active: true, triggerCharacters: [...new Set(triggers)] });
		},
		/** pi's `autocomplete` request: the stacked providers' suggestions, or null (pi's own). */
		async autocomplete(frame, signal) {
			autocomplete.chain ??= autocomplete.factories.reduce((current, factory) => factory(current) ?? current, PI_COMPLETION);
			const result = await autocomplete.chain.getSuggestions(frame.lines ?? [""], frame.cursorLine ?? 0, frame.cursorCol ?? 0, {
				signal,
				force: frame.force === true,
			});
			if (!result || !Array.isArray(result.items) || result.items.length === 0) return null;
			return {
				prefix: String(result.prefix ?? ""),
				items: result.items.map((item) => ({
					value: String(item.value),
					...(item.label !== undefined ? { label: String(item.label) } : {}),
					...(item.description !== undefined ? { description: String(item.description) } : {}),
				})),
			};
		},
		setEditorComponent(factory) {
			editorFactory = factory;
			replaceSlot("editor", "setEditorComponent", factory, (tui) => factory(tui, themeModule().getEditorTheme(), keybindings()), wireEditor);
		},
		getEditorComponent() {
			return editorFactory;
		},
		get theme() {
			return currentTheme();
		},
		getAllThemes() {
			return themeModule().getAvailableThemesWithPaths();
		},
		getTheme(name) {
			return themeModule().getThemeByName(name);
		},
		setTheme(themeOrName) {
			const mod = themeModule();
			if (themeOrName instanceof mod.Theme) {
				mod.setThemeInstance(themeOrName);
				components.invalidate();
				send("setTheme", { name: themeOrName.name ?? "<in-memory>", instance: true });
				return { success: true };
			}
			const result = mod.setTheme(themeOrName, false);
			if (result.success) {
				components.invalidate();
				send("setTheme", { name: themeOrName });
			}
			return result;
		},
		getToolsExpanded() {
			return state.toolsExpanded === true;
		},
		setToolsExpanded(expanded) {
			state.toolsExpanded = Boolean(expanded);
			send("setToolsExpanded", { expanded: Boolean(expanded) });
		},
	};

	/** ui.custom: the factory's component shown by pi until `done(value)` (or pi closes it). */
	function showCustom(factory, options) {
		const id = components.allocate();
		const tui = components.createTui(id);
		return new Promise((resolve, reject) => {
			let closed = false;
			const close = (value) => {
				if (closed) return;
				closed = true;
				resolve(value);
				send("done", { componentId: id });
				components.dispose(id);
			};
			Promise.resolve()
				.then(() => factory(tui, currentTheme(), keybindings(), close))
				.then((component) => {
					if (closed) {
						component?.dispose?.();
						return;
					}
					components.register(id, component);
					const overlay = options?.overlay === true;
					let overlayOptions;
					if (overlay) {
						const raw = typeof options?.overlayOptions === "function" ? options.overlayOptions() : options?.overlayOptions;
						overlayOptions = plainOverlayOptions(raw) ?? (component?.width ? { width: component.width } : undefined);
					}
					channel
						.request("ui.custom", {
							componentId: id,
							overlay,
							...(overlayOptions ? { overlayOptions } : {}),
							...(component?.wantsKeyRelease ? { wantsKeyRelease: true } : {}),
						})
						.then(
							() => close(undefined),
							() => close(undefined),
						);
					if (overlay) options?.onHandle?.(components.overlayHandle(id));
				})
				.catch((err) => {
					if (closed) return;
					closed = true;
					components.dispose(id);
					reject(err);
				});
		});
	}

	return ui;
}
