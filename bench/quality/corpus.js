// The corpus of the external quality benchmark: the documentation folders that these npm packages publish, at the
// exact versions the questions and qrels were written against (package.json pins them as devDependencies; fastify
// and pino are already dependencies). A different installed version would move pages under the qrels, so the docs
// are read from node_modules only when the version matches, and otherwise from a cache of `npm pack` tarballs in
// bench/.work/packages/ (filled on first use through npm, the ordinary client).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** Project → pinned version and the docs folder inside its package. */
export const CORPUS = {
  fastify: { version: "5.12.8", docs: "docs" },
  pino: { version: "10.4.0", docs: "docs" },
  undici: { version: "7.30.2", docs: "docs" },
  mercurius: { version: "16.10.1", docs: "docs" },
  piscina: { version: "5.3.2", docs: "docs" },
};

/**
 * The folder of the pinned package `name`: node_modules when it holds that version, else the tarball cache.
 * @param {string} root the repository's root
 * @param {string} name
 * @returns {string}
 */
export function packageDir(root, name) {
  const { version } = CORPUS[name];
  const installed = path.join(root, "node_modules", name);
  if (versionAt(installed) === version) return installed;
  const cache = path.join(root, "bench", ".work", "packages");
  const unpacked = path.join(cache, `${name}-${version}`, "package");
  if (versionAt(unpacked) === version) return unpacked;
  fs.mkdirSync(cache, { recursive: true });
  const [{ filename }] = JSON.parse(execFileSync("npm", ["pack", `${name}@${version}`, "--json", "--pack-destination", cache], { encoding: "utf8" }));
  fs.mkdirSync(path.dirname(unpacked), { recursive: true });
  execFileSync("tar", ["xzf", path.join(cache, filename), "-C", path.dirname(unpacked)]);
  if (versionAt(unpacked) !== version) throw new Error(`npm pack ${name}@${version} did not unpack into ${unpacked}`);
  return unpacked;
}

/**
 * The project's docs folder as a repository tree: every file under it, by its path in the package (docs/…), so
 * that the qrels' paths are the package's own.
 * @param {string} root
 * @param {string} name
 * @returns {Record<string, Buffer>}
 */
export function docsTree(root, name) {
  const dir = packageDir(root, name);
  const docs = CORPUS[name].docs;
  /** @type {Record<string, Buffer>} */
  const tree = {};
  for (const entry of fs.readdirSync(path.join(dir, docs), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    tree[path.relative(dir, full).split(path.sep).join("/")] = fs.readFileSync(full);
  }
  return tree;
}

function versionAt(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
  } catch {
    return undefined;
  }
}
