// The page: connects to /mcp in the chosen era, lists what the server offers with its docs
// and a form each, runs calls, shows notifications and questions, and reconnects (keeping
// what was typed) when the App reloads.
import { McpClient, RpcError, STATELESS, VERSIONS } from "./client.js";
import { el, schemaForm } from "./forms.js";
import { contentBlock, elicitationCard, progressBar, resourceContents, samplingCard, toolAnswer } from "./render.js";
import { templateForm } from "./template.js";

const $ = (selector) => document.querySelector(selector);
// forms and results by "KIND:NAME": results outlive a re-render (a call may be running),
// typed values are saved before one and restored after it.
const state = { client: null, generation: null, forms: new Map(), saved: new Map(), results: new Map(), progress: new Map() };

function log(kind, text) {
  const line = el("li", { class: `log-line ${kind}` }, el("span", { class: "time" }, new Date().toLocaleTimeString()), ` ${text}`);
  $("#log").prepend(line);
}

function notify(msg) {
  const p = msg.params || {};
  if (msg.method === "notifications/progress") {
    const update = state.progress.get(p.progressToken);
    if (update) update(p);
  } else if (msg.method === "notifications/message") {
    const data = typeof p.data === "string" ? p.data : JSON.stringify(p.data);
    log(`level-${p.level}`, `[${p.level}]${p.logger ? ` ${p.logger}:` : ""} ${data}`);
  } else if (msg.method.endsWith("/list_changed")) {
    log("change", msg.method);
    listChanged();
  } else if (msg.method !== "notifications/subscriptions/acknowledged") {
    log("note", `${msg.method} ${JSON.stringify(p)}`);
  }
}

function ask(method, params) {
  const place = (card) => { $("#asks").append(card); card.scrollIntoView({ block: "nearest" }); };
  if (method === "elicitation/create") return elicitationCard(params, place);
  if (method === "sampling/createMessage") return samplingCard(params, place);
  if (method === "roots/list") return Promise.resolve({ roots: roots() });
  return Promise.reject(new Error(`the dev page does not answer ${method}`));
}

function roots() {
  return $("#roots").value.split("\n").map((l) => l.trim()).filter(Boolean).map((line) => {
    const [uri, ...name] = line.split(/\s+/);
    return name.length ? { uri, name: name.join(" ") } : { uri };
  });
}

async function listAll(client, method, key) {
  const items = [];
  let cursor;
  do {
    const page = await client.result(method, cursor ? { cursor } : {});
    items.push(...(page[key] || []));
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

const LISTS = [["tools", "tools/list", "tools"], ["resources", "resources/list", "resources"],
  ["resources", "resources/templates/list", "resourceTemplates"], ["prompts", "prompts/list", "prompts"]];

async function connect(reloaded) {
  const version = $("#era").value;
  if (state.client) state.client.close(reloaded);
  const client = new McpClient("/mcp", version, { notify, ask });
  state.client = client;
  await client.connect();
  await relist(client);
  const info = client.server.serverInfo || {};
  const era = client.stateless ? `${STATELESS} (stateless)` : `${client.negotiated} (session)`;
  $("#status").textContent = `${info.name || "?"} ${info.version || ""} · ${era}`;
  document.body.dataset.connected = version;
}

// Lists, docs and forms again, on the same connection (a list changed, or a new connection).
async function relist(client = state.client) {
  const server = client.server;
  const snapshot = { server };
  for (const [capability, method, key] of LISTS) {
    snapshot[method] = server.capabilities && server.capabilities[capability] ? await listAll(client, method, key) : [];
  }
  const body = JSON.stringify(snapshot);
  const docs = await (await fetch("/_dev/docs", { method: "POST", headers: { "content-type": "application/json" }, body })).json();
  if (state.client !== client) return;
  for (const [key, form] of state.forms) state.saved.set(key, form.snapshot());
  render(snapshot, docs);
  for (const [key, form] of state.forms) form.restore(state.saved.get(key));
}

let relisting = null;
function listChanged() {
  clearTimeout(relisting);
  relisting = setTimeout(() => relist().catch((e) => log("note", `relisting failed: ${e.message}`)), 50);
}

async function refresh(reloaded = false) {
  delete document.body.dataset.connected;
  try { await connect(reloaded); } catch (e) { $("#status").textContent = `not connected: ${e.message}`; }
}

function render(snapshot, docs) {
  state.forms.clear();
  $("#title").textContent = docs.title;
  $("#intro").innerHTML = docs.intro;
  const nav = $("#nav");
  const main = $("#items");
  nav.replaceChildren();
  main.replaceChildren();
  const groups = [["Tools", "tool", snapshot["tools/list"], "name", toolSection], ["Resources", "resource", snapshot["resources/list"], "uri", resourceSection],
    ["Resource templates", "template", snapshot["resources/templates/list"], "uriTemplate", templateSection], ["Prompts", "prompt", snapshot["prompts/list"], "name", promptSection]];
  for (const [heading, kind, items, ident, make] of groups) {
    if (!items.length) continue;
    main.append(el("h2", {}, heading));
    const links = el("ul");
    nav.append(el("div", { class: "nav-group" }, heading), links);
    for (const item of items) {
      const key = `${kind}:${item[ident]}`;
      const anchor = `try-${kind}-${item[ident]}`.replace(/[^A-Za-z0-9_-]/g, "-");
      links.append(el("li", {}, el("a", { href: `#${anchor}` }, item.name || item[ident])));
      const section = el("section", { class: `item ${kind}`, id: anchor, "data-key": key });
      section.innerHTML = docs.entries[key] || "";
      main.append(section);
      make(section, item, key);
    }
  }
}

function tryBox(section, key, ...children) {
  let result = state.results.get(key);
  if (!result) {
    result = el("div", { class: "result" });
    state.results.set(key, result);
  }
  const box = el("div", { class: "try" }, el("h4", {}, "Try it"), ...children, result);
  section.append(box);
  return result;
}

function toolSection(section, tool, key) {
  const form = schemaForm(tool.inputSchema);
  state.forms.set(key, form);
  const check = el("input", { type: "checkbox", class: "validate", checked: true });
  const button = el("button", { type: "button", class: "call" }, "Call");
  const result = tryBox(section, key, form.node, el("div", { class: "buttons" }, button, el("label", { class: "small" }, check, " validate before sending")));
  if (!result.firstChild) result.append(el("div", { class: "progress-area" }), el("div", { class: "answer" }));
  const [bars, answerBox] = result.children;
  button.addEventListener("click", async () => {
    const args = check.checked ? form.check() : form.value().value;
    if (args === null || args === undefined) return;
    if (!check.checked) form.showErrors([]);
    bars.replaceChildren();
    answerBox.replaceChildren(el("div", { class: "pending" }, "calling…"));
    const token = `${key}#${Date.now()}`;
    state.progress.set(token, progressBar(bars, token));
    const params = { name: tool.name, arguments: args, _meta: { progressToken: token } };
    const answer = await callWithInput("tools/call", params, { headerParams: mirrored(tool.inputSchema, args) });
    state.progress.delete(token);
    toolAnswer(answerBox, answer, (items) => form.showErrors(items));
  });
}

// The answer of a request that may ask (2026-07-28 rounds), as {result} or {error}.
async function callWithInput(method, params, options) {
  try {
    return { result: await state.client.result(method, params, options) };
  } catch (e) {
    if (e instanceof RpcError) return { error: e.error };
    return { error: { code: "not sent", message: String(e.message || e) } }; // the page stopped it
  }
}

function mirrored(schema, args) {
  const out = {};
  for (const [name, prop] of Object.entries((schema && schema.properties) || {})) {
    if (prop["x-mcp-header"] && args && args[name] !== undefined) out[prop["x-mcp-header"]] = args[name];
  }
  return out;
}

function resourceSection(section, resource, key) {
  const button = el("button", { type: "button", class: "read" }, "Read");
  const result = tryBox(section, key, button);
  button.addEventListener("click", () => readInto(result, resource.uri));
}

async function readInto(result, uri) {
  const answer = await callWithInput("resources/read", { uri });
  if (answer.error) return toolAnswer(result, answer, () => {});
  result.replaceChildren(...(answer.result.contents || []).map(resourceContents));
}

function templateSection(section, template, key) {
  const form = templateForm(template.uriTemplate, (name, value, others) => complete({ type: "ref/resource", uri: template.uriTemplate }, name, value, others));
  state.forms.set(key, form);
  const button = el("button", { type: "button", class: "read" }, "Read");
  const result = tryBox(section, key, form.node, button);
  button.addEventListener("click", () => readInto(result, form.uri()));
}

function promptSection(section, prompt, key) {
  const names = (prompt.arguments || []).map((a) => a.name);
  const form = templateForm(names, (name, value, others) => complete({ type: "ref/prompt", name: prompt.name }, name, value, others), prompt.arguments);
  state.forms.set(key, form);
  const button = el("button", { type: "button", class: "get" }, "Get");
  const result = tryBox(section, key, form.node, button);
  button.addEventListener("click", async () => {
    const answer = await callWithInput("prompts/get", { name: prompt.name, arguments: form.values() });
    if (answer.error) return toolAnswer(result, answer, () => {});
    result.replaceChildren(...(answer.result.messages || []).map((m) => el("div", { class: "message" }, el("strong", {}, `${m.role}: `), contentBlock(m.content))));
  });
}

async function complete(ref, name, value, others) {
  const caps = state.client.server.capabilities || {};
  if (!caps.completions) return [];
  try {
    const result = await state.client.result("completion/complete", { ref, argument: { name, value }, context: { arguments: others } });
    return (result.completion && result.completion.values) || [];
  } catch { return []; }
}

function events() {
  const source = new EventSource("/_dev/events");
  source.onmessage = (event) => {
    const data = JSON.parse(event.data);
    if (data.type === "failed") {
      const e = data.error;
      $("#load-error").textContent = `${e.file || "?"}:${e.line || "?"}: ${e.message}`;
      $("#banner").hidden = false;
      return;
    }
    $("#banner").hidden = true;
    const generation = `${data.server}/${data.generation}`; // a restarted mcpkit dev is new too
    const reloaded = state.generation !== null && generation !== state.generation;
    state.generation = generation;
    if (reloaded) { log("change", `reloaded: ${data.summary}`); refresh(true); }
  };
}

function start() {
  for (const version of VERSIONS) {
    $("#era").append(el("option", { value: version, selected: version === "2025-11-25" }, version === STATELESS ? `${version} (stateless)` : `${version} (handshake)`));
  }
  $("#era").addEventListener("change", () => refresh());
  $("#roots-save").addEventListener("click", () => { state.client && state.client.rootsChanged(); log("note", "roots saved"); });
  $("#clear-log").addEventListener("click", () => $("#log").replaceChildren());
  events();
  refresh();
}

start();
