import { execFileSync } from "node:child_process";
import path from "node:path";
import { fresh } from "./measure.js";

/** A new age identity in `dir` (emptied first) with the age CLI: its file, and its recipient (public key). */
export function ageKeys(dir) {
  fresh(dir);
  const identity = path.join(dir, "identity.txt");
  execFileSync("age-keygen", ["-o", identity], { stdio: "ignore" });
  return { identity, recipient: execFileSync("age-keygen", ["-y", identity], { encoding: "utf8" }).trim() };
}
