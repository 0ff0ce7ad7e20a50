import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Destination } from "../../src/destinations/destination.js";
import { isLdsError } from "../../src/errors.js";
import { prune } from "../../src/ops/retention.js";

export interface ConformanceTarget {
  destination: Destination;
  /** Write a file or object that is not ours, bypassing the driver (an operator's own files). */
  putForeign(name: string, body: Buffer): Promise<void>;
  /** Everything at the destination, ours or not, hidden or not: proves nothing partial is left. */
  listEverything(): Promise<string[]>;
}

const names = ["lds-backup-20260101T000000Z.tar", "lds-backup-20260102T000000Z.tar.gz", "lds-backup-20260103T000000Z.tar", "lds-backup-20260104T000000Z.tar"];
const body = (text: string) => Readable.from([Buffer.from(text)]);
const read = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};
const listNames = async (d: Destination) => {
  const out: string[] = [];
  for await (const a of d.list()) out.push(a.name);
  return out;
};
async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (err) {
    return isLdsError(err) ? err.code : (err as Error).name;
  }
  return undefined;
}

/** The one suite every destination driver must pass (DESIGN §4, §8). */
export function destinationConformance(label: string, setup: () => Promise<ConformanceTarget>): void {
  describe(`destination conformance: ${label}`, () => {
    it("stores, reads, stats and removes an archive", async () => {
      const { destination } = await setup();
      const info = await destination.put(names[0]!, body("hello archive"));
      expect(info).toMatchObject({ name: names[0], size: 13 });
      expect(info.location).toContain(names[0]);
      expect(await read(await destination.get(names[0]!))).toBe("hello archive");
      expect((await destination.stat(names[0]!)).size).toBe(13);
      expect(await read(await destination.get(names[0]!, { range: [6, 12] }))).toBe("archive");
      await destination.remove(names[0]!);
      expect(await codeOf(destination.stat(names[0]!))).toBe("archive_not_found");
    });

    it("passes a probe (write, read back, delete) and leaves nothing behind", async () => {
      const target = await setup();
      const before = await target.listEverything();
      await target.destination.probe();
      expect(await target.listEverything()).toEqual(before);
    });

    it("answers archive_not_found for a missing archive, and removing one twice is fine", async () => {
      const { destination } = await setup();
      expect(await codeOf(destination.get(names[1]!))).toBe("archive_not_found");
      expect(await codeOf(destination.stat(names[1]!))).toBe("archive_not_found");
      await destination.remove(names[1]!);
      await destination.remove(names[1]!);
    });

    it("refuses names that are not ours, and never replaces an existing archive", async () => {
      const { destination } = await setup();
      for (const bad of ["../escape.tar", "notes.txt", "lds-backup-x.tar", "a/lds-backup-20260101T000000Z.tar"]) {
        expect(await codeOf(destination.put(bad, body("x")))).toBe("validation_error");
        expect(await codeOf(destination.get(bad))).toBe("validation_error");
      }
      await destination.put(names[2]!, body("first"));
      expect(await codeOf(destination.put(names[2]!, body("second")))).toBe("destination_error");
      expect(await read(await destination.get(names[2]!))).toBe("first");
    });

    it("lists only our archives, newest first, ignoring everything else there", async () => {
      const target = await setup();
      await target.putForeign("notes.txt", Buffer.from("operator's file"));
      await target.putForeign("lds-backup-garbage.tar", Buffer.from("not ours by name"));
      for (const name of [names[1]!, names[3]!, names[0]!]) await target.destination.put(name, body(name));
      expect(await listNames(target.destination)).toEqual([names[3], names[1], names[0]]);
    });

    it("stores a body of several parts byte for byte, from chunks that do not line up with the parts", async () => {
      const { destination } = await setup();
      // 12.3 MiB in chunks of 300,007 bytes: with 5 MiB parts, two full parts and a short last one, each part
      // filled from pieces of several chunks.
      const whole = randomBytes(12 * 1024 * 1024 + 300 * 1024);
      const chunks: Buffer[] = [];
      for (let at = 0; at < whole.length; at += 300_007) chunks.push(whole.subarray(at, at + 300_007));
      const info = await destination.put(names[3]!, Readable.from(chunks), { size: whole.length });
      expect(info.size).toBe(whole.length);
      const hash = createHash("sha256");
      for await (const chunk of await destination.get(names[3]!)) hash.update(chunk as Buffer);
      expect(hash.digest("hex")).toBe(createHash("sha256").update(whole).digest("hex"));
    });

    it("is atomic: a put whose body fails leaves nothing behind, not even a hidden temp", async () => {
      const target = await setup();
      const before = await target.listEverything();
      // Fails after 6 MiB: past the first multipart part, so an S3 driver must abort an upload that has parts.
      let sent = 0;
      const failing = new Readable({
        read() {
          if (sent >= 6 * 1024 * 1024) return void setTimeout(() => this.destroy(new Error("disk read failed")), 20);
          sent += 256 * 1024;
          this.push(Buffer.alloc(256 * 1024, 1));
        },
      });
      expect(await codeOf(target.destination.put(names[0]!, failing))).toBeDefined();
      expect(await codeOf(target.destination.stat(names[0]!))).toBe("archive_not_found");
      expect(await target.listEverything()).toEqual(before);
    });

    it("stops a put on abort and leaves nothing behind", async () => {
      const target = await setup();
      const controller = new AbortController();
      const endless = new Readable({
        read() {
          this.push(Buffer.alloc(256 * 1024, 2));
        },
      });
      setTimeout(() => controller.abort(), 50);
      expect(await codeOf(target.destination.put(names[1]!, endless, { signal: controller.signal }))).toBe("AbortError");
      expect(await codeOf(target.destination.stat(names[1]!))).toBe("archive_not_found");
      expect(await target.listEverything()).toEqual([]);
    });

    it("stops a put whose signal was aborted before it began (it must not upload an endless body for ever)", async () => {
      const target = await setup();
      const controller = new AbortController();
      controller.abort();
      const endless = new Readable({
        read() {
          this.push(Buffer.alloc(256 * 1024, 3));
        },
      });
      expect(await codeOf(target.destination.put(names[2]!, endless, { signal: controller.signal }))).toBe("AbortError");
      expect(await target.listEverything()).toEqual([]);
    });

    it("retention keeps the newest N and never touches anything that is not ours", async () => {
      const target = await setup();
      await target.putForeign("notes.txt", Buffer.from("keep me"));
      for (const name of names) await target.destination.put(name, body(name));
      expect(await prune(target.destination, 2)).toEqual([names[1], names[0]]);
      expect(await listNames(target.destination)).toEqual([names[3], names[2]]);
      expect(await target.listEverything()).toContain("notes.txt");
      expect(await codeOf(prune(target.destination, 0))).toBe("validation_error");
    });
  });
}
