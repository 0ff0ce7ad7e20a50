import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, eventually, startServer, type TestServer } from "../helpers/server.js";
import { tempDirForFile } from "../helpers/temp.js";

/**
 * Issue 39 item 4: the same-origin check and the licence gate tested the raw URL while the router decodes it, so
 * `POST /%61pi/backup` ran a backup for another site and `/%762/libs/search` answered under an invalid licence. These
 * tests walk EVERY route the server registered (its own list, from the debug log line "routes"), each in four
 * spellings: as registered, with the first letter of the first segment percent-encoded, and both as absolute-form
 * targets (`POST http://host/api/backup`, which no test of `request.url.startsWith("/api/")` recognised either).
 */

interface Route {
  method: string;
  url: string;
}

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const PUBLIC_API = /^(\/api)?\/(v\d+\/|mcp$)/;
/** The routes that answer without an admin session: everything else that is not the public API needs one. */
const OPEN_ROUTES = new Set([
  "GET /api/health",
  "GET /api/ready",
  "POST /api/auth/login",
  "POST /api/auth/logout",
  "GET /api/oauth/callback",
  "GET /",
  "GET /admin",
  "GET /admin/",
  "GET /dashboard",
  "GET /dashboard/*",
]);

let server: TestServer;
let dataDir: string;
let routes: Route[];
const api = () => client(server.url);
let admin: ReturnType<typeof client>;

/** The route's pattern with its parameters filled in (`/api/keys/:prefix` → `/api/keys/x`). */
const concrete = (pattern: string) => pattern.replace(/:[^/]+/g, "x").replace(/\*/g, "x");

/** The spellings of a path that reach the same route: as registered, one letter encoded, and both in absolute form. */
function spellings(pathname: string): string[] {
  const encoded = pathname.length > 1 ? `/%${pathname.charCodeAt(1).toString(16)}${pathname.slice(2)}` : pathname;
  return [pathname, encoded, `${server.url}${pathname}`, `${server.url}${encoded}`];
}

/** One request with the target sent exactly as given (fetch would normalise an absolute-form target away). */
function send(method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; json: any; text: string }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: hostname, port, method, path: target, headers: { ...headers, ...(body !== undefined ? { "content-length": String(Buffer.byteLength(body)) } : {}) } }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk.toString()));
      response.on("end", () => {
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: response.statusCode!, json, text });
      });
    });
    request.on("error", reject);
    request.end(body);
  });
}

beforeAll(async () => {
  dataDir = tempDirForFile("lds-encoded-");
  // An unreadable licence: every public route must answer 403 license_invalid, in every spelling.
  fs.writeFileSync(path.join(dataDir, "license.json"), "{not json");
  server = await startServer(dataDir, { LDS_LOG_LEVEL: "debug" });
  const line = server
    .output()
    .split("\n")
    .find((l) => l.includes('"msg":"routes"'));
  expect(line, "the server lists its routes in the debug log").toBeDefined();
  routes = JSON.parse(line!).routes;
  admin = api();
  expect((await admin.login()).status).toBe(200);
  // A configured backup, so that a POST /api/backup that got through would start one.
  const backups = tempDirForFile("lds-encoded-dest-");
  const config = { destination: { type: "local", path: backups }, schedule: { preset: "off" }, retention: { keep: null }, compression: "none" };
  expect((await admin.put("/api/backup/config", config)).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe("every route is checked on the route it reaches, however its path is spelled (issue 39 item 4)", () => {
  it("the route list comes from the server and holds both the admin API and the public API", () => {
    const names = routes.map((r) => `${r.method} ${r.url}`);
    expect(names).toEqual(expect.arrayContaining(["POST /api/backup", "POST /api/backup/drill", "POST /api/auth/logout", "GET /v2/libs/search", "GET /api/v2/context", "POST /mcp"]));
    expect(routes.filter((r) => !PUBLIC_API.test(r.url) && STATE_CHANGING.has(r.method)).length).toBeGreaterThan(15);
  });

  it("every state-changing admin route refuses another site (by Origin and by Sec-Fetch-Site) with the admin's cookie, in every spelling, and nothing runs", async () => {
    const evil = `http://127.0.0.1:${Number(new URL(server.url).port) + 1}`;
    const crossSite: Array<Record<string, string>> = [{ origin: evil }, { "sec-fetch-site": "same-site" }, { "sec-fetch-site": "cross-site", origin: "https://attacker.example" }];
    const admitted: string[] = [];
    // Logout last: on 0.7.10 it got through and ended the session, which hid what the other routes let through.
    const stateChanging = routes.filter((r) => !PUBLIC_API.test(r.url) && STATE_CHANGING.has(r.method));
    const walk = [...stateChanging.filter((r) => !r.url.endsWith("/logout")), ...stateChanging.filter((r) => r.url.endsWith("/logout"))];
    for (const route of walk) {
      for (const target of spellings(concrete(route.url))) {
        for (const headers of crossSite) {
          const r = await send(route.method, target, { cookie: admin.cookie!, "content-type": "application/json", ...headers }, "{}");
          if (r.status !== 403 || r.json?.error !== "forbidden") admitted.push(`${route.method} ${target} ${JSON.stringify(headers)} → ${r.status} ${r.text.slice(0, 120)}`);
        }
      }
    }
    expect(admitted).toEqual([]);
    // Nothing ran: no backup or drill was started, the session was not logged out, no team or key was made.
    const status = (await admin.get("/api/backup/status")).json;
    expect(status.running).toBeFalsy();
    expect(status.lastResult ?? null).toBeNull();
    expect((await admin.get("/api/backup/runs")).json.runs).toEqual([]);
    expect((await admin.get("/api/auth/session")).status).toBe(200);
    expect((await admin.get("/api/teams")).json.teams ?? []).toEqual([]);
  }, 120_000);

  it("other spellings (double slash, dot segments, case, trailing slash, ;params, %2F) reach no handler, or one that checks", async () => {
    const variants = (p: string) => {
      const [first, ...rest] = p.slice(1).split("/");
      return [
        `/${p}`,
        `/${first}/./${rest.join("/")}`,
        `/${first}/../${p.slice(1)}`,
        `/${first}//${rest.join("/")}`,
        p.toUpperCase(),
        `${p}/`,
        `${p};x=1`,
        `/${first}%2F${rest.join("/")}`,
        `/${first}/%2e/${rest.join("/")}`,
        `${p}%2F`,
        `${p}%00`,
        `${p}#x`,
        `${p}?x=1`,
      ];
    };
    const slipped: string[] = [];
    for (const target of variants("/api/backup")) {
      const r = await send("POST", target, { cookie: admin.cookie!, "content-type": "application/json", origin: "https://attacker.example" }, "{}");
      if (!(r.status === 404 && r.json?.error === "route_not_found") && !(r.status === 403 && r.json?.error === "forbidden")) slipped.push(`POST ${target} → ${r.status} ${r.text.slice(0, 120)}`);
    }
    for (const target of variants("/v2/libs/search")) {
      const r = await send("GET", target);
      if (!(r.status === 404 && r.json?.error === "route_not_found") && !(r.status === 403 && r.json?.error === "license_invalid")) slipped.push(`GET ${target} → ${r.status} ${r.text.slice(0, 120)}`);
    }
    expect(slipped).toEqual([]);
    expect((await admin.get("/api/backup/runs")).json.runs).toEqual([]);
  }, 60_000);

  it("every admin route but the open few needs the session, in every spelling", async () => {
    const admitted: string[] = [];
    for (const route of routes.filter((r) => !PUBLIC_API.test(r.url) && !OPEN_ROUTES.has(`${r.method} ${r.url}`))) {
      for (const target of spellings(concrete(route.url))) {
        const r = await send(route.method, target, STATE_CHANGING.has(route.method) ? { "content-type": "application/json" } : {}, STATE_CHANGING.has(route.method) ? "{}" : undefined);
        if (r.status !== 401 || r.json?.error !== "not_authenticated") admitted.push(`${route.method} ${target} → ${r.status} ${r.text.slice(0, 120)}`);
      }
    }
    expect(admitted).toEqual([]);
  }, 120_000);

  it("every public route answers 403 license_invalid under an unreadable licence, in every spelling, naming no path; the log names it once", async () => {
    const admitted: string[] = [];
    const publicRoutes = routes.filter((r) => PUBLIC_API.test(r.url));
    expect(publicRoutes.length).toBeGreaterThan(10);
    for (const route of publicRoutes) {
      for (const target of spellings(concrete(route.url))) {
        const r = await send(route.method, target, STATE_CHANGING.has(route.method) ? { "content-type": "application/json" } : {}, STATE_CHANGING.has(route.method) ? "{}" : undefined);
        if (r.status !== 403 || r.json?.error !== "license_invalid") admitted.push(`${route.method} ${target} → ${r.status} ${r.text.slice(0, 120)}`);
        // Unauthenticated clients learn that the licence is invalid and whom to ask, not where it is or how it failed.
        else if (r.text.includes(dataDir) || /license\.json|JSON|position|token/i.test(r.json.message)) admitted.push(`${route.method} ${target} tells ${r.json.message}`);
      }
    }
    expect(admitted).toEqual([]);
    const reports = () =>
      server
        .output()
        .split("\n")
        .filter((l) => l.includes("The licence cannot be read"));
    expect(reports()).toHaveLength(1);
    expect(reports()[0]).toContain(path.join(dataDir, "license.json"));
    // Another problem is reported once more.
    fs.writeFileSync(path.join(dataDir, "license.json"), JSON.stringify({ licensee: "Acme" }));
    await eventually(async () => (await send("GET", "/v2/libs/search?libraryName=x")).json?.error === "license_invalid" && reports().length === 2);
    expect(reports()[1]).toContain("needs licensee and expiresAt");
  }, 120_000);
});

describe("anonymous reads are recognised by the route they reach (LDS_PUBLIC_READ)", () => {
  let open: TestServer;
  afterAll(async () => {
    await open?.stop();
  });

  it("an encoded or absolute-form spelling of search and context is read anonymously, and a submission still needs a key", async () => {
    open = await startServer(tempDirForFile("lds-encoded-anon-"), { LDS_PUBLIC_READ: "true" });
    const { hostname, port } = new URL(open.url);
    const get = (target: string) =>
      new Promise<{ status: number; json: any }>((resolve, reject) => {
        http
          .get({ host: hostname, port, path: target }, (response) => {
            let text = "";
            response.on("data", (chunk: Buffer) => (text += chunk.toString()));
            response.on("end", () => resolve({ status: response.statusCode!, json: JSON.parse(text) }));
          })
          .on("error", reject);
      });
    for (const target of ["/v2/libs/search?libraryName=nothing", "/%762/libs/search?libraryName=nothing", `${open.url}/v2/libs/search?libraryName=nothing`, "/api/v2/%63ontext?libraryId=/a/b&query=x"]) {
      const r = await get(target);
      expect(r.json.error, target).not.toBe("invalid_api_key");
      expect(r.status, target).toBe(404);
    }
    const submit = await fetch(`${open.url}/%762/add/repo/hostb`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(submit.status).toBe(401);
  }, 60_000);

  it("the login limit counts every spelling of the login route together", async () => {
    // A new username each time, so that only the per-address limit of the route (10 a minute) can refuse.
    const spelled = ["/api/auth/login", "/%61pi/auth/login", "/api/auth/%6cogin"];
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`${open.url}${spelled[i % 3]}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: `nobody${i}`, password: "x" }) });
      expect(r.status, `attempt ${i + 1}`).toBe(401);
    }
    for (const path of spelled) {
      const r = await fetch(`${open.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "nobody-else", password: "x" }) });
      expect(r.status, path).toBe(429);
    }
  }, 60_000);
});
