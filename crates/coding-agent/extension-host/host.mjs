#!/usr/bin/env node
/**
 * pi-rs extension host: entry point.
 *
 * Started by the Rust `pi` (only when extensions exist) as `node host.mjs` with
 * `PI_EXT_HOST_SOCKET=<unix socket path>`. Connects to that socket and speaks the JSON-lines
 * protocol of PROTOCOL.md: pi sends `init` with the extensions to load, then events, tool
 * calls, commands and state updates; the host answers and sends actions and UI requests back.
 * stdout/stderr belong to extensions (pi points them at its stderr); the protocol never
 * touches them. The host exits when the socket closes or pi sends `shutdown`.
 */
import * as net from "node:net";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Channel } from "./lib/channel.mjs";
import { createCore } from "./lib/core.mjs";
import { createDispatcher } from "./lib/dispatch.mjs";

process.title = "pi";
process.env.PI_CODING_AGENT = "true";
// Extensions that spawn a child pi run `node <process.argv[1]>`: make that start the Rust pi.
if (process.env.PI_EXT_HOST_PI) {
	process.argv[1] = path.join(path.dirname(fileURLToPath(import.meta.url)), "pi-shim.mjs");
}

const socketPath = process.env.PI_EXT_HOST_SOCKET;
if (!socketPath) {
	console.error("pi extension host: PI_EXT_HOST_SOCKET is not set");
	process.exit(2);
}

const socket = net.createConnection(socketPath);
socket.on("error", (err) => {
	if (!channel) {
		console.error(`pi extension host: cannot connect to ${socketPath}: ${err.message}`);
		process.exit(2);
	}
});

let channel;
let core;
const shutdown = () => {
	socket.end(() => process.exit(0));
	setTimeout(() => process.exit(0), 1000).unref();
};

socket.on("connect", () => {
	let dispatcher;
	channel = new Channel(socket, {
		onRequest: (frame) => dispatcher.onRequest(frame),
		onNotification: (frame) => dispatcher.onNotification(frame),
		onClose: () => process.exit(0),
	});
	core = createCore(channel);
	dispatcher = createDispatcher(core, { onShutdown: shutdown });
});

// Extension code runs in this process: its stray errors are reported, never fatal.
process.on("uncaughtException", (err) => {
	console.error("pi extension host: uncaught exception:", err);
	channel?.write({ type: "log", level: "error", message: `Uncaught exception: ${err?.stack ?? err}` });
});
process.on("unhandledRejection", (reason) => {
	console.error("pi extension host: unhandled rejection:", reason);
	channel?.write({ type: "log", level: "error", message: `Unhandled rejection: ${reason?.stack ?? reason}` });
});
