// Forms built from a JSON Schema (a tool's inputSchema, an elicitation's requestedSchema),
// with a raw-JSON mode for anything a form cannot hold. Every input carries data-field, the
// dotted path the server's {field, expected, received} items name, so failures land on it.
import { resolve, validate } from "./validate.js";

export const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
};

function kind(schema) {
  if (Array.isArray(schema.enum)) return "enum";
  if (schema.const !== undefined) return "enum";
  const type = Array.isArray(schema.type) ? schema.type.filter((t) => t !== "null") : [schema.type];
  if (type.length !== 1) return "json";
  if (type[0] === "object" && !schema.properties) return "json";
  return ["string", "number", "integer", "boolean", "array", "object"].includes(type[0]) ? type[0] : "json";
}

// One editor per schema node: {node, get(): value | undefined, set(value)}.
const MAX_DEPTH = 6; // deeper (a recursive $ref) is edited as JSON, not built forever

function editor(schema, root, path, required) {
  schema = resolve(schema, root);
  if (path.split(".").length > MAX_DEPTH) return jsonEditor(schema, root, path);
  const make = { enum: enumEditor, string: textEditor, number: numberEditor, integer: numberEditor,
    boolean: boolEditor, array: arrayEditor, object: objectEditor, json: jsonEditor }[kind(schema)];
  return make(schema, root, path, required);
}

function enumEditor(schema, _root, path, required) {
  const values = Array.isArray(schema.enum) ? schema.enum : [schema.const];
  const select = el("select", { "data-field": path });
  if (!required || values.length > 1) select.append(el("option", { value: "" }, required ? "— choose —" : "— not set —"));
  values.forEach((v, i) => select.append(el("option", { value: String(i) }, typeof v === "string" ? v : JSON.stringify(v))));
  return {
    node: select,
    get: () => (select.value === "" ? undefined : values[Number(select.value)]),
    set: (v) => { const i = values.findIndex((x) => JSON.stringify(x) === JSON.stringify(v)); select.value = i < 0 ? "" : String(i); },
  };
}

function textEditor(schema, _root, path, required) {
  const long = (schema.maxLength || 0) > 200 || schema.format === "textarea";
  const input = el(long ? "textarea" : "input", {
    "data-field": path, type: long ? undefined : inputType(schema.format),
    placeholder: schema.default !== undefined ? `default: ${schema.default}` : undefined,
    minlength: schema.minLength, maxlength: schema.maxLength, pattern: schema.pattern,
  });
  return {
    node: input,
    get: () => (input.value === "" && !required ? undefined : input.value),
    set: (v) => { input.value = v === undefined ? "" : String(v); },
  };
}

function inputType(format) {
  return { email: "email", uri: "url", date: "date", "date-time": "datetime-local" }[format] || "text";
}

function numberEditor(schema, _root, path) {
  const input = el("input", {
    "data-field": path, type: "number", min: schema.minimum, max: schema.maximum,
    step: kind(schema) === "integer" ? "1" : "any",
    placeholder: schema.default !== undefined ? `default: ${schema.default}` : undefined,
  });
  return {
    node: input,
    get: () => (input.value === "" ? undefined : Number(input.value)),
    set: (v) => { input.value = v === undefined ? "" : String(v); },
  };
}

function boolEditor(schema, _root, path, required) {
  if (!required) {
    const values = [undefined, true, false];
    return enumEditorOf(values, ["— not set —", "true", "false"], path);
  }
  const box = el("input", { type: "checkbox", "data-field": path });
  return { node: box, get: () => box.checked, set: (v) => { box.checked = v === true; } };
}

function enumEditorOf(values, labels, path) {
  const select = el("select", { "data-field": path });
  labels.forEach((label, i) => select.append(el("option", { value: i ? String(i) : "" }, label)));
  return {
    node: select,
    get: () => values[Number(select.value || 0)],
    set: (v) => { const i = values.indexOf(v); select.value = i > 0 ? String(i) : ""; },
  };
}

// Whether anything under node was filled in (an optional object left empty is left out).
const touched = (node) => [...node.querySelectorAll("input, select, textarea")]
  .some((n) => (n.type === "checkbox" ? n.checked : n.value !== ""));

function arrayEditor(schema, root, path, required) {
  const items = [];
  const list = el("div", { class: "array", "data-field": path });
  const add = (value) => {
    const item = editor(schema.items || {}, root, `${path}.${items.length}`, true);
    const row = el("div", { class: "array-item" }, item.node);
    const entry = { item, row };
    row.append(el("button", { type: "button", class: "small", onclick: () => {
      items.splice(items.indexOf(entry), 1); row.remove();
    } }, "remove"));
    items.push(entry);
    list.insertBefore(row, addButton);
    if (value !== undefined) item.set(value);
  };
  const addButton = el("button", { type: "button", class: "small", onclick: () => add() }, "+ add");
  list.append(addButton);
  return {
    node: list,
    get: () => (items.length || required ? items.map((e) => e.item.get()) : undefined),
    set: (v) => { items.splice(0).forEach((e) => e.row.remove()); (Array.isArray(v) ? v : []).forEach(add); },
  };
}

function objectEditor(schema, root, path, required) {
  const fields = fieldsOf(schema, root, path);
  const box = el("fieldset", { class: "object" }, ...fields.map((f) => f.row));
  return {
    node: box,
    get: () => {
      const out = {};
      for (const f of fields) { const v = f.editor.get(); if (v !== undefined) out[f.name] = v; }
      return required || !path || touched(box) ? out : undefined;
    },
    set: (v) => fields.forEach((f) => f.editor.set(v && typeof v === "object" ? v[f.name] : undefined)),
  };
}

function jsonEditor(schema, _root, path) {
  const area = el("textarea", { "data-field": path, class: "json", placeholder: "JSON" });
  return {
    node: area,
    get: () => { if (area.value.trim() === "") return undefined; try { return JSON.parse(area.value); } catch { return area.value; } },
    set: (v) => { area.value = v === undefined ? "" : JSON.stringify(v); },
  };
}

function fieldsOf(schema, root, prefix) {
  const required = new Set(schema.required || []);
  return Object.entries(schema.properties || {}).map(([name, sub]) => {
    const path = prefix ? `${prefix}.${name}` : name;
    const ed = editor(sub, root, path, required.has(name));
    const about = resolve(sub, root);
    const label = el("label", { class: "name" }, name, required.has(name) ? el("span", { class: "req", title: "required" }, " *") : null);
    const hint = about.description || about.title;
    const row = el("div", { class: "field" }, label, ed.node, hint ? el("div", { class: "hint" }, hint) : null,
      el("div", { class: "error", "data-error-for": path }));
    return { name, editor: ed, row };
  });
}

// A whole form: fields, a raw-JSON mode, validation and failures shown on their fields.
export function schemaForm(schema) {
  const body = objectEditor(schema || {}, schema || {}, "");
  const raw = el("textarea", { class: "raw json", hidden: true, rows: 6, "aria-label": "raw JSON arguments" });
  const general = el("div", { class: "error general" });
  const toggle = el("button", { type: "button", class: "small raw-toggle" }, "raw JSON");
  const form = { node: el("div", { class: "schema-form" }, toggle, body.node, raw, general), raw: false };
  toggle.addEventListener("click", () => form.setRaw(!form.raw));
  form.setRaw = (on) => {
    if (on === form.raw) return;
    if (on) raw.value = JSON.stringify(body.get() || {}, null, 2);
    else { try { body.set(JSON.parse(raw.value)); } catch { form.showErrors([{ field: "", expected: "JSON", received: raw.value }]); return; } }
    form.raw = on; raw.hidden = !on; body.node.hidden = on; toggle.textContent = on ? "form" : "raw JSON";
  };
  form.value = () => {
    if (!form.raw) return { ok: true, value: body.get() || {} };
    try { return { ok: true, value: JSON.parse(raw.value) }; } catch (e) { return { ok: false, error: String(e.message) }; }
  };
  form.check = () => {
    const read = form.value();
    if (!read.ok) { form.showErrors([{ field: "", expected: "a JSON value", received: read.error }]); return null; }
    const problems = validate(schema || {}, read.value);
    form.showErrors(problems);
    return problems.length ? null : read.value;
  };
  form.showErrors = (items) => {
    form.node.querySelectorAll(".invalid").forEach((n) => n.classList.remove("invalid"));
    form.node.querySelectorAll(".error").forEach((n) => { n.textContent = ""; });
    for (const item of items) {
      const text = describe(item);
      const slot = item.field ? form.node.querySelector(`[data-error-for="${CSS.escape(item.field)}"]`) : null;
      const input = item.field ? form.node.querySelector(`[data-field="${CSS.escape(item.field)}"]`) : null;
      if (input) input.classList.add("invalid");
      const target = slot && !form.raw ? slot : general;
      target.textContent = target.textContent ? `${target.textContent}\n${text}` : text;
    }
  };
  form.setValue = (value) => body.set(value);
  form.snapshot = () => ({ raw: form.raw, text: form.raw ? raw.value : JSON.stringify(body.get() || {}) });
  form.restore = (saved) => {
    if (!saved) return;
    if (saved.raw) { form.setRaw(true); raw.value = saved.text; }
    else { try { body.set(JSON.parse(saved.text)); } catch { /* keep the defaults */ } }
  };
  return form;
}

export function describe(item) {
  const where = item.field ? `${item.field}: ` : "";
  if (item.expected === "required") return `${where}required`;
  const expected = Array.isArray(item.expected) ? `one of ${item.expected.map((v) => JSON.stringify(v)).join(", ")}` : item.expected;
  const received = item.received === undefined ? "nothing" : JSON.stringify(item.received);
  return `${where}expected ${expected}; received ${received}`;
}
