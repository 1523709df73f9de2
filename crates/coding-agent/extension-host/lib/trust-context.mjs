/**
 * The context of `project_trust` handlers (pi 1.6.0's `createProjectTrustContext`): the
 * session does not exist yet, so only cwd, mode, hasUI and a few prompts. In the terminal UI
 * the prompts ask on the terminal (the host shares it, and pi has not started drawing);
 * elsewhere they answer their defaults and `notify` writes to stderr.
 */
import { createInterface } from "node:readline";

/** pi's notify colours on a terminal: red errors, yellow warnings, cyan otherwise. */
const COLORS = { error: 31, warning: 33, info: 36 };

export function createTrustContext(event, io = { input: process.stdin, output: process.stderr }) {
	const interactive = event.mode === "interactive";
	const canAsk = event.hasUI === true && interactive;
	return {
		cwd: event.cwd,
		mode: interactive ? "tui" : event.mode,
		hasUI: event.hasUI === true,
		ui: {
			select: async (title, options) => {
				if (!canAsk) return undefined;
				const lines = [title, ...options.map((option, index) => `  ${index + 1}. ${option}`)];
				const answer = await ask(io, `${lines.join("\n")}\nChoose 1-${options.length}: `);
				const index = Number.parseInt(answer ?? "", 10);
				return Number.isInteger(index) && index >= 1 && index <= options.length ? options[index - 1] : undefined;
			},
			confirm: async (title, message) => {
				if (!canAsk) return false;
				const answer = await ask(io, `${title}\n${message}\n[y/N] `);
				return /^y(es)?$/i.test((answer ?? "").trim());
			},
			input: async (title, placeholder) => {
				if (!canAsk) return undefined;
				const hint = placeholder ? ` (${placeholder})` : "";
				return ask(io, `${title}${hint}: `);
			},
			notify: (message, type = "info") => {
				if (interactive) return;
				const color = io.output === process.stderr && process.stdout.isTTY ? COLORS[type] ?? COLORS.info : undefined;
				io.output.write(color ? `\x1b[${color}m${message}\x1b[39m\n` : `${message}\n`);
			},
		},
	};
}

/** One line from `io.input` after writing `question`; undefined when input ends first. */
function ask(io, question) {
	return new Promise((resolve) => {
		const rl = createInterface({ input: io.input, output: io.output, terminal: false });
		let answered = false;
		rl.question(question, (line) => {
			answered = true;
			rl.close();
			resolve(line);
		});
		rl.on("close", () => {
			if (!answered) resolve(undefined);
		});
	});
}
