import http from "node:http";
import type { AddressInfo } from "node:net";

export interface FixturePage {
  id: string;
  title: string;
  storage: string;
}

/**
 * A stand-in for Confluence Cloud's REST API v2 (the real service cannot run here), speaking its wire format:
 * `GET /wiki/api/v2/spaces?keys=`, `GET /wiki/api/v2/spaces/{id}/pages?body-format=storage&limit=&cursor=` with
 * `_links.next` cursor paging (at most `pageSize` per response, whatever `limit` asks), and
 * `GET /wiki/api/v2/pages/{id}?body-format=storage`. Demands `Authorization: Bearer <token>`.
 */
export async function startConfluenceServer(options: { token: string; spaceKey: string; spaceId: string; pages: FixturePage[]; pageSize?: number }) {
  const requests: string[] = [];
  const pageSize = options.pageSize ?? 2;
  const asPage = (p: FixturePage) => ({
    id: p.id,
    status: "current",
    title: p.title,
    spaceId: options.spaceId,
    parentId: null,
    version: { number: 1, createdAt: "2026-11-01T10:00:00.000Z" },
    body: { storage: { value: p.storage, representation: "storage" } },
    _links: { webui: `/spaces/${options.spaceKey}/pages/${p.id}`, editui: `/pages/resumedraft.action?draftId=${p.id}`, tinyui: `/x/${p.id}` },
  });
  const server = http.createServer((req, res) => {
    requests.push(req.url!);
    const send = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.headers.authorization !== `Bearer ${options.token}`) return send(401, { code: 401, message: "Unauthorized; scope does not match" });
    const url = new URL(req.url!, "http://x");
    const base = `http://${req.headers.host}`;
    if (url.pathname === "/wiki/api/v2/spaces") {
      const keys = (url.searchParams.get("keys") ?? "").split(",");
      const results = keys.includes(options.spaceKey) ? [{ id: options.spaceId, key: options.spaceKey, name: "Engineering Handbook", type: "global", status: "current" }] : [];
      return send(200, { results, _links: { base: `${base}/wiki` } });
    }
    const list = /^\/wiki\/api\/v2\/spaces\/([^/]+)\/pages$/.exec(url.pathname);
    if (list) {
      if (list[1] !== options.spaceId) return send(404, { errors: [{ status: 404, code: "NOT_FOUND", title: "Space not found" }] });
      const start = Number(url.searchParams.get("cursor") ? Buffer.from(url.searchParams.get("cursor")!, "base64url").toString() : 0);
      const limit = Math.min(Number(url.searchParams.get("limit") ?? 25), pageSize);
      const slice = options.pages.slice(start, start + limit).map(asPage);
      const nextStart = start + limit;
      const links: Record<string, string> = { base: `${base}/wiki` };
      if (nextStart < options.pages.length) {
        const cursor = Buffer.from(String(nextStart)).toString("base64url");
        links.next = `/wiki/api/v2/spaces/${options.spaceId}/pages?body-format=storage&limit=${limit}&cursor=${cursor}`;
      }
      return send(200, { results: slice, _links: links });
    }
    const one = /^\/wiki\/api\/v2\/pages\/([^/]+)$/.exec(url.pathname);
    if (one) {
      const page = options.pages.find((p) => p.id === one[1]);
      return page ? send(200, asPage(page)) : send(404, { errors: [{ status: 404, code: "NOT_FOUND", title: "Page not found" }] });
    }
    send(404, { errors: [{ status: 404, code: "NOT_FOUND", title: "No route" }] });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
