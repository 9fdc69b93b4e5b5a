// Type-checked (tsc --noEmit, tsconfig.json), never run: index.d.ts
// describes the API a TypeScript runtime uses, and refuses misuse.
import { Client, PdpError, allows, type Decision, type DecideRequest, type Event, type LiveEvent } from "../index.js";

async function runtime(pdp: Client): Promise<void> {
  const req: DecideRequest = { session_id: "s1", tool: "shell", args: { command: "make check" }, cwd: "/w", tool_use_id: "t1" };
  const d: Decision = await pdp.decide(req, { explain: true });
  const word: "allow" | "ask" | "deny" = d.decision;
  const fp: string | null = d.fingerprint;
  if (d.decision === "ask") {
    const ev: Event = await pdp.waitForAnswer(d.decision_id, { timeoutMs: 60_000 });
    const mayRun: boolean = allows(ev.answer);
    void mayRun;
  }
  await pdp.answer(d.decision_id, "allow_session", "console");
  await pdp.recordOutcome("t1", "allow_once", "my-runtime");
  const page = await pdp.decisions({ sessionId: "s1", decision: "ask", since: new Date(), limit: 10 });
  const ids: string[] = page.decisions.map((e) => e.decision_id);
  const s = await pdp.sessions.create({ id: "s2", permission_level: "READ_WRITE", path_rules: { ".env": "deny", "docs/**": { write: "ask" } } });
  await pdp.sessions.update(s.id, { mode: "always-ask" });
  for (const g of await pdp.grants.list("s2")) await pdp.grants.revoke("s2", g.id);
  const stream = pdp.events({ lastEventId: "41", signal: AbortSignal.timeout(1000) });
  for await (const ev of stream) {
    const e: LiveEvent = ev;
    if (e.kind === "ask" && e.decision) void e.decision.reason;
    if (e.kind === "level" && e.session) void e.session.permission_level;
  }
  const resumeFrom: string = stream.lastEventId;
  void [word, fp, ids, resumeFrom];

  // @ts-expect-error an answer is one of the four words
  await pdp.answer(d.decision_id, "maybe", "console");
  // @ts-expect-error a runtime's outcome is allow_once or deny, never a grant
  await pdp.recordOutcome("t1", "allow_session");
  // @ts-expect-error a decide request names its session
  await pdp.decide({ tool: "Read" });
  // @ts-expect-error waiting needs a bound
  await pdp.waitForAnswer(d.decision_id);
  // @ts-expect-error levels are the four names
  await pdp.sessions.update("s2", { permission_level: "ROOT" });
}

function onError(err: unknown): string {
  return err instanceof PdpError ? `${err.status} ${err.code}: ${err.detail}` : String(err);
}

void runtime(new Client("http://127.0.0.1:8181", { token: "t", timeoutMs: 5000, retries: 1 }));
void onError;
