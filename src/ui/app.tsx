import { useEffect, useState } from "preact/hooks";
import type { AdminSession } from "../server/api-types.js";
import { api, onSignedOut } from "./api.js";
import { navigate, onLinkClick, usePage, BASE } from "./router.js";
import { SignIn } from "./pages/sign-in.js";
import { OverviewPage } from "./pages/overview.js";
import { BackupsPage } from "./pages/backups.js";
import { RestorePage } from "./pages/restore.js";
import { LibrariesPage } from "./pages/libraries.js";
import { AccountsPage } from "./pages/accounts.js";
import { ConnectionsPage } from "./pages/connections.js";

const PAGES = [
  { path: "/", label: "Overview", view: OverviewPage },
  { path: "/backups", label: "Backups", view: BackupsPage },
  { path: "/restore", label: "Restore", view: RestorePage },
  { path: "/libraries", label: "Libraries", view: LibrariesPage },
  { path: "/accounts", label: "Teams & keys", view: AccountsPage },
  { path: "/connections", label: "Connections", view: ConnectionsPage },
];

type Session = AdminSession | null | undefined;

/** The shell: who is signed in, the navigation, and the page. A lost session shows sign-in, then the same page. */
export function App() {
  const page = usePage();
  const [session, setSession] = useState<Session>(undefined);
  useEffect(() => {
    api<AdminSession>("GET", "/api/auth/session").then(setSession, () => setSession(null));
    return onSignedOut(() => setSession(null));
  }, []);
  const current = PAGES.find((p) => p.path === page);
  useEffect(() => {
    document.title = `${session === null ? "Sign in" : (current?.label ?? "Not found")} · LDS`;
  }, [current, session]);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignIn onSignedIn={setSession} />;
  const View = current?.view;
  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">LDS</span>
        <nav aria-label="Dashboard">
          <ul>
            {PAGES.map((p) => (
              <li key={p.path}>
                <a href={BASE + (p.path === "/" ? "/" : p.path)} aria-current={p === current ? "page" : undefined}>
                  {p.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          {session.username}
          <button
            type="button"
            class="link"
            onClick={async () => {
              await api("POST", "/api/auth/logout").catch(() => undefined);
              setSession(null);
              navigate("/");
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {View ? (
          <View />
        ) : (
          <section>
            <h1>Page not found</h1>
            <p>
              {/* The path is not repeated: the address is anyone's to write, and its text is not the page's to show. */}
              There is no such dashboard page. Go to the <a href={`${BASE}/`}>overview</a>.
            </p>
          </section>
        )}
      </main>
    </div>
  );
}
