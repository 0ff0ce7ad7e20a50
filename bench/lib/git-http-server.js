// Real git over HTTP for tests and benchmarks: `git http-backend` (the CGI program git ships) behind a small Node
// server on 127.0.0.1 that demands HTTP Basic credentials carrying `token` for the repositories made private.
// Repositories live at /<owner>/<name>.git, as on a git host, so that their library ids are /owner/repo.
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

const BACKEND = "/usr/lib/git-core/git-http-backend";
const IDENTITY = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" };

/** @param {string} token the password (after any user name) that Basic credentials must carry for a private repository */
export async function startGitHttpServer(token) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "lds-git-root-"));
  const requests = [];
  const privateRepos = new Set();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const header = req.headers.authorization ?? "";
    const given = header.startsWith("Basic ") ? Buffer.from(header.slice(6), "base64").toString().split(":").slice(1).join(":") : "";
    const authorized = given === token;
    requests.push({ url: req.url, authorized });
    const repo = url.pathname
      .split("/")
      .slice(1, 3)
      .join("/")
      .replace(/\.git$/, "");
    if (privateRepos.has(repo) && !authorized) {
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' }).end("authentication required");
      return;
    }
    const cgi = spawn(BACKEND, [], {
      env: {
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method,
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on("data", (chunk) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split("\r\n")) {
        const [name, ...rest] = line.split(":");
        const value = rest.join(":").trim();
        if (name.toLowerCase() === "status") status = Number(value.split(" ")[0]);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on("end", () => res.end());
    cgi.on("error", () => res.destroy());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  const workTrees = [];

  return {
    base,
    root,
    requests,
    /** From now on the private repositories take `next` instead (a host that stopped accepting the old token). */
    setToken(next) {
      token = next;
    },
    /** A bare repository at /<owner>/<name>.git made from a map of paths to contents; a private one needs the token. */
    async createRepo(visibility, owner, name, files, branch = "main") {
      const work = fs.mkdtempSync(path.join(os.tmpdir(), "lds-git-work-"));
      workTrees.push(work);
      const git = (...args) => execFileSync("git", args, { cwd: work, env: { ...process.env, ...IDENTITY }, stdio: "pipe" });
      git("init", "-q", "-b", branch);
      writeFiles(work, files);
      git("add", "-A");
      git("commit", "-qm", "initial");
      const bare = path.join(root, owner, `${name}.git`);
      if (fs.existsSync(bare)) throw new Error(`test git server: ${owner}/${name} exists already`);
      if (visibility === "private") privateRepos.add(`${owner}/${name}`);
      fs.mkdirSync(path.dirname(bare), { recursive: true });
      execFileSync("git", ["clone", "-q", "--bare", work, bare]);
      return {
        url: `${base}/${owner}/${name}.git`,
        /** Commit changes (null deletes a file) and push them. */
        async commit(changes) {
          for (const [file, content] of Object.entries(changes)) if (content === null) fs.rmSync(path.join(work, file));
          writeFiles(work, Object.fromEntries(Object.entries(changes).filter(([, c]) => c !== null)));
          git("add", "-A");
          git("commit", "-qm", "change");
          git("push", "-q", bare, branch);
        },
        /** Tag the current commit (annotated by default, as release tags usually are) and push the tag. */
        async tag(tagName, annotated = true) {
          git("tag", ...(annotated ? ["-a", "-m", `release ${tagName}`] : []), tagName);
          git("push", "-q", bare, `refs/tags/${tagName}`);
        },
      };
    },
    close: () =>
      new Promise((resolve) =>
        server.close(() => {
          // The repositories' work trees too: every test run left dozens of them in the temporary folder.
          for (const dir of [root, ...workTrees]) fs.rmSync(dir, { recursive: true, force: true });
          resolve();
        }),
      ),
  };
}

function writeFiles(dir, files) {
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
}
