import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsync, FastifyReply } from "fastify";
import { LdsError } from "../errors.js";

/** Where `npm run build` puts the dashboard (scripts/build-ui.js): index.html and assets/ with hashed names. */
const UI_DIR = fileURLToPath(new URL("../ui/", import.meta.url));

/**
 * No inline script or style anywhere, so the policy needs no 'unsafe-inline'; the page talks to its own origin only
 * and may not be framed (clickjacking of the restore and revoke buttons).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES: Record<string, string> = { ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".html": "text/html; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png" };

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The built files, read once: a few hundred kilobytes that every page load needs. */
function loadAssets(): Map<string, Asset> | null {
  if (!fs.existsSync(path.join(UI_DIR, "index.html"))) return null;
  const assets = new Map<string, Asset>();
  const add = (name: string, file: string) => {
    const body = fs.readFileSync(file);
    assets.set(name, { body, type: TYPES[path.extname(file)] ?? "application/octet-stream", etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` });
  };
  add("index.html", path.join(UI_DIR, "index.html"));
  const assetDir = path.join(UI_DIR, "assets");
  for (const name of fs.existsSync(assetDir) ? fs.readdirSync(assetDir) : []) add(`assets/${name}`, path.join(assetDir, name));
  return assets;
}

/**
 * The dashboard, served by `lds serve` itself: `/`, `/admin` and `/dashboard` lead to it; every page under
 * /dashboard/ is the one index.html (the page routes itself), and assets/ have content-hashed names, cached for good.
 */
export const dashboardRoutes: FastifyPluginAsync = async (app) => {
  const assets = loadAssets();
  for (const entry of ["/", "/admin", "/admin/", "/dashboard"]) app.get(entry, async (_request, reply) => reply.redirect("/dashboard/", 302));

  app.get<{ Params: { "*": string } }>("/dashboard/*", async (request, reply) => {
    if (!assets) {
      throw new LdsError("route_not_found", "The dashboard is not built in this installation.", { hint: "Run npm run build, then start the server again." });
    }
    const wanted = request.params["*"];
    const isAsset = wanted.startsWith("assets/");
    const asset = isAsset ? assets.get(wanted) : assets.get("index.html");
    if (!asset) throw new LdsError("route_not_found", `No dashboard file ${wanted.slice(0, 100)}.`);
    securityHeaders(reply);
    reply
      .header("Cache-Control", isAsset ? "public, max-age=31536000, immutable" : "no-cache")
      .header("ETag", asset.etag)
      .type(asset.type);
    if (request.headers["if-none-match"] === asset.etag) return reply.status(304).send();
    return reply.send(asset.body);
  });
};

function securityHeaders(reply: FastifyReply): void {
  reply
    .header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    .header("X-Content-Type-Options", "nosniff")
    .header("Referrer-Policy", "no-referrer")
    .header("X-Frame-Options", "DENY")
    .header("Cross-Origin-Opener-Policy", "same-origin");
}
