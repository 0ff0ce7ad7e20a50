/**
 * An AbortSignal fired by Ctrl-C or SIGTERM, so that a long operation stops at a safe point and cleans up
 * instead of dying with half-written files. A second Ctrl-C does not force anything: cleanup must finish.
 */
export function interruptSignal(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = () => {
    if (!controller.signal.aborted) process.stderr.write("\nInterrupted: stopping and cleaning up…\n");
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
