/**
 * `ctx.ui` in rpc mode, as pi 0.73.1's rpc-mode.js: dialogs become `ui.*` requests (pi turns
 * them into `extension_ui_request` lines); notify, setStatus, setWidget (string arrays only),
 * setTitle and set_editor_text become `ui` notifications; pasteToEditor falls back to
 * set_editor_text; component factories, custom(), working-indicator calls, autocomplete and
 * editor components are ignored; getEditorText is ""; theme switching is refused.
 */
import { currentTheme } from "../theme.mjs";
import { createDialogs } from "./dialogs.mjs";

export function createRpcUI(channel) {
	const dialogs = createDialogs(channel);
	const ui = {
		select: dialogs.select,
		confirm: dialogs.confirm,
		input: dialogs.input,
		editor: dialogs.editor,
		notify(message, type) {
			dialogs.send("notify", { message, ...(type !== undefined ? { notifyType: type } : {}) });
		},
		onTerminalInput() {
			return () => {};
		},
		setStatus(key, text) {
			dialogs.send("setStatus", { statusKey: key, ...(text !== undefined ? { statusText: text } : {}) });
		},
		setWorkingMessage() {},
		setWorkingVisible() {},
		setWorkingIndicator() {},
		setHiddenThinkingLabel() {},
		setWidget(key, content, options) {
			if (content !== undefined && !Array.isArray(content)) return;
			dialogs.send("setWidget", {
				widgetKey: key,
				...(content !== undefined ? { widgetLines: content } : {}),
				...(options?.placement !== undefined ? { widgetPlacement: options.placement } : {}),
			});
		},
		setFooter() {},
		setHeader() {},
		setTitle(title) {
			dialogs.send("setTitle", { title });
		},
		async custom() {
			return undefined;
		},
		pasteToEditor(text) {
			ui.setEditorText(text);
		},
		setEditorText(text) {
			dialogs.send("set_editor_text", { text });
		},
		getEditorText() {
			return "";
		},
		addAutocompleteProvider() {},
		setEditorComponent() {},
		getEditorComponent() {
			return undefined;
		},
		get theme() {
			return currentTheme();
		},
		getAllThemes() {
			return [];
		},
		getTheme() {
			return undefined;
		},
		setTheme() {
			return { success: false, error: "Theme switching not supported in RPC mode" };
		},
		getToolsExpanded() {
			return false;
		},
		setToolsExpanded() {},
	};
	return ui;
}
