import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach } from "vitest";

const created: string[] = [];
const createdForFile: string[] = [];
afterEach(() => {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
afterAll(() => {
  for (const dir of createdForFile.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test. */
export function tempDir(prefix = "lds-test-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** A fresh temporary directory for a whole test file (made in beforeAll), removed after its last test. */
export function tempDirForFile(prefix = "lds-test-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  createdForFile.push(dir);
  return dir;
}
