import { hashPassword } from "../admin/passwords.js";
import type { Store } from "../store/store.js";
import { recordAccountChange } from "./account-audit.js";
import type { Actor } from "./actor.js";

/** A new operator of the dashboard and admin API. The password is checked and hashed here (hashPassword refuses a short one), and never recorded. */
export async function createAdmin(store: Store, actor: Actor, username: string, password: string): Promise<number> {
  const id = await store.admins.create(username, await hashPassword(password));
  await recordAccountChange(store, actor, "admin.create", `admin:${id}`, { username });
  return id;
}

/**
 * The first admin (LDS_ADMIN_PASSWORD at start), only while there is none: of replicas starting at once, one
 * creates it (store.admins.createFirst) and audits it; the others answer undefined.
 */
export async function createFirstAdmin(store: Store, actor: Actor, username: string, password: string): Promise<number | undefined> {
  const id = await store.admins.createFirst(username, await hashPassword(password));
  if (id !== undefined) await recordAccountChange(store, actor, "admin.create", `admin:${id}`, { username });
  return id;
}
