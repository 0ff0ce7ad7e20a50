import semver from "semver";
import { APP_VERSION } from "../version.js";
import { archiveEngine } from "./check-snapshot.js";
import type { Manifest } from "./manifest.js";

export interface Compatibility {
  restorable: boolean;
  /** Why not, in words an operator can act on; null when restorable. */
  reason: string | null;
  /** True when the archive is older: the migrations run at the next start. */
  needsMigration: boolean;
}

/** Archives restore from older to newer releases only (spec: Versioning 3). */
export function compatibility(manifest: Manifest): Compatibility {
  if (semver.gt(manifest.appVersion, APP_VERSION)) {
    return refuse(`it was made by LDS ${manifest.appVersion}, newer than this LDS ${APP_VERSION}`);
  }
  const latest = archiveEngine().latestSchemaVersion;
  if (manifest.schemaVersion > latest) {
    return refuse(`its database has schema version ${manifest.schemaVersion}; this LDS knows up to ${latest}`);
  }
  return { restorable: true, reason: null, needsMigration: manifest.schemaVersion < latest };
}

function refuse(reason: string): Compatibility {
  return { restorable: false, reason: `${reason}: upgrade LDS to that release or newer first`, needsMigration: false };
}
