#!/usr/bin/env node
/**
 * Stand-in for pi's own script path.
 *
 * Extensions that start a child pi (pi's `subagent` example, pi-subagents) run
 * `node <process.argv[1]> <args>`, as that is how the TypeScript pi is started. In the host,
 * `process.argv[1]` points here when pi gave `PI_EXT_HOST_PI`, and this script runs that Rust
 * `pi` binary with the same arguments, stdio and exit status.
 */
import { spawn } from "node:child_process";

const pi = process.env.PI_EXT_HOST_PI;
if (!pi) {
	console.error("pi-shim: PI_EXT_HOST_PI is not set");
	process.exit(127);
}
const child = spawn(pi, process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
	process.on(signal, () => child.kill(signal));
}
child.on("error", (err) => {
	console.error(`pi-shim: cannot run ${pi}: ${err.message}`);
	process.exit(127);
});
child.on("exit", (code, signal) => {
	if (signal) process.kill(process.pid, signal);
	else process.exit(code ?? 1);
});
