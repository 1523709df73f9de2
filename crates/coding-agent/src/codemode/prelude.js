// The globals of a codemode script, set up before it runs. `host` holds the native
// functions of pi-rs (call, emit, finish, query); everything the script sees is built
// here, from built-ins captured before the script can change them.
(function (host, setup) {
  "use strict";
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const freeze = Object.freeze;
  const define = Object.defineProperty;
  const ErrorType = Error;
  const TypeErrorType = TypeError;
  const RangeErrorType = RangeError;
  const PromiseType = Promise;
  const MapType = Map;

  const MAX_CHARS = 16777216;
  const MAX_ITEMS = 100000;
  const MAX_VALUE = 262144;
  const MAX_STORE = 1048576;
  const STORE_HINT =
    "store() is for small state such as IDs or summaries. Show images with image(), keep large data in variables, or write it to a file with a tool.";
  const IMAGE_EXPECTS =
    'image expects a non-empty image URL string, an object with image_url, or an image block { type: "image", data, mimeType }';

  const { tools: toolList, allTools, store: initialStore } = parse(setup);
  const pending = new MapType();
  const EXIT = freeze({});
  let chars = 0;
  let items = 0;
  let finished = false;

  // ---- text of values and errors ----

  function errorText(error) {
    const name = String(error.name);
    const head = error.message ? name + ": " + String(error.message) : name;
    const frames = String(error.stack ?? "")
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.includes("codemode-prelude.js"));
    return [head, ...frames].join("\n");
  }

  function format(value) {
    if (typeof value === "string") return value;
    if (value instanceof ErrorType) return errorText(value);
    if (typeof value === "number") return String(value);
    try {
      const json = stringify(value);
      return json === undefined ? String(value) : json;
    } catch {
      return String(value);
    }
  }

  function describeError(error) {
    try {
      if (error instanceof ErrorType) {
        return { name: String(error.name), message: String(error.message), stack: errorText(error) };
      }
      return { message: String(format(error)) };
    } catch {
      return { message: "The script threw a value that cannot be described" };
    }
  }

  // ---- the end of the script ----

  const writes = new MapType();
  const stored = new MapType();
  for (const key of Object.keys(initialStore)) stored.set(key, stringify(initialStore[key]));

  function finish(ok, value, error) {
    if (finished) return;
    finished = true;
    const report = { ok };
    if (ok) {
      if (value !== undefined) report.value = value;
      report.store = [...writes].map(([key, json]) => (json === undefined ? [key] : [key, json]));
    } else {
      report.error = describeError(error);
    }
    host.finish(stringify(report));
  }

  // ---- output ----

  function output(kind, data) {
    if (finished) return;
    chars += data.length;
    items += 1;
    if (chars > MAX_CHARS || items > MAX_ITEMS) {
      const error = new RangeErrorType(
        `script output exceeded the limit of ${MAX_CHARS} characters or ${MAX_ITEMS} text(), image(), and console calls. Print a summary instead, or write large data to a file with a tool.`,
      );
      finish(false, undefined, error);
      throw error;
    }
    host.emit(kind, data);
  }

  function text(value) {
    if (value === null || (typeof value !== "object" && typeof value !== "function")) {
      output("text", String(value));
      return;
    }
    let json;
    try {
      json = stringify(value);
    } catch (error) {
      throw new TypeErrorType(String(error && error.message));
    }
    output("text", json === undefined ? String(value) : json);
  }

  function imageData(value) {
    let url;
    if (typeof value === "string") {
      url = value;
    } else if (value !== null && typeof value === "object" && typeof value.image_url === "string") {
      url = value.image_url;
    } else if (value !== null && typeof value === "object" && "type" in value) {
      if (value.type !== "image") throw new TypeErrorType(`image only accepts image blocks, got "${value.type}"`);
      if (typeof value.data !== "string" || value.data === "") throw new TypeErrorType("image expected image block data");
      url = /^data:/i.test(value.data) ? value.data : "data:;base64," + value.data;
    }
    if (typeof url !== "string" || url === "") throw new TypeErrorType(IMAGE_EXPECTS);
    if (/^https?:/i.test(url)) {
      throw new TypeErrorType("remote image URLs are not supported in tool outputs. Pass a base64 data URI instead");
    }
    const comma = url.indexOf(",");
    if (!/^data:/i.test(url) || comma < 0 || !url.slice(0, comma).toLowerCase().includes(";base64")) {
      throw new TypeErrorType("invalid image output. Pass a base64 data URI instead");
    }
    const data = url.slice(comma + 1).replace(/\s+/g, "");
    if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(data)) {
      throw new TypeErrorType("invalid image output. The image data is not valid base64 (truncated or corrupted?)");
    }
    const head = data.slice(0, 16);
    const mimeType = /^iVBORw0KGg/.test(head)
      ? "image/png"
      : /^[/]9j[/](?!9)/.test(head)
        ? "image/jpeg"
        : /^R0lGOD[dl]h/.test(head)
          ? "image/gif"
          : /^UklG.{8}RUJQ/.test(head)
            ? "image/webp"
            : undefined;
    if (mimeType === undefined) {
      throw new TypeErrorType("invalid image output. The image data is not a PNG, JPEG, GIF, or WebP image");
    }
    return mimeType + "," + data;
  }

  function image(value) {
    if (finished) return;
    output("image", imageData(value));
  }

  const consoleObject = freeze({
    log: (...values) => output("console", values.map(format).join(" ")),
    info: (...values) => output("console", values.map(format).join(" ")),
    warn: (...values) => output("console", values.map(format).join(" ")),
    error: (...values) => output("console", values.map(format).join(" ")),
    debug: (...values) => output("console", values.map(format).join(" ")),
  });

  // ---- store / load ----

  function store(key, value) {
    if (typeof key !== "string") throw new TypeErrorType("store() key must be a string");
    if (value === undefined) {
      stored.delete(key);
      writes.set(key, undefined);
      return;
    }
    let json;
    try {
      json = stringify(value);
    } catch (error) {
      throw new TypeErrorType(`store(${stringify(key)}) value is not JSON-serializable: ${format(error)}`);
    }
    if (json === undefined) throw new TypeErrorType(`store(${stringify(key)}) value is not JSON-serializable`);
    if (json.length > MAX_VALUE) {
      throw new RangeErrorType(
        `store(${stringify(key)}) value has ${json.length} characters of JSON, more than the limit of ${MAX_VALUE}. ` + STORE_HINT,
      );
    }
    let total = key.length + json.length;
    for (const [other, otherJson] of stored) if (other !== key) total += other.length + otherJson.length;
    if (total > MAX_STORE) {
      throw new RangeErrorType(
        `store is full: stored values would exceed ${MAX_STORE} characters of JSON. Delete keys with store(key, undefined). ` + STORE_HINT,
      );
    }
    stored.set(key, json);
    writes.set(key, json);
  }

  function load(key) {
    if (typeof key !== "string") throw new TypeErrorType("load() key must be a string");
    const json = stored.get(key);
    return json === undefined ? undefined : parse(json);
  }

  function exit() {
    finish(true, undefined);
    throw EXIT;
  }

  // ---- tools ----

  function request(kind, name, args) {
    if (finished) return new PromiseType(() => {});
    let json;
    try {
      json = stringify(args === undefined ? {} : args);
    } catch (error) {
      return PromiseType.reject(new TypeErrorType(String(error && error.message)));
    }
    const id = host.call(kind, name, json === undefined ? "{}" : json);
    return new PromiseType((resolve, reject) => pending.set(id, { resolve, reject }));
  }

  function settle(id, ok, payload) {
    const waiting = pending.get(id);
    if (waiting === undefined) return;
    pending.delete(id);
    if (ok) waiting.resolve(payload === "" ? undefined : parse(payload));
    else waiting.reject(new ErrorType(payload));
  }

  const normalize = (name) => name.toLowerCase().replace(/[^a-z0-9]/g, "");

  function missing(label, prop, names, forTools) {
    const wanted = normalize(prop);
    let matches = names.filter((name) => normalize(name) === wanted);
    if (matches.length === 0) {
      matches = names.filter((name) => normalize(name).includes(wanted) || wanted.includes(normalize(name)));
    }
    let message = `${label}.${prop} does not exist.`;
    if (matches.length > 0) {
      message += ` Did you mean ${matches
        .slice(0, 5)
        .map((name) => label + "." + name)
        .join(", ")}?`;
    } else if (names.length <= 20) {
      message += ` Available: ${names.join(", ")}.`;
    }
    if (forTools) message += " ALL_TOOLS lists every tool; searchTools(query) finds tools by topic.";
    return message + ` Check for a member with "${prop}" in ${label}.`;
  }

  const toolFunctions = Object.create(null);
  const identifiers = [];
  for (const { id, name } of toolList) {
    if (!(id in toolFunctions)) {
      toolFunctions[id] = (args) => request("tool", name, args);
      identifiers.push(id);
    }
    if (!(name in toolFunctions)) toolFunctions[name] = toolFunctions[id];
  }
  freeze(toolFunctions);
  const tools = new Proxy(toolFunctions, {
    get(target, prop) {
      if (typeof prop === "symbol" || prop in target) return target[prop];
      throw new TypeErrorType(missing("tools", prop, identifiers, true));
    },
  });

  const ALL_TOOLS = freeze(allTools.map((entry) => freeze(entry)));

  function searchTools(query, options) {
    if (typeof query !== "string") return PromiseType.reject(new ErrorType("searchTools() expects a query string"));
    const { limit, namespace } = options ?? {};
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
      return PromiseType.reject(new ErrorType("searchTools() limit must be a positive integer"));
    }
    if (namespace !== undefined && typeof namespace !== "string") {
      return PromiseType.reject(new ErrorType("searchTools() namespace must be a string"));
    }
    return request("search", "", { query, limit, namespace });
  }

  function describeTool(name) {
    if (typeof name !== "string") return PromiseType.reject(new ErrorType("describeTool() expects a tool name"));
    return request("describe_tool", "", { name });
  }

  function describeNamespace(name) {
    if (typeof name !== "string") {
      return PromiseType.reject(new ErrorType("describeNamespace() expects a namespace name"));
    }
    return request("describe_namespace", "", { name });
  }

  /** `models`: the catalog, and non-LLM model calls that never throw on provider errors. */
  const modelFunctions = freeze({
    getModelsOfType(type, provider) {
      return request("models", "", { op: "getModelsOfType", type, provider });
    },
    getAvailableOfType(type, provider) {
      return request("models", "", { op: "getAvailableOfType", type, provider });
    },
    getModelOfType(...args) {
      const [type, provider, id] = args;
      const argc = args.length;
      return request("models", "", { op: "getModelOfType", type, provider, id, argc }).then((found) => found ?? undefined);
    },
    classify(model, context) {
      return request("models", "", { op: "classify", model: model ?? null, context });
    },
    generateImages(model, context) {
      return request("models", "", { op: "generateImages", model: model ?? null, context });
    },
  });
  const models = new Proxy(modelFunctions, {
    get(target, prop) {
      if (typeof prop === "symbol" || prop in target) return target[prop];
      throw new TypeErrorType(missing("models", prop, Object.keys(target), false));
    },
  });

  const globals = {
    models,
    tools,
    console: consoleObject,
    text,
    image,
    exit,
    store,
    load,
    ALL_TOOLS,
    searchTools,
    describeTool,
    describeNamespace,
  };
  for (const name of Object.keys(globals)) {
    define(globalThis, name, { value: globals[name], writable: false, enumerable: false, configurable: false });
  }

  function run(script) {
    let running;
    try {
      running = script(tools, consoleObject);
    } catch (error) {
      if (error !== EXIT) finish(false, undefined, error);
      return;
    }
    running.then(
      (value) => {
        if (finished) return;
        let json;
        if (value !== undefined) {
          try {
            json = stringify(value);
          } catch (error) {
            finish(false, undefined, error);
            return;
          }
        }
        finish(true, json);
      },
      (error) => {
        if (error !== EXIT) finish(false, undefined, error);
      },
    );
  }

  return { run, settle };
});
