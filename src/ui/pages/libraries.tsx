import { useState } from "preact/hooks";
import { api } from "../api.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";
import { ErrorMessage } from "../components/error-message.js";
import { DataTable } from "../components/table-wrap.js";
import { Field } from "../components/field.js";
import { useLoad } from "../components/use-load.js";
import { dateTime } from "../format.js";
import type { AdminLibrary, LibraryListing, LibraryRemoved, RefreshStarted, SubmissionAnswer, TeamListing, TeamSummary } from "../../server/api-types.js";

/** Every library with its processing state; submit a repository, refresh (choosing a branch) and remove. */
export function LibrariesPage() {
  const libraries = useLoad(() => api<LibraryListing>("GET", "/api/libraries"), 3000);
  const teams = useLoad(() => api<TeamListing>("GET", "/api/teams"));
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [removing, setRemoving] = useState<AdminLibrary>();
  const act = async (work: () => Promise<RefreshStarted | LibraryRemoved>, done: string) => {
    setError(undefined);
    setNotice(undefined);
    try {
      const answer = await work();
      setNotice("message" in answer ? answer.message : done);
      await libraries.reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section>
      <h1>Libraries</h1>
      <Submit teams={teams.data?.teams} onSubmitted={(message) => (setNotice(message), void libraries.reload())} />
      <div aria-live="polite">{notice && <p class="success">{notice}</p>}</div>
      <ErrorMessage error={error ?? libraries.error} />
      {!libraries.data && <p class="loading">Loading…</p>}
      {libraries.data?.libraries.length === 0 && <p>No libraries yet: submit a repository above.</p>}
      {libraries.data && libraries.data.libraries.length > 0 && (
        <DataTable label="Libraries" columns={["Library", "State", "Snippets", "Branches and versions", "Updated", ""]} testId="libraries">
          {libraries.data.libraries.map((library) => (
            <Row
              key={library.id}
              library={library}
              onRefresh={(branch) => act(() => api<RefreshStarted>("POST", "/api/libraries/refresh", { libraryName: library.id, ...(branch ? { branch } : {}) }), "Refresh started.")}
              onRemove={() => setRemoving(library)}
            />
          ))}
        </DataTable>
      )}
      {removing && (
        <ConfirmDialog
          title={`Remove ${removing.id}?`}
          confirmLabel="Remove library"
          onCancel={() => setRemoving(undefined)}
          onConfirm={() => {
            const id = removing.id;
            setRemoving(undefined);
            void act(() => api<LibraryRemoved>("DELETE", `/api/libraries?id=${encodeURIComponent(id)}`), `Removed ${id}.`);
          }}
        >
          <p>Its {removing.totalSnippets} snippets and versions are deleted, and clients can no longer read it. Archives made before now still hold it.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

function Row({ library, onRefresh, onRemove }: { library: AdminLibrary; onRefresh: (branch: string) => void; onRemove: () => void }) {
  const branches = library.source === "git" ? [library.branch, ...library.versions].filter(Boolean) : [];
  const [branch, setBranch] = useState("");
  const selectId = `branch-${library.id.replace(/[^A-Za-z0-9]/g, "-")}`;
  return (
    <tr>
      <th scope="row">
        <span class="library-id">{library.id}</span>
        <span class="help">
          {library.private ? `private to ${library.team ?? "a team"}` : "public"} · {library.sourceUrl}
        </span>
      </th>
      <td>
        <span class={`badge state-${library.processing}`}>{library.processing}</span>
        {library.reason && <p class="reason">{library.reason}</p>}
      </td>
      <td>{library.totalSnippets}</td>
      <td>{[library.branch || "(default)", ...library.versions].join(", ")}</td>
      <td>{dateTime(library.lastUpdateDate)}</td>
      <td class="row-actions">
        {branches.length > 1 && (
          <>
            <label class="sr-only" for={selectId}>
              Branch of {library.id} to refresh
            </label>
            <select id={selectId} value={branch} onChange={(e) => setBranch(e.currentTarget.value)}>
              <option value="">served branch</option>
              {branches.slice(1).map((b) => (
                <option key={b} value={b}>
                  {b}
                </option>
              ))}
            </select>
          </>
        )}
        <button type="button" onClick={() => onRefresh(branch)} aria-label={`Refresh ${library.id}`}>
          Refresh
        </button>
        <button type="button" class="danger" onClick={onRemove} aria-label={`Remove ${library.id}`}>
          Remove
        </button>
      </td>
    </tr>
  );
}

function Submit({ teams, onSubmitted }: { teams: TeamSummary[] | undefined; onSubmitted: (message: string) => void }) {
  const [team, setTeam] = useState("");
  const [url, setUrl] = useState("");
  const [isPrivate, setPrivate] = useState(false);
  const [token, setToken] = useState("");
  const [branch, setBranch] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const chosenTeam = team || teams?.[0]?.name || "";
  return (
    <form
      class="panel"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          const body = { team: chosenTeam, docsRepoUrl: url, ...(isPrivate ? { private: true } : {}), ...(token ? { gitToken: token } : {}), ...(branch ? { branch } : {}) };
          const answer = await api<SubmissionAnswer>("POST", "/api/libraries", body);
          setUrl("");
          setToken("");
          setBranch("");
          onSubmitted(answer.message);
        } catch (err) {
          setError(err);
        }
        setBusy(false);
      }}
    >
      <h2>Submit a repository</h2>
      <div class="grid">
        <Field id="repo-url" label="Repository URL">
          <input id="repo-url" type="url" required placeholder="https://git.example.com/owner/repo" spellcheck={false} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </Field>
        <Field id="repo-team" label="For team" help={teams?.length === 0 ? "Create a team first (Teams & keys)." : undefined}>
          <select id="repo-team" required value={chosenTeam} onChange={(e) => setTeam(e.currentTarget.value)}>
            {teams?.map((t) => (
              <option key={t.id} value={t.name}>
                {t.name} ({t.plan})
              </option>
            ))}
          </select>
        </Field>
        <Field id="repo-branch" label="Branch (optional)">
          <input id="repo-branch" spellcheck={false} value={branch} onInput={(e) => setBranch(e.currentTarget.value)} />
        </Field>
        <label class="check">
          <input type="checkbox" checked={isPrivate} onChange={(e) => setPrivate(e.currentTarget.checked)} /> Private to the team
        </label>
        {isPrivate && (
          <Field id="repo-token" label="Git token (optional)" help="Empty: the team's connected git account for that host.">
            <input id="repo-token" type="password" autocomplete="off" aria-describedby="repo-token-help" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
          </Field>
        )}
      </div>
      <ErrorMessage error={error} />
      <button type="submit" class="primary" disabled={busy || !chosenTeam}>
        {busy ? "Submitting…" : "Submit"}
      </button>
    </form>
  );
}
