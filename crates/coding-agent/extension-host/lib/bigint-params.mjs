/**
 * TypeBox `bigint` parameters: pi converts and validates tool arguments as JSON, holding a
 * bigint as an integer; before `execute` they become BigInt values, as pi 1.6's pi-schema
 * hands them to the tool (`"42"` and `42` both arrive as `42n`).
 */

/** `params` with every value at a `bigint`-typed place of `schema` made a BigInt. */
export function withBigInts(schema, params) {
	return convert(schema, schema, params, 0);
}

const MAX_DEPTH = 64;

/** The schema a local `$ref` names, or `node` itself. */
function resolve(root, node) {
	const ref = node?.$ref;
	if (typeof ref !== "string" || !ref.startsWith("#")) return node;
	let target = root;
	for (const part of ref.slice(1).split("/").filter(Boolean)) {
		target = target?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
	}
	return target ?? node;
}

function isBigIntType(node) {
	return node?.type === "bigint" || (Array.isArray(node?.type) && node.type.length === 1 && node.type[0] === "bigint");
}

function toBigInt(value) {
	if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
	if (typeof value === "string" && /^-?(0|[1-9]\d*)$/.test(value)) return BigInt(value);
	return value;
}

function convert(root, node, value, depth) {
	if (depth > MAX_DEPTH || !node || typeof node !== "object") return value;
	node = resolve(root, node);
	if (isBigIntType(node)) return toBigInt(value);
	if (Array.isArray(node.allOf)) {
		for (const member of node.allOf) value = convert(root, member, value, depth + 1);
	}
	for (const key of ["anyOf", "oneOf"]) {
		const branches = node[key];
		if (!Array.isArray(branches)) continue;
		// Only a union where no other branch takes a number can mean a bigint.
		const resolved = branches.map((b) => resolve(root, b));
		const takesNumber = resolved.some((b) => ["number", "integer"].includes(b?.type));
		if (!takesNumber && resolved.some(isBigIntType)) value = toBigInt(value);
	}
	if (Array.isArray(value)) {
		const prefix = Array.isArray(node.items) ? node.items : Array.isArray(node.prefixItems) ? node.prefixItems : [];
		const rest = Array.isArray(node.items) ? undefined : node.items;
		return value.map((item, i) => convert(root, i < prefix.length ? prefix[i] : rest, item, depth + 1));
	}
	if (value && typeof value === "object") {
		const properties = node.properties ?? {};
		const out = { ...value };
		for (const [key, item] of Object.entries(value)) {
			const schema = Object.hasOwn(properties, key) ? properties[key] : node.additionalProperties;
			out[key] = convert(root, schema, item, depth + 1);
		}
		return out;
	}
	return value;
}
