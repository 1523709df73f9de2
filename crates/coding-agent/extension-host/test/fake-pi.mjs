/**
 * A tiny fake "pi" for the host's tests: a Unix socket server speaking the protocol of
 * PROTOCOL.md. It starts `node host.mjs`, sends requests and notifications, records every
 * frame the host sends, and answers the host's requests with `onRequest(frame)` (default:
 * null, or a `{cancelled:false}` for session actions).
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

export const hostDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const fixturesDir = path.join(hostDir, "test", "fixtures");

export class FakePi {
	constructor() {
		this.frames = [];
		this.waiters = [];
		this.pending = new Map();
		this.nextId = 1;
		this.stderr = "";
		this.onRequest = (frame) => (/^(newSession|fork|switchSession|navigateTree)$/.test(frame.method) ? { cancelled: false } : null);
	}

	/** Start the host and wait for it to connect. */
	async start(env = {}) {
		this.dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-ext-host-test-"));
		const socketPath = path.join(this.dir, "host.sock");
		this.server = net.createServer();
		const connected = new Promise((resolve) => this.server.once("connection", resolve));
		await new Promise((resolve) => this.server.listen(socketPath, resolve));
		this.child = spawn(process.execPath, [path.join(hostDir, "host.mjs")], {
			env: { ...process.env, PI_EXT_HOST_SOCKET: socketPath, PI_CODING_AGENT_DIR: this.dir, ...env },
			stdio: ["ignore", "pipe", "pipe"],
		});
		this.child.stdout.on("data", (d) => {
			this.stderr += d.toString();
		});
		this.child.stderr.on("data", (d) => {
			this.stderr += d.toString();
		});
		this.exited = new Promise((resolve) => this.child.once("exit", resolve));
		this.socket = await connected;
		this.socket.setEncoding("utf8");
		let buffer = "";
		this.socket.on("data", (chunk) => {
			buffer += chunk;
			let nl = buffer.indexOf("\n");
			while (nl !== -1) {
				const line = buffer.slice(0, nl);
				buffer = buffer.slice(nl + 1);
				if (line.trim()) this.onFrame(JSON.parse(line));
				nl = buffer.indexOf("\n");
			}
		});
		return this;
	}

	onFrame(frame) {
		this.frames.push(frame);
		if (frame.type === "response") {
			const waiter = this.pending.get(frame.id);
			if (waiter) {
				this.pending.delete(frame.id);
				waiter(frame);
			}
		} else if (frame.type === "request") {
			Promise.resolve(this.onRequest(frame)).then(
				(result) => this.send({ type: "response", id: frame.id, result: result ?? null }),
				(err) => this.send({ type: "response", id: frame.id, error: String(err?.message ?? err) }),
			);
		}
		for (const waiter of [...this.waiters]) {
			if (waiter.predicate(frame)) {
				this.waiters.splice(this.waiters.indexOf(waiter), 1);
				waiter.resolve(frame);
			}
		}
	}

	send(frame) {
		this.socket.write(`${JSON.stringify(frame)}\n`);
	}

	/** Send a request; resolves with the whole response frame. */
	request(type, fields = {}) {
		const id = this.nextId++;
		return new Promise((resolve) => {
			this.pending.set(id, resolve);
			this.send({ type, id, ...fields });
		});
	}

	/** Send a request; resolves with its result, throws its error. */
	async call(type, fields = {}) {
		const response = await this.request(type, fields);
		if (response.error !== undefined) throw new Error(response.error);
		return response.result;
	}

	/** Send a request and return its id (for `cancel`) plus the response promise. */
	start_request(type, fields = {}) {
		const id = this.nextId++;
		const response = new Promise((resolve) => {
			this.pending.set(id, resolve);
		});
		this.send({ type, id, ...fields });
		return { id, response };
	}

	notify(type, fields = {}) {
		this.send({ type, ...fields });
	}

	/** Wait for a frame from the host matching `predicate` (already received ones count). */
	waitFor(predicate, timeoutMs = 10000) {
		const existing = this.frames.find(predicate);
		if (existing) return Promise.resolve(existing);
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error(`timed out waiting for frame; host output:\n${this.stderr}`)), timeoutMs);
			this.waiters.push({
				predicate,
				resolve: (frame) => {
					clearTimeout(timer);
					resolve(frame);
				},
			});
		});
	}

	framesOf(type) {
		return this.frames.filter((f) => f.type === type);
	}

	init(extensions, fields = {}) {
		return this.call("init", {
			extensions: extensions.map((p) => (typeof p === "string" ? { path: p, source: "cli" } : p)),
			cwd: this.dir,
			agentDir: this.dir,
			mode: "print",
			flagValues: {},
			state: {},
			themeName: "dark",
			...fields,
		});
	}

	async stop() {
		if (this.child.exitCode === null) {
			this.notify("shutdown");
			await Promise.race([this.exited, new Promise((r) => setTimeout(r, 2000))]);
			if (this.child.exitCode === null) this.child.kill("SIGKILL");
		}
		this.server.close();
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}

/** Start a fake pi with the host and initialise it with the given fixture extensions. */
export async function startHost(fixtures, fields = {}, env = {}) {
	const pi = await new FakePi().start(env);
	const paths = fixtures.map((f) => (f.startsWith("/") ? f : path.join(fixturesDir, f)));
	const result = await pi.init(paths, fields);
	return { pi, result };
}
