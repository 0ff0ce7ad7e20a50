import os from "node:os";
import { cliActor, type Actor } from "../ops/actor.js";

/**
 * The operator running this command, for the audit log: the OS user. A container may run under a uid with no
 * passwd entry (os.userInfo() then throws): the uid names the operator instead of failing the change.
 */
export function commandActor(): Actor {
  try {
    return cliActor(os.userInfo().username);
  } catch {
    return cliActor(`uid-${process.getuid?.() ?? "unknown"}`);
  }
}
