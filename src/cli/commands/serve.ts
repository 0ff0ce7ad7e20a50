import { resolveDataDir } from "../../config/data-volume.js";
import { serve } from "../../ops/serve.js";

export async function run(argv: { dataDir?: string; host: string; port: number }): Promise<number> {
  const server = await serve({ dataDir: resolveDataDir(argv.dataDir), host: argv.host, port: argv.port });
  // Resolve only once a signal has closed the server, so that `main` exits after a clean shutdown.
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      server.logger.info({ signal }, "shutting down");
      server.close().then(
        () => resolve(0),
        (err) => {
          server.logger.error({ err }, "shutdown failed");
          resolve(1);
        },
      );
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
}
