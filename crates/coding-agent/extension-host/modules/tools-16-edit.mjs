/**
 * pi 1.6.0's edit tool factory (createEditTool, createEditToolDefinition): the schema,
 * prompt texts and argument repair of 1.6.0's built-in edit, so an extension wrapping it
 * (an ssh or sandbox backend) declares the same tool pi's own edit is, and `details` with
 * 1.6.0's `patch` (a unified diff with file headers only) beside `diff` and
 * `firstChangedLine`. The replacement itself is 0.73.1's (the same matching rules), run
 * with the caller's operations and `ctx.cwd`.
 */
import { constants as fsConstants } from "node:fs";
import { access as fsAccess, readFile as fsReadFile, writeFile as fsWriteFile } from "node:fs/promises";
import { loadDist, loadModule } from "../lib/native.mjs";
import { renderersOf, typebox, wrapToolDefinition } from "./tools-16-common.mjs";

const SNIPPET = "Make precise file edits with exact text replacement, including multiple disjoint edits in one call";
const GUIDELINES = [
	"Use edit for targeted changes. Batch changes to one file in a single call.",
	"Each edits[].oldText must exactly and uniquely match the original file. Keep matches short and non-overlapping; merge nearby changes without including large unchanged regions.",
];

let editSchema;
function editSchemaOnce() {
	if (editSchema) return editSchema;
	const Type = typebox();
	const replacement = Type.Object({
		oldText: Type.String({
			description:
				"Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.",
		}),
		newText: Type.String({ description: "Replacement text for this targeted edit." }),
	});
	editSchema = Type.Object({
		path: Type.String({ description: "Path to the file to edit (relative or absolute)" }),
		edits: Type.Array(replacement, {
			description:
				"One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
		}),
	});
	return editSchema;
}

const isReplacement = (value) =>
	!!value && typeof value === "object" && !Array.isArray(value) && typeof value.oldText === "string" && typeof value.newText === "string";

/** Arguments as models send them: `edits` as a JSON string or a single object, or the
 * legacy top-level `oldText`/`newText`, become the `edits` list. */
function prepareEditArguments(input) {
	if (!input || typeof input !== "object") return input;
	const args = input;
	if (typeof args.edits === "string") {
		try {
			const parsed = JSON.parse(args.edits);
			if (Array.isArray(parsed)) args.edits = parsed;
			else if (isReplacement(parsed)) args.edits = [parsed];
		} catch {
			// left as it is: validation reports it
		}
	} else if (isReplacement(args.edits)) {
		args.edits = [args.edits];
	}
	if (typeof args.oldText !== "string" || typeof args.newText !== "string") return args;
	const edits = Array.isArray(args.edits) ? [...args.edits] : [];
	edits.push({ oldText: args.oldText, newText: args.newText });
	const { oldText: _oldText, newText: _newText, ...rest } = args;
	return { ...rest, edits };
}

const localOperations = {
	readFile: (file) => fsReadFile(file),
	writeFile: (file, content) => fsWriteFile(file, content, "utf-8"),
	access: (file) => fsAccess(file, fsConstants.R_OK | fsConstants.W_OK),
};

/** The file's text as the edit compares it: no byte order mark, LF line ends. */
function comparable(text) {
	const unmarked = text.startsWith("\uFEFF") ? text.slice(1) : text;
	return unmarked.replace(/\r\n/g, "\n").replace(/\r/g, "\n");
}

export function createEditToolDefinition(cwd, options) {
	const ops = options?.operations ?? localOperations;
	const legacy = loadDist("core/tools/edit.js");
	return {
		name: "edit",
		label: "edit",
		description:
			"Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
		promptSnippet: SNIPPET,
		promptGuidelines: [...GUIDELINES],
		parameters: editSchemaOnce(),
		constrainedSampling: { type: "json_schema", strict: "prefer" },
		renderShell: "self",
		prepareArguments: prepareEditArguments,
		async execute(toolCallId, input, signal, onUpdate, ctx) {
			if (!Array.isArray(input?.edits) || input.edits.length === 0) {
				throw new Error("Edit tool input is invalid. edits must contain at least one replacement.");
			}
			// The text before and after, seen through the caller's operations.
			let before;
			let after;
			const seen = {
				...ops,
				readFile: async (file) => {
					const content = await ops.readFile(file);
					before ??= comparable(Buffer.isBuffer(content) ? content.toString("utf-8") : String(content));
					return content;
				},
				writeFile: async (file, content) => {
					after = comparable(String(content));
					return ops.writeFile(file, content);
				},
			};
			const inner = legacy.createEditToolDefinition(ctx?.cwd || cwd, { operations: seen });
			const result = await inner.execute(toolCallId, { path: input.path, edits: input.edits }, signal, onUpdate, ctx);
			if (before !== undefined && after !== undefined && result?.details) {
				const diff = loadModule("diff");
				const patch = diff.createTwoFilesPatch(input.path, input.path, before, after, undefined, undefined, {
					context: 4,
					headerOptions: diff.FILE_HEADERS_ONLY,
				});
				result.details = { diff: result.details.diff, patch, firstChangedLine: result.details.firstChangedLine };
			}
			return result;
		},
		...renderersOf(legacy.createEditToolDefinition(cwd)),
	};
}

export function createEditTool(cwd, options) {
	return wrapToolDefinition(createEditToolDefinition(cwd, options));
}
