import os from "node:os";
import { randomBytes } from "node:crypto";
import type { Cron } from "croner";
import type { Store } from "../store/store.js";
import { runnerOwnerId } from "./job-lease.js";

/**
 * One replica of several on shared records: `id` is unique to this process (a restarted replica on the same host and
 * pid is another one), `name` is what messages and logs show ("host:pid").
 */
export interface Replica {
  id: string;
  name: string;
}

export function thisReplica(): Replica {
  const id = runnerOwnerId(os.hostname(), process.pid, randomBytes(4).toString("hex"));
  return { id, name: replicaName(id) };
}

/** "host:pid" of a replica's id ("host:pid:random", job-lease.ts): host names hold no colon. */
export function replicaName(id: string): string {
  return id.split(":").slice(0, 2).join(":");
}

/** The schedules whose every firing one replica alone runs: the backup's cron and the daily drill. */
export type SlotKind = "backup" | "drill";

export type SlotClaim = { won: true } | { won: false; holder: string };

const slotPrefix = (kind: SlotKind) => `backup.slot.${kind}.`;
/** Claims are kept a day: a replica whose cron fires late (a busy event loop) still finds the slot taken. */
const KEEP_CLAIMS_MS = 24 * 3600_000;

/**
 * When the firing `cron` was due, whichever replica asks: croner hands its callback the time it ran, which differs
 * between replicas by their delays; the schedule's latest occurrence up to now does not.
 */
export function dueTime(cron: Cron, now = new Date()): Date {
  return cron.previousRuns(1, new Date(now.getTime() + 1))[0] ?? new Date(Math.floor(now.getTime() / 1000) * 1000);
}

/**
 * Claim one firing of a schedule for this replica: every replica's cron fires, and the first to insert the slot's
 * row (its key the time the firing was due) runs it; the others are told who did. Claims older than a day are pruned.
 */
export async function claimSlot(store: Store, kind: SlotKind, due: Date, replica: Replica): Promise<SlotClaim> {
  const holder = await store.settings.putIfAbsent(slotPrefix(kind) + due.toISOString(), replica.id);
  if (holder !== replica.id) return { won: false, holder: replicaName(holder) };
  // Not the run's concern: a prune that fails is done by the next claim.
  await store.settings.pruneBefore(slotPrefix(kind), new Date(due.getTime() - KEEP_CLAIMS_MS).toISOString()).catch(() => 0);
  return { won: true };
}
