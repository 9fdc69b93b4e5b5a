// The toolperm console: a thin page over the same HTTP API and tokens.
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];
const el = (tag, props = {}, ...kids) => {
  const e = Object.assign(document.createElement(tag), props);
  for (const k of kids) e.append(k);
  return e;
};

const LEVELS = [
  ["READ_ONLY", "Read only", "Reads and searches run; writes and shell commands need approval."],
  ["READ_WRITE", "Read & write", "Writes and edits run too; shell commands still need approval."],
  ["SMART", "Smart approval", "Shell commands are judged by the LLM: safe ones run, risky ones need approval."],
  ["FULL", "Full access", "Every tool call runs without approval."],
];

// --- API ---------------------------------------------------------------

async function api(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  const token = sessionStorage.getItem("pdp-token");
  if (token) headers.Authorization = "Bearer " + token;
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await resp.text();
  const data = text ? JSON.parse(text) : null;
  if (!resp.ok) {
    const msg = data && data.error ? `${data.error.code}: ${data.error.message}` : `HTTP ${resp.status}`;
    throw new Error(msg);
  }
  return data;
}

function showError(err) {
  const box = $("#error");
  box.hidden = !err;
  box.textContent = err ? String(err.message || err) : "";
}

// --- navigation --------------------------------------------------------

function show(page) {
  for (const b of $$("nav button")) b.classList.toggle("active", b.dataset.page === page);
  for (const s of $$(".page")) s.hidden = s.id !== page;
  location.hash = page;
  if (page === "inbox") refreshInbox();
  if (page === "sessions") refreshSessions();
  if (page === "audit") loadAudit(true);
  if (page === "simulator") simulate();
}
for (const b of $$("nav button")) b.addEventListener("click", () => show(b.dataset.page));

$("#token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem("pdp-token", $("#token").value.trim());
  $("#token").value = "";
  showError(null);
  show((location.hash || "#simulator").slice(1));
});

// --- sign-in -----------------------------------------------------------

// With auth.oidc a person signs in with the organisation's provider: the
// session cookie goes with every request of this page (same origin), and
// /auth/me says who it is. The token form stays for tokens.
async function whoami() {
  const resp = await fetch("/auth/me", { cache: "no-store" });
  const me = resp.ok ? await resp.json() : null;
  const signInTo = "/auth/login?next=" + encodeURIComponent(location.pathname + location.hash);
  $("#sign-in").href = signInTo;
  $("#sign-in").hidden = !(me && me.sign_in && !me.signed_in);
  $("#sign-out").hidden = !(me && me.signed_in);
  $("#person").textContent = me && me.signed_in ? "Signed in as " + me.name : "";
}
whoami();

// --- simulator ---------------------------------------------------------

function row(table, cells) {
  const tr = el("tr");
  for (const c of cells) tr.append(el("td", {}, c));
  const del = el("button", { type: "button", textContent: "×", title: "remove" });
  del.addEventListener("click", () => { tr.remove(); simulate(); });
  tr.append(el("td", {}, del));
  $("tbody", table).append(tr);
  tr.addEventListener("input", simulate);
  tr.addEventListener("change", simulate);
  return tr;
}

$("#add-rule").addEventListener("click", () => {
  const action = el("select", { className: "rule-action" });
  for (const a of ["allow", "ask", "deny", "assess"]) action.append(el("option", { textContent: a }));
  row($("#rules"), [el("input", { className: "rule-pattern", placeholder: "mcp.github.*" }), action]);
});
$("#add-path-rule").addEventListener("click", () => {
  const access = el("select", { className: "path-access" });
  for (const a of ["read+write", "read", "write"]) access.append(el("option", { textContent: a }));
  const action = el("select", { className: "path-action" });
  for (const a of ["deny", "ask", "allow"]) action.append(el("option", { textContent: a }));
  row($("#path-rules"), [el("input", { className: "path-pattern", placeholder: ".env or /opt/docs/**" }), access, action]);
});
$("#add-command-rule").addEventListener("click", () => {
  const action = el("select", { className: "command-action" });
  for (const a of ["allow", "ask", "deny"]) action.append(el("option", { textContent: a }));
  row($("#command-rules"), [el("input", { className: "command-prefix", placeholder: "git push --force" }), action]);
});
$("#add-grant").addEventListener("click", () => {
  row($("#grants"), [el("input", { className: "grant-capability", value: "shell.exec" }), el("input", { className: "grant-fingerprint", placeholder: "go test" })]);
});

function simulationBody() {
  const f = $("#sim-form");
  const v = (n) => f.elements[n].value.trim();
  const args = {};
  if (v("command")) args.command = v("command");
  if (v("path")) args.path = v("path");
  if (v("url")) args.url = v("url");
  const session = { permission_level: v("permission_level"), mode: v("mode"), execution_mode: v("execution_mode") };
  if (v("workspace")) session.workspace = v("workspace");
  const scope = v("scope").split(",").map((s) => s.trim()).filter(Boolean);
  if (scope.length) session.scope = scope;
  const rules = {};
  for (const tr of $$("#rules tbody tr")) {
    const p = $(".rule-pattern", tr).value.trim();
    if (p) rules[p] = $(".rule-action", tr).value;
  }
  if (Object.keys(rules).length) session.rules = rules;
  const commandRules = {};
  for (const tr of $$("#command-rules tbody tr")) {
    const p = $(".command-prefix", tr).value.trim().split(/\s+/).join(" ");
    if (p) commandRules[p] = $(".command-action", tr).value;
  }
  if (Object.keys(commandRules).length) session.command_rules = commandRules;
  // Path rules: one action for both access kinds, or one per kind.
  const pathRules = {};
  for (const tr of $$("#path-rules tbody tr")) {
    const p = $(".path-pattern", tr).value.trim();
    if (!p) continue;
    const access = $(".path-access", tr).value, action = $(".path-action", tr).value;
    const r = typeof pathRules[p] === "object" ? pathRules[p] : {};
    for (const kind of access === "read+write" ? ["read", "write"] : [access]) r[kind] = action;
    pathRules[p] = r;
  }
  if (Object.keys(pathRules).length) session.path_rules = pathRules;
  const grants = [];
  for (const tr of $$("#grants tbody tr")) {
    const c = $(".grant-capability", tr).value.trim(), fp = $(".grant-fingerprint", tr).value.trim();
    if (c && fp) grants.push({ capability: c, fingerprint: fp });
  }
  if (grants.length) session.grants = grants;
  if (f.elements.parent.checked) session.parent = { permission_level: v("parent_level") };
  const body = { session_id: "simulation", args, cwd: v("cwd"), session, assess: f.elements.assess.checked };
  if (v("capability")) body.capability = v("capability"); else body.tool = v("tool");
  return body;
}

let simSeq = 0;
async function simulate() {
  const seq = ++simSeq;
  try {
    const d = await api("POST", "/v1/simulate", simulationBody());
    if (seq !== simSeq) return;
    showError(null);
    renderDecision(d);
  } catch (err) {
    if (seq !== simSeq) return;
    $("#verdict").className = "verdict";
    $("#verdict").textContent = "error";
    $("#facts").replaceChildren(el("dt", { textContent: "error" }), el("dd", { textContent: err.message }));
    $("#steps").replaceChildren();
  }
}

function renderDecision(d) {
  const v = $("#verdict");
  v.className = "verdict " + d.decision;
  v.textContent = d.decision;
  const facts = [
    ["source", d.source], ["rule", d.rule], ["reason", d.reason], ["capability", d.capability ?? "—"],
    ["fingerprint", d.fingerprint ?? "none"], ["grantable", d.grantable ? "yes" : "no"],
    ["danger", d.danger ? `${d.danger.verdict} (${d.danger.by})` : "—"], ["revision", d.revision],
  ];
  $("#facts").replaceChildren(...facts.flatMap(([k, val]) => [el("dt", { textContent: k }), el("dd", { textContent: val, id: "fact-" + k })]));
  const names = {
    capability: "capability known", parent_scope: "1 parent scope", workspace: "2 workspace", explicit_deny: "3 explicit deny",
    mode: "4 mode", dangerous: "5 dangerous list", session_grant: "6 session grant", rule: "7 rule",
    ask_always: "8 ask always", fallback: "9 fallback", parent_cap: "parent's decision",
  };
  const labels = { pass: "passed", decided: "decided here", not_reached: "not reached" };
  $("#steps").replaceChildren(...(d.trace || []).map((s) =>
    el("li", { className: s.outcome }, el("span", { textContent: names[s.step] || s.step }), el("span", { className: "outcome", textContent: labels[s.outcome] || s.outcome }))));
  // A compound command's parts, each as its rule or grant judged it.
  const parts = d.parts || [];
  $("#parts-box").hidden = parts.length === 0;
  $("#parts tbody").replaceChildren(...parts.map((p) => el("tr", { className: "part " + (p.decision || "level") },
    el("td", { className: "mono", textContent: visible(p.text) }), el("td", { className: "mono", textContent: p.fingerprint ?? "none" }),
    el("td", { textContent: p.decision ?? "the level decides" }), el("td", { textContent: p.rule ? `${p.rule} (${p.source})` : "—" }))));
  const m = d.matches || {};
  $("#matches tbody").replaceChildren(...["policy", "session", "level"].map((layer) =>
    el("tr", {}, el("td", { textContent: layer }), el("td", { textContent: m[layer] ? m[layer].pattern : "—" }), el("td", { textContent: m[layer] ? m[layer].action : "no rule" }))));
  // The path rule that decided, or let a place through: its layer, the
  // resolved path it matched and the access kind.
  if (m.path) {
    $("#matches tbody").append(el("tr", { id: "path-match" },
      el("td", { textContent: `path (${m.path.layer})` }),
      el("td", { textContent: `${m.path.pattern} — ${m.path.access} ${m.path.path}` }),
      el("td", { textContent: m.path.action })));
  }
}

$("#sim-form").addEventListener("input", simulate);
$("#sim-form").addEventListener("change", simulate);

// --- inbox -------------------------------------------------------------

// visible shows control and bidirectional-override characters as escapes,
// so a command cannot look like something else on screen.
const visible = (s) => s.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g,
  (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));

// what is everything the call was asked with: the command or path first,
// then the other arguments.
const what = (ev) => {
  const args = ev.args || {};
  const main = args.command ?? args.file_path ?? args.path ?? args.url;
  const rest = Object.fromEntries(Object.entries(args).filter(([k]) => args[k] !== main));
  const parts = [];
  if (typeof main === "string") parts.push(main);
  if (Object.keys(rest).length) parts.push(JSON.stringify(rest));
  return visible(parts.join("  "));
};

// outcomeNote says what a runtime reported of an ask. It is a record of
// what the runtime did, not an answer: the ask stays in the inbox.
const outcomeNote = (o) => `${visible(o.channel)} reported: ${o.answer === "allow_once" ? "the call ran" : "the call was refused"} (${o.answer}) — not an answer`;

// waitedFor is how long ago a wait began, as a person reads it.
const waitedFor = (since) => {
  const s = Math.max(0, Math.round((Date.now() - new Date(since).getTime()) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h`;
};

// waitingNote says who is parked on the ask now (GET /v1/decisions
// carries it), so a person sees which asks still hold up a runtime.
const waitingNote = (w) => !w || !w.length ? "nobody waiting" :
  "waiting: " + w.map((x) => `${visible(x.by)}, ${waitedFor(x.since)}`).join(" · ");

// wouldGrantNote shows what "allow for the session" grants, each
// fingerprint as code; nothing when the call is not grantable.
const wouldGrantNote = (grants) => !grants.length ? [] :
  [el("div", { className: "would-grant" }, "allow for this session grants: ",
    ...grants.flatMap((fp, i) => [...(i ? [", "] : []), el("code", { textContent: visible(fp) })]))];

async function refreshInbox() {
  try {
    // The unanswered asks, those a runtime waits on first (a runtime's
    // outcome is no answer: the ask stays).
    const page = await api("GET", "/v1/decisions?decision=ask&pending=true&limit=200");
    const pending = page.decisions.filter((ev) => !ev.answer);
    $("#inbox-count").textContent = pending.length ? `(${pending.length})` : "";
    $("#inbox-empty").hidden = pending.length > 0;
    const rows = pending.map((ev) => {
      const act = (answer) => async () => {
        try {
          await api("POST", `/v1/decisions/${ev.decision_id}/answer`, { answer, channel: "console" });
          refreshInbox();
        } catch (err) { showError(err); }
      };
      const once = el("button", { textContent: "Allow once", className: "allow-once" });
      once.addEventListener("click", act("allow_once"));
      // would_grant is what the answer grants, the very list the answer
      // stores; empty when the call cannot be granted.
      const grants = ev.would_grant || [];
      // The Rule of Two's ask grants nothing: allow_session accepts the
      // three labels for the session instead.
      const flow = ev.rule === "FLOW_RULE_OF_TWO";
      const session = el("button", { textContent: flow ? "Accept for this session" : "Allow for this session", className: "allow-session", disabled: !grants.length && !flow });
      session.title = flow ? "Accepts untrusted input, a secret and a way out together for this session: the Rule of Two asks no more in it" :
        grants.length ? `Grants ${grants.map((fp) => `"${visible(fp)}"`).join(", ")} for the session` :
        "Not grantable: only one plain shell command with a literal program and subcommand can be allowed for a session";
      session.addEventListener("click", act("allow_session"));
      const project = el("button", { textContent: "Allow for this project", className: "allow-project", disabled: !grants.length });
      project.title = grants.length ? "Grants the same to every session of this workspace, until revoked on the Sessions page" :
        flow ? "The Rule of Two is accepted for one session at a time" : session.title;
      project.addEventListener("click", act("allow_project"));
      const deny = el("button", { textContent: "Deny", className: "deny" });
      deny.addEventListener("click", act("deny"));
      const tr = el("tr", { id: "ask-" + ev.decision_id },
        el("td", { textContent: new Date(ev.time).toLocaleTimeString() }), el("td", { textContent: ev.session_id }),
        el("td", { textContent: ev.tool || ev.capability }), el("td", { className: "mono", textContent: what(ev) }),
        el("td", {}, ev.reason, ...(ev.outcome ? [el("div", { className: "outcome-note", textContent: outcomeNote(ev.outcome) })] : [])),
        el("td", { className: "waiting" + (ev.waiting && ev.waiting.length ? " now" : ""), textContent: waitingNote(ev.waiting) }),
        el("td", {}, once, " ", session, " ", project, " ", deny, ...wouldGrantNote(grants)));
      return tr;
    });
    $("#inbox-rows").replaceChildren(...rows);
  } catch (err) { showError(err); }
}

// The inbox follows the live event stream (GET /v1/events). EventSource
// cannot send the bearer token, so the stream is read with fetch; after a
// break it reconnects with Last-Event-ID, the last id it read, and misses
// nothing. While it is down the inbox is listed every 15 s.
let liveID = null;
let live = false;
function setLive(up, why) {
  live = up;
  const badge = $("#inbox-live");
  badge.textContent = up ? "live" : why || "reconnecting…";
  badge.className = up ? "live" : "live down";
}
let inboxTimer = 0;
function refreshInboxSoon() { clearTimeout(inboxTimer); inboxTimer = setTimeout(refreshInbox, 50); }

// onEvent handles one event of the stream: its lines "field: value".
function onEvent(block) {
  let id = null, kind = "message";
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const at = line.indexOf(":");
    const field = at < 0 ? line : line.slice(0, at);
    const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
    if (field === "id") id = value;
    if (field === "event") kind = value;
  }
  if (id !== null) liveID = id;
  if (kind === "ready") {
    setLive(true);
    refreshInbox(); // what came while the stream was down
  } else if (kind === "ask" || kind === "answer" || kind === "outcome") {
    refreshInboxSoon();
  } else if (kind === "level" && !$("#sessions").hidden) {
    refreshSessions();
  }
}

async function followEvents() {
  for (;;) {
    let why = "";
    try {
      const headers = { Accept: "text/event-stream" };
      const token = sessionStorage.getItem("pdp-token");
      if (token) headers.Authorization = "Bearer " + token;
      if (liveID !== null) headers["Last-Event-ID"] = liveID;
      const resp = await fetch("/v1/events", { headers, cache: "no-store" });
      if (resp.status === 410) { liveID = null; continue; } // not kept any more: start anew
      if (!resp.ok || !resp.body) throw new Error(`HTTP ${resp.status}`);
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value.replace(/\r\n?/g, "\n");
        let end;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          onEvent(buf.slice(0, end));
          buf = buf.slice(end + 2);
        }
      }
    } catch (err) { why = `not live (${err.message})`; }
    setLive(false, why);
    await new Promise((r) => setTimeout(r, 2000));
  }
}
setInterval(() => { if (!live && !$("#inbox").hidden) refreshInbox(); }, 15000);
// Who waits is not an event of the stream: while the inbox is open with
// asks in it, it is read again every 5 s (and the waits' ages with it).
setInterval(() => { if (live && !$("#inbox").hidden && $("#inbox-rows").children.length) refreshInbox(); }, 5000);
followEvents();

// --- sessions ----------------------------------------------------------

async function refreshSessions() {
  try {
    const { sessions } = await api("GET", "/v1/sessions?limit=200");
    $("#session-rows").replaceChildren(...sessions.map((s) => {
      let level;
      if (s.execution_mode === "CLOUD") {
        level = el("span", { className: "hint", textContent: "runs in the server's sandbox: the level does not apply" });
      } else {
        level = el("div", { className: "level-switch" });
        for (const [id, label, desc] of LEVELS) {
          const b = el("button", { className: "level " + (s.permission_level === id ? "current" : ""), value: id }, label, el("small", { textContent: desc }));
          b.dataset.level = id;
          b.addEventListener("click", async () => {
            try { await api("PATCH", `/v1/sessions/${encodeURIComponent(s.id)}`, { permission_level: id }); refreshSessions(); }
            catch (err) { showError(err); }
          });
          level.append(b);
        }
      }
      return el("tr", { id: "session-" + s.id }, el("td", { className: "mono", textContent: s.id }), el("td", { className: "mono", textContent: s.workspace || "—" }),
        el("td", { textContent: s.mode }), el("td", { textContent: s.execution_mode }), el("td", {}, level), grantsCell(s), flowCell(s));
    }));
  } catch (err) { showError(err); }
}

// grantsCell lists a session's grants (its tree's and its project's),
// each with a button that revokes it.
function grantsCell(s) {
  const cell = el("td", { className: "grants" });
  api("GET", `/v1/sessions/${encodeURIComponent(s.id)}/grants`).then(({ grants }) => {
    cell.replaceChildren(...grants.map((g) => {
      const revoke = el("button", { textContent: "Revoke", className: "revoke" });
      revoke.addEventListener("click", async () => {
        try { await api("DELETE", `/v1/sessions/${encodeURIComponent(s.id)}/grants/${g.id}`); refreshSessions(); }
        catch (err) { showError(err); }
      });
      return el("div", { className: "grant " + g.scope }, el("span", { className: "mono", textContent: visible(g.fingerprint) }),
        " ", el("small", { textContent: g.scope === "project" ? "project" : "session" }), " ", revoke);
    }));
  }).catch(showError);
  return cell;
}

// FLOW_LABELS names a session's flow labels as a person reads them.
const FLOW_LABELS = {
  untrusted_input: "read untrusted input",
  sensitive_read: "read a secret",
  external_effect: "sent data out",
  trifecta_accepted: "all three accepted",
};

// flowCell lists the flow labels of a session's tree, each with the call
// that set it and its decision.
function flowCell(s) {
  const cell = el("td", { className: "flow" });
  api("GET", `/v1/sessions/${encodeURIComponent(s.id)}`).then(({ labels }) => {
    cell.replaceChildren(...(labels || []).map((l) => el("div", { className: "label " + l.label, title: `${l.decision_id} (session ${l.session_id}, ${l.time})` },
      el("strong", { textContent: FLOW_LABELS[l.label] || l.label }), " ", el("small", { className: "mono", textContent: visible(l.summary) }))));
  }).catch(showError);
  return cell;
}

// --- audit -------------------------------------------------------------

let auditBefore = "";
async function loadAudit(reset) {
  if (reset) { auditBefore = ""; $("#audit-rows").replaceChildren(); $("#audit-event").hidden = true; }
  const f = $("#audit-filter").elements;
  const q = new URLSearchParams({ limit: "50" });
  for (const n of ["session_id", "decision", "source"]) if (f[n].value) q.set(n, f[n].value);
  if (f.since.value) q.set("since", new Date(f.since.value).toISOString().replace(/\.\d+Z$/, "Z"));
  if (auditBefore) q.set("before", auditBefore);
  try {
    const page = await api("GET", "/v1/decisions?" + q);
    for (const ev of page.decisions) {
      const tr = el("tr", {}, el("td", { textContent: new Date(ev.time).toLocaleString() }), el("td", { className: "mono", textContent: ev.session_id }),
        el("td", { textContent: ev.tool || ev.capability }), el("td", { textContent: ev.decision }), el("td", { textContent: ev.source }),
        el("td", { className: "mono", textContent: ev.rule }), el("td", { className: "answered", textContent: ev.answer ? `${ev.answer.answer} (${[ev.answer.channel, ev.answer.answered_by].filter(Boolean).join(", ")})` : "" }),
        el("td", { textContent: ev.outcome ? `${ev.outcome.answer} (${ev.outcome.channel}, ${ev.outcome.by || "no token"})` : "" }));
      tr.addEventListener("click", () => { const p = $("#audit-event"); p.hidden = false; p.textContent = JSON.stringify(ev, null, 2); });
      $("#audit-rows").append(tr);
    }
    auditBefore = page.next_before || "";
    $("#audit-more").hidden = !auditBefore;
  } catch (err) { showError(err); }
}
$("#audit-filter").addEventListener("submit", (e) => { e.preventDefault(); loadAudit(true); });
$("#audit-more").addEventListener("click", () => loadAudit(false));

// --- start -------------------------------------------------------------

window.addEventListener("hashchange", () => {
  const page = (location.hash || "#simulator").slice(1);
  if ($("#" + page) && $("#" + page).hidden) show(page);
});
show((location.hash || "#simulator").slice(1));

// --- policy impact -----------------------------------------------------

// The candidate bundle is sent as it is (tar.gz); the answer is the same
// report pdp replay prints.
$("#impact-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const form = e.target;
  const file = form.bundle.files[0];
  if (!file) return;
  const q = new URLSearchParams();
  if (form.since.value.trim()) q.set("since", form.since.value.trim());
  if (form.session_id.value.trim()) q.set("session_id", form.session_id.value.trim());
  const headers = { "Content-Type": "application/gzip" };
  const token = sessionStorage.getItem("pdp-token");
  if (token) headers.Authorization = "Bearer " + token;
  try {
    const resp = await fetch("/v1/policy/impact?" + q, { method: "POST", headers, body: await file.arrayBuffer() });
    const data = await resp.json();
    if (!resp.ok) throw new Error(data && data.error ? `${data.error.code}: ${data.error.message}` : `HTTP ${resp.status}`);
    showError(null);
    showImpact(data);
  } catch (err) {
    showError(err);
  }
});

function showImpact(r) {
  $("#impact-summary").textContent =
    `${r.replayed} replayed, ${r.skipped} skipped (not replayable), ${r.changed} changed, ${r.loosened} loosened`;
  const loosening = new Set(r.loosening.map((c) => c.from + c.to + c.rule));
  const rows = r.changes.map((c) => {
    const examples = el("td");
    for (const id of c.examples) {
      const a = el("a", { href: "#impact", textContent: id.slice(-8), title: id });
      a.addEventListener("click", async (ev) => {
        ev.preventDefault();
        try {
          const box = $("#impact-event");
          box.textContent = JSON.stringify(await api("GET", "/v1/decisions/" + encodeURIComponent(id)), null, 2);
          box.hidden = false;
        } catch (err) {
          showError(err);
        }
      });
      examples.append(a, " ");
    }
    const tr = el("tr", {}, el("td", { textContent: c.from }), el("td", { textContent: c.to }),
      el("td", { textContent: c.rule }), el("td", { textContent: String(c.count) }), el("td", { textContent: String(c.sessions) }), examples);
    if (loosening.has(c.from + c.to + c.rule)) tr.classList.add("loosens");
    return tr;
  });
  $("#impact-rows").replaceChildren(...rows);
}
