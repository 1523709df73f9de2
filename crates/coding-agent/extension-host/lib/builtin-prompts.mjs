/**
 * The prompt texts pi's own tool factories give the built-in tools (`promptSnippet`,
 * `promptGuidelines`), as extensions get them from `createReadToolDefinition()` and the
 * others. An extension re-registering a built-in with those texts keeps the built-in's own
 * lines in the system prompt, as in pi 1.6.0, so they are not sent as the extension's.
 */
import { loadDist } from "./native.mjs";
import * as tools16 from "../modules/tools-16.mjs";

const FACTORIES = ["Read", "Bash", "Edit", "Write", "Grep", "Find", "Ls"];
let known;

/** name -> the { snippet, guidelines } each factory gives that tool. */
function collect() {
	const texts = new Map();
	const add = (definition) => {
		if (!definition || typeof definition.name !== "string") return;
		const list = texts.get(definition.name) ?? [];
		list.push({ snippet: definition.promptSnippet, guidelines: definition.promptGuidelines ?? [] });
		texts.set(definition.name, list);
	};
	const cwd = process.cwd();
	for (const factory of [tools16.createReadToolDefinition, tools16.createBashToolDefinition, tools16.createEditToolDefinition]) {
		try {
			add(factory(cwd));
		} catch {
			// a factory that cannot run here has no texts to match
		}
	}
	for (const name of FACTORIES) {
		try {
			add(loadDist(`core/tools/${name.toLowerCase()}.js`)[`create${name}ToolDefinition`](cwd));
		} catch {
			// as above
		}
	}
	return texts;
}

/** Whether `tool` carries a built-in factory's prompt texts for its own name. */
export function hasBuiltinPrompt(tool) {
	if (tool.promptSnippet === undefined) return false;
	known ??= collect();
	const given = Array.isArray(tool.promptGuidelines) ? tool.promptGuidelines : [];
	return (known.get(tool.name) ?? []).some(
		(texts) => texts.snippet === tool.promptSnippet && given.every((line) => texts.guidelines.includes(line)),
	);
}
