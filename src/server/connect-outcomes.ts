import { randomBytes } from "node:crypto";

/** What the dashboard may say about a finished Connect: the server's own record, not the address's words. */
export interface ConnectOutcome {
  provider: string;
  teamId: number;
  account: string;
}

const KEPT_MS = 10 * 60_000;
const MAX_KEPT = 100;

/**
 * The accounts the OAuth callback just connected, under random ids, for 10 minutes. The callback redirects to the
 * Connections page with only such an id; the page reads the account from here (behind the admin session), so an
 * address that anyone can write (`?connected=github&account=…`) can never make it announce a connection. In
 * memory: after a restart the page simply announces nothing, and the connection list still shows the account.
 */
export function connectOutcomes(now: () => number = Date.now) {
  const kept = new Map<string, { outcome: ConnectOutcome; until: number }>();
  const prune = () => {
    for (const [id, entry] of kept) if (entry.until <= now() || kept.size >= MAX_KEPT) kept.delete(id);
  };
  return {
    remember(outcome: ConnectOutcome): string {
      prune();
      const id = randomBytes(16).toString("base64url");
      kept.set(id, { outcome, until: now() + KEPT_MS });
      return id;
    },
    recall(id: string): ConnectOutcome | undefined {
      const entry = kept.get(id);
      return entry && entry.until > now() ? entry.outcome : undefined;
    },
  };
}
