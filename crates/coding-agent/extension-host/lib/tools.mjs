/**
 * Extension tools on pi's request: `tool_execute` (execute with signal, streamed updates and
 * a ctx), `tool_prepare` (prepareArguments) and, in interactive mode, `tool_render`
 * (renderCall / renderResult as remote components).
 *
 * Renderer state follows pi's ToolExecutionComponent: one `state` object per tool call
 * shared by its call and result renderers, and `lastComponent` = what the same renderer
 * returned last time (returning it again keeps its componentId).
 */
import { withBigInts } from "./bigint-params.mjs";
import { createContext } from "./context.mjs";
import { loadDist, loadModule } from "./native.mjs";
import { currentTheme } from "./theme.mjs";

export async function executeTool(core, frame, signal) {
	const found = core.registry.findTool(frame.toolName);
	if (!found) throw new Error(`Tool ${frame.toolName} is not registered by any extension`);
	const ctx = createContext(core, { signal });
	const onUpdate = (partialResult) => {
		core.channel.notify("tool_update", { id: frame.id, partialResult });
	};
	const params = withBigInts(found.tool.parameters, frame.params ?? {});
	const result = await found.tool.execute(frame.toolCallId, params, signal, onUpdate, ctx);
	// structuredContent and isError: true go through as pi 1.6.0 takes them from execute
	return {
		content: result?.content ?? [],
		details: result?.details,
		...(result?.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
		...(result?.isError === true ? { isError: true } : {}),
		...(result?.terminate !== undefined ? { terminate: result.terminate } : {}),
	};
}

export async function prepareToolArguments(core, frame) {
	const found = core.registry.findTool(frame.toolName);
	if (!found) throw new Error(`Tool ${frame.toolName} is not registered by any extension`);
	if (typeof found.tool.prepareArguments !== "function") return frame.args;
	return found.tool.prepareArguments(frame.args);
}

/**
 * Stand-ins for pi's own renderers of its built-in tools (drawn by pi itself): `next()`
 * gives them for these tools; a slot that resolves to one is answered null (pi draws it).
 */
const BUILT_IN = { call: () => undefined, result: () => undefined };
const BUILT_IN_TOOLS = new Set(["read", "bash", "powershell", "edit", "write", "grep", "find", "ls"]);

/**
 * The renderers of a tool call, chosen once per call as pi 1.6.0's ToolExecutionComponent
 * does: the resolvers of `registerToolRenderer`, then the registered tool (its missing
 * renderers filled in by the built-in ones for built-in names). A throwing resolver counts
 * as none (the call is drawn by default).
 */
function resolveRenderers(core, toolName) {
	const base = () => {
		const tool = core.registry.findTool(toolName)?.tool;
		if (!BUILT_IN_TOOLS.has(toolName)) return tool;
		return {
			...tool,
			renderCall: tool?.renderCall ?? BUILT_IN.call,
			renderResult: tool?.renderResult ?? BUILT_IN.result,
		};
	};
	try {
		return core.registry.resolveToolRenderer(toolName, base);
	} catch {
		return undefined;
	}
}

/** Per tool call: renderer state, its renderers and the last components (by kind). */
const renderSlots = new Map();

/**
 * `tool_render {toolName, toolCallId, kind: "call"|"result", args, result?, context}` →
 * `{componentId}`, or null when the tool has no such renderer (pi draws its default).
 * A renderer that throws makes pi fall back too (null), as in pi.
 */
export function renderTool(core, frame) {
	const kind = frame.kind === "result" ? "result" : "call";
	let slot = renderSlots.get(frame.toolCallId);
	if (!slot || slot.toolName !== frame.toolName) {
		const renderers = resolveRenderers(core, frame.toolName);
		slot = { state: {}, call: undefined, result: undefined, toolName: frame.toolName, renderers };
		renderSlots.set(frame.toolCallId, slot);
	}
	const renderer = kind === "call" ? slot.renderers?.renderCall : slot.renderers?.renderResult;
	if (typeof renderer !== "function" || renderer === BUILT_IN[kind]) return null;
	const info = frame.context ?? {};
	const last = slot[kind];
	const context = {
		args: frame.args,
		toolCallId: frame.toolCallId,
		invalidate: () => {
			const id = slot[kind]?.id;
			if (id === undefined) return;
			core.components.get(id)?.invalidate?.();
			core.channel.notify("ui", { method: "requestRender", params: { componentId: id } });
		},
		lastComponent: last?.component,
		state: slot.state,
		cwd: core.state.cwd,
		executionStarted: info.executionStarted === true,
		argsComplete: info.argsComplete === true,
		isPartial: info.isPartial !== false,
		expanded: info.expanded === true,
		showImages: info.showImages !== false,
		isError: info.isError === true,
	};
	let component;
	try {
		component =
			kind === "call"
				? renderer(frame.args, currentTheme(), context)
				: renderer(
						{ content: frame.result?.content ?? [], details: frame.result?.details },
						{ expanded: context.expanded, isPartial: context.isPartial },
						currentTheme(),
						context,
					);
	} catch {
		component = undefined;
	}
	if (!component) {
		if (last) core.components.dispose(last.id);
		slot[kind] = undefined;
		return null;
	}
	if (last && last.component !== component) core.components.dispose(last.id);
	const id = last?.component === component ? last.id : core.components.add(component);
	slot[kind] = { component, id };
	return { componentId: id };
}

/** `tool_render_dispose {toolCallId}`: forget the renderers' state and components. */
export function disposeToolRender(core, toolCallId) {
	const slot = renderSlots.get(toolCallId);
	if (!slot) return;
	renderSlots.delete(toolCallId);
	for (const kind of ["call", "result"]) if (slot[kind]) core.components.dispose(slot[kind].id);
}

/**
 * `message_render {customType, message, expanded}` → `{componentId}` or null when no
 * extension registered a renderer for the type or it returned nothing.
 */
export function renderMessage(core, frame) {
	const found = core.registry.findMessageRenderer(frame.message?.customType ?? frame.customType);
	if (!found) return null;
	const component = found.renderer(frame.message, { expanded: frame.expanded === true }, currentTheme());
	if (!component) return null;
	return { componentId: core.components.add(component) };
}

/**
 * `entry_render {entry, expanded}` → `{componentId}`, or null when no extension draws the
 * entry's `customType` or its renderer returned nothing. A renderer that throws is drawn
 * as pi 1.6.0's CustomEntryComponent does: `[customType] renderer failed: message` in a box.
 */
export function renderEntry(core, frame) {
	const entry = frame.entry ?? {};
	const found = core.registry.findEntryRenderer(entry.customType);
	if (!found) return null;
	const theme = currentTheme();
	const { keyText, keyHint } = loadDist("modes/interactive/components/keybinding-hints.js");
	let component;
	try {
		component = found.renderer(entry, { expanded: frame.expanded === true, keyText, keyHint }, theme);
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		const { Box, Text } = loadModule("@mariozechner/pi-tui");
		component = new Box(1, 1, (text) => theme.bg("customMessageBg", text));
		component.addChild(new Text(theme.fg("error", `[${entry.customType}] renderer failed: ${message}`), 0, 0));
	}
	if (!component) return null;
	return { componentId: core.components.add(component) };
}
