/**
 * Shared by pi 1.6.0's read and bash factories (tools-16.mjs): output truncation as
 * 1.6.0 counts lines, and the wrapping of a tool definition into a tool.
 */
import { createWriteStream } from "node:fs";
import { constants as fsConstants } from "node:fs";
import { access as fsAccess, open as fsOpen, readFile as fsReadFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { constants as osConstants, tmpdir } from "node:os";
import { join } from "node:path";
import { loadDist, loadModule } from "../lib/native.mjs";

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
export const STRUCTURED_OUTPUT_MAX_BYTES = 1024 * 1024;
export const MAX_TIMEOUT_MS = 2147483647;
export const BASH_UPDATE_THROTTLE_MS = 100;

// ---------------------------------------------------------------------------------------
// truncation (1.6.0: a trailing newline does not count as a line)

export function splitLinesForCounting(content) {
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

export function untruncated(content, totalLines, totalBytes, maxLines, maxBytes) {
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

export function truncateStringToBytesFromEnd(str, maxBytes) {
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
export function renderersOf(definition) {
	return { renderCall: definition.renderCall, renderResult: definition.renderResult };
}

/** typebox's `Type`, loaded when a schema is first built. */
export function typebox() {
	return loadModule("typebox").Type;
}
