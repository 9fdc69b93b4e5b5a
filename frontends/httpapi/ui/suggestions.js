// The Suggestions page: command rules mined from the asks people
// answered (GET /v1/suggestions), each with its evidence, its impact and
// the policy data to paste into a bundle's data.json.
"use strict";

// suggestionLoads counts the page's requests: an answer to one that a later one
// has replaced is dropped, so a slow first load (the page opened on
// #suggestions) never overwrites the rows a person asked for since. The
// form is aria-busy until the latest load has answered.
let suggestionLoads = 0;

async function loadSuggestions() {
  const load = ++suggestionLoads;
  const form = $("#suggestions-form");
  form.setAttribute("aria-busy", "true");
  const q = new URLSearchParams();
  for (const name of ["since", "min_answers", "session_id"]) {
    if (form[name].value.trim()) q.set(name, form[name].value.trim());
  }
  try {
    const r = await api("GET", "/v1/suggestions?" + q);
    if (load !== suggestionLoads) return;
    showError(null);
    showSuggestions(r);
  } catch (err) {
    if (load === suggestionLoads) showError(err);
  } finally {
    if (load === suggestionLoads) form.removeAttribute("aria-busy");
  }
}

function decisionLinks(ids) {
  const td = el("td");
  for (const id of ids) {
    const a = el("a", { href: "#suggestions", textContent: id.slice(-8), title: id });
    a.addEventListener("click", async (ev) => {
      ev.preventDefault();
      try {
        const box = $("#suggestion-event");
        box.textContent = JSON.stringify(await api("GET", "/v1/decisions/" + encodeURIComponent(id)), null, 2);
        box.hidden = false;
      } catch (err) {
        showError(err);
      }
    });
    td.append(a, " ");
  }
  return td;
}

function showSuggestions(r) {
  $("#suggestions-summary").textContent =
    `${r.suggestions.length} suggestions from ${r.asks} asks (${r.replayed} decisions replayed)`;
  const rows = r.suggestions.map((s) => {
    const data = JSON.stringify(s.policy_data, null, 2);
    const copy = el("button", { type: "button", textContent: "Copy as policy data", className: "copy" });
    copy.addEventListener("click", async () => {
      const box = $("#suggestion-data");
      box.textContent = data;
      box.hidden = false;
      try {
        await navigator.clipboard.writeText(data);
        copy.textContent = "Copied";
      } catch {
        copy.textContent = "Shown below";
      }
    });
    const actions = el("td", {}, copy);
    if (s.pattern === s.fingerprint) {
      // A project grant names the fingerprint: only a rule that is its
      // fingerprint can be accepted so (POST /v1/suggestions/accept).
      const accept = el("button", { type: "button", textContent: "Accept for this project", className: "accept" });
      accept.addEventListener("click", async () => {
        const form = $("#suggestions-form");
        const session = form.accept_session.value.trim();
        if (!session) {
          showError(new Error("Name a session of the project in “accept for the project of session”."));
          return;
        }
        const body = { pattern: s.pattern, session_id: session };
        if (form.since.value.trim()) body.since = form.since.value.trim();
        if (form.min_answers.value.trim()) body.min_answers = Number(form.min_answers.value.trim());
        try {
          const rec = await api("POST", "/v1/suggestions/accept", body);
          showError(null);
          accept.disabled = true;
          accept.textContent = `Accepted (grant ${rec.answer.grant_id})`;
        } catch (err) {
          showError(err);
        }
      });
      actions.append(" ", accept);
    }
    const e = s.evidence;
    return el("tr", {},
      el("td", { textContent: s.pattern, className: "pattern" }),
      el("td", { textContent: s.action }),
      el("td", { textContent: `${e.allows} allows in ${e.sessions} sessions, ${e.denies} denied, ${e.expired} expired` }),
      decisionLinks(e.examples),
      el("td", { textContent: `${s.impact.asks_to_allow} asks → allow, ${s.impact.other_changes} other changes` }),
      decisionLinks(s.impact.examples),
      actions);
  });
  $("#suggestion-rows").replaceChildren(...rows);
  $("#dropped-rows").replaceChildren(...r.dropped.map((d) =>
    el("tr", {}, el("td", { textContent: d.pattern }), el("td", { textContent: d.reason }), decisionLinks(d.examples))));
}

$("#suggestions-form").addEventListener("submit", (e) => {
  e.preventDefault();
  loadSuggestions();
});
$('nav button[data-page="suggestions"]').addEventListener("click", loadSuggestions);
if (location.hash === "#suggestions") loadSuggestions();
