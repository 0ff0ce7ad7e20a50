import { useState } from "preact/hooks";
import { api } from "../api.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";
import { ErrorMessage } from "../components/error-message.js";
import { Field } from "../components/field.js";
import { DataTable } from "../components/table-wrap.js";
import { useLoad } from "../components/use-load.js";
import { dateTime } from "../format.js";
import type { AuthorizationStarted, Browsable, BrowseListing, Connection, ConnectionListing, Disconnected, ProviderListing, TeamListing } from "../../server/api-types.js";
import { ConnectOutcome, readCallbackAddress } from "./connect-outcome.js";
import { ProviderForm } from "./provider-form.js";

/** Accounts connected by OAuth, per team: Connect, Reconnect, Disconnect, browse; and the providers' settings. */
export function ConnectionsPage() {
  const [fromAddress] = useState(() => readCallbackAddress(location.search));
  const providers = useLoad(() => api<ProviderListing>("GET", "/api/oauth/providers"));
  const connections = useLoad(() => api<ConnectionListing>("GET", "/api/connections"));
  const teams = useLoad(() => api<TeamListing>("GET", "/api/teams"));
  const [team, setTeam] = useState("");
  const [error, setError] = useState<unknown>();
  const [disconnecting, setDisconnecting] = useState<Connection>();
  const [notice, setNotice] = useState<string>();
  const [browsing, setBrowsing] = useState<{ connection: Connection; items?: Browsable[] }>();
  const chosenTeam = team || teams.data?.teams[0]?.name || "";
  const configured = providers.data?.providers.filter((p) => p.clientId && p.clientSecretSet) ?? [];
  const providerNames = providers.data ? new Map(providers.data.providers.map((p) => [p.kind, p.name])) : providers.error ? new Map<string, string>() : undefined;

  const connect = async (kind: string, teamName: string) => {
    setError(undefined);
    try {
      const { authorizeUrl } = await api<AuthorizationStarted>("POST", `/api/oauth/${kind}/start`, { team: teamName });
      location.assign(authorizeUrl);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section>
      <h1>Connections</h1>
      <ConnectOutcome from={fromAddress} providerNames={providerNames} />
      <div aria-live="polite">{notice && <p class="success">{notice}</p>}</div>
      <ErrorMessage error={error ?? connections.error ?? providers.error} />

      <div class="panel">
        <h2>Connect an account</h2>
        {configured.length === 0 && <p>No provider is set up yet: enter an OAuth app's client id and secret below first.</p>}
        <Field id="connect-team" label="For team">
          <select id="connect-team" value={chosenTeam} onChange={(e) => setTeam(e.currentTarget.value)}>
            {teams.data?.teams.map((t) => (
              <option key={t.id} value={t.name}>
                {t.name}
              </option>
            ))}
          </select>
        </Field>
        <div class="actions">
          {configured.map((p) => (
            <button key={p.kind} type="button" class="primary" disabled={!chosenTeam} onClick={() => void connect(p.kind, chosenTeam)}>
              Connect {p.name}
            </button>
          ))}
        </div>
      </div>

      <h2>Connected accounts</h2>
      {connections.data?.connections.length === 0 && <p>None yet.</p>}
      {connections.data && connections.data.connections.length > 0 && (
        <DataTable label="Connected accounts" columns={["Team", "Provider", "Account", "Valid for", "Scopes", "Expires", "State", ""]} testId="connections">
          {connections.data.connections.map((c) => (
            <tr key={c.id}>
              <th scope="row">{c.team}</th>
              <td>{c.providerName}</td>
              <td>{c.account}</td>
              <td class="path">{[...c.hosts, ...c.sites.map((s) => s.siteUrl)].join(", ")}</td>
              <td>{c.scopes}</td>
              <td>{c.expiresAt ? dateTime(c.expiresAt) : "does not expire"}</td>
              <td>
                {c.state === "active" ? <span class="badge ok">active</span> : <span class="badge bad">must reconnect</span>}
                {c.problem && <p class="reason">{c.problem}</p>}
              </td>
              <td class="row-actions">
                <button
                  type="button"
                  aria-label={`Browse ${c.account}`}
                  disabled={c.state !== "active"}
                  onClick={async () => {
                    setBrowsing({ connection: c });
                    try {
                      setBrowsing({ connection: c, items: (await api<BrowseListing>("GET", `/api/connections/${c.id}/browse`)).items });
                    } catch (err) {
                      setBrowsing(undefined);
                      setError(err);
                    }
                  }}
                >
                  Browse
                </button>
                <button type="button" aria-label={`Reconnect ${c.account}`} onClick={() => void connect(c.provider, c.team ?? String(c.teamId))}>
                  Reconnect
                </button>
                <button type="button" class="danger" aria-label={`Disconnect ${c.account}`} onClick={() => setDisconnecting(c)}>
                  Disconnect
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {browsing && (
        <div class="panel" data-testid="browse">
          <h3>What {browsing.connection.account} can reach</h3>
          {!browsing.items && <p class="loading">Asking {browsing.connection.providerName}…</p>}
          {browsing.items && browsing.items.length === 0 && <p>Nothing.</p>}
          <ul>
            {browsing.items?.map((item) => (
              <li key={item.name}>
                {item.name} {item.url && <code>{item.url}</code>}
              </li>
            ))}
          </ul>
        </div>
      )}

      <h2>Providers</h2>
      <p class="help">
        Register an OAuth app with each provider you use, with this callback URL: <code data-testid="redirect-uri">{providers.data?.redirectUri ?? "…"}</code>
      </p>
      {providers.data?.providers.map((p) => (
        <ProviderForm key={p.kind} provider={p} onSaved={() => void providers.reload()} />
      ))}

      {disconnecting && (
        <ConfirmDialog
          title={`Disconnect ${disconnecting.account}?`}
          confirmLabel="Disconnect"
          onCancel={() => setDisconnecting(undefined)}
          onConfirm={async () => {
            const c = disconnecting;
            setDisconnecting(undefined);
            try {
              const answer = await api<Disconnected>("DELETE", `/api/connections/${c.id}`);
              setNotice(answer.revokedAtProvider ? `Disconnected ${c.account}; ${c.providerName} revoked its token.` : `Disconnected ${c.account}. ${answer.note ?? ""}`);
              await connections.reload();
            } catch (err) {
              setError(err);
            }
          }}
        >
          <p>
            Its token is revoked at {disconnecting.providerName} where possible and deleted here. Libraries of team {disconnecting.team} that use it fail at their next refresh.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
