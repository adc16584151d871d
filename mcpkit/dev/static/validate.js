// Checks a value against the JSON Schema a tool publishes, before the page sends it, and
// names each failure as the server does: {field (dotted path), expected, received}.

const TYPES = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  array: (v) => Array.isArray(v),
  object: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
  null: (v) => v === null,
};

export function resolve(schema, root) {
  let seen = 0;
  while (schema && typeof schema.$ref === "string" && schema.$ref.startsWith("#/") && seen < 8) {
    const path = schema.$ref.slice(2).split("/");
    schema = path.reduce((node, key) => (node ? node[key] : undefined), root) || {};
    seen += 1;
  }
  return schema || {};
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

export function validate(schema, value, root = schema, path = "", out = []) {
  schema = resolve(schema, root);
  const types = schema.type === undefined ? [] : [].concat(schema.type);
  const fail = (expected) => out.push({ field: path, expected, received: value === undefined ? null : value });
  if (types.length && !types.some((t) => TYPES[t] && TYPES[t](value))) return fail(types.join(" or ")), out;
  if (Array.isArray(schema.enum) && !schema.enum.some((v) => same(v, value))) return fail(schema.enum), out;
  if (schema.const !== undefined && !same(schema.const, value)) return fail([schema.const]), out;
  for (const union of ["anyOf", "oneOf"]) {
    if (Array.isArray(schema[union]) && !schema[union].some((s) => validate(s, value, root, path).length === 0)) {
      return fail(union === "anyOf" ? "any of the allowed shapes" : "one of the allowed shapes"), out;
    }
  }
  bounds(schema, value, fail);
  if (TYPES.array(value)) value.forEach((item, i) => schema.items && validate(schema.items, item, root, join(path, i), out));
  if (TYPES.object(value)) properties(schema, value, root, path, out);
  return out;
}

function bounds(schema, value, fail) {
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) fail(`>= ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) fail(`<= ${schema.maximum}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) fail(`> ${schema.exclusiveMinimum}`);
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) fail(`< ${schema.exclusiveMaximum}`);
  }
  if (typeof value === "string") {
    if (schema.minLength !== undefined && [...value].length < schema.minLength) fail(`at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength) fail(`at most ${schema.maxLength} characters`);
    if (schema.pattern !== undefined && !safeMatch(schema.pattern, value)) fail(`a string matching ${schema.pattern}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) fail(`at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) fail(`at most ${schema.maxItems} items`);
  }
}

function safeMatch(pattern, value) {
  try { return new RegExp(pattern, "u").test(value); } catch { return true; }
}

function properties(schema, value, root, path, out) {
  const props = schema.properties || {};
  for (const name of schema.required || []) {
    if (!(name in value)) out.push({ field: join(path, name), expected: "required", received: null });
  }
  for (const [name, item] of Object.entries(value)) {
    if (name in props) validate(props[name], item, root, join(path, name), out);
    else if (schema.additionalProperties === false) out.push({ field: join(path, name), expected: "no such argument", received: item });
    else if (typeof schema.additionalProperties === "object") validate(schema.additionalProperties, item, root, join(path, name), out);
  }
}

const join = (path, key) => (path === "" ? String(key) : `${path}.${key}`);
