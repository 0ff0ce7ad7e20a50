import { api } from "../api.js";
import { ErrorMessage } from "../components/error-message.js";
import { useLoad } from "../components/use-load.js";
import { bytes, dateTime, duration } from "../format.js";
import { BASE } from "../router.js";
import type { Overview } from "../../server/api-types.js";

/** Where each warning is acted on. */
const WARNING_PAGES: Record<string, { page: string; label: string }> = {
  backup_failing: { page: "/backups", label: "Open Backups" },
  no_backup_yet: { page: "/backups", label: "Open Backups" },
  restore_drill_failed: { page: "/backups", label: "Open Backups" },
  library_failing: { page: "/libraries", label: "Open Libraries" },
  connection_revoked: { page: "/connections", label: "Open Connections" },
};

const LICENCE_WORDS: Record<string, string> = { community: "Community edition (no expiry)", valid: "Valid", expired: "Expired", invalid: "Cannot be read" };

/** The state of this server at a glance, and what needs action first. */
export function OverviewPage() {
  const { data, error } = useLoad(() => api<Overview>("GET", "/api/overview"), 10_000);
  return (
    <section aria-busy={!data}>
      <h1>Overview</h1>
      <ErrorMessage error={error} />
      <h2>Needs action</h2>
      {!data && !error && <p class="loading">Checking…</p>}
      {data && data.warnings.length === 0 && <p class="ok-note">Nothing needs action.</p>}
      {data && data.warnings.length > 0 && (
        <ul class="warnings">
          {data.warnings.map((w, i) => (
            <li key={i} class="warning" data-code={w.code}>
              <p>{w.message}</p>
              {w.hint && <p class="hint">{w.hint}</p>}
              {WARNING_PAGES[w.code] && <a href={BASE + WARNING_PAGES[w.code]!.page}>{WARNING_PAGES[w.code]!.label}</a>}
            </li>
          ))}
        </ul>
      )}
      <div class="cards">
        <article class="card">
          <h2>Server</h2>
          <dl>
            <dt>Version</dt>
            <dd>{data?.version ?? "…"}</dd>
            <dt>Schema</dt>
            <dd>{data?.schemaVersion ?? "…"}</dd>
            <dt>Licence</dt>
            <dd>
              {data ? (LICENCE_WORDS[data.licence.state] ?? data.licence.state) : "…"}
              {data?.licence.licensee ? `, ${data.licence.licensee}` : ""}
            </dd>
            <dt>Expires</dt>
            <dd>{data ? (data.licence.expiresAt ? `${dateTime(data.licence.expiresAt)} (${data.licence.daysLeft} days)` : "never") : "…"}</dd>
          </dl>
        </article>
        <article class="card">
          <h2>Data volume</h2>
          <dl>
            <dt>Path</dt>
            <dd class="path">{data?.volume.path ?? "…"}</dd>
            <dt>Data</dt>
            <dd>{data ? bytes(data.volume.bytes) : "…"}</dd>
            <dt>Local archives</dt>
            <dd>{data ? bytes(data.volume.backupsBytes) : "…"}</dd>
            <dt>Free</dt>
            <dd>{data ? `${bytes(data.volume.freeBytes)} of ${bytes(data.volume.totalBytes)}` : "…"}</dd>
          </dl>
        </article>
        <article class="card">
          <h2>Libraries</h2>
          <dl>
            <dt>Total</dt>
            <dd>{data?.libraries.total ?? "…"}</dd>
            {data && Object.entries(data.libraries.byState).map(([state, n]) => [<dt key={`${state}-t`}>{state}</dt>, <dd key={`${state}-d`}>{n}</dd>])}
          </dl>
          <p>
            <a href={`${BASE}/libraries`}>Manage libraries</a>
          </p>
        </article>
        <article class="card">
          <h2>Backups</h2>
          <dl>
            <dt>Last</dt>
            <dd>{data ? (data.backup.last ? `${data.backup.last.ok ? "Succeeded" : "Failed"}, ${dateTime(data.backup.last.startedAt)}` : "none by this server") : "…"}</dd>
            <dt>Size</dt>
            <dd>{data?.backup.last?.size !== undefined ? bytes(data.backup.last.size) : "—"}</dd>
            <dt>Duration</dt>
            <dd>{data?.backup.last ? duration(data.backup.last.durationMs) : "—"}</dd>
            <dt>Where</dt>
            <dd class="path">{data?.backup.last?.location ?? "—"}</dd>
            <dt>Next</dt>
            <dd>{data ? (data.backup.nextRun ? dateTime(data.backup.nextRun) : "not scheduled") : "…"}</dd>
            <dt>Newest archive</dt>
            <dd class="path" data-testid="newest-archive">
              {data ? (data.backup.newestArchive ? `${data.backup.newestArchive.name} (${dateTime(data.backup.newestArchive.modifiedAt)})` : "none at the destination") : "…"}
            </dd>
          </dl>
          <p>
            <a href={`${BASE}/backups`}>Backups and schedule</a>
          </p>
        </article>
      </div>
    </section>
  );
}
