import { useState } from "preact/hooks";
import { api } from "../api.js";
import { ErrorMessage } from "../components/error-message.js";
import { Field } from "../components/field.js";
import { SecretField } from "../components/secret-field.js";
import type { ListedProvider } from "../../server/api-types.js";

/** One provider's OAuth app: client id, a write-only secret (set / change / clear), and where the provider lives. */
export function ProviderForm({ provider, onSaved }: { provider: ListedProvider; onSaved: () => void }) {
  const [clientId, setClientId] = useState(provider.clientId);
  const [clientSecret, setClientSecret] = useState<string | undefined>(undefined);
  const [urls, setUrls] = useState({ authorizeUrl: provider.authorizeUrl, tokenUrl: provider.tokenUrl, apiBase: provider.apiBase, scopes: provider.scopes, gitHosts: provider.gitHosts.join(", ") });
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const id = (field: string) => `${provider.kind}-${field}`;
  return (
    <form
      class="panel"
      aria-label={`${provider.name} settings`}
      onSubmit={async (e) => {
        e.preventDefault();
        setError(undefined);
        setSaved(false);
        try {
          const gitHosts = urls.gitHosts.split(/[\s,]+/).filter(Boolean);
          await api("PUT", `/api/oauth/providers/${provider.kind}`, { clientId, ...(clientSecret !== undefined ? { clientSecret } : {}), ...urls, gitHosts });
          setClientSecret(undefined);
          setSaved(true);
          onSaved();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h3>{provider.name}</h3>
      <div class="grid">
        <Field id={id("client-id")} label="Client id">
          <input id={id("client-id")} autocomplete="off" spellcheck={false} value={clientId} onInput={(e) => setClientId(e.currentTarget.value)} />
        </Field>
        <SecretField id={id("client-secret")} label="Client secret" isSet={provider.clientSecretSet} value={clientSecret} onChange={setClientSecret} />
      </div>
      <details>
        <summary>Addresses{provider.connects === "git" ? " and git hosts" : ""} (for self-hosted or test providers)</summary>
        <div class="grid">
          {(["authorizeUrl", "tokenUrl", "apiBase"] as const).map((field) => (
            <Field key={field} id={id(field)} label={{ authorizeUrl: "Authorize URL", tokenUrl: "Token URL", apiBase: "API base URL" }[field]}>
              <input id={id(field)} type="url" spellcheck={false} value={urls[field]} onInput={(e) => setUrls({ ...urls, [field]: e.currentTarget.value })} />
            </Field>
          ))}
          <Field id={id("scopes")} label="Scopes">
            <input id={id("scopes")} spellcheck={false} value={urls.scopes} onInput={(e) => setUrls({ ...urls, scopes: e.currentTarget.value })} />
          </Field>
          {provider.connects === "git" && (
            <Field id={id("git-hosts")} label="Git hosts the token may clone from" help="host or host:port, comma-separated: the token is never sent to any other host.">
              <input id={id("git-hosts")} spellcheck={false} value={urls.gitHosts} onInput={(e) => setUrls({ ...urls, gitHosts: e.currentTarget.value })} />
            </Field>
          )}
        </div>
      </details>
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="submit">Save {provider.name}</button>
        <span aria-live="polite">{saved && <span class="success">Saved.</span>}</span>
      </div>
    </form>
  );
}
