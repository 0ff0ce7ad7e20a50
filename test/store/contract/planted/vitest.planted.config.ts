import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** Runs the planted-bug files (*.run.ts) only; ../planted-bug.test.ts starts it and expects failures. */
export default defineConfig({
  root: fileURLToPath(new URL("../../../../", import.meta.url)),
  test: {
    include: ["test/store/contract/planted/*.run.ts"],
    pool: "forks",
    maxWorkers: 1,
  },
});
