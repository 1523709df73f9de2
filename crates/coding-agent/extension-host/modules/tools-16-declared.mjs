/**
 * pi 1.6.0's find, grep, ls and write tool factories: 0.73.1's tools (the same behaviour)
 * declared as 1.6.0 declares them (descriptions of the parameters, `constrainedSampling`
 * for write) and run with the caller's `ctx.cwd`, so an extension wrapping one declares
 * the tool pi's own is.
 */
import { loadDist } from "../lib/native.mjs";
import { typebox, wrapToolDefinition } from "./tools-16-common.mjs";

const ANY_DEPTH = "Without '/', e.g. '*.ts', it matches file names at any depth";

/** What 1.6.0 declares differently, by tool. */
const DECLARED = {
	find: (Type) => ({
		parameters: Type.Object({
			pattern: Type.String({
				description: `Glob pattern relative to the search directory, e.g. 'src/**/*.ts'. ${ANY_DEPTH}`,
			}),
			path: Type.Optional(Type.String({ description: "Directory to search in (default: current directory)" })),
			limit: Type.Optional(Type.Number({ description: "Maximum number of results (default: 1000)" })),
		}),
	}),
	grep: (Type) => ({
		parameters: Type.Object({
			pattern: Type.String({ description: "Search pattern (regex or literal string)" }),
			path: Type.Optional(Type.String({ description: "Directory or file to search (default: current directory)" })),
			glob: Type.Optional(
				Type.String({ description: `Filter files by glob pattern relative to path, e.g. 'src/**/*.ts'. ${ANY_DEPTH}` }),
			),
			ignoreCase: Type.Optional(Type.Boolean({ description: "Case-insensitive search (default: false)" })),
			literal: Type.Optional(
				Type.Boolean({ description: "Treat pattern as literal string instead of regex (default: false)" }),
			),
			context: Type.Optional(
				Type.Number({ description: "Number of lines to show before and after each match (default: 0)" }),
			),
			limit: Type.Optional(Type.Number({ description: "Maximum number of matches to return (default: 100)" })),
		}),
	}),
	ls: () => ({}),
	write: () => ({
		promptGuidelines: ["Use write only for new files or complete rewrites."],
		constrainedSampling: { type: "json_schema", strict: "prefer" },
	}),
};

function definitionFactory(name) {
	const file = `core/tools/${name}.js`;
	const factory = `create${name[0].toUpperCase()}${name.slice(1)}ToolDefinition`;
	return (cwd, options) => {
		const legacy = loadDist(file)[factory];
		const base = legacy(cwd, options);
		return {
			...base,
			...DECLARED[name](typebox()),
			// 1.6.0 runs in the caller's folder when it has one.
			execute: (toolCallId, params, signal, onUpdate, ctx) =>
				(ctx?.cwd && ctx.cwd !== cwd ? legacy(ctx.cwd, options) : base).execute(toolCallId, params, signal, onUpdate, ctx),
		};
	};
}

export const createFindToolDefinition = definitionFactory("find");
export const createGrepToolDefinition = definitionFactory("grep");
export const createLsToolDefinition = definitionFactory("ls");
export const createWriteToolDefinition = definitionFactory("write");
export const createFindTool = (cwd, options) => wrapToolDefinition(createFindToolDefinition(cwd, options));
export const createGrepTool = (cwd, options) => wrapToolDefinition(createGrepToolDefinition(cwd, options));
export const createLsTool = (cwd, options) => wrapToolDefinition(createLsToolDefinition(cwd, options));
export const createWriteTool = (cwd, options) => wrapToolDefinition(createWriteToolDefinition(cwd, options));
