import { Readable } from "node:stream";
import { assertArchiveName, isArchiveName, notFound, probeName, type Destination } from "../../src/destinations/destination.js";
import type { DestinationDriver } from "../../src/destinations/driver.js";
import { LdsError } from "../../src/errors.js";

/**
 * A third destination driver, kept in memory: what adding a driver takes is this file and one registerDriver line
 * (issue 12). Objects of `mem://<store>` live in `stores`; a put is buffered and published whole, like S3's upload.
 */
export const stores = new Map<string, Map<string, { body: Buffer; at: Date }>>();

export const memoryDriver: DestinationDriver = {
  kind: "memory",
  scheme: "mem",
  label: "Memory options:",
  settings: [{ key: "token", type: "string", flag: "mem-token", env: "LDS_MEM_TOKEN", describe: "access token", secret: true }],
  config: { required: ["store"], properties: { store: { type: "string", pattern: "^[a-z0-9]+$" } } },
  locationOf: (config) => `mem://${String(config.store)}`,
  open: async (location) => memoryDestination(location.slice("mem://".length)),
  openArchive: async (location) => {
    const rest = location.slice("mem://".length);
    return { destination: memoryDestination(rest.slice(0, rest.lastIndexOf("/"))), name: rest.slice(rest.lastIndexOf("/") + 1) };
  },
};

function memoryDestination(storeName: string): Destination {
  const objects = stores.get(storeName) ?? new Map<string, { body: Buffer; at: Date }>();
  stores.set(storeName, objects);
  const info = (name: string) => {
    const object = objects.get(name);
    if (!object) throw notFound(name, `mem://${storeName}`);
    return { name, size: object.body.length, modifiedAt: object.at.toISOString(), location: `mem://${storeName}/${name}` };
  };
  return {
    kind: "memory",
    description: `mem://${storeName}`,
    async put(name, body, opts = {}) {
      assertArchiveName(name);
      if (objects.has(name)) {
        body.destroy();
        throw new LdsError("destination_error", `An archive named ${name} already exists in mem://${storeName}.`);
      }
      const chunks: Buffer[] = [];
      const aborted = () => Object.assign(new Error("aborted"), { name: "AbortError" });
      if (opts.signal?.aborted) {
        body.destroy();
        throw aborted();
      }
      // Chunk by chunk, giving the event loop a turn after each, as a store behind a network would.
      for await (const chunk of body) {
        if (opts.signal?.aborted) {
          body.destroy();
          throw aborted();
        }
        chunks.push(chunk as Buffer);
        await new Promise((resolve) => setImmediate(resolve));
      }
      objects.set(name, { body: Buffer.concat(chunks), at: new Date() });
      return info(name);
    },
    async get(name, opts = {}) {
      assertArchiveName(name);
      const { size } = info(name);
      const [start, end] = opts.range ?? [0, size - 1];
      return Readable.from([objects.get(name)!.body.subarray(start, end + 1)]);
    },
    async stat(name) {
      assertArchiveName(name);
      return info(name);
    },
    async *list() {
      const names = [...objects.keys()].filter(isArchiveName).sort().reverse();
      for (const name of names) yield info(name);
    },
    async remove(name) {
      assertArchiveName(name);
      objects.delete(name);
    },
    async removeIncomplete() {
      return [];
    },
    async probe() {
      const name = probeName();
      objects.set(name, { body: Buffer.from("probe"), at: new Date() });
      objects.delete(name);
    },
  };
}
