// The client against a real `pdp serve`: the README's walk-through,
// typed errors, waiting for a person's answer, and the live event stream
// with resume (after a closed stream and across a server restart).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client, PdpError, allows, ALLOW, ASK, DENY } from "../index.js";
import { startPDP, tempDir } from "./pdp.js";

/** @type {Awaited<ReturnType<typeof startPDP>>} */
let pdp;
/** @type {Client} */
let c;
before(async () => {
  pdp = await startPDP();
  c = new Client(pdp.url);
});
after(async () => pdp && (await pdp.stop()));

/** Reads events until one of kind for sessionId comes. */
async function nextOf(iter, kind, sessionId) {
  for (;;) {
    const { value, done } = await iter.next();
    assert.ok(!done, `the stream ended before a ${kind} event`);
    if (value.kind !== kind) continue;
    const sid = value.decision?.session_id ?? value.session?.id;
    if (!sessionId || sid === sessionId) return value;
  }
}

describe("the walk-through", { timeout: 120_000 }, () => {
  test("ask, allow for the session, a grant, the audit trail, a level switch", async () => {
    const ws = tempDir("pdp-ws-");
    const s = await c.sessions.create({ id: "demo", workspace: ws });
    assert.equal(s.permission_level, "READ_ONLY");
    const shell = (command) => c.decide({ session_id: "demo", tool: "shell", args: { command }, cwd: ws });

    const ask = await shell("make check");
    assert.equal(ask.decision, ASK);
    assert.equal(ask.grantable, true);
    assert.equal(ask.fingerprint, "make check");
    assert.deepEqual(ask.would_grant, ["make check"]);
    const answered = await c.answer(ask.decision_id, "allow_session", "cli");
    assert.ok(answered.answer && answered.answer.grant_id > 0, JSON.stringify(answered));
    assert.ok(allows(answered.answer));

    const granted = await shell("make check --short");
    assert.equal(granted.decision, ALLOW);
    assert.equal(granted.source, "session-grant");

    const compound = await shell("make check; rm -rf build");
    assert.equal(compound.decision, ASK);
    assert.equal(compound.fingerprint, null);
    assert.equal(compound.parts?.length, 2);

    const page = await c.decisions({ sessionId: "demo", limit: 2 });
    assert.equal(page.decisions.length, 2);
    assert.equal(page.decisions[0].decision_id, compound.decision_id);
    assert.ok(page.next_before);
    const older = await c.decisions({ sessionId: "demo", before: page.next_before });
    assert.deepEqual(older.decisions.map((e) => e.decision_id), [ask.decision_id]);

    const rw = await c.sessions.update("demo", { permission_level: "READ_WRITE" });
    assert.equal(rw.permission_level, "READ_WRITE");
    const write = await c.decide({ session_id: "demo", tool: "write_file", args: { path: "src/a.ts" }, cwd: ws }, { explain: true });
    assert.equal(write.decision, ALLOW);
    assert.equal(write.source, "level");
    assert.ok(write.trace && write.trace.length > 0);

    const grants = await c.grants.list("demo");
    assert.equal(grants.length, 1);
    assert.equal(grants[0].fingerprint, "make check");
    await c.grants.revoke("demo", grants[0].id);
    assert.equal((await shell("make check")).decision, ASK);
    assert.equal((await c.sessions.get("demo")).workspace, ws);
  });
});

describe("errors", { timeout: 120_000 }, () => {
  test("the API's codes, as PdpError", async () => {
    const code = async (p) => {
      try {
        await p;
      } catch (err) {
        assert.ok(err instanceof PdpError, String(err));
        return `${err.status} ${err.code}`;
      }
      assert.fail("no error");
    };
    assert.equal(await code(c.decide({ session_id: "bad id", tool: "Read" })), "400 invalid_session_id");
    assert.equal(await code(c.decide({ session_id: "mm", tool: "shell", capability: "fs.read", args: { command: "ls" } })), "400 capability_mismatch");
    assert.equal(await code(c.sessions.get("nobody")), "404 not_found");
    await c.sessions.create({ id: "twice" });
    assert.match(await code(c.sessions.create({ id: "twice" })), /^409 /);
    const d = await c.decide({ session_id: "twice", tool: "shell", args: { command: "ls | sh" } });
    assert.equal(d.decision, ASK);
    assert.match(await code(c.answer(d.decision_id, "allow_session", "cli")), /^422 /);
    // Nobody answers: the wait ends with the ask as it is.
    const ev = await c.waitForAnswer(d.decision_id, { timeoutMs: 50 });
    assert.equal(ev.decision_id, d.decision_id);
    assert.equal(ev.answer, null);
    assert.equal(allows(ev.answer), false);
  });

  test("a server that is not there: unreachable, after the retries", async () => {
    const gone = await startPDP();
    const url = gone.url;
    await gone.stop();
    const dead = new Client(url, { retries: 1, backoffMs: 1 });
    await assert.rejects(dead.decide({ session_id: "s", tool: "Read" }), (err) => err instanceof PdpError && err.code === "unreachable");
  });
});

describe("waitForAnswer", { timeout: 120_000 }, () => {
  test("a person's answer ends the wait; a runtime's outcome neither ends it nor allows", async () => {
    await c.sessions.create({ id: "wait-1" });
    const d = await c.decide({ session_id: "wait-1", tool: "shell", args: { command: "make deploy" }, cwd: "/w", tool_use_id: "toolu_wait_1" });
    assert.equal(d.decision, ASK);
    const waiting = c.waitForAnswer(d.decision_id, { timeoutMs: 120_000 });
    const recorded = await c.recordOutcome("toolu_wait_1", "allow_once", "example-runtime");
    assert.equal(recorded.answer, null);
    assert.equal(recorded.outcome?.answer, "allow_once");
    assert.equal(allows(recorded.answer), false);
    await c.answer(d.decision_id, "deny", "console");
    const ev = await waiting;
    assert.equal(ev.answer?.answer, "deny");
    assert.equal(ev.answer?.channel, "console");
    assert.equal(ev.outcome?.channel, "example-runtime");
    assert.equal(allows(ev.answer), false);
  });

  test("allow_once wakes a parked wait", async () => {
    const d = await c.decide({ session_id: "wait-2", tool: "shell", args: { command: "make build" }, cwd: "/w" });
    const waiting = c.waitForAnswer(d.decision_id, { timeoutMs: 120_000 });
    await c.answer(d.decision_id, "allow_once", "console");
    assert.ok(allows((await waiting).answer));
  });

  test("a decision that is not an ask is returned at once", async () => {
    const d = await c.decide({ session_id: "wait-3", tool: "Read", args: { file_path: "/w/a" }, cwd: "/w" });
    assert.equal(d.decision, ALLOW);
    const ev = await c.waitForAnswer(d.decision_id, { timeoutMs: 120_000 });
    assert.equal(ev.decision, ALLOW);
    assert.equal(ev.answer, null);
  });
});

describe("events", { timeout: 120_000 }, () => {
  test("ask, answer, outcome and level events, and resume after a closed stream", async () => {
    const stream = c.events();
    const it = stream[Symbol.asyncIterator]();
    const ready = (await it.next()).value;
    assert.equal(ready.kind, "ready");
    assert.match(ready.id, /^[0-9]+$/);

    const d = await c.decide({ session_id: "ev-1", tool: "shell", args: { command: "make a" }, cwd: "/w", tool_use_id: "toolu_ev_1" });
    const ask = await nextOf(it, "ask", "ev-1");
    assert.equal(ask.decision?.decision_id, d.decision_id);
    assert.equal(ask.decision?.decision, ASK);
    await c.recordOutcome("toolu_ev_1", "allow_once");
    const outcome = await nextOf(it, "outcome", "ev-1");
    assert.equal(outcome.decision?.outcome?.answer, "allow_once");
    assert.equal(outcome.decision?.answer, null);
    await c.answer(d.decision_id, "deny", "console");
    const answer = await nextOf(it, "answer", "ev-1");
    assert.equal(answer.decision?.answer?.answer, "deny");
    await c.sessions.update("ev-1", { permission_level: "READ_WRITE" });
    const level = await nextOf(it, "level", "ev-1");
    assert.equal(level.session?.permission_level, "READ_WRITE");
    assert.equal(stream.lastEventId, level.id);
    await it.return(undefined);

    // While nobody listens, two asks; a stream resumed from the level
    // event gets both, in order, and nothing from before.
    const missed1 = await c.decide({ session_id: "ev-1", tool: "shell", args: { command: "make b" }, cwd: "/w" });
    const missed2 = await c.decide({ session_id: "ev-1", tool: "shell", args: { command: "make c" }, cwd: "/w" });
    const resumed = c.events({ lastEventId: level.id });
    const got = [];
    for await (const ev of resumed) {
      if (ev.kind === "ready") continue;
      got.push(ev);
      if (got.length === 2) break;
    }
    assert.deepEqual(got.map((e) => [e.kind, e.decision?.decision_id]), [["ask", missed1.decision_id], ["ask", missed2.decision_id]]);
    assert.ok(Number(got[0].id) > Number(level.id));
  });

  test("the stream reconnects across a restart of the server and misses nothing", async () => {
    const dir = tempDir();
    const first = await startPDP({ dir });
    const cl = new Client(first.url);
    const stream = cl.events({ maxRetryMs: 500 });
    const it = stream[Symbol.asyncIterator]();
    assert.equal((await it.next()).value.kind, "ready");
    const before = await cl.decide({ session_id: "restart", tool: "shell", args: { command: "make x" }, cwd: "/w" });
    assert.equal((await nextOf(it, "ask", "restart")).decision?.decision_id, before.decision_id);
    await first.stop();
    // The same database and address: the change log's ids go on.
    const second = await startPDP({ dir, addr: first.addr });
    try {
      const afterRestart = await cl.decide({ session_id: "restart", tool: "shell", args: { command: "make y" }, cwd: "/w" });
      const ev = await nextOf(it, "ask", "restart");
      assert.equal(ev.decision?.decision_id, afterRestart.decision_id);
    } finally {
      stream.close();
      await second.stop();
    }
  });

  test("an id that would change the route is refused before sending", async () => {
    for (const id of ["..", ".", ""]) {
      await assert.rejects(c.sessions.get(id), TypeError);
      await assert.rejects(c.answer(id, "allow_once", "console"), TypeError);
    }
  });

  test("a lastEventId that is not a number is refused before connecting", () => {
    assert.throws(() => c.events({ lastEventId: "1; DROP" }), TypeError);
  });
});

describe("tokens", { timeout: 120_000 }, () => {
  test("the bearer token is sent; roles are the server's", async () => {
    const configText = `auth:
  tokens:
    - name: runtime
      roles: [dispatcher]
      env: PDP_TOKEN_RUNTIME
    - name: desktop
      roles: [user]
      env: PDP_TOKEN_DESKTOP
`;
    const srv = await startPDP({ configText, env: { PDP_TOKEN_RUNTIME: "rt-secret-1", PDP_TOKEN_DESKTOP: "desk-secret-1" } });
    try {
      const runtime = new Client(srv.url, { token: "rt-secret-1" });
      const person = new Client(srv.url, { token: "desk-secret-1" });
      const d = await runtime.decide({ session_id: "tok", tool: "shell", args: { command: "make z" }, cwd: "/w" });
      assert.equal(d.decision, ASK);
      await assert.rejects(runtime.answer(d.decision_id, "allow_once", "cli"), (err) => err instanceof PdpError && err.status === 403);
      await assert.rejects(new Client(srv.url).decide({ session_id: "tok", tool: "Read" }), (err) => err instanceof PdpError && err.status === 401);
      const waiting = runtime.waitForAnswer(d.decision_id, { timeoutMs: 120_000 });
      await person.answer(d.decision_id, "allow_once", "desktop");
      assert.ok(allows((await waiting).answer));
      const stream = runtime.events();
      const it = stream[Symbol.asyncIterator]();
      assert.equal((await it.next()).value.kind, "ready");
      await it.return(undefined);
    } finally {
      await srv.stop();
    }
  });
});

describe("fail closed", { timeout: 120_000 }, () => {
  test("a decide answer that is not a complete decision is an error, never a decision", async () => {
    const { createServer } = await import("node:http");
    const bodies = {
      "/bare": '{"decision":"allow"}',
      "/word": JSON.stringify({ decision_id: "x", decision: "yes", need_approval: false, source: "", rule: "", reason: "", capability: null, fingerprint: null, grantable: false, danger: null, revision: "", parts: null }),
      "/text": "allow",
      "/array": "[]",
    };
    let calls = 0;
    const srv = createServer((req, res) => {
      calls++;
      const prefix = req.url?.split("/v1/")[0] ?? "";
      if (prefix === "/moved") {
        res.writeHead(307, { location: `http://127.0.0.1:${srv.address().port}/bare/v1/decide` }).end();
        return;
      }
      if (prefix === "/busy") {
        res.writeHead(503, { "content-type": "application/json" }).end('{"error":{"code":"audit_unavailable","message":"disk full"}}');
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(bodies[prefix] ?? "{}");
    });
    await new Promise((r) => srv.listen(0, "127.0.0.1", r));
    const base = `http://127.0.0.1:${srv.address().port}`;
    try {
      for (const [path, want] of [["/bare", "incomplete_decision"], ["/word", "incomplete_decision"], ["/text", "invalid_answer"], ["/array", "incomplete_decision"]]) {
        await assert.rejects(new Client(base + path).decide({ session_id: "s", tool: "Read" }), (err) => err instanceof PdpError && err.code === want, path);
      }
      // A redirect is not followed (the token would go with it): an error.
      calls = 0;
      await assert.rejects(new Client(base + "/moved", { token: "secret" }).decide({ session_id: "s", tool: "Read" }), (err) => err instanceof PdpError && err.status === 307);
      assert.equal(calls, 1, "the redirect was followed");
      calls = 0;
      await assert.rejects(new Client(base + "/busy", { retries: 3 }).decide({ session_id: "s", tool: "Read" }), (err) => err instanceof PdpError && err.status === 503 && err.code === "audit_unavailable");
      assert.equal(calls, 1, "an HTTP answer is never retried");
    } finally {
      srv.close();
    }
  });
});
