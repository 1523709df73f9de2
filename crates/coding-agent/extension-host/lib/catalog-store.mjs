/**
 * `<agentDir>/models-store.json`: pi's persisted dynamic catalogs, one entry per provider
 * (`{models: [...], ...}`), shared with pi itself (llama.cpp) and pi 1.6.0.
 *
 * Writes take the same lock pi does (a `<real path>.lock` directory, stale after 10 s) and
 * replace the file atomically, so a provider's entry never clobbers another's.
 */
import * as fs from "node:fs";
import * as path from "node:path";

const STALE_MS = 10_000;
const WAIT_MS = 30_000;

/** The store's path under the agent directory pi gave at init. */
export function storePath() {
	const agentDir = process.env.PI_CODING_AGENT_DIR;
	return agentDir ? path.join(agentDir, "models-store.json") : undefined;
}

function parse(text) {
	const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
	if (!body.trim()) return {};
	const value = JSON.parse(body);
	if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("models-store.json is not a JSON object");
	return value;
}

function readAll(file) {
	try {
		return parse(fs.readFileSync(file, "utf8"));
	} catch (err) {
		if (err?.code === "ENOENT") return {};
		throw err;
	}
}

/** The stored entry of a provider, models of unknown types left out (as pi-ai does). */
export function readEntry(providerId) {
	const file = storePath();
	if (!file) return undefined;
	const entry = readAll(file)[providerId];
	if (!entry || typeof entry !== "object") return undefined;
	const copy = structuredClone(entry);
	if (Array.isArray(copy.models)) copy.models = copy.models.filter((m) => [undefined, "chat", "image", "classifier"].includes(m?.type));
	return copy;
}

/** The file's real path (a symlinked store is written through), or the path itself. */
function realPath(file) {
	try {
		return fs.realpathSync(file);
	} catch {
		return file;
	}
}

async function acquire(file, signal) {
	const lock = `${realPath(file)}.lock`;
	const started = Date.now();
	let pause = 5;
	for (;;) {
		signal?.throwIfAborted();
		try {
			fs.mkdirSync(lock);
			return () => fs.rmSync(lock, { recursive: true, force: true });
		} catch (err) {
			if (err?.code !== "EEXIST") throw err;
			try {
				if (Date.now() - fs.statSync(lock).mtimeMs > STALE_MS) fs.rmSync(lock, { recursive: true, force: true });
			} catch {}
			if (Date.now() - started > WAIT_MS) throw new Error(`Timed out waiting for the lock on ${file}`);
			await new Promise((resolve) => setTimeout(resolve, pause));
			pause = Math.min(pause * 2, 100);
		}
	}
}

/** Writes (`entry` an object) or deletes (`entry` null) a provider's entry, under the lock. */
export async function writeEntry(providerId, entry, signal) {
	const file = storePath();
	if (!file) return;
	fs.mkdirSync(path.dirname(file), { recursive: true });
	const release = await acquire(file, signal);
	try {
		const current = readAll(file);
		if (entry === null) delete current[providerId];
		else current[providerId] = structuredClone(entry);
		const target = realPath(file);
		const temp = `${target}.tmp-${process.pid}`;
		fs.writeFileSync(temp, JSON.stringify(current, null, 2), { mode: 0o600 });
		fs.renameSync(temp, target);
	} finally {
		release();
	}
}
