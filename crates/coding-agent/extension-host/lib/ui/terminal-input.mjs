/**
 * Raw terminal input listeners (`ctx.ui.onTerminalInput`, `tui.addInputListener`).
 *
 * While at least one listener exists the host tells pi (`setTerminalInputListening
 * {active:true}`), and pi sends each key as a `terminal_input {data}` request before its own
 * handling. Listeners run in registration order as in pi-tui: `{consume:true}` stops the key,
 * `{data}` rewrites it for the next listener and for pi.
 */

export class TerminalInput {
	constructor(send) {
		this.send = send;
		this.listeners = new Set();
	}

	add(listener) {
		this.listeners.add(listener);
		if (this.listeners.size === 1) this.send("setTerminalInputListening", { active: true });
		return () => this.remove(listener);
	}

	remove(listener) {
		if (!this.listeners.delete(listener)) return;
		if (this.listeners.size === 0) this.send("setTerminalInputListening", { active: false });
	}

	clear() {
		if (this.listeners.size === 0) return;
		this.listeners.clear();
		this.send("setTerminalInputListening", { active: false });
	}

	/** Run the listeners on one key; returns what pi should do with it. */
	handle(data) {
		let current = data;
		for (const listener of [...this.listeners]) {
			const result = listener(current);
			if (result?.consume) return { consume: true, data: current };
			if (result?.data !== undefined) current = result.data;
		}
		return { consume: current.length === 0, data: current };
	}
}
