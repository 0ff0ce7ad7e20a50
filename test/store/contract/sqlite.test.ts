import { openVolume } from "../../../src/volume/open-volume.js";
import { tempDir } from "../../helpers/temp.js";
import { describeStoreContract } from "./describe-store-contract.js";

// A real lds.db on disk, opened (and migrated) as the server opens it; each test gets a new volume.
describeStoreContract("SQLite", async () => {
  const volume = openVolume(tempDir("lds-contract-"));
  return {
    store: volume.store,
    seed: {
      // Only a schema migration writes redirects (private ids moved in schema 13): seeded with the engine's own SQL.
      redirect: async (oldId, newId) => void volume.db.prepare("INSERT INTO library_redirects (old_id, new_id, vectors_moved) VALUES (?, ?, 1)").run(oldId, newId),
    },
    close: async () => volume.close(),
  };
});
