/** pi 1.6.0's read tool factory (createReadTool, createReadToolDefinition). */
import { constants as fsConstants } from "node:fs";
import { access as fsAccess, open as fsOpen, readFile as fsReadFile } from "node:fs/promises";
import { join } from "node:path";
import { loadDist, loadModule } from "../lib/native.mjs";
import {
	DEFAULT_MAX_LINES,
	DEFAULT_MAX_BYTES,
	formatSize,
	renderersOf,
	truncateHead,
	typebox,
	wrapToolDefinition,
} from "./tools-16-common.mjs";

// ---------------------------------------------------------------------------------------
// read


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
