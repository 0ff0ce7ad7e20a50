import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api.js";
import { ErrorMessage } from "../components/error-message.js";
import { DataTable } from "../components/table-wrap.js";
import { useLoad } from "../components/use-load.js";
import { bytes, dateTime, duration, rate } from "../format.js";
import { BASE } from "../router.js";
import type { ArchiveListing, BackupRun, BackupRuns, BackupStatus, DrillRecord } from "../../server/api-types.js";
import { BackupSettings } from "./backup-settings.js";

/** Settings, Back up now with live progress, the run history and the archives. */
export function BackupsPage() {
  const status = useLoad(() => api<BackupStatus>("GET", "/api/backup/status"), 1000);
  const runs = useLoad(() => api<BackupRuns>("GET", "/api/backup/runs"), 5000);
  const archives = useLoad(() => api<ArchiveListing>("GET", "/api/backups"), 15_000);
  const [startError, setStartError] = useState<unknown>();
  const running = status.data?.running ?? false;
  const wasRunning = useRef(false);
  // A run that just finished: show it in the history and the archive list at once.
  useEffect(() => {
    if (wasRunning.current && !running) void Promise.all([runs.reload(), archives.reload()]);
    wasRunning.current = running;
  }, [running]);

  return (
    <section>
      <h1>Backups</h1>
      <div class="panel" aria-live="polite">
        <h2>Back up now</h2>
        <ErrorMessage error={status.error} />
        <Progress status={status.data} />
        <ErrorMessage error={startError} />
        <button
          type="button"
          class="primary"
          disabled={running || !status.data}
          onClick={async () => {
            setStartError(undefined);
            try {
              await api("POST", "/api/backup");
              await status.reload();
            } catch (err) {
              setStartError(err);
            }
          }}
        >
          {running ? "Backing up…" : "Back up now"}
        </button>
        {status.data && <p class="help">Next scheduled backup: {status.data.nextRun ? dateTime(status.data.nextRun) : "none (schedule off)"}</p>}
        {status.data && <Skipped status={status.data} />}
        {status.data && <Drill last={status.data.lastDrill} next={status.data.nextDrill} />}
      </div>

      <h2>Settings</h2>
      <BackupSettings onSaved={() => void Promise.all([status.reload(), archives.reload()])} />

      <h2 id="history">Run history</h2>
      <ErrorMessage error={runs.error} />
      <History runs={runs.data?.runs} />

      <h2 id="archives">Archives</h2>
      <ErrorMessage error={archives.error} />
      <Archives listing={archives.data} />
    </section>
  );
}

/** Phase, bytes and rate of the running backup, from the status the server keeps (so it survives a reload). */
function Progress({ status }: { status: BackupStatus | undefined }) {
  const samples = useRef<Array<{ at: number; bytes: number }>>([]);
  const progress = status?.progress;
  if (!progress) {
    samples.current = [];
    return <p class="progress-idle">{status?.lastResult ? `Last run: ${status.lastResult.ok ? "succeeded" : "failed"} ${dateTime(status.lastResult.finishedAt)}.` : "No backup has run yet."}</p>;
  }
  samples.current = [...samples.current.slice(-5), { at: Date.now(), bytes: progress.bytes }];
  const first = samples.current[0]!;
  const last = samples.current[samples.current.length - 1]!;
  const elapsed = (last.at - first.at) / 1000;
  const speed = elapsed > 0 ? (last.bytes - first.bytes) / elapsed : 0;
  const percent = progress.totalBytes > 0 ? Math.min(100, Math.round((progress.bytes / progress.totalBytes) * 100)) : null;
  return (
    <div class="progress" data-testid="backup-progress">
      <p>
        <strong>{progress.phase}</strong> · {bytes(progress.bytes)}
        {progress.totalBytes > 0 && ` of ${bytes(progress.totalBytes)}`} · {speed > 0 ? rate(speed) : "…"} · started {dateTime(progress.startedAt)} ({progress.trigger})
      </p>
      <progress max={100} value={percent ?? undefined} aria-label="Backup progress">
        {percent ?? ""}%
      </progress>
    </div>
  );
}

/** A scheduled run skipped since the last run (another backup held the volume), and why. */
function Skipped({ status }: { status: BackupStatus }) {
  const skipped = status.lastSkipped;
  if (!skipped || (status.lastResult && skipped.at < status.lastResult.startedAt)) return null;
  return (
    <p class="help" data-testid="last-skipped">
      Skipped {dateTime(skipped.at)}: {skipped.reason}
    </p>
  );
}

/** The last restore drill the server ran (Settings: Restore drill), and when the daily one runs next. */
function Drill({ last, next }: { last: DrillRecord | null; next: string | null }) {
  if (!last && !next) return null;
  const when = last && `${last.archive}, ${dateTime(last.at)}`;
  return (
    <div class="help" data-testid="restore-drill">
      Last restore drill:{" "}
      {!last ? (
        "none yet"
      ) : last.skipped ? (
        `skipped (${when}): ${last.skipped}`
      ) : last.ok ? (
        <>
          <span class="badge ok">passed</span> {when}
          {last.durationMs !== undefined && ` in ${duration(last.durationMs)}`}
        </>
      ) : (
        <>
          <span class="badge bad">failed</span> {when}: {last.error?.message}
        </>
      )}
      {next && <span> · next {dateTime(next)}</span>}
    </div>
  );
}

function History({ runs }: { runs: BackupRun[] | undefined }) {
  if (!runs) return <p class="loading">Loading…</p>;
  if (runs.length === 0) return <p>No runs yet: the server's backups are listed here (the last 50).</p>;
  return (
    <DataTable label="Run history" columns={["Started", "Trigger", "Duration", "Size", "Archive", "Result"]} testId="run-history" caption={`The server's last ${runs.length} backups, newest first`}>
      {runs.map((run) => (
        <tr key={run.startedAt}>
          <td>{dateTime(run.startedAt)}</td>
          <td>{run.trigger}</td>
          <td>{duration(run.durationMs)}</td>
          <td>{run.size !== undefined ? bytes(run.size) : "—"}</td>
          <td class="path">{run.archive ?? "—"}</td>
          <td>
            {run.ok ? (
              <span class="badge ok">succeeded</span>
            ) : (
              <div class="run-error">
                <span class="badge bad">failed</span> {run.error?.message}
                {run.error?.hint && <p class="hint">{run.error.hint}</p>}
              </div>
            )}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

function Archives({ listing }: { listing: ArchiveListing | undefined }) {
  if (!listing) return <p class="loading">Loading…</p>;
  const local = listing.archives[0] ? !listing.archives[0].location.startsWith("s3://") : true;
  return (
    <>
      <p class="help">At {listing.destination}</p>
      {listing.archives.length === 0 ? (
        <p>No archives there yet.</p>
      ) : (
        <DataTable label="Archives" columns={["Archive", "Date", "Size", ""]} testId="archives">
          {listing.archives.map((a) => (
            <tr key={a.name}>
              <td class="path">{a.name}</td>
              <td>{dateTime(a.modifiedAt)}</td>
              <td>{bytes(a.size)}</td>
              <td class="row-actions">
                {local && (
                  <a class="button" href={`/api/backups/${encodeURIComponent(a.name)}/download`} download={a.name} aria-label={`Download ${a.name}`}>
                    Download
                  </a>
                )}
                <a class="button" href={`${BASE}/restore?archive=${encodeURIComponent(a.name)}`} aria-label={`Restore ${a.name}`}>
                  Restore…
                </a>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}
