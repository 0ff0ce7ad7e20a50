import { LdsError } from "../../errors.js";

/**
 * What an exclusive taker of the serving lock (a restore, a key rotation) says when replicas serve: who they are (as
 * far as the role may see: each replica names its lock's connection, serving-hold.ts), and that nothing changed.
 */
export function servedRefusal(replicas: string[], database: string, what: string): LdsError {
  return new LdsError("volume_locked", `Replicas are serving ${database}${replicas.length > 0 ? `: ${replicas.join(", ")}` : ""}; ${what} and nothing was changed.`, {
    hint: "Stop every server (replica) of this database, run it again, then start them (each with a copy of the key file it leaves).",
  });
}
