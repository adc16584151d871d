// Text fields for a resource template's variables or a prompt's arguments, completed while
// typing (completion/complete) and expanded into a URI (RFC 6570, the operators MCP uses).
import { el } from "./forms.js";

const EXPRESSION = /\{([+#./;?&]?)([^}]+)\}/g;

function variables(template) {
  const names = [];
  for (const [, , list] of template.matchAll(EXPRESSION)) {
    for (const spec of list.split(",")) names.push(spec.replace(/\*$/, "").replace(/:\d+$/, ""));
  }
  return names;
}

const OPERATORS = {
  "": { first: "", sep: ",", named: false, raw: false },
  "+": { first: "", sep: ",", named: false, raw: true },
  "#": { first: "#", sep: ",", named: false, raw: true },
  ".": { first: ".", sep: ".", named: false, raw: false },
  "/": { first: "/", sep: "/", named: false, raw: false },
  ";": { first: ";", sep: ";", named: true, raw: false },
  "?": { first: "?", sep: "&", named: true, raw: false },
  "&": { first: "&", sep: "&", named: true, raw: false },
};

export function expand(template, values) {
  return template.replace(EXPRESSION, (_, op, list) => {
    const rule = OPERATORS[op];
    const parts = [];
    for (const spec of list.split(",")) {
      const name = spec.replace(/\*$/, "").replace(/:\d+$/, "");
      const value = values[name];
      if (value === undefined || value === "") continue;
      const text = rule.raw ? encodeURI(value) : encodeURIComponent(value);
      parts.push(rule.named ? `${name}=${text}` : text);
    }
    return parts.length ? rule.first + parts.join(rule.sep) : "";
  });
}

// templateOrNames: a URI template (its variables) or a list of prompt argument names.
export function templateForm(templateOrNames, completer, about = []) {
  const names = typeof templateOrNames === "string" ? variables(templateOrNames) : templateOrNames;
  const inputs = new Map();
  const node = el("div", { class: "schema-form" });
  for (const name of names) {
    const meta = about.find((a) => a.name === name) || {};
    const list = el("datalist", { id: `complete-${Math.random().toString(36).slice(2)}` });
    const input = el("input", { type: "text", "data-field": name, list: list.id, autocomplete: "off" });
    input.addEventListener("input", () => suggest(name, input, list));
    inputs.set(name, input);
    node.append(el("div", { class: "field" }, el("label", { class: "name" }, name, meta.required ? el("span", { class: "req" }, " *") : null),
      input, list, meta.description ? el("div", { class: "hint" }, meta.description) : null));
  }
  let pending = 0;
  async function suggest(name, input, list) {
    const ticket = ++pending;
    const others = {};
    for (const [other, field] of inputs) if (other !== name && field.value) others[other] = field.value;
    const values = await completer(name, input.value, others);
    if (ticket !== pending) return;
    list.replaceChildren(...values.map((v) => el("option", { value: v })));
  }
  const values = () => {
    const out = {};
    for (const [name, input] of inputs) if (input.value !== "") out[name] = input.value;
    return out;
  };
  return {
    node,
    values,
    uri: () => expand(String(templateOrNames), values()),
    snapshot: () => ({ raw: false, text: JSON.stringify(values()) }),
    restore: (saved) => {
      if (!saved) return;
      const old = JSON.parse(saved.text);
      for (const [name, input] of inputs) input.value = old[name] || "";
    },
  };
}
