import fs from "node:fs";
import path from "node:path";
import { createLocalDestination } from "../../src/destinations/local.js";
import { tempDir } from "../helpers/temp.js";
import { destinationConformance } from "./conformance.js";

destinationConformance("local directory", async () => {
  const dir = path.join(tempDir(), "backups (network mount)");
  return {
    destination: createLocalDestination({ dir }),
    async putForeign(name, body) {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, name), body);
    },
    async listEverything() {
      return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
    },
  };
});
