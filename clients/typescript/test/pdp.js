// Starts a real `pdp serve` for the tests: the binary named by PDP_BIN
// (the Go test that runs these builds it with go build -o), on a free
// loopback port, with a SQLite file in a temporary directory.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
/** The repository's config.yaml. */
export const repoConfig = process.env.PDP_CONFIG || join(here, "..", "..", "..", "config.yaml");

/** A temporary directory, removed when the process exits. */
export function tempDir(prefix = "pdp-ts-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Starts `pdp serve` and resolves once it serves.
 * @param {{dir?: string, addr?: string, config?: string, configText?: string, env?: Record<string,string>}} [o]
 * @returns {Promise<{url: string, addr: string, dir: string, stop: () => Promise<void>, log: () => string}>}
 */
export async function startPDP(o = {}) {
  const bin = process.env.PDP_BIN;
  if (!bin) throw new Error("PDP_BIN names no pdp binary: run these tests through go test ./clients/typescript");
  const dir = o.dir ?? tempDir();
  let config = o.config ?? repoConfig;
  if (o.configText) {
    config = join(dir, "config.yaml");
    writeFileSync(config, o.configText);
  }
  const child = spawn(bin, ["serve", "--addr", o.addr ?? "127.0.0.1:0", "--db", join(dir, "pdp.db"), "--config", config], {
    env: { ...process.env, ...o.env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pdp serve did not start within 60 s:\n${log}`)), 60_000);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      log += chunk;
      const m = /msg=serving addr=(http:\/\/\S+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`pdp serve exited (${code}) before serving:\n${log}`));
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  process.on("exit", () => child.kill("SIGKILL"));
  return { url, addr: url.replace(/^http:\/\//, ""), dir, stop, log: () => log };
}
