// A small MCP client of a Streamable HTTP endpoint, in both eras: the handshake era
// (initialize, a session, a GET stream) and 2026-07-28 (_meta and mirrored headers on every
// request, InputRequiredResult rounds, a subscriptions/listen stream).
export const STATELESS = "2026-07-28";
export const VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", STATELESS];
const CLIENT_INFO = { name: "mcpkit-dev-page", version: "1" };
const CAPABILITIES = { roots: { listChanged: true }, sampling: {}, elicitation: { form: {} } };
const META = "io.modelcontextprotocol/";

export class McpClient {
  // hooks: notify(message), ask(method, params) -> Promise<result> (elicitation, sampling,
  // roots), listening(list of notification kinds for 2026-07-28)
  constructor(endpoint, version, hooks) {
    this.endpoint = endpoint;
    this.version = version;
    this.stateless = version === STATELESS;
    this.hooks = hooks;
    this.nextId = 1;
    this.session = null;
    this.streams = new AbortController();
  }

  async connect() {
    if (this.stateless) {
      this.server = await this.result("server/discover", {});
      this.server.protocolVersion = STATELESS;
      this.server.serverInfo = this.server._meta?.[`${META}serverInfo`] || {};
      this.listen();
      return this.server;
    }
    const init = await this.send("initialize", {
      protocolVersion: this.version, capabilities: CAPABILITIES, clientInfo: CLIENT_INFO,
    });
    if (init.error) throw new RpcError(init.error);
    this.server = init.result;
    this.negotiated = init.result.protocolVersion;
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    await this.send("logging/setLevel", { level: "debug" });
    this.openGetStream();
    return this.server;
  }

  // ended: the server is a new one (the App reloaded) and the session is gone with the old.
  close(ended = false) {
    this.streams.abort();
    if (this.session && !ended) {
      fetch(this.endpoint, { method: "DELETE", headers: this.headers() }).catch(() => {});
      this.session = null;
    }
  }

  // The result of a request, following InputRequiredResult rounds; RpcError on an error.
  async result(method, params, options = {}) {
    for (let round = 0; round < 10; round += 1) {
      const response = await this.send(method, params, options);
      if (response.error) throw new RpcError(response.error, response.status);
      const result = response.result;
      if (result.resultType !== "input_required") return result;
      const answers = {};
      for (const [key, asked] of Object.entries(result.inputRequests || {})) {
        answers[key] = await this.hooks.ask(asked.method, asked.params || {});
      }
      params = { ...params, inputResponses: answers };
      if (result.requestState !== undefined) params.requestState = result.requestState;
    }
    throw new Error(`${method} still wanted input after 10 rounds`);
  }

  // One request: the JSON-RPC response ({result} or {error}), messages on its stream handled.
  async send(method, params, options = {}) {
    const id = this.nextId++;
    const message = { jsonrpc: "2.0", id, method, params: this.withMeta(params) };
    const response = await this.post(message, options);
    if (this.session === null && response.headers.get("mcp-session-id")) {
      this.session = response.headers.get("mcp-session-id");
    }
    const type = response.headers.get("content-type") || "";
    if (type.startsWith("text/event-stream")) {
      let answer = null;
      await readEvents(response, async (msg) => {
        if (msg.id === id && (msg.result !== undefined || msg.error !== undefined)) answer = msg;
        else this.dispatch(msg); // not awaited: a question must not hold up the stream
      });
      return answer || { error: { code: "stream", message: "the stream ended without an answer" } };
    }
    const text = await response.text();
    try {
      return { ...JSON.parse(text), status: response.status };
    } catch {
      return { error: { code: `HTTP ${response.status}`, message: text }, status: response.status };
    }
  }

  withMeta(params) {
    if (!this.stateless) return params;
    const meta = { ...(params._meta || {}) };
    meta[`${META}protocolVersion`] = STATELESS;
    meta[`${META}clientCapabilities`] = CAPABILITIES;
    meta[`${META}clientInfo`] = CLIENT_INFO;
    meta[`${META}logLevel`] = "debug";
    return { ...params, _meta: meta };
  }

  headers(message, extra = {}) {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    if (this.session) headers["mcp-session-id"] = this.session;
    if (this.negotiated) headers["mcp-protocol-version"] = this.negotiated;
    if (this.stateless && message && message.method) {
      headers["mcp-protocol-version"] = STATELESS;
      headers["mcp-method"] = message.method;
      const p = message.params || {};
      const name = message.method === "resources/read" ? p.uri : p.name;
      if (["tools/call", "prompts/get", "resources/read"].includes(message.method)) headers["mcp-name"] = headerValue(name);
      for (const [header, value] of Object.entries(extra)) headers[`mcp-param-${header.toLowerCase()}`] = headerValue(value);
    }
    return headers;
  }

  post(message, options = {}) {
    return fetch(this.endpoint, {
      method: "POST", headers: this.headers(message, options.headerParams), body: JSON.stringify(message),
      signal: options.signal,
    });
  }

  // A message that is not the answer: a server request (answered by POST) or a notification.
  async dispatch(msg) {
    if (msg.method && msg.id !== undefined) {
      const reply = { jsonrpc: "2.0", id: msg.id };
      try {
        reply.result = await this.hooks.ask(msg.method, msg.params || {});
      } catch (e) {
        reply.error = { code: e.code ?? -32603, message: String(e.message || e) };
      }
      await this.post(reply);
    } else if (msg.method) {
      this.hooks.notify(msg);
    }
  }

  async openGetStream() {
    try {
      const response = await fetch(this.endpoint, {
        method: "GET", headers: { ...this.headers(), accept: "text/event-stream" }, signal: this.streams.signal,
      });
      if (response.ok) await readEvents(response, (msg) => this.dispatch(msg));
    } catch { /* closed: the page reconnects on reload */ }
  }

  async listen() {
    const notifications = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };
    try {
      await this.send("subscriptions/listen", { notifications }, { signal: this.streams.signal });
    } catch { /* closed */ }
  }

  rootsChanged() {
    if (!this.stateless && this.session) this.post({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
  }
}

export class RpcError extends Error {
  constructor(error, status) {
    super(`${error.code}: ${error.message}`);
    this.error = error;
    this.status = status;
  }
}

// A header value as the 2026-07-28 spec mirrors it: visible ASCII as is, else =?base64?...?=.
export function headerValue(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(text)) return text;
  const bytes = new TextEncoder().encode(text);
  return `=?base64?${btoa(String.fromCharCode(...bytes))}?=`;
}

async function readEvents(response, onMessage) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
      if (data) await onMessage(JSON.parse(data));
    }
  }
}
