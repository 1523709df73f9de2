/**
 * Remote components: pi-tui Components that live in the host and are drawn by pi.
 *
 * Every component an extension builds for the interactive UI (ui.custom, widget / footer /
 * header / editor factories, tool renderers, message renderers, overlays) gets a numeric
 * `componentId`. pi asks `component_render {componentId, width}` for its lines and forwards
 * keys with `component_input`; the host forwards `tui.requestRender()` as a `requestRender`
 * ui notification. Each component gets its own TUI-like object (the real TUI owns the
 * terminal in pi): terminal size from the state mirror, overlays, focus and input listeners
 * forwarded to pi.
 */

export class ComponentTable {
	/**
	 * @param {{channel: object, state: object, terminalInput: {add: (fn: Function) => () => void}}} deps
	 */
	constructor({ channel, state, terminalInput }) {
		this.channel = channel;
		this.state = state;
		this.terminalInput = terminalInput;
		/** @type {Map<number, {component: object, onDispose?: () => void}>} */
		this.entries = new Map();
		this.nextId = 1;
	}

	allocate() {
		return this.nextId++;
	}

	send(method, params) {
		this.channel.notify("ui", { method, params });
	}

	register(id, component, onDispose) {
		this.entries.set(id, { component, onDispose });
		return id;
	}

	/** Register a component under a fresh id (or return the id it already has). */
	add(component, onDispose) {
		for (const [id, entry] of this.entries) if (entry.component === component) return id;
		return this.register(this.allocate(), component, onDispose);
	}

	get(id) {
		return this.entries.get(id)?.component;
	}

	idOf(component) {
		for (const [id, entry] of this.entries) if (entry.component === component) return id;
		return undefined;
	}

	/** Lines of a component; [] for an unknown (e.g. just closed) one. */
	render(id, width) {
		const component = this.get(id);
		if (!component) return [];
		const lines = component.render(Math.max(1, Math.floor(width)));
		return Array.isArray(lines) ? lines.map((line) => String(line)) : [];
	}

	/** Forward a key; ignored for an unknown (e.g. just closed) component. */
	input(id, data) {
		this.get(id)?.handleInput?.(data);
	}

	/** pi moved the focus: Focusable components draw the cursor marker while focused. */
	focus(id, focused) {
		const component = this.get(id);
		if (component) component.focused = focused;
	}

	/** pi set the editor's text (submit, history, fork) while a custom editor shows. */
	setText(id, text) {
		const component = this.get(id);
		if (typeof component?.setText !== "function") return;
		component.setText(text);
		this.send("requestRender", { componentId: id });
	}

	invalidate(id) {
		const targets = id === undefined ? [...this.entries.values()].map((e) => e.component) : [this.get(id)];
		for (const component of targets) component?.invalidate?.();
	}

	dispose(id) {
		const entry = this.entries.get(id);
		if (!entry) return;
		this.entries.delete(id);
		try {
			entry.component?.dispose?.();
		} catch {
			// dispose errors are ignored, as in pi
		}
		entry.onDispose?.();
	}

	/** The TUI-like object handed to factories of the component that will get `id`. */
	createTui(id) {
		const table = this;
		const state = this.state;
		let overlays = 0;
		return {
			terminal: {
				get rows() {
					return state.terminal?.rows ?? 24;
				},
				get columns() {
					return state.terminal?.columns ?? 80;
				},
				setTitle(title) {
					table.send("setTitle", { title });
				},
				write() {},
			},
			requestRender(force) {
				table.send("requestRender", { componentId: id, ...(force ? { force: true } : {}) });
			},
			invalidate() {
				table.get(id)?.invalidate?.();
			},
			showOverlay(component, options) {
				const overlayId = table.add(component);
				overlays++;
				table.send("showOverlay", { componentId: overlayId, parentComponentId: id, overlayOptions: plainOverlayOptions(options) });
				return table.overlayHandle(overlayId, () => overlays--);
			},
			hideOverlay() {
				if (overlays > 0) overlays--;
				table.send("hideOverlay", { parentComponentId: id });
			},
			hasOverlay() {
				return overlays > 0;
			},
			setFocus(component) {
				const focusId = component ? table.add(component) : null;
				table.send("setFocus", { componentId: focusId });
			},
			addInputListener(listener) {
				return table.terminalInput.add(listener);
			},
			removeInputListener(listener) {
				table.terminalInput.remove(listener);
			},
			start() {
				table.send("tuiStart", {});
			},
			stop() {
				table.send("tuiStop", {});
			},
			getShowHardwareCursor: () => false,
			setShowHardwareCursor() {},
			getClearOnShrink: () => false,
			setClearOnShrink() {},
			get fullRedraws() {
				return 0;
			},
		};
	}

	/** An OverlayHandle whose actions are forwarded to pi as `overlay` notifications. */
	overlayHandle(id, onHide) {
		const table = this;
		let hidden = false;
		let focused = true;
		let gone = false;
		const act = (action) => table.send("overlay", { componentId: id, action });
		return {
			hide() {
				if (gone) return;
				gone = true;
				onHide?.();
				act("hide");
			},
			setHidden(value) {
				hidden = Boolean(value);
				act(hidden ? "setHidden" : "setVisible");
			},
			isHidden: () => hidden || gone,
			focus() {
				focused = true;
				act("focus");
			},
			unfocus() {
				focused = false;
				act("unfocus");
			},
			isFocused: () => focused && !hidden && !gone,
		};
	}
}

/** Overlay options as JSON: static values only (a `visible` callback cannot travel). */
export function plainOverlayOptions(options) {
	if (!options || typeof options !== "object") return undefined;
	const out = {};
	for (const [key, value] of Object.entries(options)) {
		if (typeof value !== "function") out[key] = value;
	}
	return out;
}
