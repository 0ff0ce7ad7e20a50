// Compiles every WebAssembly text module under src/ (*.wat) into dist/ beside the JavaScript that loads it, with
// wabt (the WebAssembly Binary Toolkit's own parser). Part of `npm run build`.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import initWabt from "wabt";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const wabt = await initWabt();
const sources = fs.readdirSync(path.join(root, "src"), { recursive: true }).filter((file) => file.endsWith(".wat"));
for (const relative of sources) {
  const text = fs.readFileSync(path.join(root, "src", relative), "utf8");
  const module = wabt.parseWat(relative, text, { simd: true });
  try {
    module.validate();
    const { buffer } = module.toBinary({});
    const out = path.join(root, "dist", relative.replace(/\.wat$/, ".wasm"));
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, buffer);
  } finally {
    module.destroy();
  }
}
