import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { execa } from "execa";
import { tempDir } from "./temp.js";

/**
 * Real git over HTTP: `git http-backend` (the CGI program git ships) behind a small Node server that demands
 * `Authorization: Basic` with the given token for repositories under /private/. Repositories under /public/ are
 * open. Bound to 127.0.0.1 only.
 */
export async function startGitServer(token: string) {
  const root = tempDir("lds-git-root-");
  const requests: Array<{ url: string; authorized: boolean }> = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, "http://x");
    const header = req.headers.authorization ?? "";
    const given = header.startsWith("Basic ") ? Buffer.from(header.slice(6), "base64").toString().split(":").slice(1).join(":") : "";
    const authorized = given === token;
    requests.push({ url: req.url!, authorized });
    if (url.pathname.startsWith("/private/") && !authorized) {
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' }).end("authentication required");
      return;
    }
    const cgi = spawn("/usr/lib/git-core/git-http-backend", [], {
      env: {
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method!,
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split("\r\n")) {
        const [name, ...rest] = line.split(":");
        const value = rest.join(":").trim();
        if (name!.toLowerCase() === "status") status = Number(value.split(" ")[0]);
        else res.setHeader(name!, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on("end", () => res.end());
    cgi.on("error", () => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    base,
    requests,
    /** Create a bare repository at /<visibility>/<owner>/<name>.git from a map of file paths to contents. */
    async createRepo(visibility: "public" | "private", owner: string, name: string, files: Record<string, string>, branch = "main") {
      const work = tempDir("lds-git-work-");
      const git = (...args: string[]) => execa("git", args, { cwd: work, env: { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
      await git("init", "-q", "-b", branch);
      await writeFiles(work, files);
      await git("add", "-A");
      await git("commit", "-qm", "initial");
      const bare = path.join(root, visibility, owner, `${name}.git`);
      fs.mkdirSync(path.dirname(bare), { recursive: true });
      await execa("git", ["clone", "-q", "--bare", work, bare]);
      return {
        url: `${base}/${visibility}/${owner}/${name}.git`,
        /** Commit more files (and deletions, as null) and push them. */
        async commit(changes: Record<string, string | null>) {
          for (const [file, content] of Object.entries(changes)) {
            if (content === null) fs.rmSync(path.join(work, file));
          }
          await writeFiles(work, Object.fromEntries(Object.entries(changes).filter(([, c]) => c !== null)) as Record<string, string>);
          await git("add", "-A");
          await git("commit", "-qm", "change");
          await git("push", "-q", bare, branch);
        },
      };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function writeFiles(dir: string, files: Record<string, string>) {
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
}
