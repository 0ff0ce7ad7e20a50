import path from "node:path";
import Database from "better-sqlite3";
import { openVolume } from "../../../src/volume/open-volume.js";
import { tempDir } from "../../helpers/temp.js";
import { describeStoreContract } from "./describe-store-contract.js";

// A real lds.db on disk, opened (and migrated) as the server opens it; each test gets a new volume.
describeStoreContract("SQLite", async () => {
  const root = tempDir("lds-contract-");
  const volume = await openVolume(root);
  return {
    store: volume.store,
    seed: {
      // Only a schema migration writes redirects (private ids moved in schema 13): seeded with SQL, on a connection
      // of its own (as test/helpers/volume.ts reads a volume), so that nothing here needs the engine's handle.
      redirect: async (oldId, newId) => {
        const db = new Database(path.join(root, "lds.db"));
        try {
          db.prepare("INSERT INTO library_redirects (old_id, new_id, vectors_moved) VALUES (?, ?, 1)").run(oldId, newId);
        } finally {
          db.close();
        }
      },
    },
    close: async () => volume.close(),
  };
});
