/**
 * Names pi 1.6.0's package index exports that 0.73.1's does not, for extensions written
 * against 1.6.0. Each is either 0.73.1's own implementation from a dist file the old index
 * did not re-export (`DIST`), or a small one written here to 1.6.0's behaviour (`OWN`).
 * Left out: the codemode, tool-search and MCP extension factories, PowerShell, ModelRuntime,
 * ProjectTrustStore and the session projection helpers, which need pi 1.6.0's internals.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { loadDist, loadModule } from "../lib/native.mjs";
import * as tools16 from "./tools-16.mjs";

/** 1.6.0 names whose 0.73.1 implementation is in a dist file: name -> file under dist/. */
export const DIST = {
	CONFIG_DIR_NAME: "config.js",
	getDocsPath: "config.js",
	getExamplesPath: "config.js",
	getPackageDir: "config.js",
	getReadmePath: "config.js",
	parseArgs: "cli/args.js",
	resolveCliModel: "core/model-resolver.js",
	generateDiffString: "core/tools/edit-diff.js",
	convertToPng: "utils/image-convert.js",
	resizeImage: "utils/image-resize.js",
	formatDimensionNote: "utils/image-resize.js",
	detectSupportedImageMimeTypeFromFile: "utils/mime.js",
};

/** `value` as a line number, or undefined (1.6.0 accepts numeric strings). */
function lineNumber(value) {
	const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
	return typeof number === "number" && Number.isFinite(number) ? number : undefined;
}

/** A JSON file's text without a leading byte order mark. */
function readJsonFile(file) {
	const text = fs.readFileSync(file, "utf-8");
	return JSON.parse(text.startsWith("\uFEFF") ? text.slice(1) : text);
}

/** A credential was saved, but pi's local model state could not follow it. */
class CredentialSynchronizationError extends Error {
	constructor(providerId, operation, credential, options) {
		super(`Credential ${operation} committed for ${providerId}, but local synchronization failed`, options);
		this.name = "CredentialSynchronizationError";
		this.providerId = providerId;
		this.operation = operation;
		this.credential = credential;
	}
}

/** 1.6.0 names written here: name -> a function giving the value. */
export const OWN = {
	// the read and bash factories as 1.6.0's (structuredContent, isError results, ctx), and
	// the truncation helpers with 1.6.0's line counting (./tools-16.mjs)
	createReadTool: () => tools16.createReadTool,
	createReadToolDefinition: () => tools16.createReadToolDefinition,
	createBashTool: () => tools16.createBashTool,
	createBashToolDefinition: () => tools16.createBashToolDefinition,
	createEditTool: () => tools16.createEditTool,
	createEditToolDefinition: () => tools16.createEditToolDefinition,
	createFindTool: () => tools16.createFindTool,
	createFindToolDefinition: () => tools16.createFindToolDefinition,
	createGrepTool: () => tools16.createGrepTool,
	createGrepToolDefinition: () => tools16.createGrepToolDefinition,
	createLsTool: () => tools16.createLsTool,
	createLsToolDefinition: () => tools16.createLsToolDefinition,
	createWriteTool: () => tools16.createWriteTool,
	createWriteToolDefinition: () => tools16.createWriteToolDefinition,
	createLocalBashOperations: () => tools16.createLocalBashOperations,
	truncateHead: () => tools16.truncateHead,
	truncateTail: () => tools16.truncateTail,
	VIRTUAL_MODEL_STATE_ENTRY: () => "pi.virtual-model-state",
	CredentialSynchronizationError: () => CredentialSynchronizationError,
	isPowerShellToolResult: () => (event) => event.toolName === "powershell",
	/** `:start-end` for a read call's offset and limit, as the read tool's header shows it. */
	formatReadLineRange: () => (offset, limit) => {
		if (offset == null && limit == null) return "";
		const start = offset == null ? 1 : lineNumber(offset);
		if (start === undefined) return "";
		if (limit == null) return `:${start}`;
		const count = lineNumber(limit);
		if (count === undefined) return "";
		const end = start + count - 1;
		return `:${start}${end ? `-${end}` : ""}`;
	},
	/** A unified patch with file headers only, as the edit tool's `details.patch`. */
	generateUnifiedPatch: () => (file, oldContent, newContent, contextLines = 4) => {
		const diff = loadModule("diff");
		return diff.createTwoFilesPatch(file, file, oldContent, newContent, undefined, undefined, {
			context: contextLines,
			headerOptions: diff.FILE_HEADERS_ONLY,
		});
	},
	/** The raw `auth.json` entry of a provider, or undefined. */
	readStoredCredential: () => (providerId, authPath) => {
		const file = authPath ?? path.join(loadDist("config.js").getAgentDir(), "auth.json");
		try {
			return readJsonFile(file)[providerId];
		} catch {
			return undefined;
		}
	},
};

/** The tool factories whose tools pi 1.6.0 has ask for strict JSON-schema sampling. */
export const STRICT_FACTORIES = new Set(
	["Read", "Bash", "Edit", "Write"].flatMap((tool) => [`create${tool}Tool`, `create${tool}ToolDefinition`]),
);

/** `factory` whose tools ask for strict sampling where possible, as 1.6.0's do. */
export function withStrictSampling(factory) {
	if (typeof factory !== "function") return factory;
	return function strictSamplingTool(...args) {
		const tool = factory.apply(this, args);
		if (tool && typeof tool === "object" && tool.constrainedSampling === undefined) {
			tool.constrainedSampling = { type: "json_schema", strict: "prefer" };
		}
		return tool;
	};
}
