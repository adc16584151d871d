// What a client gets, shown as it is: content blocks, structured content, isError, JSON-RPC
// errors; and the questions a server asks (elicitation, sampling) as cards the author answers.
import { el, schemaForm } from "./forms.js";

const pretty = (value) => JSON.stringify(value, null, 2);

export function contentBlock(block) {
  switch (block.type) {
    case "text":
      return el("pre", { class: "text" }, block.text);
    case "image":
      return el("img", { class: "image", alt: "image content", src: `data:${block.mimeType};base64,${block.data}` });
    case "audio":
      return el("audio", { controls: true, src: `data:${block.mimeType};base64,${block.data}` });
    case "resource_link":
      return el("div", { class: "link" }, "resource link: ", el("code", {}, block.uri), block.name ? ` (${block.name})` : "");
    case "resource":
      return resourceContents(block.resource || {});
    default:
      return el("pre", { class: "unknown" }, pretty(block));
  }
}

export function resourceContents(item) {
  const head = el("div", { class: "uri" }, el("code", {}, item.uri || ""), item.mimeType ? ` ${item.mimeType}` : "");
  if (item.text !== undefined) return el("div", { class: "resource" }, head, el("pre", { class: "text" }, item.text));
  if ((item.mimeType || "").startsWith("image/")) {
    return el("div", { class: "resource" }, head, el("img", { class: "image", alt: item.uri, src: `data:${item.mimeType};base64,${item.blob}` }));
  }
  return el("div", { class: "resource" }, head, el("pre", {}, `${(item.blob || "").length} base64 characters`));
}

// A tools/call answer: {result} or {error}; the failing fields go to onFields.
export function toolAnswer(target, answer, onFields) {
  target.replaceChildren();
  if (answer.error) {
    const error = answer.error;
    const said = typeof error.code === "number" ? `JSON-RPC error ${error.code}: ` : `${error.code}: `;
    target.append(el("div", { class: "status rpc-error" }, said + error.message));
    if (error.data !== undefined) target.append(el("pre", { class: "data" }, pretty(error.data)));
    if (error.code === -32602 && error.data && error.data.field !== undefined) onFields(error.data.errors || [error.data]);
  } else {
    const result = answer.result;
    const failed = result.isError === true;
    target.append(el("div", { class: failed ? "status is-error" : "status ok" }, failed ? "isError: true" : "ok"));
    const invalid = result._meta && result._meta["mcpkit/invalidArguments"];
    if (Array.isArray(invalid)) onFields(invalid);
    if (result.structuredContent !== undefined) {
      target.append(el("div", { class: "label" }, "structuredContent"), el("pre", { class: "structured" }, pretty(result.structuredContent)));
    }
    if ((result.content || []).length) target.append(el("div", { class: "label" }, "content"), ...result.content.map(contentBlock));
  }
  target.append(el("details", { class: "raw-answer" }, el("summary", {}, "raw answer"), el("pre", {}, pretty(answer.error ? { error: answer.error } : { result: answer.result }))));
}

function defaults(schema) {
  const out = {};
  for (const [name, prop] of Object.entries(schema.properties || {})) if (prop.default !== undefined) out[name] = prop.default;
  return out;
}

// Cards for server questions; each returns a Promise of the client's answer.
export function elicitationCard(params, place) {
  return new Promise((resolve) => {
    const schema = params.requestedSchema || { type: "object", properties: {} };
    const form = params.mode === "url" ? null : schemaForm(schema);
    if (form) form.setValue(defaults(schema));
    const card = el("div", { class: "ask elicitation" }, el("div", { class: "ask-title" }, "The server asks (elicitation)"),
      el("p", { class: "message" }, params.message || ""),
      params.url ? el("a", { href: params.url, target: "_blank", rel: "noopener" }, params.url) : null,
      form ? form.node : null);
    const done = (answer) => { card.remove(); resolve(answer); };
    const accept = () => {
      if (!form) return done({ action: "accept" });
      const content = form.check();
      if (content !== null) done({ action: "accept", content });
    };
    card.append(el("div", { class: "buttons" },
      el("button", { type: "button", class: "accept", onclick: accept }, "Accept"),
      el("button", { type: "button", class: "decline", onclick: () => done({ action: "decline" }) }, "Decline"),
      el("button", { type: "button", class: "cancel", onclick: () => done({ action: "cancel" }) }, "Cancel")));
    place(card);
  });
}

export function samplingCard(params, place) {
  return new Promise((resolve, reject) => {
    const reply = el("textarea", { class: "reply", rows: 3, placeholder: "The model's reply" });
    const messages = (params.messages || []).map((m) => el("div", { class: "sampled" }, el("strong", {}, `${m.role}: `),
      ...[].concat(m.content || []).map(contentBlock)));
    const card = el("div", { class: "ask sampling" }, el("div", { class: "ask-title" }, "The server asks the model (sampling): type its reply"),
      params.systemPrompt ? el("p", { class: "system" }, `system: ${params.systemPrompt}`) : null, ...messages, reply);
    const send = () => {
      card.remove();
      resolve({ role: "assistant", content: { type: "text", text: reply.value }, model: "mcpkit-dev (typed by you)", stopReason: "endTurn" });
    };
    const refuse = () => {
      card.remove();
      reject(Object.assign(new Error("User rejected sampling request"), { code: -1 })); // as the spec's clients do
    };
    card.append(el("div", { class: "buttons" },
      el("button", { type: "button", class: "send", onclick: send }, "Send reply"),
      el("button", { type: "button", class: "decline", onclick: refuse }, "Reject")));
    place(card);
  });
}

// A progress bar for one request, made when its first notifications/progress arrives.
export function progressBar(target, token) {
  let bar = null;
  let label = null;
  return (params) => {
    if (bar === null) {
      bar = el("progress", { max: 1, value: 0, "data-token": token });
      label = el("span", { class: "progress-label" }, "");
      target.append(el("div", { class: "progress" }, bar, label));
    }
    const total = params.total || 0;
    const note = params.message ? ` ${params.message}` : "";
    if (total > 0) {
      bar.max = total;
      bar.value = params.progress;
      label.textContent = `${Math.round((100 * params.progress) / total)}%${note}`;
    } else {
      bar.removeAttribute("value");
      label.textContent = `${params.progress}${note}`;
    }
  };
}
