// Builds the dashboard (src/ui) into dist/ui: one JavaScript and one CSS bundle with content-hashed names, and the
// index.html that loads them. No inline script or style: the Content-Security-Policy needs no 'unsafe-inline'.
import { build } from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "dist", "ui");
fs.rmSync(out, { recursive: true, force: true });

const result = await build({
  entryPoints: [path.join(root, "src", "ui", "main.tsx")],
  bundle: true,
  format: "esm",
  target: ["chrome110", "firefox110", "safari16"],
  minify: true,
  sourcemap: true,
  outdir: path.join(out, "assets"),
  entryNames: "app-[hash]",
  jsx: "automatic",
  jsxImportSource: "preact",
  metafile: true,
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
const script = outputs.find((f) => f.endsWith(".js"));
const style = outputs.find((f) => f.endsWith(".css"));
const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>LDS dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/${style}">
<script type="module" src="/dashboard/assets/${script}"></script>
</head>
<body>
<noscript>The LDS dashboard needs JavaScript. The same actions are available with the lds command.</noscript>
<div id="app"></div>
</body>
</html>
`;
fs.writeFileSync(path.join(out, "index.html"), html);
