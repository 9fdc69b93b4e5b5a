/**
 * A client of the toolperm PDP's HTTP API (ESM, no dependencies, Node 20+).
 * Every error means "no decision": a caller must treat it as deny.
 */

export declare const ALLOW: "allow";
export declare const ASK: "ask";
export declare const DENY: "deny";
export declare const ALLOW_ONCE: "allow_once";
export declare const ALLOW_SESSION: "allow_session";
export declare const ALLOW_PROJECT: "allow_project";
export declare const DENY_ANSWER: "deny";
export declare const EVENT_READY: "ready";
export declare const EVENT_ASK: "ask";
export declare const EVENT_ANSWER: "answer";
export declare const EVENT_OUTCOME: "outcome";
export declare const EVENT_LEVEL: "level";

/** allow, ask or deny. */
export type DecisionWord = "allow" | "ask" | "deny";
/** A person's answer to an ask. */
export type AnswerWord = "allow_once" | "allow_session" | "allow_project" | "deny";
/** A session's permission level for LOCAL tools. */
export type Level = "READ_ONLY" | "READ_WRITE" | "SMART" | "FULL";
/** A session's confirmation mode. */
export type Mode = "always-ask" | "on-demand" | "allow-all";
/** Where a session's tools run. */
export type ExecutionMode = "LOCAL" | "CLOUD";
/** What a path pattern does: one action, or one per access. */
export type PathRule = string | { read?: string; write?: string };

/** POST /v1/decide: one tool call a dispatcher asks about. */
export interface DecideRequest {
  session_id: string;
  /** The tool's name as the policy's catalogue knows it (shell, write_file, Bash, mcp__srv__tool, …). */
  tool?: string;
  /** The capability; when tool is given too, they must agree (else 400 capability_mismatch). */
  capability?: string;
  args?: Record<string, unknown>;
  /** The directory the call runs in (absolute). */
  cwd?: string;
  /** The runtime's own id of the call, for recordOutcome. */
  tool_use_id?: string;
  /** The workspace's .toolperm/policy.json as a hook read it, for a PDP that cannot read the workspace: a layer that only tightens. */
  project_policy?: { dir: string; content?: string; error?: string };
}

/** The danger verdict of a shell command and who gave it. */
export interface Danger {
  verdict: "SAFE" | "DANGEROUS";
  by: string;
}

/** One step of the decision chain. */
export interface TraceStep {
  step: string;
  outcome: "pass" | "decided" | "not_reached";
}

/** The rule one layer resolved to. */
export interface RuleMatch {
  pattern: string;
  action: string;
  layer?: string;
  path?: string;
  access?: string;
}

/** One part of a compound shell command and how it was judged. */
export interface Part {
  text: string;
  fingerprint: string | null;
  decision: DecisionWord | null;
  source: string | null;
  rule: string | null;
}

/** The PDP's answer to a DecideRequest. */
export interface Decision {
  decision_id: string;
  decision: DecisionWord;
  need_approval: boolean;
  source: string;
  rule: string;
  reason: string;
  capability: string | null;
  fingerprint: string | null;
  grantable: boolean;
  /** The fingerprints allow_session would grant: the call's, or each part's not already allowed; [] when not grantable. */
  would_grant: string[];
  danger: Danger | null;
  revision: string;
  parts: Part[] | null;
  /** The flow labels the call carries (docs/design.md §4, "Flow"); [] for none. */
  labels: FlowLabelName[];
  /** With explain only. */
  trace?: TraceStep[];
  matches?: Record<string, RuleMatch>;
}

/** A person's answer to an ask. */
export interface Answer {
  /** A person's answer, or "expired" (channel "pdp"): nobody answered within asks.expire_after. */
  answer: AnswerWord | "expired";
  channel: string;
  answered_at: string;
  grant_id?: number;
  /** The token of the person who answered ("link:SINK" for a notification's answer link), or the e-mail (else the subject) of a person signed in with the OpenID provider. */
  answered_by?: string;
  /** The subject (sub claim) of a person signed in with the OpenID provider who answered; absent for a token's answer. */
  answered_by_subject?: string;
  /** Never set by a current server: an older server's record of a runtime's report, which allows nothing. */
  by?: string;
}

/** What a runtime reported became of an ask: a record, never a permission. */
export interface Outcome {
  answer: "allow_once" | "deny";
  channel: string;
  by: string;
  recorded_at: string;
}

/** One audit event: the decision, its call, the person's answer and the runtime's outcome. */
export interface Event extends Decision {
  time: string;
  session_id: string;
  tool: string;
  args: Record<string, unknown> | null;
  cwd?: string;
  tool_use_id?: string;
  latency_us: number;
  answer: Answer | null;
  outcome: Outcome | null;
  /** For asks: the runtimes parked on ?wait= for this one (empty when nobody waits). */
  waiting?: { by: string; since: string }[];
  /** In lists and the event stream: a string was cut (GET /v1/decisions/{id} has it whole). */
  truncated?: boolean;
}

/** A page of the audit trail, newest first. */
export interface Page {
  decisions: Event[];
  next_before?: string;
}

/** POST /v1/sessions; empty fields take the defaults. */
export interface NewSession {
  id?: string;
  permission_level?: Level;
  mode?: Mode;
  execution_mode?: ExecutionMode;
  workspace?: string;
  rules?: Record<string, string>;
  command_rules?: Record<string, string>;
  path_rules?: Record<string, PathRule>;
  parent_session_id?: string;
  scope?: string[];
  assessor_model?: string;
}

/** A stored session. */
export interface Session {
  id: string;
  permission_level: Level;
  mode: Mode;
  execution_mode: ExecutionMode;
  workspace: string;
  rules: Record<string, string>;
  path_rules: Record<string, PathRule> | null;
  command_rules: Record<string, string>;
  parent_session_id?: string;
  scope?: string[];
  assessor_model?: string;
  owner?: string;
  created_at: string;
  updated_at: string;
  /** GET /v1/sessions/{id} only: the flow labels of the session's tree, in the order they were set. */
  labels?: FlowLabel[];
}

/** A flow label of a session: what the session's calls have done. */
export type FlowLabelName = "untrusted_input" | "sensitive_read" | "external_effect";

/** A flow label of a session's tree and the call that set it first. */
export interface FlowLabel {
  label: FlowLabelName | "trifecta_accepted";
  decision_id: string;
  /** The session whose call set it: a sub-agent's label is its tree's. */
  session_id: string;
  time: string;
  /** The call's tool and what it touched. */
  summary: string;
}

/** PATCH /v1/sessions/{id}: absent fields stay as they are. */
export interface SessionChange {
  permission_level?: Level;
  mode?: Mode;
  rules?: Record<string, string>;
  command_rules?: Record<string, string>;
  path_rules?: Record<string, PathRule>;
}

/** A stored grant. */
export interface Grant {
  id: number;
  session_id: string;
  capability: string;
  fingerprint: string;
  decision_id?: string;
  scope: "session" | "project";
  workspace?: string;
  created_at: string;
}

/** Selects audit events; absent fields select everything. */
export interface Filter {
  sessionId?: string;
  decision?: DecisionWord;
  source?: string;
  since?: Date | string;
  /** A decision id: only older ones. */
  before?: string;
  limit?: number;
}

/** How a Client talks to the PDP. */
export interface ClientOptions {
  /** Sent as a bearer token. */
  token?: string;
  /** One request's time limit (default 10 000 ms); a wait adds its own length. */
  timeoutMs?: number;
  /** Retries of a request that got no answer at all (default 2; an HTTP answer is never retried). */
  retries?: number;
  /** The first retry's delay, doubled each time (default 100 ms). */
  backoffMs?: number;
  /** Replaces globalThis.fetch. */
  fetch?: typeof fetch;
}

/** Per request. */
export interface RequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Options of decide. */
export interface DecideOptions extends RequestOptions {
  /** Ask for the step-by-step trace and the rules matched. */
  explain?: boolean;
}

/** Options of events. */
export interface EventsOptions {
  /** Start right after this event (an id the stream sent). */
  lastEventId?: string;
  /** Reconnect with the last id when the connection ends (default true). */
  reconnect?: boolean;
  /** The longest pause between reconnects (default 30 000 ms). */
  maxRetryMs?: number;
  /** Ends the stream. */
  signal?: AbortSignal;
}

/** One event of the live stream. */
export interface LiveEvent {
  /** What to resume after this event with. */
  id: string;
  /** ready, ask, answer, outcome or level (or another kind a later server sends). */
  kind: string;
  /** ask, answer and outcome events: the decision as GET /v1/decisions lists it. */
  decision?: Event;
  /** level events: the session. */
  session?: Session;
  /** The event's data as sent. */
  data: string;
}

/** An error answer of the API (status 0: no answer came; code says why). */
export declare class PdpError extends Error {
  readonly status: number;
  /** The API's stable code (invalid_session_id, not_grantable, resume_too_old, …) or the client's own (unreachable, timeout, incomplete_decision, invalid_answer, …). */
  readonly code: string;
  /** The message a person can act on. */
  readonly detail: string;
  constructor(status: number, code: string, message: string, cause?: unknown);
}

/** Whether a person's answer lets the call run (allow_once, allow_session, allow_project). */
export declare function allows(answer: Answer | null | undefined): boolean;

/** The live event stream: iterate with for await; it reconnects with Last-Event-ID. */
export declare class EventStream implements AsyncIterable<LiveEvent> {
  /** The id of the last event read (or the one it resumed from). */
  readonly lastEventId: string;
  /** Ends the stream. */
  close(): void;
  [Symbol.asyncIterator](): AsyncGenerator<LiveEvent, void, undefined>;
}

/** A client of one PDP; safe to share. */
export declare class Client {
  constructor(baseURL: string, options?: ClientOptions);
  /** Whether a call may run; the answer is checked to be a complete decision. */
  decide(req: DecideRequest, opts?: DecideOptions): Promise<Decision>;
  /** One audit event; with waitMs an unanswered ask is held until answered or the wait ends. */
  decision(decisionId: string, opts?: { waitMs?: number; signal?: AbortSignal }): Promise<Event>;
  /** Waits up to timeoutMs for a person's answer; the event's answer is null when none came. */
  waitForAnswer(decisionId: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<Event>;
  /** Records a person's answer to an ask (a user's channel). */
  answer(decisionId: string, answer: AnswerWord, channel: string, opts?: RequestOptions): Promise<Event>;
  /** Reports what became of an ask the runtime showed in its own prompt: a record, never a permission. */
  recordOutcome(toolUseId: string, answer: "allow_once" | "deny", channel?: string, opts?: RequestOptions): Promise<Event>;
  /** A page of the audit trail. */
  decisions(filter?: Filter, opts?: RequestOptions): Promise<Page>;
  /** The live event stream. */
  events(opts?: EventsOptions): EventStream;
  /** Sessions. */
  readonly sessions: {
    create(s: NewSession, opts?: RequestOptions): Promise<Session>;
    get(id: string, opts?: RequestOptions): Promise<Session>;
    update(id: string, change: SessionChange, opts?: RequestOptions): Promise<Session>;
  };
  /** The grants of a session tree. */
  readonly grants: {
    list(sessionId: string, opts?: RequestOptions): Promise<Grant[]>;
    revoke(sessionId: string, grantId: number, opts?: RequestOptions): Promise<void>;
  };
}
