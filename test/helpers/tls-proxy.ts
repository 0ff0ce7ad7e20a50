import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import { tempDirForFile } from "./temp.js";

export interface TlsProxy {
  /** https://127.0.0.1:PORT, serving what the target serves. */
  base: string;
  /** PEM of the private CA that signed the proxy's certificate: what an operator puts in LDS_GIT_CA_FILE. */
  caFile: string;
  close(): Promise<void>;
}

/**
 * An https front for a local http server, with a certificate from a private CA made here by the real openssl CLI:
 * a git host behind an internal CA, as operators have them.
 */
export async function startTlsProxy(targetBase: string): Promise<TlsProxy> {
  const dir = tempDirForFile("lds-tls-");
  const at = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=LDS test internal CA");
  ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
  fs.writeFileSync(at("ext.cnf"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n");
  ssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf");
  const target = new URL(targetBase);
  const server = https.createServer({ key: fs.readFileSync(at("server.key")), cert: fs.readFileSync(at("server.pem")) }, (req, res) => {
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    base: `https://127.0.0.1:${address.port}`,
    caFile: at("ca.pem"),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
