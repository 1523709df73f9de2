/**
 * pi 1.6.0's read, bash and edit tool factories (`createReadTool`, `createReadToolDefinition`,
 * `createBashTool`, `createBashToolDefinition`, `createLocalBashOperations`,
 * `createEditTool`, `createEditToolDefinition`: ./tools-16-edit.mjs; find, grep, ls and write
 * as 1.6.0 declares them: ./tools-16-declared.mjs), for the
 * facade: their results carry `structuredContent` (read: the text, or
 * `{type: "image", data, mimeType, note}`; bash: `{output, truncated, full_output_path?,
 * exit_code, wall_time_seconds}` with up to 1 MiB of output), a bash command that exits
 * non-zero is a result with `isError: true` (0.73.1 threw), the wrapped tools pass the
 * caller's ctx through (`ctx.cwd`, the session environment of bash), and lines are counted
 * as 1.6.0 counts them (a trailing newline ends a line, it does not start one).
 * Written after pi 1.6.0's bundle; the renderers are 0.73.1's. Errors are thrown as in
 * 1.6.0 (no structuredContent: the agent loop turns them into an error result).
 */

export { formatSize, truncateHead, truncateTail, wrapToolDefinition } from "./tools-16-common.mjs";
export { createReadToolDefinition, createReadTool } from "./tools-16-read.mjs";
export { OutputAccumulator, createLocalBashOperations, createBashToolDefinition, createBashTool } from "./tools-16-bash.mjs";
export { createEditToolDefinition, createEditTool } from "./tools-16-edit.mjs";
export {
	createFindTool,
	createFindToolDefinition,
	createGrepTool,
	createGrepToolDefinition,
	createLsTool,
	createLsToolDefinition,
	createWriteTool,
	createWriteToolDefinition,
} from "./tools-16-declared.mjs";
