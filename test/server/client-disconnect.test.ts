import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/temp.js";
import { client, eventually, startServer, type TestServer } from "../helpers/server.js";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** Start a POST of `declared` bytes, send `sent` of them, then wait for `ready` and cut the connection. */
async function abandonedPost(url: string, route: string, headers: Record<string, string>, declared: number, sent: number, ready: () => Promise<boolean>) {
  const request = http.request(`${url}${route}`, { method: "POST", headers: { ...headers, "content-length": String(declared) } });
  request.on("error", () => {}); // our own cut
  request.write(Buffer.alloc(sent, 0x61));
  await eventually(ready);
  request.destroy();
}

const logLines = (out: string) =>
  out
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: number; msg: string; url?: string; req?: { url?: string } });

describe("a client that disconnects mid-request", () => {
  it("is logged as a closed connection (info), not as an unexpected error, while uploading an archive", async () => {
    const dataDir = tempDir();
    server = await startServer(dataDir, { LDS_LOG_LEVEL: "info" });
    const api = client(server.url);
    expect((await api.login()).status).toBe(200);
    const uploads = path.join(dataDir, "restore-uploads");
    const uploadStarted = async () => fs.existsSync(uploads) && fs.readdirSync(uploads).some((f) => fs.statSync(path.join(uploads, f)).size > 0);
    await abandonedPost(server.url, "/api/restore/upload", { cookie: api.cookie!, "content-type": "application/octet-stream" }, 64 * 2 ** 20, 2 ** 20, uploadStarted);

    const closed = await eventually(async () => logLines(server!.output()).find((l) => l.msg === "client closed the connection"));
    expect(closed.level).toBe(30);
    expect(logLines(server.output()).filter((l) => l.level >= 50)).toEqual([]);
    // The partial upload is not kept.
    await eventually(async () => fs.readdirSync(uploads).length === 0);
    // And the server goes on answering.
    expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
  });

  it("is logged as a closed connection while sending a JSON body, and the server answers the next request", async () => {
    server = await startServer(tempDir(), { LDS_LOG_LEVEL: "info" });
    const output = server.output;
    const requestSeen = async () => logLines(output()).some((l) => l.msg === "incoming request" && l.req?.url === "/api/auth/login");
    await abandonedPost(server.url, "/api/auth/login", { "content-type": "application/json" }, 512 * 1024, 64 * 1024, requestSeen);

    const closed = await eventually(async () => logLines(output()).find((l) => l.msg === "client closed the connection"));
    expect(closed.level).toBe(30);
    expect(logLines(output()).filter((l) => l.level >= 50)).toEqual([]);
    expect((await client(server.url).login()).status).toBe(200);
  });
});
