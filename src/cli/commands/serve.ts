import { spawn } from "node:child_process";
import { resolveDataDir } from "../../config/data-volume.js";
import { EXIT } from "../../errors.js";
import { serverSettingsFromEnv } from "../../config/server-settings.js";
import { serve } from "../../server/start.js";

/**
 * Runs until SIGTERM/SIGINT (exit 0) or until the server asks for a restart to apply a staged restore: under a
 * supervisor (systemd sets INVOCATION_ID; or LDS_SUPERVISED=1) it exits with 75 and is started again; alone, it
 * starts its own successor, which waits for server.lock, and exits 0. See docs/operations.md.
 */
export async function run(argv: { dataDir?: string; host: string; port: number }): Promise<number> {
  const settings = serverSettingsFromEnv(process.env);
  const server = await serve({ dataDir: resolveDataDir(argv.dataDir, process.env), host: argv.host, port: argv.port, settings });
  return new Promise((resolve) => {
    let stopping = false;
    const stop = async (why: string, code: number, then?: () => void) => {
      if (stopping) return;
      stopping = true;
      server.logger.info({ why }, "shutting down");
      try {
        await server.close();
        then?.();
        resolve(code);
      } catch (err) {
        server.logger.error({ err }, "shutdown failed");
        resolve(EXIT.internal);
      }
    };
    // `on`, not `once`: while the shutdown runs, a listener must stay. execa's cleanup (signal-exit, for a git child
    // of a running job) re-sends the signal to this process when it finds itself the signal's last listener, which
    // killed a replica mid-shutdown before its jobs' leases were given back. `stop` runs once whatever arrives.
    process.on("SIGTERM", () => void stop("SIGTERM", EXIT.ok));
    process.on("SIGINT", () => void stop("SIGINT", EXIT.ok));
    void server.restartRequested.then((reason) => {
      if (settings.supervised) {
        server.logger.warn({ reason }, `restarting: exiting with ${EXIT.restart} for the supervisor to start LDS again`);
        return stop(reason, EXIT.restart);
      }
      server.logger.warn({ reason }, "restarting: starting a new server process on the same volume");
      return stop(reason, EXIT.ok, () => {
        spawn(process.execPath, process.argv.slice(1), {
          detached: true,
          stdio: "inherit",
          env: { ...process.env, LDS_RESTART_WAIT_MS: "30000" },
        }).unref();
      });
    });
  });
}
