/**
 * `ctx.sessionManager`: a read-only SessionManager over the host's mirror of pi's session.
 *
 * pi pushes the session in `state` frames (`session.reset` replaces it, otherwise entries are
 * appended). The getters follow pi 0.73.1's SessionManager: the leaf is the last appended
 * entry unless pi names one, labels come from `label` entries, the name from the latest
 * `session_info` entry, getBranch walks parentIds to the root, getTree sorts children by
 * timestamp and treats orphans as roots.
 */
import { loadDist } from "./native.mjs";

export class SessionMirror {
	constructor() {
		this.header = null;
		this.entries = [];
		this.byId = new Map();
		this.labelsById = new Map();
		this.labelTimestampsById = new Map();
		this.leafId = null;
		this.sessionFile = undefined;
		this.sessionDir = "";
		this.sessionId = "";
		this.cwd = "";
		this.nameFallback = undefined;
		/** Name set by the host before pi confirmed it (setSessionName is fire-and-forget). */
		this.pendingName = undefined;
	}

	/** Apply the `session` field of a `state` frame. */
	apply(update) {
		if (update.reset) {
			this.header = null;
			this.entries = [];
			this.byId.clear();
			this.labelsById.clear();
			this.labelTimestampsById.clear();
			this.leafId = null;
			this.nameFallback = undefined;
		}
		this.pendingName = undefined;
		if (update.header !== undefined) this.header = update.header;
		if (this.header?.cwd && !this.cwd) this.cwd = this.header.cwd;
		if (update.cwd !== undefined) this.cwd = update.cwd;
		for (const entry of update.entries ?? []) this.append(entry);
		if (update.sessionFile !== undefined) this.sessionFile = update.sessionFile ?? undefined;
		if (update.sessionDir !== undefined) this.sessionDir = update.sessionDir;
		if (update.sessionId !== undefined) this.sessionId = update.sessionId;
		else if (update.header?.id) this.sessionId = update.header.id;
		if (update.leafId !== undefined) this.leafId = update.leafId;
		if (update.name !== undefined) this.nameFallback = update.name ?? undefined;
	}

	append(entry) {
		if (!entry || entry.type === "session") {
			if (entry) this.header = entry;
			return;
		}
		this.entries.push(entry);
		this.byId.set(entry.id, entry);
		this.leafId = entry.id;
		if (entry.type === "label") {
			if (entry.label) {
				this.labelsById.set(entry.targetId, entry.label);
				this.labelTimestampsById.set(entry.targetId, entry.timestamp);
			} else {
				this.labelsById.delete(entry.targetId);
				this.labelTimestampsById.delete(entry.targetId);
			}
		}
	}

	getCwd() {
		return this.cwd;
	}
	getSessionDir() {
		return this.sessionDir;
	}
	getSessionId() {
		return this.sessionId;
	}
	getSessionFile() {
		return this.sessionFile;
	}
	getLeafId() {
		return this.leafId;
	}
	getLeafEntry() {
		return this.leafId ? this.byId.get(this.leafId) : undefined;
	}
	getEntry(id) {
		return this.byId.get(id);
	}
	getChildren(parentId) {
		return this.entries.filter((entry) => entry.parentId === parentId);
	}
	getLabel(id) {
		return this.labelsById.get(id);
	}
	getBranch(fromId) {
		const branch = [];
		const startId = fromId ?? this.leafId;
		let current = startId ? this.byId.get(startId) : undefined;
		while (current) {
			branch.unshift(current);
			current = current.parentId ? this.byId.get(current.parentId) : undefined;
		}
		return branch;
	}
	getHeader() {
		return this.header;
	}
	getEntries() {
		return [...this.entries];
	}
	getSessionName() {
		if (this.pendingName !== undefined) return this.pendingName.trim() || undefined;
		for (let i = this.entries.length - 1; i >= 0; i--) {
			const entry = this.entries[i];
			if (entry.type === "session_info") return entry.name?.trim() || undefined;
		}
		return this.nameFallback;
	}
	getTree() {
		const nodes = new Map();
		const roots = [];
		for (const entry of this.entries) {
			nodes.set(entry.id, {
				entry,
				children: [],
				label: this.labelsById.get(entry.id),
				labelTimestamp: this.labelTimestampsById.get(entry.id),
			});
		}
		for (const entry of this.entries) {
			const node = nodes.get(entry.id);
			const parent = entry.parentId === null || entry.parentId === entry.id ? undefined : nodes.get(entry.parentId);
			if (parent) parent.children.push(node);
			else roots.push(node);
		}
		const stack = [...roots];
		while (stack.length > 0) {
			const node = stack.pop();
			node.children.sort((a, b) => new Date(a.entry.timestamp).getTime() - new Date(b.entry.timestamp).getTime());
			stack.push(...node.children);
		}
		return roots;
	}
	/** The messages pi would send to the model from the current leaf (pi's own builder). */
	buildSessionContext() {
		return sessionManagerModule().buildSessionContext(this.getEntries(), this.leafId, this.byId);
	}
	isPersisted() {
		return this.sessionFile !== undefined;
	}
}

/** pi's session-manager.js, loaded on first use (cheap, but most extensions never need it). */
function sessionManagerModule() {
	return loadDist("core/session-manager.js");
}
