/**
 * The JSON-lines channel between the extension host and pi.
 *
 * One JSON object per line in both directions. Requests carry a numeric `id`
 * unique per direction and are answered with `{"type":"response","id",result|error}`.
 * Everything else is a notification. A few notifications (`cancel`, `tool_update`,
 * `ui_cancel`) carry the id of the request they refer to; they are told apart by
 * their `type`, never answered.
 */

/** Frames from pi that carry an `id` but are notifications, not requests. */
const NOTIFICATIONS_WITH_ID = new Set(["cancel"]);

export class Channel {
	/**
	 * @param {import("node:stream").Duplex} stream the connected socket
	 * @param {{onRequest:(frame:object)=>Promise<unknown>, onNotification:(frame:object)=>void, onClose:()=>void, log?:(msg:string)=>void}} handlers
	 */
	constructor(stream, handlers) {
		this.stream = stream;
		this.handlers = handlers;
		this.nextId = 1;
		/** @type {Map<number,{resolve:(v:unknown)=>void,reject:(e:Error)=>void}>} */
		this.pending = new Map();
		this.closed = false;
		this.buffer = "";
		/** Called right before any response is written (used to flush registrations). */
		this.beforeResponse = null;
		stream.setEncoding?.("utf8");
		stream.on("data", (chunk) => this.onData(chunk));
		stream.on("close", () => this.onClose());
		stream.on("error", () => this.onClose());
	}

	onData(chunk) {
		this.buffer += chunk;
		let newline = this.buffer.indexOf("\n");
		while (newline !== -1) {
			const line = this.buffer.slice(0, newline);
			this.buffer = this.buffer.slice(newline + 1);
			if (line.trim()) this.onLine(line);
			newline = this.buffer.indexOf("\n");
		}
	}

	onLine(line) {
		let frame;
		try {
			frame = JSON.parse(line);
		} catch (err) {
			this.log(`malformed frame skipped: ${String(err?.message ?? err)}`);
			return;
		}
		if (!frame || typeof frame !== "object" || typeof frame.type !== "string") {
			this.log("frame without type skipped");
			return;
		}
		if (frame.type === "response") {
			this.onResponse(frame);
		} else if (typeof frame.id === "number" && !NOTIFICATIONS_WITH_ID.has(frame.type)) {
			this.runRequest(frame);
		} else {
			try {
				this.handlers.onNotification(frame);
			} catch (err) {
				this.log(`notification ${frame.type} failed: ${err?.stack ?? err}`);
			}
		}
	}

	onResponse(frame) {
		const waiter = this.pending.get(frame.id);
		if (!waiter) return;
		this.pending.delete(frame.id);
		if (frame.error !== undefined && frame.error !== null) {
			waiter.reject(new Error(String(frame.error)));
		} else {
			waiter.resolve(frame.result);
		}
	}

	async runRequest(frame) {
		let reply;
		try {
			const result = await this.handlers.onRequest(frame);
			reply = { type: "response", id: frame.id, result: result === undefined ? null : result };
		} catch (err) {
			reply = { type: "response", id: frame.id, error: err instanceof Error ? err.message : String(err) };
		}
		this.beforeResponse?.();
		this.write(reply);
	}

	/** Send a request to pi; resolves with its result, rejects with its error. */
	request(method, params = {}) {
		if (this.closed) return Promise.reject(new Error("Extension host channel is closed"));
		const id = this.nextId++;
		return new Promise((resolve, reject) => {
			this.pending.set(id, { resolve, reject });
			this.write({ type: "request", id, method, params });
		});
	}

	/** The id the next request will get (used to pair `ui_cancel` with a dialog). */
	peekNextId() {
		return this.nextId;
	}

	/** Drop a pending request locally (its answer, if any, is ignored). */
	forget(id) {
		this.pending.delete(id);
	}

	notify(type, fields = {}) {
		this.write({ type, ...fields });
	}

	write(frame) {
		if (this.closed) return;
		let line;
		try {
			line = JSON.stringify(frame, jsonReplacer);
		} catch (err) {
			line = JSON.stringify({
				type: "log",
				level: "error",
				message: `unserialisable ${frame.type} frame: ${err?.message ?? err}`,
			});
			if (frame.type === "response") {
				line = JSON.stringify({ type: "response", id: frame.id, error: `Result is not serialisable: ${err?.message ?? err}` });
			}
		}
		this.stream.write(`${line}\n`);
	}

	log(message, level = "warn") {
		if (this.handlers.log) this.handlers.log(message);
		this.write({ type: "log", level, message });
	}

	onClose() {
		if (this.closed) return;
		this.closed = true;
		for (const waiter of this.pending.values()) waiter.reject(new Error("Extension host channel closed"));
		this.pending.clear();
		this.handlers.onClose();
	}
}

/** JSON replacer: drops functions and AbortSignals, turns BigInt into strings, Maps into objects. */
export function jsonReplacer(_key, value) {
	if (typeof value === "function") return undefined;
	if (typeof value === "bigint") return value.toString();
	if (typeof AbortSignal !== "undefined" && value instanceof AbortSignal) return undefined;
	if (value instanceof Map) return Object.fromEntries(value);
	if (value instanceof Set) return [...value];
	return value;
}
