import type { Logger } from "pino";
import { hashPassword } from "../admin/passwords.js";
import type { ServerSettings } from "../config/server-settings.js";
import type { OpenVolume } from "../volume/open-volume.js";

/** The first admin, from LDS_ADMIN_PASSWORD(_FILE) (username LDS_ADMIN_USERNAME, default "admin"), only while there is none. */
export async function bootstrapAdmin(opened: OpenVolume, firstAdmin: ServerSettings["firstAdmin"], logger: Logger): Promise<void> {
  const { username, password } = firstAdmin;
  if (!password || (await opened.store.admins.count()) > 0) return;
  await opened.store.admins.create(username, await hashPassword(password));
  logger.warn({ username }, "Created the first admin from LDS_ADMIN_PASSWORD(_FILE); remove it from the service's settings now.");
}
