/**
 * pi 1.6.0's read and bash tool factories (`createReadTool`, `createReadToolDefinition`,
 * `createBashTool`, `createBashToolDefinition`, `createLocalBashOperations`), for the
 * facade: their results carry `structuredContent` (read: the text, or
 * `{type: "image", data, mimeType, note}`; bash: `{output, truncated, full_output_path?,
 * exit_code, wall_time_seconds}` with up to 1 MiB of output), a bash command that exits
 * non-zero is a result with `isError: true` (0.73.1 threw), the wrapped tools pass the
 * caller's ctx through (`ctx.cwd`, the session environment of bash), and lines are counted
 * as 1.6.0 counts them (a trailing newline ends a line, it does not start one).
 * Written after pi 1.6.0's bundle; the renderers are 0.73.1's. Errors are thrown as in
 * 1.6.0 (no structuredContent: the agent loop turns them into an error result).
 */
import { createWriteStream } from "node:fs";
import { constants as fsConstants } from "node:fs";
import { access as fsAccess, open as fsOpen, readFile as fsReadFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { constants as osConstants, tmpdir } from "node:os";
import { join } from "node:path";
import { loadDist, loadModule } from "../lib/native.mjs";

const DEFAULT_MAX_LINES = 2000;
const DEFAULT_MAX_BYTES = 50 * 1024;
const STRUCTURED_OUTPUT_MAX_BYTES = 1024 * 1024;
const MAX_TIMEOUT_MS = 2147483647;
const BASH_UPDATE_THROTTLE_MS = 100;

// ---------------------------------------------------------------------------------------
// truncation (1.6.0: a trailing newline does not count as a line)

function splitLinesForCounting(content) {
	if (content.length === 0) return [];
	const lines = content.split("\n");
	if (content.endsWith("\n")) lines.pop();
	return lines;
}

export function formatSize(bytes) {
	if (bytes < 1024) return `${bytes}B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
	return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

function untruncated(content, totalLines, totalBytes, maxLines, maxBytes) {
	return {
		content,
		truncated: false,
		truncatedBy: null,
		totalLines,
		totalBytes,
		outputLines: totalLines,
		outputBytes: totalBytes,
		lastLinePartial: false,
		firstLineExceedsLimit: false,
		maxLines,
		maxBytes,
	};
}

export function truncateHead(content, options = {}) {
	const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
	const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
	const totalBytes = Buffer.byteLength(content, "utf-8");
	const lines = splitLinesForCounting(content);
	const totalLines = lines.length;
	if (totalLines <= maxLines && totalBytes <= maxBytes) return untruncated(content, totalLines, totalBytes, maxLines, maxBytes);
	if (Buffer.byteLength(lines[0], "utf-8") > maxBytes) {
		return {
			content: "",
			truncated: true,
			truncatedBy: "bytes",
			totalLines,
			totalBytes,
			outputLines: 0,
			outputBytes: 0,
			lastLinePartial: false,
			firstLineExceedsLimit: true,
			maxLines,
			maxBytes,
		};
	}
	const out = [];
	let outBytes = 0;
	let truncatedBy = "lines";
	for (let i = 0; i < lines.length && i < maxLines; i++) {
		const lineBytes = Buffer.byteLength(lines[i], "utf-8") + (i > 0 ? 1 : 0);
		if (outBytes + lineBytes > maxBytes) {
			truncatedBy = "bytes";
			break;
		}
		out.push(lines[i]);
		outBytes += lineBytes;
	}
	if (out.length >= maxLines && outBytes <= maxBytes) truncatedBy = "lines";
	const outputContent = out.join("\n");
	return {
		content: outputContent,
		truncated: true,
		truncatedBy,
		totalLines,
		totalBytes,
		outputLines: out.length,
		outputBytes: Buffer.byteLength(outputContent, "utf-8"),
		lastLinePartial: false,
		firstLineExceedsLimit: false,
		maxLines,
		maxBytes,
	};
}

function truncateStringToBytesFromEnd(str, maxBytes) {
	const buf = Buffer.from(str, "utf-8");
	if (buf.length <= maxBytes) return str;
	let start = buf.length - maxBytes;
	while (start < buf.length && (buf[start] & 0xc0) === 0x80) start++;
	return buf.slice(start).toString("utf-8");
}

export function truncateTail(content, options = {}) {
	const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
	const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
	const totalBytes = Buffer.byteLength(content, "utf-8");
	const lines = splitLinesForCounting(content);
	const totalLines = lines.length;
	if (totalLines <= maxLines && totalBytes <= maxBytes) return untruncated(content, totalLines, totalBytes, maxLines, maxBytes);
	const out = [];
	let outBytes = 0;
	let truncatedBy = "lines";
	let lastLinePartial = false;
	for (let i = lines.length - 1; i >= 0 && out.length < maxLines; i--) {
		const line = lines[i];
		const lineBytes = Buffer.byteLength(line, "utf-8") + (out.length > 0 ? 1 : 0);
		if (outBytes + lineBytes > maxBytes) {
			truncatedBy = "bytes";
			if (out.length === 0) {
				const partial = truncateStringToBytesFromEnd(line, maxBytes);
				out.unshift(partial);
				outBytes = Buffer.byteLength(partial, "utf-8");
				lastLinePartial = true;
			}
			break;
		}
		out.unshift(line);
		outBytes += lineBytes;
	}
	if (out.length >= maxLines && outBytes <= maxBytes) truncatedBy = "lines";
	const outputContent = out.join("\n");
	return {
		content: outputContent,
		truncated: true,
		truncatedBy,
		totalLines,
		totalBytes,
		outputLines: out.length,
		outputBytes: Buffer.byteLength(outputContent, "utf-8"),
		lastLinePartial,
		firstLineExceedsLimit: false,
		maxLines,
		maxBytes,
	};
}

// ---------------------------------------------------------------------------------------
// wrapping (1.6.0 passes the caller's ctx through, and keeps outputSchema/constrainedSampling)

export function wrapToolDefinition(definition, ctxFactory) {
	return {
		name: definition.name,
		label: definition.label,
		description: definition.description,
		parameters: definition.parameters,
		outputSchema: definition.outputSchema,
		constrainedSampling: definition.constrainedSampling,
		prepareArguments: definition.prepareArguments,
		executionMode: definition.executionMode,
		execute: (toolCallId, params, signal, onUpdate, ctx) =>
			definition.execute(toolCallId, params, signal, onUpdate, ctx ?? ctxFactory?.(toolCallId, signal)),
	};
}

/** 0.73.1's renderers of a built-in tool (the result shapes they read are the same). */
function renderersOf(definition) {
	return { renderCall: definition.renderCall, renderResult: definition.renderResult };
}

// ---------------------------------------------------------------------------------------
// read

function typebox() {
	return loadModule("typebox").Type;
}

let readSchemas;
function readSchemasOnce() {
	if (readSchemas) return readSchemas;
	const Type = typebox();
	readSchemas = {
		parameters: Type.Object({
			path: Type.String({ description: "Path to the file to read (relative or absolute)" }),
			offset: Type.Optional(Type.Number({ description: "Line number to start reading from (1-indexed)" })),
			limit: Type.Optional(Type.Number({ description: "Maximum number of lines to read" })),
		}),
		output: Type.Union([
			Type.String(),
			Type.Object({ type: Type.Literal("image"), data: Type.String(), mimeType: Type.String(), note: Type.String() }),
		]),
	};
	return readSchemas;
}

async function* readLocalFileChunks(file) {
	const handle = await fsOpen(file, "r");
	try {
		const stats = await handle.stat();
		const end = stats.isFile() && stats.size > 0 ? stats.size - 1 : undefined;
		yield* handle.createReadStream({ end, autoClose: false });
	} finally {
		await handle.close();
	}
}

function defaultReadOperations() {
	return {
		readFile: (file) => fsReadFile(file),
		createReadStream: readLocalFileChunks,
		access: (file) => fsAccess(file, fsConstants.R_OK),
		detectImageMimeType: loadDist("utils/mime.js").detectSupportedImageMimeTypeFromFile,
	};
}

function toReadOutput(content) {
	const text = content.find((block) => block.type === "text")?.text ?? "";
	const image = content.find((block) => block.type === "image");
	return image ? { type: "image", data: image.data, mimeType: image.mimeType, note: text } : text;
}

function isStreamableRange(offset, limit) {
	return (offset === undefined || Number.isInteger(offset)) && (limit === undefined || (Number.isInteger(limit) && limit >= 0));
}

function selectLinesFromBuffer(buffer, startLine, limit) {
	const allLines = buffer.toString("utf-8").split("\n");
	const endLine = limit === undefined ? undefined : Math.min(startLine + limit, allLines.length);
	const truncation = truncateHead(allLines.slice(startLine, endLine).join("\n"));
	const firstLineBytes = truncation.firstLineExceedsLimit ? Buffer.byteLength(allLines[startLine], "utf-8") : 0;
	return { totalFileLines: allLines.length, truncation, firstLineBytes };
}

async function selectLinesFromStream(chunks, startLine, limit, signal) {
	const endLine = limit === undefined ? Number.POSITIVE_INFINITY : startLine + limit;
	const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
	const storedLines = [];
	let storedBytes = 0;
	let storedPastCaps = false;
	let line = 0;
	let selectedLines = 0;
	let selectedBytes = 0;
	let firstLineBytes = 0;
	let lastLineEmpty = true;
	let pieces = [];
	let lineBytes = 0;
	let lineHasText = false;
	const appendToLine = (text, start, end) => {
		lineHasText = true;
		if (!pieces) return;
		const piece = text.slice(start, end);
		if (lineBytes <= DEFAULT_MAX_BYTES) pieces.push(piece);
		lineBytes += Buffer.byteLength(piece, "utf-8");
	};
	const finishLine = () => {
		if (pieces) {
			if (selectedLines === 0) firstLineBytes = lineBytes;
			if (storedLines.length > DEFAULT_MAX_LINES || storedBytes > DEFAULT_MAX_BYTES) storedPastCaps = true;
			const text = pieces.join("");
			storedBytes += Buffer.byteLength(text, "utf-8") + (storedLines.length > 0 ? 1 : 0);
			storedLines.push(text);
		}
		selectedLines++;
		lastLineEmpty = !lineHasText;
		pieces = storedPastCaps ? undefined : [];
		lineBytes = 0;
		lineHasText = false;
	};
	const select = (text) => {
		let position = 0;
		let selectionStart = -1;
		for (;;) {
			const selected = line >= startLine && line < endLine;
			if (selected && selectionStart === -1) selectionStart = position;
			const newline = text.indexOf("\n", position);
			const end = newline === -1 ? text.length : newline;
			if (selected && end > position) appendToLine(text, position, end);
			if (newline === -1) break;
			if (selected) {
				finishLine();
				if (line + 1 === endLine) {
					selectedBytes += Buffer.byteLength(text.slice(selectionStart, newline), "utf-8");
					selectionStart = -1;
				}
			}
			line++;
			position = newline + 1;
		}
		if (selectionStart !== -1) selectedBytes += Buffer.byteLength(text.slice(selectionStart), "utf-8");
	};
	for await (const chunk of chunks) {
		if (signal?.aborted) throw new Error("Operation aborted");
		select(decoder.decode(chunk, { stream: true }));
	}
	select(decoder.decode());
	if (line >= startLine && line < endLine) finishLine();
	const truncation = {
		...truncateHead(storedLines.join("\n")),
		totalLines: selectedBytes === 0 ? 0 : selectedLines - (lastLineEmpty ? 1 : 0),
		totalBytes: selectedBytes,
	};
	return { totalFileLines: line + 1, truncation, firstLineBytes };
}

function baseMimeType(mimeType) {
	return mimeType.split(";")[0]?.trim().toLowerCase() ?? mimeType.toLowerCase();
}

function normalizeSupportedImageMimeType(mimeType) {
	switch (baseMimeType(mimeType)) {
		case "image/png":
			return "image/png";
		case "image/jpeg":
		case "image/jpg":
			return "image/jpeg";
		case "image/gif":
			return "image/gif";
		case "image/webp":
			return "image/webp";
		default:
			return null;
	}
}

/**
 * 1.6.0's processImage, on 0.73.1's image helpers: an unsupported format is converted to
 * PNG, then resized; hints are the conversion and dimension notes.
 */
async function processImage(bytes, mimeType, options) {
	const autoResizeImages = options?.autoResizeImages ?? true;
	let data = Buffer.from(bytes).toString("base64");
	let normalizedMimeType = normalizeSupportedImageMimeType(mimeType);
	let convertedFrom;
	if (!normalizedMimeType) {
		const converted = await loadDist("utils/image-convert.js").convertToPng(data, mimeType);
		if (!converted || converted.mimeType !== "image/png") {
			return { ok: false, message: "[Image omitted: could not be converted to a supported inline image format.]" };
		}
		data = converted.data;
		normalizedMimeType = "image/png";
		convertedFrom = baseMimeType(mimeType);
	}
	const conversionHint = (to) => (!convertedFrom || convertedFrom === to ? undefined : `[Image converted from ${convertedFrom} to ${to}.]`);
	if (autoResizeImages) {
		const { resizeImage, formatDimensionNote } = loadDist("utils/image-resize.js");
		const resized = await resizeImage({ type: "image", data, mimeType: normalizedMimeType }, options?.resizeOptions);
		if (!resized) return { ok: false, message: "[Image omitted: could not be resized below the inline image size limit.]" };
		const hints = [];
		const converted = conversionHint(resized.mimeType);
		if (converted) hints.push(converted);
		const dimensionNote = formatDimensionNote(resized);
		if (dimensionNote) hints.push(dimensionNote);
		return { ok: true, data: resized.data, mimeType: resized.mimeType, hints };
	}
	const hints = [];
	const converted = conversionHint(normalizedMimeType);
	if (converted) hints.push(converted);
	return { ok: true, data, mimeType: normalizedMimeType, hints };
}

export function createReadToolDefinition(cwd, options) {
	const autoResizeImages = options?.autoResizeImages ?? true;
	const fallbackResizeOptions = options?.resizeOptions;
	const ops = options?.operations ?? defaultReadOperations();
	const { resolveReadPath } = loadDist("core/tools/path-utils.js");
	const schemas = readSchemasOnce();
	return {
		name: "read",
		label: "read",
		description: `Read the contents of a file. Supports text files and images (jpg, png, gif, webp, bmp). Images are sent as attachments. For text files, output is truncated to ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.`,
		promptSnippet: "Read file contents",
		promptGuidelines: ["Use read to examine files instead of cat or sed."],
		parameters: schemas.parameters,
		outputSchema: schemas.output,
		constrainedSampling: { type: "json_schema", strict: "prefer" },
		async execute(_toolCallId, { path: filePath, offset, limit }, signal, _onUpdate, ctx) {
			return new Promise((resolve, reject) => {
				if (signal?.aborted) {
					reject(new Error("Operation aborted"));
					return;
				}
				let aborted = false;
				const onAbort = () => {
					aborted = true;
					reject(new Error("Operation aborted"));
				};
				signal?.addEventListener("abort", onAbort, { once: true });
				(async () => {
					try {
						const absolutePath = resolveReadPath(filePath, ctx?.cwd || cwd);
						if (aborted) return;
						await ops.access(absolutePath);
						if (aborted) return;
						const mimeType = ops.detectImageMimeType ? await ops.detectImageMimeType(absolutePath) : undefined;
						let content;
						let details;
						if (mimeType) {
							const buffer = await ops.readFile(absolutePath);
							const processed = await processImage(buffer, mimeType, {
								autoResizeImages,
								resizeOptions: ctx?.model?.inputLimits?.images?.resize ?? fallbackResizeOptions,
							});
							if (!processed.ok) {
								content = [{ type: "text", text: `Read image file [${mimeType}]\n${processed.message}` }];
							} else {
								let textNote = `Read image file [${processed.mimeType}]`;
								if (processed.hints.length > 0) textNote += `\n${processed.hints.join("\n")}`;
								content = [
									{ type: "text", text: textNote },
									{ type: "image", data: processed.data, mimeType: processed.mimeType },
								];
								if (ctx?.model && !ctx.model.input?.includes("image")) details = { imageUnsupportedByModel: ctx.model.id };
							}
						} else {
							const startLine = offset ? Math.max(0, offset - 1) : 0;
							const startLineDisplay = startLine + 1;
							const { totalFileLines, truncation, firstLineBytes } =
								ops.createReadStream && isStreamableRange(offset, limit)
									? await selectLinesFromStream(ops.createReadStream(absolutePath, { signal }), startLine, limit, signal)
									: selectLinesFromBuffer(await ops.readFile(absolutePath), startLine, limit);
							if (aborted) return;
							if (startLine >= totalFileLines) {
								throw new Error(`Offset ${offset} is beyond end of file (${totalFileLines} lines total)`);
							}
							const userLimitedLines = limit === undefined ? undefined : Math.min(startLine + limit, totalFileLines) - startLine;
							let outputText;
							if (truncation.firstLineExceedsLimit) {
								const firstLineSize = formatSize(firstLineBytes);
								outputText = `[Line ${startLineDisplay} is ${firstLineSize}, exceeds ${formatSize(DEFAULT_MAX_BYTES)} limit. Use bash: sed -n '${startLineDisplay}p' ${filePath} | head -c ${DEFAULT_MAX_BYTES}]`;
								details = { truncation };
							} else if (truncation.truncated) {
								const endLineDisplay = startLineDisplay + truncation.outputLines - 1;
								const nextOffset = endLineDisplay + 1;
								outputText = truncation.content;
								if (truncation.truncatedBy === "lines") {
									outputText += `\n\n[Showing lines ${startLineDisplay}-${endLineDisplay} of ${totalFileLines}. Use offset=${nextOffset} to continue.]`;
								} else {
									outputText += `\n\n[Showing lines ${startLineDisplay}-${endLineDisplay} of ${totalFileLines} (${formatSize(DEFAULT_MAX_BYTES)} limit). Use offset=${nextOffset} to continue.]`;
								}
								details = { truncation };
							} else if (userLimitedLines !== undefined && startLine + userLimitedLines < totalFileLines) {
								const remaining = totalFileLines - (startLine + userLimitedLines);
								const nextOffset = startLine + userLimitedLines + 1;
								outputText = `${truncation.content}\n\n[${remaining} more lines in file. Use offset=${nextOffset} to continue.]`;
							} else {
								outputText = truncation.content;
							}
							content = [{ type: "text", text: outputText }];
						}
						if (aborted) return;
						signal?.removeEventListener("abort", onAbort);
						resolve({ content, details });
					} catch (error) {
						signal?.removeEventListener("abort", onAbort);
						if (!aborted) reject(error);
					}
				})();
			}).then((result) => ({ ...result, structuredContent: toReadOutput(result.content) }));
		},
		...renderersOf(loadDist("core/tools/read.js").createReadToolDefinition(cwd)),
	};
}

export function createReadTool(cwd, options) {
	return wrapToolDefinition(createReadToolDefinition(cwd, options));
}

// ---------------------------------------------------------------------------------------
// bash

function byteLength(text) {
	return Buffer.byteLength(text, "utf-8");
}

function createOutputFileStream(prefix, extension) {
	const file = join(tmpdir(), `${prefix}-${randomBytes(8).toString("hex")}${extension}`);
	return { path: file, stream: createWriteStream(file, { mode: 0o600, flags: "wx" }) };
}

/** 1.6.0's OutputAccumulator (line counting and `readFullOutput`). */
export class OutputAccumulator {
	decoder = new TextDecoder();
	rawChunks = [];
	tailText = "";
	tailBytes = 0;
	tailStartsAtLineBoundary = true;
	totalRawBytes = 0;
	totalDecodedBytes = 0;
	completedLines = 0;
	totalLines = 0;
	currentLineBytes = 0;
	hasOpenLine = false;
	finished = false;
	tempFilePath;
	tempFileStream;
	constructor(options = {}) {
		this.maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
		this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
		this.maxRollingBytes = Math.max(this.maxBytes * 2, 1);
		this.tempFilePrefix = options.tempFilePrefix ?? "pi-output";
	}
	append(data) {
		if (this.finished) throw new Error("Cannot append to a finished output accumulator");
		this.totalRawBytes += data.length;
		this.appendDecodedText(this.decoder.decode(data, { stream: true }));
		if (this.tempFileStream || this.shouldUseTempFile()) {
			this.ensureTempFile();
			this.tempFileStream?.write(data);
		} else if (data.length > 0) {
			this.rawChunks.push(data);
		}
	}
	finish() {
		if (this.finished) return;
		this.finished = true;
		this.appendDecodedText(this.decoder.decode());
		if (this.shouldUseTempFile()) this.ensureTempFile();
	}
	snapshot(options = {}) {
		const snapshotText = this.getSnapshotText() || this.tailText;
		const tailTruncation = truncateTail(snapshotText, { maxLines: this.maxLines, maxBytes: this.maxBytes });
		const truncated = this.totalLines > this.maxLines || this.totalDecodedBytes > this.maxBytes;
		const truncatedBy = truncated
			? (tailTruncation.truncatedBy ?? (this.totalDecodedBytes > this.maxBytes ? "bytes" : "lines"))
			: null;
		const truncation = {
			...tailTruncation,
			truncated,
			truncatedBy,
			totalLines: this.totalLines,
			totalBytes: this.totalDecodedBytes,
			maxLines: this.maxLines,
			maxBytes: this.maxBytes,
		};
		if (options.persistIfTruncated && truncation.truncated) this.ensureTempFile();
		return { content: truncation.content, truncation, fullOutputPath: this.tempFilePath };
	}
	async closeTempFile() {
		if (!this.tempFileStream) return;
		const stream = this.tempFileStream;
		this.tempFileStream = undefined;
		await new Promise((resolve, reject) => {
			const onError = (error) => {
				stream.off("finish", onFinish);
				reject(error);
			};
			const onFinish = () => {
				stream.off("error", onError);
				resolve();
			};
			stream.once("error", onError);
			stream.once("finish", onFinish);
			stream.end();
		});
	}
	/** The whole output, or its first and last `maxBytes / 2` bytes when it is longer. */
	async readFullOutput(maxBytes) {
		if (!this.tempFilePath) return { content: new TextDecoder().decode(Buffer.concat(this.rawChunks)), truncated: false };
		const file = await fsOpen(this.tempFilePath, "r");
		try {
			const size = (await file.stat()).size;
			if (size <= maxBytes) return { content: new TextDecoder().decode(await file.readFile()), truncated: false };
			const headBytes = Math.floor(maxBytes / 2);
			const tailBytes = maxBytes - headBytes;
			const head = Buffer.alloc(headBytes);
			const tail = Buffer.alloc(tailBytes);
			await file.read(head, 0, headBytes, 0);
			await file.read(tail, 0, tailBytes, size - tailBytes);
			const headText = new TextDecoder().decode(head, { stream: true });
			let tailStart = 0;
			while (tailStart < tail.length && (tail[tailStart] & 0xc0) === 0x80) tailStart++;
			const tailText = new TextDecoder().decode(tail.subarray(tailStart));
			const omitted = size - headBytes - tailBytes;
			return { content: `${headText}\n\n[... ${omitted} bytes omitted ...]\n\n${tailText}`, truncated: true };
		} finally {
			await file.close();
		}
	}
	getLastLineBytes() {
		return this.currentLineBytes;
	}
	appendDecodedText(text) {
		if (text.length === 0) return;
		const bytes = byteLength(text);
		this.totalDecodedBytes += bytes;
		this.tailText += text;
		this.tailBytes += bytes;
		if (this.tailBytes > this.maxRollingBytes * 2) this.trimTail();
		let newlines = 0;
		let lastNewline = -1;
		for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
			newlines++;
			lastNewline = i;
		}
		if (newlines === 0) {
			this.currentLineBytes += bytes;
			this.hasOpenLine = true;
		} else {
			this.completedLines += newlines;
			const tail = text.slice(lastNewline + 1);
			this.currentLineBytes = byteLength(tail);
			this.hasOpenLine = tail.length > 0;
		}
		this.totalLines = this.completedLines + (this.hasOpenLine ? 1 : 0);
	}
	trimTail() {
		const buffer = Buffer.from(this.tailText, "utf-8");
		if (buffer.length <= this.maxRollingBytes) {
			this.tailBytes = buffer.length;
			return;
		}
		let start = buffer.length - this.maxRollingBytes;
		while (start < buffer.length && (buffer[start] & 0xc0) === 0x80) start++;
		this.tailStartsAtLineBoundary = start === 0 ? this.tailStartsAtLineBoundary : buffer[start - 1] === 0x0a;
		this.tailText = buffer.subarray(start).toString("utf-8");
		this.tailBytes = byteLength(this.tailText);
	}
	getSnapshotText() {
		if (this.tailStartsAtLineBoundary) return this.tailText;
		const firstNewline = this.tailText.indexOf("\n");
		return firstNewline === -1 ? this.tailText : this.tailText.slice(firstNewline + 1);
	}
	shouldUseTempFile() {
		return this.totalRawBytes > this.maxBytes || this.totalDecodedBytes > this.maxBytes || this.totalLines > this.maxLines;
	}
	ensureTempFile() {
		if (this.tempFilePath) return;
		const { path: file, stream } = createOutputFileStream(this.tempFilePrefix, ".log");
		this.tempFilePath = file;
		this.tempFileStream = stream;
		for (const chunk of this.rawChunks) this.tempFileStream.write(chunk);
		this.rawChunks = [];
	}
}

function resolveTimeoutMs(timeout) {
	if (timeout === undefined) return undefined;
	if (!Number.isFinite(timeout) || timeout <= 0) throw new Error("Invalid timeout: must be a finite number of seconds");
	const timeoutMs = timeout * 1000;
	if (timeoutMs > MAX_TIMEOUT_MS) throw new Error(`Invalid timeout: maximum is ${MAX_TIMEOUT_MS / 1000} seconds`);
	return timeoutMs;
}

class ShellTimeoutError extends Error {
	constructor(timeout, shellExit) {
		super(`timeout:${timeout}`);
		this.shellExit = shellExit;
	}
}

function createLocalShellOperations(shellName, resolveShellConfig) {
	return {
		exec: async (command, cwd, { onData, signal, timeout, env }) => {
			const shell = loadDist("utils/shell.js");
			const { waitForChildProcess } = loadDist("utils/child-process.js");
			const timeoutMs = resolveTimeoutMs(timeout);
			if (signal?.aborted) throw new Error("aborted");
			const shellConfig = resolveShellConfig();
			try {
				await fsAccess(cwd, fsConstants.F_OK);
			} catch {
				throw new Error(`Working directory does not exist: ${cwd}\nCannot execute ${shellName} commands.`);
			}
			const commandFromStdin = shellConfig.commandTransport === "stdin";
			const child = spawn(shellConfig.shell, commandFromStdin ? shellConfig.args : [...shellConfig.args, command], {
				cwd,
				detached: process.platform !== "win32",
				env: env ?? shell.getShellEnv(),
				stdio: [commandFromStdin ? "pipe" : "ignore", "pipe", "pipe"],
				windowsHide: true,
			});
			if (commandFromStdin) {
				child.stdin?.on("error", () => {});
				child.stdin?.end(command);
			}
			if (child.pid) shell.trackDetachedChildPid(child.pid);
			const startedAt = performance.now();
			let shellExitedAfterMs;
			child.once("exit", () => {
				shellExitedAfterMs = performance.now() - startedAt;
			});
			let timedOut = false;
			let exitedBeforeDeadlineAfterMs;
			let timeoutHandle;
			const onAbort = () => {
				if (child.pid) shell.killProcessTree(child.pid);
			};
			try {
				if (timeoutMs !== undefined) {
					timeoutHandle = setTimeout(() => {
						timedOut = true;
						exitedBeforeDeadlineAfterMs = shellExitedAfterMs;
						if (child.pid) shell.killProcessTree(child.pid);
					}, timeoutMs);
				}
				child.stdout?.on("data", onData);
				child.stderr?.on("data", onData);
				if (signal) {
					if (signal.aborted) onAbort();
					else signal.addEventListener("abort", onAbort, { once: true });
				}
				const exitCode = await waitForChildProcess(child);
				if (signal?.aborted) throw new Error("aborted");
				const signalCode = child.signalCode;
				const resolvedExitCode = exitCode ?? (signalCode ? 128 + (osConstants.signals[signalCode] ?? 0) : 1);
				if (timedOut) {
					throw new ShellTimeoutError(
						timeout,
						exitedBeforeDeadlineAfterMs !== undefined
							? { exitCode: resolvedExitCode, afterSeconds: Math.round(exitedBeforeDeadlineAfterMs / 100) / 10 }
							: undefined,
					);
				}
				return { exitCode: resolvedExitCode };
			} finally {
				if (child.pid) shell.untrackDetachedChildPid(child.pid);
				if (timeoutHandle) clearTimeout(timeoutHandle);
				if (signal) signal.removeEventListener("abort", onAbort);
			}
		},
	};
}

export function createLocalBashOperations(options) {
	return createLocalShellOperations("bash", () => loadDist("utils/shell.js").getShellConfig(options?.shellPath));
}

function resolveSpawnContext(command, cwd, spawnHook, exposeSessionEnvironment, ctx) {
	const env = { ...loadDist("utils/shell.js").getShellEnv() };
	delete env.PI_SESSION_ID;
	delete env.PI_SESSION_FILE;
	delete env.PI_PROVIDER;
	delete env.PI_MODEL;
	delete env.PI_REASONING_LEVEL;
	if (exposeSessionEnvironment && ctx) {
		const model = ctx.model;
		env.PI_SESSION_ID = ctx.sessionManager.getSessionId();
		const sessionFile = ctx.sessionManager.getSessionFile();
		if (sessionFile) env.PI_SESSION_FILE = sessionFile;
		if (model) {
			env.PI_PROVIDER = model.provider;
			env.PI_MODEL = model.id;
		}
		if (ctx.thinkingLevel) env.PI_REASONING_LEVEL = ctx.thinkingLevel;
	}
	const baseContext = { command, cwd, env };
	return spawnHook ? spawnHook(baseContext) : baseContext;
}

let bashSchemas;
function bashSchemasOnce() {
	if (bashSchemas) return bashSchemas;
	const Type = typebox();
	bashSchemas = {
		parameters: Type.Object({
			command: Type.String({ description: "Shell command to execute" }),
			timeout: Type.Optional(Type.Number({ description: "Timeout in seconds (optional, no default timeout)" })),
		}),
		output: Type.Object({
			output: Type.String({ description: "Combined stdout and stderr, possibly truncated" }),
			truncated: Type.Boolean(),
			full_output_path: Type.Optional(Type.String({ description: "Full output, when truncated" })),
			exit_code: Type.Number(),
			wall_time_seconds: Type.Number(),
		}),
	};
	return bashSchemas;
}

const bashToolConfig = {
	name: "bash",
	label: "bash",
	shellName: "bash",
	promptSnippet: "Execute bash commands (ls, grep, find, etc.)",
	promptGuidelines: ["You can inspect PI_* environment variables for current model and session details."],
	tempFilePrefix: "pi-bash",
};

function createShellToolDefinition(cwd, config, options) {
	const ops = options?.operations ?? createLocalBashOperations({ shellPath: options?.shellPath });
	const commandPrefix = options?.commandPrefix;
	const exposeSessionEnvironment = options?.exposeSessionEnvironment ?? true;
	const spawnHook = options?.spawnHook;
	const schemas = bashSchemasOnce();
	return {
		name: config.name,
		label: config.label,
		description: `Execute a ${config.shellName} command in the current working directory. Returns stdout and stderr. Output is truncated to last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.`,
		promptSnippet: config.promptSnippet,
		promptGuidelines: exposeSessionEnvironment && config.promptGuidelines ? [...config.promptGuidelines] : undefined,
		parameters: schemas.parameters,
		outputSchema: schemas.output,
		constrainedSampling: { type: "json_schema", strict: "prefer" },
		async execute(_toolCallId, { command, timeout }, signal, onUpdate, ctx) {
			const resolvedCommand = commandPrefix ? `${commandPrefix}\n${command}` : command;
			const spawnContext = resolveSpawnContext(resolvedCommand, ctx?.cwd || cwd, spawnHook, exposeSessionEnvironment, ctx);
			const output = new OutputAccumulator({ tempFilePrefix: config.tempFilePrefix });
			let acceptingOutput = true;
			let updateTimer;
			let updateDirty = false;
			let lastUpdateAt = 0;
			const emitOutputUpdate = () => {
				if (!onUpdate || !updateDirty) return;
				updateDirty = false;
				lastUpdateAt = Date.now();
				const snapshot = output.snapshot({ persistIfTruncated: true });
				onUpdate({
					content: [{ type: "text", text: snapshot.content || "" }],
					details: {
						truncation: snapshot.truncation.truncated ? snapshot.truncation : undefined,
						fullOutputPath: snapshot.fullOutputPath,
					},
				});
			};
			const clearUpdateTimer = () => {
				if (updateTimer) {
					clearTimeout(updateTimer);
					updateTimer = undefined;
				}
			};
			const scheduleOutputUpdate = () => {
				if (!onUpdate) return;
				updateDirty = true;
				const delay = BASH_UPDATE_THROTTLE_MS - (Date.now() - lastUpdateAt);
				if (delay <= 0) {
					clearUpdateTimer();
					emitOutputUpdate();
					return;
				}
				updateTimer ??= setTimeout(() => {
					updateTimer = undefined;
					emitOutputUpdate();
				}, delay);
			};
			if (onUpdate) onUpdate({ content: [], details: undefined });
			const handleData = (data) => {
				if (!acceptingOutput) return;
				output.append(data);
				scheduleOutputUpdate();
			};
			const finishOutput = async () => {
				acceptingOutput = false;
				output.finish();
				clearUpdateTimer();
				emitOutputUpdate();
				const snapshot = output.snapshot({ persistIfTruncated: true });
				await output.closeTempFile();
				return snapshot;
			};
			const formatOutput = (snapshot, emptyText = "(no output)") => {
				const truncation = snapshot.truncation;
				let text = snapshot.content || emptyText;
				let details;
				if (truncation.truncated) {
					details = { truncation, fullOutputPath: snapshot.fullOutputPath };
					const startLine = truncation.totalLines - truncation.outputLines + 1;
					const endLine = truncation.totalLines;
					if (truncation.lastLinePartial) {
						const lastLineSize = formatSize(output.getLastLineBytes());
						text += `\n\n[Showing last ${formatSize(truncation.outputBytes)} of line ${endLine} (line is ${lastLineSize}). Full output: ${snapshot.fullOutputPath}]`;
					} else if (truncation.truncatedBy === "lines") {
						text += `\n\n[Showing lines ${startLine}-${endLine} of ${truncation.totalLines}. Full output: ${snapshot.fullOutputPath}]`;
					} else {
						text += `\n\n[Showing lines ${startLine}-${endLine} of ${truncation.totalLines} (${formatSize(DEFAULT_MAX_BYTES)} limit). Full output: ${snapshot.fullOutputPath}]`;
					}
				}
				return { text, details };
			};
			const appendStatus = (text, status) => `${text ? `${text}\n\n` : ""}${status}`;
			const startedAt = performance.now();
			try {
				let exitCode;
				try {
					exitCode = (
						await ops.exec(spawnContext.command, spawnContext.cwd, {
							onData: handleData,
							signal,
							timeout,
							env: spawnContext.env,
						})
					).exitCode;
				} catch (err) {
					const snapshot = await finishOutput();
					const { text } = formatOutput(snapshot, "");
					if (err instanceof Error && err.message === "aborted") throw new Error(appendStatus(text, "Command aborted"));
					if (err instanceof Error && err.message.startsWith("timeout:")) {
						let status = `Command timed out after ${err.message.split(":")[1]} seconds`;
						if (err instanceof ShellTimeoutError && err.shellExit) {
							status += `. The shell exited with code ${err.shellExit.exitCode} after ${err.shellExit.afterSeconds} seconds, but background processes it started kept writing output until the timeout.`;
						}
						throw new Error(appendStatus(text, status));
					}
					throw err;
				}
				const snapshot = await finishOutput();
				const { text: outputText, details } = formatOutput(snapshot);
				if (exitCode === null) throw new Error(appendStatus(outputText, "Command terminated without an exit code"));
				const wallTimeSeconds = Math.round((performance.now() - startedAt) / 100) / 10;
				const fullOutput = await output.readFullOutput(STRUCTURED_OUTPUT_MAX_BYTES);
				const structuredContent = {
					output: fullOutput.content,
					truncated: fullOutput.truncated,
					...(fullOutput.truncated && snapshot.fullOutputPath ? { full_output_path: snapshot.fullOutputPath } : {}),
					exit_code: exitCode,
					wall_time_seconds: wallTimeSeconds,
				};
				if (exitCode !== 0) {
					return {
						content: [{ type: "text", text: appendStatus(outputText, `Command exited with code ${exitCode}`) }],
						details,
						structuredContent,
						isError: true,
					};
				}
				return { content: [{ type: "text", text: outputText }], details, structuredContent };
			} finally {
				clearUpdateTimer();
			}
		},
		...renderersOf(loadDist("core/tools/bash.js").createBashToolDefinition(cwd)),
	};
}

export function createBashToolDefinition(cwd, options) {
	return createShellToolDefinition(cwd, bashToolConfig, options);
}

export function createBashTool(cwd, options) {
	const definition = createBashToolDefinition(cwd, options);
	const tool = wrapToolDefinition(definition);
	return Object.assign(tool, { promptSnippet: definition.promptSnippet, promptGuidelines: definition.promptGuidelines });
}
