import type { Store } from "../store/store.js";
import type { Actor } from "./actor.js";

/**
 * The changes the audit log names (accounts, connections and their providers' settings, and the operator's removal
 * of a library): a closed list, so that a new one is a decision, not a typo.
 */
export type AccountAction =
  | "team.create"
  | "team.plan"
  | "team.project"
  | "team.policy"
  | "user.add"
  | "user.remove"
  | "key.create"
  | "key.revoke"
  | "connection.add"
  | "connection.connect"
  | "connection.disconnect"
  | "oauth.provider"
  | "admin.create"
  | "library.remove";

/**
 * Record an account change once it is made. Only the use cases in this folder call it, so a change reads the same
 * in the log from the CLI, the dashboard or the API. `details` never holds a secret (a key, a token, a password).
 */
export function recordAccountChange(store: Store, actor: Actor, action: AccountAction, subject: string, details: Record<string, unknown> = {}): Promise<void> {
  return store.audit.record({ actor, action, subject, details });
}
