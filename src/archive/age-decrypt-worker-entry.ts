import { parentPort, workerData } from "node:worker_threads";
import { payloadDecryptor } from "./age-stream.js";
import { youngGarbageCollector } from "../util/young-garbage.js";

/**
 * The thread side of an archive's decryption (age-decrypt-worker.ts): each ciphertext chunk is answered, in order,
 * with the plaintext it completed; "end" with the rest. The first error ends the thread's work.
 */
const decrypt = payloadDecryptor(Buffer.from((workerData as { key: Uint8Array }).key));
// Each chunk leaves a received buffer and the decipher's outputs dead here (util/young-garbage.ts).
const collectGarbage = youngGarbageCollector(1024 * 1024);
const send = (type: "data" | "end", parts: Buffer[]) => {
  const out = new Uint8Array(Buffer.concat(parts)); // its own buffer, so that it can be transferred
  collectGarbage(out.byteLength); // before the transfer, which leaves it 0 bytes long
  parentPort!.postMessage({ type, chunk: out }, [out.buffer]);
};
parentPort!.on("message", (message: { type: "chunk"; chunk: Uint8Array } | { type: "end" }) => {
  try {
    if (message.type === "end") send("end", decrypt.finish());
    else send("data", decrypt.feed(Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength)));
  } catch (err) {
    parentPort!.postMessage({ type: "error", message: (err as Error).message });
  }
});
