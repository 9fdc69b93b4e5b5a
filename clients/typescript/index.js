// @ts-check
/**
 * A client of the toolperm PDP's HTTP API for runtimes written in
 * TypeScript or JavaScript: decide before a tool call, wait for a
 * person's answer, answer asks, follow the live event stream with
 * resume. ESM, no dependencies, Node 20+ (and any runtime with fetch,
 * AbortSignal.timeout and web streams). The types are in index.d.ts.
 *
 * Every error means "no decision": a caller must treat it as deny.
 *
 * @module
 */

/** The decisions a call can get. */
export const ALLOW = "allow";
export const ASK = "ask";
export const DENY = "deny";

/** The answers a person can give to an ask. */
export const ALLOW_ONCE = "allow_once";
export const ALLOW_SESSION = "allow_session";
export const ALLOW_PROJECT = "allow_project";
export const DENY_ANSWER = "deny";

/** The kinds of event GET /v1/events sends. */
export const EVENT_READY = "ready";
export const EVENT_ASK = "ask";
export const EVENT_ANSWER = "answer";
export const EVENT_OUTCOME = "outcome";
export const EVENT_LEVEL = "level";

// Bounds on what is read from the server: one answer, one event.
const MAX_BODY_BYTES = 32 << 20;
const MAX_EVENT_BYTES = 16 << 20;
// The longest wait one GET /v1/decisions/{id}?wait= asks for; the server
// caps it at its server.max_wait (60 s by default) anyway.
const MAX_WAIT_MS = 60_000;

/** An error answer of the API, with its HTTP status and stable code. */
export class PdpError extends Error {
  /**
   * @param {number} status HTTP status; 0 when no answer came.
   * @param {string} code
   * @param {string} message
   * @param {unknown} [cause]
   */
  constructor(status, code, message, cause) {
    super(`pdp: ${status ? status + " " : ""}${code}: ${message}`, cause === undefined ? undefined : { cause });
    this.name = "PdpError";
    this.status = status;
    this.code = code;
    this.detail = message;
  }
}

/**
 * Whether a person's answer lets the call run: allow_once, allow_session
 * or allow_project. No answer, deny, anything unknown, and a runtime's
 * report that an older server stored as an answer (its "by") do not.
 * @param {import("./index.js").Answer | null | undefined} answer
 */
export function allows(answer) {
  if (!answer || typeof answer !== "object" || answer.by) return false;
  return answer.answer === ALLOW_ONCE || answer.answer === ALLOW_SESSION || answer.answer === ALLOW_PROJECT;
}

/** A client of one PDP. */
export class Client {
  /**
   * @param {string} baseURL e.g. http://127.0.0.1:8181
   * @param {import("./index.js").ClientOptions} [options]
   */
  constructor(baseURL, options = {}) {
    const url = new URL(baseURL); // throws on a malformed URL
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`pdp: the base URL must be http or https, not ${url.protocol}`);
    }
    this.base = baseURL.replace(/\/+$/, "");
    this.token = options.token ?? "";
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retries = options.retries ?? 2;
    this.backoffMs = options.backoffMs ?? 100;
    this.fetch = options.fetch ?? globalThis.fetch;
    /** Manage sessions. */
    this.sessions = {
      /** @param {import("./index.js").NewSession} s */
      create: async (s, o) => this.#json("POST", "/v1/sessions", s, o),
      /** @param {string} id */
      get: async (id, o) => this.#json("GET", `/v1/sessions/${enc(id)}`, undefined, o),
      /** @param {string} id @param {import("./index.js").SessionChange} change */
      update: async (id, change, o) => this.#json("PATCH", `/v1/sessions/${enc(id)}`, change, o),
    };
    /** Manage the grants of a session tree. */
    this.grants = {
      /** @param {string} sessionId */
      list: async (sessionId, o) => (await this.#json("GET", `/v1/sessions/${enc(sessionId)}/grants`, undefined, o)).grants ?? [],
      /** @param {string} sessionId @param {number} grantId */
      revoke: async (sessionId, grantId, o) => {
        await this.#json("DELETE", `/v1/sessions/${enc(sessionId)}/grants/${enc(String(grantId))}`, undefined, o);
      },
    };
  }

  /**
   * Asks whether a call may run. The answer is checked to be a complete
   * decision (every field, with its type): anything less is a PdpError,
   * never a decision with a missing field read as allow.
   * @param {import("./index.js").DecideRequest} req
   * @param {import("./index.js").DecideOptions} [opts]
   */
  async decide(req, opts = {}) {
    const d = await this.#json("POST", "/v1/decide" + (opts.explain ? "?explain=1" : ""), req, opts);
    const missing = incomplete(d);
    if (missing) throw new PdpError(0, "incomplete_decision", `the answer of POST /v1/decide is not a complete decision (${missing})`);
    return d;
  }

  /**
   * One audit event. With waitMs > 0 an unanswered ask is held until a
   * person answers or the wait ends (the server caps it).
   * @param {string} decisionId
   * @param {{waitMs?: number, signal?: AbortSignal}} [opts]
   */
  async decision(decisionId, opts = {}) {
    const wait = opts.waitMs && opts.waitMs > 0 ? `?wait=${Math.ceil(opts.waitMs)}ms` : "";
    const timeoutMs = this.timeoutMs + (opts.waitMs && opts.waitMs > 0 ? opts.waitMs : 0);
    return this.#json("GET", `/v1/decisions/${enc(decisionId)}${wait}`, undefined, { ...opts, timeoutMs });
  }

  /**
   * Waits for a person's answer to an ask, up to timeoutMs in all (in
   * long polls of at most a minute each), and returns the event as it is
   * then: its answer is null when nobody answered in time. Only a
   * person's answer ends the wait; a runtime's outcome never does, and
   * never lets a call run (use allows(event.answer)).
   * @param {string} decisionId
   * @param {{timeoutMs: number, signal?: AbortSignal}} opts
   */
  async waitForAnswer(decisionId, opts) {
    if (!opts || !(opts.timeoutMs >= 0)) throw new TypeError("pdp: waitForAnswer needs timeoutMs");
    const end = Date.now() + opts.timeoutMs;
    for (;;) {
      const left = end - Date.now();
      const ev = await this.decision(decisionId, { waitMs: Math.max(1, Math.min(left, MAX_WAIT_MS)), signal: opts.signal });
      if (ev.decision_id !== decisionId) {
        throw new PdpError(0, "unexpected_answer", `asked for decision ${decisionId}, got ${String(ev.decision_id)}`);
      }
      if (ev.answer || ev.decision !== ASK || Date.now() >= end) return ev;
    }
  }

  /**
   * Records a person's answer to an ask: allow_once, allow_session or
   * allow_project (create grants; 422 not_grantable when the call has no
   * fingerprint) or deny.
   * @param {string} decisionId
   * @param {import("./index.js").AnswerWord} answer
   * @param {string} channel
   */
  async answer(decisionId, answer, channel, opts) {
    return this.#json("POST", `/v1/decisions/${enc(decisionId)}/answer`, { answer, channel }, opts);
  }

  /**
   * Reports what became of an ask the runtime showed in its own prompt,
   * found by the runtime's tool_use_id: a record, never a permission.
   * @param {string} toolUseId
   * @param {"allow_once" | "deny"} answer
   * @param {string} [channel]
   */
  async recordOutcome(toolUseId, answer, channel, opts) {
    const body = channel ? { answer, channel } : { answer };
    return this.#json("POST", `/v1/decisions/by-tool-use/${enc(toolUseId)}/outcome`, body, opts);
  }

  /**
   * A page of the audit trail, newest first.
   * @param {import("./index.js").Filter} [filter]
   */
  async decisions(filter = {}, opts) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries({
      session_id: filter.sessionId, decision: filter.decision, source: filter.source,
      since: filter.since instanceof Date ? filter.since.toISOString() : filter.since,
      before: filter.before, limit: filter.limit ? String(filter.limit) : undefined,
    })) {
      if (v) q.set(k, v);
    }
    const qs = q.toString();
    return this.#json("GET", "/v1/decisions" + (qs ? "?" + qs : ""), undefined, opts);
  }

  /**
   * The live event stream (GET /v1/events): asks, answers, outcomes and
   * level changes as they happen. Iterate it with for await. With
   * lastEventId it starts right after that event. When the connection
   * ends it reconnects (unless reconnect is false) with the id of the
   * last event read, missing nothing; a PdpError with code
   * resume_too_old when the server no longer keeps what followed it.
   * @param {import("./index.js").EventsOptions} [opts]
   */
  events(opts = {}) {
    return new EventStream(this, opts);
  }

  /**
   * Opens one connection of the event stream.
   * @param {string} lastEventId
   * @param {AbortSignal} signal
   * @returns {Promise<ReadableStream<Uint8Array>>}
   * @internal
   */
  async openEvents(lastEventId, signal) {
    /** @type {Record<string, string>} */
    const headers = { Accept: "text/event-stream" };
    if (lastEventId) headers["Last-Event-ID"] = lastEventId;
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    let resp;
    try {
      resp = await this.fetch(this.base + "/v1/events", { headers, signal, redirect: "manual" });
    } catch (err) {
      throw new PdpError(0, "unreachable", `GET /v1/events: ${errText(err)}`, err);
    }
    if (resp.status !== 200) throw await errorOf(resp);
    const ct = resp.headers.get("content-type") ?? "";
    if (!ct.startsWith("text/event-stream") || !resp.body) {
      await resp.body?.cancel();
      throw new PdpError(resp.status, "not_an_event_stream", `GET /v1/events answered ${JSON.stringify(ct)}, not an event stream`);
    }
    return resp.body;
  }

  /**
   * Sends one request and returns its JSON answer; a connection error is
   * retried (an HTTP answer, even 503, never is).
   * @param {string} method
   * @param {string} path
   * @param {unknown} body
   * @param {{signal?: AbortSignal, timeoutMs?: number}} [opts]
   * @returns {Promise<any>}
   */
  async #json(method, path, body, opts = {}) {
    /** @type {Record<string, string>} */
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      const signals = [AbortSignal.timeout(opts.timeoutMs ?? this.timeoutMs)];
      if (opts.signal) signals.push(opts.signal);
      const signal = AbortSignal.any(signals);
      let resp;
      try {
        // A redirect is no answer of the API: it is not followed (the
        // token stays with the PDP) and reads as an error status.
        resp = await this.fetch(this.base + path, { method, headers, body: payload, signal, redirect: "manual" });
      } catch (err) {
        // fetch rejects with a TypeError when no answer came (refused,
        // reset, DNS): sending again is safe. An abort or timeout is not
        // retried.
        const retry = attempt < this.retries && err instanceof TypeError && !signal.aborted;
        if (!retry) {
          const code = signal.aborted && !opts.signal?.aborted ? "timeout" : "unreachable";
          throw new PdpError(0, code, `${method} ${path}: ${errText(err)}`, err);
        }
        await sleep(this.backoffMs * 2 ** attempt, opts.signal);
        continue;
      }
      if (resp.status >= 300) throw await errorOf(resp);
      const raw = await readText(resp, MAX_BODY_BYTES);
      if (resp.status === 204 || raw === "") return undefined;
      try {
        return JSON.parse(raw);
      } catch (err) {
        throw new PdpError(resp.status, "invalid_answer", `${method} ${path}: the answer is not JSON`, err);
      }
    }
  }
}

/**
 * The live event stream: an async iterable of LiveEvent that reconnects
 * with Last-Event-ID.
 */
export class EventStream {
  /** @type {AbortController} */
  #abort = new AbortController();
  #last = "";
  #retryMs = 2000;
  #client;
  #reconnect;
  #maxRetryMs;

  /**
   * @param {Client} client
   * @param {import("./index.js").EventsOptions} opts
   */
  constructor(client, opts) {
    this.#client = client;
    this.#last = opts.lastEventId ?? "";
    if (this.#last && !/^[0-9]+$/.test(this.#last)) throw new TypeError("pdp: lastEventId is an id the stream sent (a number)");
    this.#reconnect = opts.reconnect ?? true;
    this.#maxRetryMs = opts.maxRetryMs ?? 30_000;
    if (opts.signal) {
      if (opts.signal.aborted) this.#abort.abort();
      else opts.signal.addEventListener("abort", () => this.#abort.abort(), { once: true });
    }
  }

  /** The id of the last event read (or the one it resumed from). */
  get lastEventId() {
    return this.#last;
  }

  /** Ends the stream: the iteration ends. */
  close() {
    this.#abort.abort();
  }

  /** @returns {AsyncGenerator<import("./index.js").LiveEvent, void, undefined>} */
  async *[Symbol.asyncIterator]() {
    const signal = this.#abort.signal;
    let failures = 0;
    try {
      while (!signal.aborted) {
        let body;
        try {
          body = await this.#client.openEvents(this.#last, signal);
        } catch (err) {
          if (signal.aborted) return;
          // An answer of the server (4xx: bad id, resume too old, no
          // access) ends the stream; so does any error without reconnect.
          if (!this.#reconnect || !(err instanceof PdpError) || (err.status >= 400 && err.status < 500)) throw err;
          failures++;
          await sleep(Math.min(this.#retryMs * failures, this.#maxRetryMs), signal).catch(() => {});
          continue;
        }
        try {
          for await (const frame of frames(body, signal)) {
            if (frame.retry !== undefined) this.#retryMs = frame.retry;
            if (frame.data === undefined) continue;
            const ev = parseEvent(frame);
            if (ev.id) this.#last = ev.id;
            failures = 0;
            yield ev;
          }
        } catch (err) {
          if (signal.aborted) return;
          if (err instanceof PdpError) throw err; // a malformed event: not the network
          if (!this.#reconnect) throw new PdpError(0, "stream_broken", `reading the event stream: ${errText(err)}`, err);
        }
        if (!this.#reconnect || signal.aborted) return;
        await sleep(Math.min(this.#retryMs, this.#maxRetryMs), signal).catch(() => {});
      }
    } finally {
      // Leaving the loop (break, return, throw) closes the connection.
      this.#abort.abort();
    }
  }
}

/**
 * The SSE frames of a body (the WHATWG rules: fields id, event, data,
 * retry; comments skipped; CR, LF or CRLF line ends).
 * @param {ReadableStream<Uint8Array>} body
 * @param {AbortSignal} signal
 */
async function* frames(body, signal) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const onAbort = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  let buf = "";
  /** @type {{id: string, event: string, data: string | undefined, retry: number | undefined}} */
  let frame = { id: "", event: "", data: undefined, retry: undefined };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      for (;;) {
        const m = /\r\n|\r|\n/.exec(buf);
        if (!m) break;
        // A lone CR at the end may be the first half of a CRLF.
        if (m[0] === "\r" && m.index === buf.length - 1) break;
        const line = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        if (line === "") {
          if (frame.data !== undefined || frame.retry !== undefined) yield frame;
          frame = { id: "", event: "", data: undefined, retry: undefined };
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "id") frame.id = value;
        else if (field === "event") frame.event = value;
        else if (field === "data") frame.data = frame.data === undefined ? value : frame.data + "\n" + value;
        else if (field === "retry" && /^[0-9]+$/.test(value)) frame.retry = Number(value);
        if ((frame.data?.length ?? 0) > MAX_EVENT_BYTES) throw new PdpError(0, "event_too_large", `an event of the stream is over ${MAX_EVENT_BYTES} bytes`);
      }
      if (buf.length > MAX_EVENT_BYTES) throw new PdpError(0, "event_too_large", `a line of the event stream is over ${MAX_EVENT_BYTES} bytes`);
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}

/**
 * @param {{id: string, event: string, data: string | undefined}} frame
 * @returns {import("./index.js").LiveEvent}
 */
function parseEvent(frame) {
  const kind = frame.event || "message";
  const data = frame.data ?? "";
  /** @type {import("./index.js").LiveEvent} */
  const ev = { id: frame.id, kind, data };
  if (kind === EVENT_ASK || kind === EVENT_ANSWER || kind === EVENT_OUTCOME || kind === EVENT_LEVEL) {
    let parsed;
    try {
      parsed = JSON.parse(data);
    } catch (err) {
      throw new PdpError(0, "invalid_event", `a ${kind} event is not JSON`, err);
    }
    if (!parsed || typeof parsed !== "object") throw new PdpError(0, "invalid_event", `a ${kind} event is not an object`);
    if (kind === EVENT_LEVEL) ev.session = parsed;
    else ev.decision = parsed;
  }
  return ev;
}

/**
 * Which field of a decide answer is missing or of the wrong type, or "".
 * @param {any} d
 */
function incomplete(d) {
  if (!d || typeof d !== "object" || Array.isArray(d)) return "not an object";
  /** @type {Array<[string, (v: any) => boolean]>} */
  const fields = [
    ["decision_id", (v) => typeof v === "string" && v !== ""],
    ["decision", (v) => v === ALLOW || v === ASK || v === DENY],
    ["need_approval", (v) => typeof v === "boolean"],
    ["source", (v) => typeof v === "string"],
    ["rule", (v) => typeof v === "string"],
    ["reason", (v) => typeof v === "string"],
    ["capability", (v) => v === null || typeof v === "string"],
    ["fingerprint", (v) => v === null || typeof v === "string"],
    ["grantable", (v) => typeof v === "boolean"],
    ["danger", (v) => v === null || (typeof v === "object" && !Array.isArray(v))],
    ["revision", (v) => typeof v === "string"],
    ["parts", (v) => v === null || Array.isArray(v)],
  ];
  for (const [name, ok] of fields) {
    if (!(name in d) || !ok(d[name])) return name;
  }
  return "";
}

/** @param {Response} resp */
async function errorOf(resp) {
  let raw = "";
  try {
    raw = await readText(resp, 1 << 20);
  } catch {
    // the status alone says enough
  }
  try {
    const e = JSON.parse(raw);
    if (e && e.error && typeof e.error.code === "string" && e.error.code) {
      return new PdpError(resp.status, e.error.code, String(e.error.message ?? ""));
    }
  } catch {
    // not the API's error shape
  }
  return new PdpError(resp.status, "http_error", raw.trim().slice(0, 2000));
}

/**
 * Reads a body of at most limit bytes.
 * @param {Response} resp
 * @param {number} limit
 */
async function readText(resp, limit) {
  if (!resp.body) return "";
  const reader = resp.body.getReader();
  /** @type {Uint8Array[]} */
  const chunks = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new PdpError(resp.status, "answer_too_large", `the answer is over ${limit} bytes`);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(all);
  } catch (err) {
    throw new PdpError(resp.status, "invalid_answer", "the answer is not UTF-8 text", err);
  }
}

/** @param {string} s */
function enc(s) {
  // "." and ".." would be read as path segments and change the route.
  if (typeof s !== "string" || s === "" || s === "." || s === "..") throw new TypeError(`pdp: ${JSON.stringify(s)} is not an id`);
  return encodeURIComponent(s);
}

/** @param {unknown} err */
function errText(err) {
  if (err instanceof Error) {
    const cause = /** @type {any} */ (err).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}

/**
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
