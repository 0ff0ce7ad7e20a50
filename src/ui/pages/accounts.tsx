import { useState } from "preact/hooks";
import { api } from "../api.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";
import { ErrorMessage } from "../components/error-message.js";
import { DataTable } from "../components/table-wrap.js";
import { Field } from "../components/field.js";
import { useLoad } from "../components/use-load.js";
import { dateTime } from "../format.js";
import type { KeyListing, TeamListing, UserListing } from "../../server/api-types.js";
import { NewKey } from "./new-key.js";

const PLANS = ["free", "pro", "enterprise"];
const ROLES = ["owner", "admin", "member"];

/** Teams and their plans, users and roles, API keys (a new key's secret is shown once). */
export function AccountsPage() {
  const teams = useLoad(() => api<TeamListing>("GET", "/api/teams"));
  const users = useLoad(() => api<UserListing>("GET", "/api/users"));
  const keys = useLoad(() => api<KeyListing>("GET", "/api/keys"));
  const [error, setError] = useState<unknown>();
  const [confirm, setConfirm] = useState<{ title: string; label: string; text: string; run: () => Promise<unknown> }>();
  const reloadAll = () => Promise.all([teams.reload(), users.reload(), keys.reload()]);
  /**
   * Answers whether it worked, so that a form keeps what was typed when it did not. It answers as soon as the
   * change is made, before the lists reload: a form cleared only after the reload would wipe what the operator
   * typed meanwhile (the new row is already on screen by then).
   */
  const act = async (work: () => Promise<unknown>): Promise<boolean> => {
    setError(undefined);
    try {
      await work();
      void reloadAll();
      return true;
    } catch (err) {
      setError(err);
      return false;
    }
  };
  const teamNames = teams.data?.teams.map((t) => t.name) ?? [];
  const emails = users.data?.users.map((u) => u.email) ?? [];

  return (
    <section>
      <h1>Teams, users and API keys</h1>
      <ErrorMessage error={error ?? teams.error ?? users.error ?? keys.error} />

      <h2>Teams</h2>
      <DataTable label="Teams" columns={["Team", "Users", "Plan"]} testId="teams">
        {teams.data?.teams.map((t) => (
          <tr key={t.id}>
            <th scope="row">{t.name}</th>
            <td>{t.users}</td>
            <td>
              <label class="sr-only" for={`plan-${t.id}`}>
                Plan of {t.name}
              </label>
              <select id={`plan-${t.id}`} value={t.plan} onChange={(e) => void act(() => api("PATCH", `/api/teams/${encodeURIComponent(t.name)}`, { plan: e.currentTarget.value }))}>
                {PLANS.map((p) => (
                  <option key={p}>{p}</option>
                ))}
              </select>
            </td>
          </tr>
        ))}
      </DataTable>
      <InlineForm
        title="Create a team"
        fields={[
          { id: "team-name", label: "Name", pattern: "[A-Za-z0-9][A-Za-z0-9._\\-]*" },
          { id: "team-plan", label: "Plan", options: PLANS },
        ]}
        submit="Create team"
        onSubmit={(v) => act(() => api("POST", "/api/teams", { name: v["team-name"], plan: v["team-plan"] }))}
      />

      <h2>Users</h2>
      <DataTable label="Users" columns={["Email", "Team", "Role", ""]} testId="users">
        {users.data?.users.map((u) => (
          <tr key={u.id}>
            <th scope="row">{u.email}</th>
            <td>{u.team}</td>
            <td>{u.role}</td>
            <td class="row-actions">
              <button
                type="button"
                class="danger"
                aria-label={`Remove ${u.email}`}
                onClick={() =>
                  setConfirm({
                    title: `Remove ${u.email}?`,
                    label: "Remove user",
                    text: "Their API keys stop working until they are added again.",
                    run: () => api("DELETE", `/api/users/${encodeURIComponent(u.email)}`),
                  })
                }
              >
                Remove
              </button>
            </td>
          </tr>
        ))}
      </DataTable>
      {teamNames.length > 0 && (
        <InlineForm
          title="Add a user"
          fields={[
            { id: "user-email", label: "Email", type: "email" },
            { id: "user-team", label: "Team", options: teamNames },
            { id: "user-role", label: "Role", options: ROLES },
          ]}
          submit="Add user"
          onSubmit={(v) => act(() => api("POST", "/api/users", { email: v["user-email"], team: v["user-team"], role: v["user-role"] }))}
        />
      )}

      <h2>API keys</h2>
      <DataTable label="API keys" columns={["Key", "Name", "User", "Created", "State", ""]} testId="keys">
        {keys.data?.keys.map((k) => (
          <tr key={k.prefix}>
            <th scope="row" class="path">
              {k.prefix}…
            </th>
            <td>{k.name ?? "—"}</td>
            <td>{k.email}</td>
            <td>{dateTime(k.createdAt)}</td>
            <td>{k.revokedAt ? <span class="badge bad">revoked {dateTime(k.revokedAt)}</span> : <span class="badge ok">active</span>}</td>
            <td class="row-actions">
              {!k.revokedAt && (
                <button
                  type="button"
                  class="danger"
                  aria-label={`Revoke ${k.prefix}`}
                  onClick={() =>
                    setConfirm({
                      title: `Revoke key ${k.prefix}…?`,
                      label: "Revoke key",
                      text: "Clients using it are refused from now on. This cannot be undone.",
                      run: () => api("DELETE", `/api/keys/${encodeURIComponent(k.prefix)}`),
                    })
                  }
                >
                  Revoke
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
      {emails.length > 0 && <NewKey emails={emails} onCreated={() => void keys.reload()} />}

      {confirm && (
        <ConfirmDialog
          title={confirm.title}
          confirmLabel={confirm.label}
          onCancel={() => setConfirm(undefined)}
          onConfirm={() => {
            const run = confirm.run;
            setConfirm(undefined);
            void act(run);
          }}
        >
          <p>{confirm.text}</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

interface InlineField {
  id: string;
  label: string;
  type?: string;
  pattern?: string;
  options?: string[];
}

/** A small form of text fields and choices; it clears its text fields after a successful submit. */
function InlineForm({ title, fields, submit, onSubmit }: { title: string; fields: InlineField[]; submit: string; onSubmit: (values: Record<string, string>) => Promise<boolean> }) {
  const initial = () => Object.fromEntries(fields.map((f) => [f.id, f.options?.[0] ?? ""]));
  const [values, setValues] = useState<Record<string, string>>(initial);
  return (
    <form
      class="panel inline-form"
      aria-label={title}
      onSubmit={async (e) => {
        e.preventDefault();
        if (await onSubmit(values)) setValues(initial());
      }}
    >
      <h3>{title}</h3>
      <div class="grid">
        {fields.map((f) => (
          <Field key={f.id} id={f.id} label={f.label}>
            {f.options ? (
              <select id={f.id} value={values[f.id]} onChange={(e) => setValues({ ...values, [f.id]: e.currentTarget.value })}>
                {f.options.map((o) => (
                  <option key={o}>{o}</option>
                ))}
              </select>
            ) : (
              <input id={f.id} type={f.type ?? "text"} required pattern={f.pattern} value={values[f.id]} onInput={(e) => setValues({ ...values, [f.id]: e.currentTarget.value })} />
            )}
          </Field>
        ))}
      </div>
      <button type="submit">{submit}</button>
    </form>
  );
}
