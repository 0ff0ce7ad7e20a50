// A second process writing to the bench's disk (bench/swap.js --disk-writer): 1 GiB files of zeros, each removed
// before the next, until it is killed or `--minutes` pass. The load a backup, a log or another service puts on a
// shared disk while a library is refreshed.
import fs from "node:fs";
import path from "node:path";

const dir = process.argv[2];
const until = Date.now() + Number(process.argv[3] ?? 10) * 60_000;
const file = path.join(dir, "disk-writer.bin");
const block = Buffer.alloc(1 << 20);
process.on("SIGTERM", () => {
  fs.rmSync(file, { force: true });
  process.exit(0);
});
fs.mkdirSync(dir, { recursive: true });
while (Date.now() < until) {
  const fd = fs.openSync(file, "w");
  for (let i = 0; i < 1024 && Date.now() < until; i++) fs.writeSync(fd, block);
  fs.closeSync(fd);
  fs.rmSync(file, { force: true });
  // A turn of the event loop between files, so that SIGTERM is handled.
  await new Promise((r) => setImmediate(r));
}
fs.rmSync(file, { force: true });
