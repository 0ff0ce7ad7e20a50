import type { Store } from "../store/store.js";
import { recordAccountChange } from "./account-audit.js";
import type { Actor } from "./actor.js";

export interface CreatedKey {
  /** The secret: in this answer only, never stored, logged or audited. */
  key: string;
  prefix: string;
  email: string;
}

/** A new API key for a user; the audit log names it by prefix. */
export async function createKey(store: Store, actor: Actor, email: string, name: string | null): Promise<CreatedKey> {
  const user = await store.users.require(email);
  const { key, prefix } = await store.apiKeys.create(user.id, name);
  await recordAccountChange(store, actor, "key.create", `key:${prefix}`, { email: user.email, name });
  return { key, prefix, email: user.email };
}

/** Revoke an active key by prefix; it answers invalid_api_key from now on. */
export async function revokeKey(store: Store, actor: Actor, prefix: string): Promise<void> {
  await store.apiKeys.revoke(prefix);
  await recordAccountChange(store, actor, "key.revoke", `key:${prefix}`);
}
