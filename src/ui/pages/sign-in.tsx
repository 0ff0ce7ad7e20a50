import { useState } from "preact/hooks";
import type { AdminSession, LoginAnswer } from "../../server/api-types.js";
import { api } from "../api.js";
import { ErrorMessage } from "../components/error-message.js";
import { Field } from "../components/field.js";

/** Sign-in. The page the operator was on stays in the address bar, so signing in returns to it. */
export function SignIn({ onSignedIn }: { onSignedIn: (session: AdminSession) => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  return (
    <main class="sign-in" id="main">
      <h1>Sign in to LDS</h1>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          try {
            onSignedIn(await api<LoginAnswer>("POST", "/api/auth/login", { username, password }));
          } catch (err) {
            setError(err);
            setBusy(false);
          }
        }}
      >
        <Field id="username" label="Username">
          <input id="username" name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
        </Field>
        <Field id="password" label="Password">
          <input id="password" name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </Field>
        <ErrorMessage error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <p class="help">The first admin comes from LDS_ADMIN_PASSWORD at the first start, or from lds admin create.</p>
    </main>
  );
}
