import { useState } from "preact/hooks";
import type { NewApiKey } from "../../server/api-types.js";
import { api } from "../api.js";
import { ErrorMessage } from "../components/error-message.js";
import { Field } from "../components/field.js";

/** Create a key: its secret is shown here once, with a copy button, and is gone when the operator dismisses it. */
export function NewKey({ emails, onCreated }: { emails: string[]; onCreated: () => void }) {
  const [email, setEmail] = useState(emails[0] ?? "");
  const [name, setName] = useState("");
  const [created, setCreated] = useState<NewApiKey>();
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<unknown>();
  if (created) {
    return (
      <div class="panel secret-once" role="status" data-testid="new-key">
        <h3>New key {created.prefix}…</h3>
        <p>Copy it now: it is shown only this once.</p>
        <p>
          <label for="new-key-value">API key</label>
          <input id="new-key-value" readOnly value={created.key} onFocus={(e) => e.currentTarget.select()} />
        </p>
        <div class="actions">
          <button
            type="button"
            onClick={async () => {
              await navigator.clipboard.writeText(created.key).then(
                () => setCopied(true),
                () => setCopied(false),
              );
            }}
          >
            {copied ? "Copied" : "Copy"}
          </button>
          <button type="button" onClick={() => (setCreated(undefined), setCopied(false))}>
            I have stored it
          </button>
        </div>
      </div>
    );
  }
  return (
    <form
      class="panel inline-form"
      aria-label="Create an API key"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(undefined);
        try {
          setCreated(await api<NewApiKey>("POST", "/api/keys", { email: email || emails[0], ...(name ? { name } : {}) }));
          setName("");
          onCreated();
        } catch (err) {
          setError(err);
        }
      }}
    >
      <h3>Create an API key</h3>
      <div class="grid">
        <Field id="key-user" label="For user">
          <select id="key-user" value={email || emails[0]} onChange={(e) => setEmail(e.currentTarget.value)}>
            {emails.map((e) => (
              <option key={e}>{e}</option>
            ))}
          </select>
        </Field>
        <Field id="key-name" label="Name (optional)">
          <input id="key-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
      </div>
      <ErrorMessage error={error} />
      <button type="submit">Create key</button>
    </form>
  );
}
