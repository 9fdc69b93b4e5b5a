// @ts-check
/**
 * A tool registry whose every execute asks the PDP first — the shape of
 * a capability runtime: each Tool has a name, the capability it
 * exercises, a description and execute(args, ctx); only a decision of
 * the PDP lets execute run.
 *
 *   allow → the tool runs
 *   deny  → it does not; PermissionDenied carries the PDP's reason
 *   ask   → onAsk tells the person (the console's inbox, `pdp answer ID`),
 *           and the call waits up to askTimeoutMs for their answer:
 *           it runs only on allow_once / allow_session / allow_project
 *   error → it does not run: no decision is a deny
 *
 * Usage:
 *
 *   const registry = new ToolRegistry([readFile, writeFile, shell]);
 *   const guarded = withDecisions(registry, new Client("http://127.0.0.1:8181"), { sessionId: "s1" });
 *   await guarded.execute("write_file", { path: "app.ts", content }, { cwd: "/home/me/proj" });
 */
import { execFile } from "node:child_process";
import { mkdir, readFile as fsReadFile, writeFile as fsWriteFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { allows, PdpError } from "../index.js";

/**
 * @typedef {object} ToolCtx
 * @property {string} cwd the root of every file access
 * @property {AbortSignal} [signal] cancels the call (and a wait for an answer)
 * @property {string} [callId] the runtime's id of the call, kept with the decision
 * @property {(ev: {type: "permission", tool: string, decision: import("../index.js").Decision}) => void} [emit] hands events to the runtime's loop
 */

/**
 * @template [A=any]
 * @template [R=unknown]
 * @typedef {object} Tool
 * @property {string} name the tool's name, as the PDP's tool catalogue knows it
 * @property {string} capability the capability it exercises (fs.write, shell.exec, …)
 * @property {string} description
 * @property {(args: A, ctx: ToolCtx) => Promise<R>} execute
 */

/** A call the PDP did not let run. */
export class PermissionDenied extends Error {
  /**
   * @param {string} message
   * @param {import("../index.js").Decision | null} decision null when there was no decision
   * @param {unknown} [cause]
   */
  constructor(message, decision, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "PermissionDenied";
    this.decision = decision;
  }
}

/** Tools by name. */
export class ToolRegistry {
  /** @type {Map<string, Tool>} */
  #tools = new Map();

  /** @param {Tool[]} [tools] */
  constructor(tools = []) {
    for (const t of tools) this.register(t);
  }

  /** @param {Tool} tool */
  register(tool) {
    if (!tool.name || !tool.capability) throw new TypeError("a tool needs a name and a capability");
    if (this.#tools.has(tool.name)) throw new Error(`a tool named ${tool.name} is registered already`);
    this.#tools.set(tool.name, tool);
    return this;
  }

  /** @param {string} name */
  get(name) {
    return this.#tools.get(name);
  }

  list() {
    return [...this.#tools.values()];
  }

  /**
   * @param {string} name
   * @param {any} args
   * @param {ToolCtx} ctx
   */
  execute(name, args, ctx) {
    const tool = this.#tools.get(name);
    if (!tool) return Promise.reject(new Error(`no tool named ${name}`));
    return tool.execute(args, ctx);
  }
}

/**
 * A registry of the same tools, each of whose execute runs only when the
 * PDP allows the call (or a person allows its ask).
 * @param {ToolRegistry} registry
 * @param {import("../index.js").Client} pdp
 * @param {{sessionId: string, askTimeoutMs?: number, onAsk?: (d: import("../index.js").Decision, tool: Tool) => void}} opts
 */
export function withDecisions(registry, pdp, opts) {
  const askTimeoutMs = opts.askTimeoutMs ?? 60_000;
  return new ToolRegistry(
    registry.list().map((tool) => ({
      ...tool,
      /** @param {any} args @param {ToolCtx} ctx */
      async execute(args, ctx) {
        let d;
        try {
          // Both the tool and its capability: a tool registered with
          // the wrong capability is refused (capability_mismatch).
          d = await pdp.decide(
            { session_id: opts.sessionId, tool: tool.name, capability: tool.capability, args, cwd: ctx.cwd, tool_use_id: ctx.callId },
            { signal: ctx.signal },
          );
        } catch (err) {
          throw new PermissionDenied(`${tool.name}: no decision, so not run: ${err instanceof PdpError ? err.message : String(err)}`, null, err);
        }
        ctx.emit?.({ type: "permission", tool: tool.name, decision: d });
        if (d.decision === "allow") return tool.execute(args, ctx);
        if (d.decision === "ask") {
          opts.onAsk?.(d, tool);
          let ev;
          try {
            ev = await pdp.waitForAnswer(d.decision_id, { timeoutMs: askTimeoutMs, signal: ctx.signal });
          } catch (err) {
            throw new PermissionDenied(`${tool.name}: waiting for an answer failed, so not run: ${String(err)}`, d, err);
          }
          if (allows(ev.answer)) return tool.execute(args, ctx);
          const why = ev.answer ? `denied by a person (${ev.answer.channel})` : `no answer within ${askTimeoutMs} ms`;
          throw new PermissionDenied(`${tool.name}: ${why} — decision ${d.decision_id}: ${d.reason}`, d);
        }
        throw new PermissionDenied(`${tool.name}: ${d.reason} — decision ${d.decision_id}`, d);
      },
    })),
  );
}

/**
 * The path a file tool works on, inside ctx.cwd. The PDP has judged the
 * path already; resolving it against cwd here keeps the tool honest too.
 * @param {ToolCtx} ctx
 * @param {string} path
 */
function inCwd(ctx, path) {
  return isAbsolute(path) ? path : resolve(ctx.cwd, path);
}

/** @type {Tool<{path: string}, string>} */
export const readFile = {
  name: "read_file",
  capability: "fs.read",
  description: "Reads a text file.",
  execute: ({ path }, ctx) => fsReadFile(inCwd(ctx, path), { encoding: "utf8", signal: ctx.signal }),
};

/** @type {Tool<{path: string, content: string}, void>} */
export const writeFile = {
  name: "write_file",
  capability: "fs.write",
  description: "Writes a text file, creating its directory.",
  async execute({ path, content }, ctx) {
    const file = inCwd(ctx, path);
    await mkdir(dirname(file), { recursive: true });
    await fsWriteFile(file, content, { signal: ctx.signal });
  },
};

/** @type {Tool<{command: string}, {stdout: string, stderr: string}>} */
export const shell = {
  name: "shell",
  capability: "shell.exec",
  description: "Runs a command with sh -c in the working directory.",
  execute: ({ command }, ctx) =>
    new Promise((resolvePromise, reject) => {
      execFile("sh", ["-c", command], { cwd: ctx.cwd, signal: ctx.signal, timeout: 60_000 }, (err, stdout, stderr) =>
        err ? reject(err) : resolvePromise({ stdout, stderr }),
      );
    }),
};
