import cliProgress from "cli-progress";

/** A byte progress bar on stderr, shown only on a terminal (cron and systemd logs stay clean). */
export function byteProgress(label: string, enabled = process.stderr.isTTY === true) {
  if (!enabled) return { update: (_bytes: number, _total: number) => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: `${label} [{bar}] {percentage}% | {done} / {all}`,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  return {
    update(bytes: number, total: number) {
      if (!started) {
        bar.start(Math.max(total, 1), 0, { done: mib(0), all: mib(total) });
        started = true;
      }
      bar.setTotal(Math.max(total, bytes, 1));
      bar.update(bytes, { done: mib(bytes), all: mib(total) });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
