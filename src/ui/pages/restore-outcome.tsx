import { useEffect, useState } from "preact/hooks";
import { api } from "../api.js";
import { dateTime } from "../format.js";
import type { RestoreOutcome, RestoreOutcomeAnswer } from "../../server/api-types.js";

/** "Staged, restarting": asks until the server is back and has recorded the outcome of this very restore. */
export function WaitForOutcome({ stagedAt, onDone, onAgain }: { stagedAt: string; onDone: () => void; onAgain: () => void }) {
  const [outcome, setOutcome] = useState<RestoreOutcome>();
  const [attempts, setAttempts] = useState(0);
  useEffect(() => {
    if (outcome) return;
    let stopped = false;
    const poll = async () => {
      while (!stopped) {
        try {
          const answer = await api<RestoreOutcomeAnswer>("GET", "/api/restore/outcome");
          if (answer.outcome && answer.outcome.stagedAt === stagedAt) {
            setOutcome(answer.outcome);
            onDone();
            return;
          }
        } catch {
          // Down while it restarts: keep asking. A lost session shows sign-in, and this page again after it.
        }
        setAttempts((n) => n + 1);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    };
    void poll();
    return () => {
      stopped = true;
    };
  }, [stagedAt, outcome]);
  if (!outcome) {
    return (
      <div class="panel" role="status" data-testid="restore-waiting">
        <h2>Staged, restarting</h2>
        <p>
          The restore was staged at {dateTime(stagedAt)}. The server is restarting to apply it; this page waits for it to come back{attempts > 0 ? ` (${attempts} s)` : ""}.
        </p>
        <p class="help">Archives are checked again before anything is replaced: a large one takes a while.</p>
      </div>
    );
  }
  return (
    <div class="panel" data-testid="restore-outcome">
      <h2>{outcome.result === "applied" ? "Restore applied" : "Restore failed"}</h2>
      <Outcome outcome={outcome} />
      <button type="button" onClick={onAgain}>
        Done
      </button>
    </div>
  );
}

/** The persisted record of a staged restore, as the server wrote it when it came back. */
export function Outcome({ outcome }: { outcome: RestoreOutcome }) {
  return (
    <dl>
      <dt>Archive</dt>
      <dd>{outcome.source}</dd>
      <dt>Requested by</dt>
      <dd>{outcome.requestedBy ?? "—"}</dd>
      <dt>Finished</dt>
      <dd>{dateTime(outcome.finishedAt)}</dd>
      {outcome.result === "applied" ? (
        <>
          <dt>Archive created</dt>
          <dd>{dateTime(outcome.archiveCreatedAt)}</dd>
          <dt>Libraries</dt>
          <dd>{outcome.libraries}</dd>
          <dt>Previous data kept in</dt>
          <dd class="path" data-testid="pre-restore-dir">
            {outcome.preRestoreDir ?? "(the volume was empty)"}
          </dd>
        </>
      ) : (
        <>
          <dt>Reason</dt>
          <dd>{outcome.error}</dd>
          <dt>Staged archive kept in</dt>
          <dd class="path">{outcome.keptIn}</dd>
          <dd class="hint">The server runs on the data it had. Fix the cause, then restore again (or use lds-restore with the kept archive).</dd>
        </>
      )}
    </dl>
  );
}
