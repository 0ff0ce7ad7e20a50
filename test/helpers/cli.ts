import path from "node:path";
import { execa, type ResultPromise } from "execa";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const BIN = {
  lds: path.join(ROOT, "bin/lds.js"),
  backup: path.join(ROOT, "bin/lds-backup.js"),
  restore: path.join(ROOT, "bin/lds-restore.js"),
};

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Run a built binary (npm test builds first) as an operator would, with no TTY and no stdin. */
export async function runCli(bin: keyof typeof BIN, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const result = await execa("node", [BIN[bin], ...args], { reject: false, env, stdin: "ignore" });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** Start a binary without waiting for it: for servers, signals and crashes. */
export function spawnCli(bin: keyof typeof BIN, args: string[], env: Record<string, string> = {}): ResultPromise {
  return execa("node", [BIN[bin], ...args], { reject: false, env, stdin: "ignore", buffer: true });
}
