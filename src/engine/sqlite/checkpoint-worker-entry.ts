import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

// The thread side of the checkpointer: its own connection to each database, a PASSIVE checkpoint of each every
// `intervalMs` (it copies what no reader still needs and never blocks readers or writers), until told to stop.
const { files, intervalMs } = workerData as { files: string[]; intervalMs: number };
const connections = files.map((file) => {
  const db = new Database(file, { fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  return db;
});

const checkpointAll = () => {
  for (const db of connections) db.pragma("wal_checkpoint(PASSIVE)");
};
const timer = setInterval(checkpointAll, intervalMs);

parentPort!.on("message", (message: string) => {
  if (message === "now") {
    checkpointAll();
    parentPort!.postMessage("checkpointed");
    return;
  }
  if (message !== "stop") return;
  clearInterval(timer);
  for (const db of connections) db.close();
  parentPort!.close();
});
