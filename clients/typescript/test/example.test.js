// The example: a tool registry whose execute asks the PDP first, against
// a real `pdp serve`. The file system shows which calls ran.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "../index.js";
import { PermissionDenied, ToolRegistry, readFile, shell, withDecisions, writeFile } from "../examples/tool-registry.js";
import { startPDP, tempDir } from "./pdp.js";

/** @type {Awaited<ReturnType<typeof startPDP>>} */
let pdp;
/** @type {Client} */
let client;
let ws = "";
/** @type {ToolRegistry} */
let guarded;
/** @type {string[]} */
const asked = [];
const events = [];

before(async () => {
  pdp = await startPDP();
  client = new Client(pdp.url);
  ws = tempDir("pdp-registry-ws-");
  await client.sessions.create({ id: "registry", workspace: ws, permission_level: "READ_WRITE", command_rules: { "touch denied": "deny" } });
  guarded = withDecisions(new ToolRegistry([readFile, writeFile, shell]), client, {
    sessionId: "registry",
    askTimeoutMs: 60_000,
    onAsk: (d) => asked.push(d.decision_id),
  });
});
after(async () => pdp && (await pdp.stop()));

const ctx = () => ({ cwd: ws, emit: (ev) => events.push(ev) });

/** Runs a call that must be refused and returns the PermissionDenied. */
async function refused(p) {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof PermissionDenied, String(err));
    return err;
  }
  assert.fail("the call ran");
}

/**
 * Starts listening for the next ask of the session (resolves once the
 * stream is open, so no ask made after it is missed) and returns a
 * promise (in an object: an async function's result is never a bare
 * promise) that answers it with answer and resolves to its decision id.
 * @returns {Promise<{answered: Promise<string>}>}
 */
async function answerNextAsk(answer) {
  const stream = client.events();
  const it = stream[Symbol.asyncIterator]();
  const ready = await it.next();
  assert.equal(ready.value?.kind, "ready");
  const answered = (async () => {
    try {
      for (;;) {
        const { value: ev, done } = await it.next();
        if (done) throw new Error("the stream ended");
        if (ev.kind === "ask" && ev.decision?.session_id === "registry") {
          await client.answer(ev.decision.decision_id, answer, "console");
          return ev.decision.decision_id;
        }
      }
    } finally {
      stream.close();
    }
  })();
  return { answered };
}

describe("a guarded tool registry", { timeout: 120_000 }, () => {
  test("allow: the tool runs", async () => {
    await guarded.execute("write_file", { path: "src/app.ts", content: "export {}\n" }, ctx());
    assert.equal(readFileSync(join(ws, "src/app.ts"), "utf8"), "export {}\n");
    assert.equal(await guarded.execute("read_file", { path: "src/app.ts" }, ctx()), "export {}\n");
    assert.equal(events.at(-1).decision.decision, "allow");
  });

  test("deny: outside the workspace, a denied path, a denied command — nothing runs", async () => {
    const outside = await refused(guarded.execute("write_file", { path: "../escaped.txt", content: "x" }, ctx()));
    assert.equal(outside.decision?.decision, "deny");
    assert.ok(!existsSync(join(ws, "..", "escaped.txt")));
    const env = await refused(guarded.execute("write_file", { path: ".env", content: "TOKEN=x" }, ctx()));
    assert.equal(env.decision?.decision, "deny");
    assert.ok(!existsSync(join(ws, ".env")));
    const cmd = await refused(guarded.execute("shell", { command: "touch denied" }, ctx()));
    assert.equal(cmd.decision?.decision, "deny");
    assert.equal(cmd.decision?.rule, "touch denied");
    assert.ok(!existsSync(join(ws, "denied")));
  });

  test("ask: runs once a person allows it", async () => {
    const { answered } = await answerNextAsk("allow_once");
    const out = await guarded.execute("shell", { command: "env touch asked && echo done" }, ctx());
    assert.equal(out.stdout, "done\n");
    assert.ok(existsSync(join(ws, "asked")));
    assert.deepEqual(asked.slice(-1), [await answered]);
  });

  test("ask: a person's deny, or no answer in time, and it does not run", async () => {
    const { answered } = await answerNextAsk("deny");
    const denied = await refused(guarded.execute("shell", { command: "env touch refused" }, ctx()));
    assert.equal(denied.decision?.decision_id, await answered);
    assert.match(denied.message, /denied by a person \(console\)/);
    assert.ok(!existsSync(join(ws, "refused")));

    const impatient = withDecisions(new ToolRegistry([shell]), client, { sessionId: "registry", askTimeoutMs: 100 });
    const unanswered = await refused(impatient.execute("shell", { command: "env touch unanswered" }, ctx()));
    assert.match(unanswered.message, /no answer within 100 ms/);
    assert.ok(!existsSync(join(ws, "unanswered")));
  });

  test("no decision: a tool with the wrong capability, a PDP that is down — nothing runs", async () => {
    let ran = 0;
    const liar = { name: "shell", capability: "fs.read", description: "claims to read", execute: async () => void ran++ };
    const wrong = await refused(withDecisions(new ToolRegistry([liar]), client, { sessionId: "registry" }).execute("shell", { command: "ls" }, ctx()));
    assert.equal(wrong.decision, null);
    assert.match(wrong.message, /capability_mismatch/);

    const gone = await startPDP();
    const url = gone.url;
    await gone.stop();
    const down = withDecisions(new ToolRegistry([{ ...writeFile, execute: async () => void ran++ }]), new Client(url, { retries: 0 }), { sessionId: "registry" });
    const err = await refused(down.execute("write_file", { path: "down.txt", content: "x" }, ctx()));
    assert.match(err.message, /no decision/);
    assert.equal(ran, 0);
  });
});
