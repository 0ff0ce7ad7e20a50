import type { Logger } from "pino";
import { settingActor } from "../ops/actor.js";
import { createFirstAdmin } from "../ops/admins.js";
import type { ServerSettings } from "../config/server-settings.js";
import type { OpenVolume } from "../volume/open-volume.js";

/** The first admin, from LDS_ADMIN_PASSWORD(_FILE) (username LDS_ADMIN_USERNAME, default "admin"), only while there is none. */
export async function bootstrapAdmin(opened: OpenVolume, firstAdmin: ServerSettings["firstAdmin"], logger: Logger): Promise<void> {
  const { username, password } = firstAdmin;
  if (!password || (await opened.store.admins.count()) > 0) return;
  // Audit-logged as every admin creation is, the setting named as who made it (the password never recorded). The
  // count above only spares the password's hashing; another replica may have created the first admin since.
  if ((await createFirstAdmin(opened.store, settingActor("LDS_ADMIN_PASSWORD"), username, password)) === undefined) return;
  logger.warn({ username }, "Created the first admin from LDS_ADMIN_PASSWORD(_FILE); remove it from the service's settings now.");
}
