import { describe } from "vitest";
import { describeAccounts } from "./accounts.contract.js";
import { describeAdminsAndSettings } from "./admins-settings.contract.js";
import { describeConnections } from "./connections.contract.js";
import type { OpenStore } from "./harness.js";
import { describeJobs } from "./jobs.contract.js";
import { describeLeases } from "./leases.contract.js";
import { describeLibraries } from "./libraries.contract.js";
import { describeRequestWindows } from "./request-windows.contract.js";
import { describeSnippets } from "./snippets.contract.js";
import { describeUsageAndAudit } from "./usage-audit.contract.js";

export type { OpenedStore, OpenStore } from "./harness.js";

/**
 * The records contract (src/store/store.ts) as behaviour: every engine of the Store runs this same suite, each test
 * on a fresh, empty store that `open` makes. SQLite runs it in sqlite.test.ts, the in-memory engine in
 * memory.test.ts; a PostgreSQL engine passes it before it may serve LDS.
 */
export function describeStoreContract(engineName: string, open: OpenStore): void {
  describe(`the records contract, on ${engineName}`, () => {
    describeLibraries(open);
    describeSnippets(open);
    describeJobs(open);
    describeLeases(open);
    describeAccounts(open);
    describeConnections(open);
    describeAdminsAndSettings(open);
    describeUsageAndAudit(open);
    describeRequestWindows(open);
  });
}
