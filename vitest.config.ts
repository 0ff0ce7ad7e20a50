import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Native modules and child processes: separate processes keep tests from sharing state.
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores: run two test files at a time.
    maxWorkers: 2,
  },
});
