import { resolveDataDir } from "../../config/data-volume.js";
import { rotateKey } from "../../ops/rotate-key.js";
import { commandDatabase } from "../database.js";

/** `lds secrets rotate-key`: a new secret.key, every stored secret re-sealed in one transaction (server stopped). */
export async function run(argv: { dataDir?: string; json: boolean }): Promise<number> {
  const result = await rotateKey(resolveDataDir(argv.dataDir, process.env), commandDatabase());
  if (argv.json) {
    process.stdout.write(JSON.stringify(result) + "\n");
    return 0;
  }
  if (result.shared) {
    process.stdout.write(
      [
        `Rotated the key of ${result.shared.database}: ${result.resealed} stored secret${result.resealed === 1 ? "" : "s"} re-sealed in one transaction; ${result.shared.keyFile} holds the new key.`,
        `The previous key is kept as ${result.oldKeyFile} (nothing was deleted).`,
        `Copy ${result.shared.keyFile} to every replica's LDS_SECRET_KEY_FILE before starting it: a replica with the old key is refused at start (key_missing).`,
        "Archives made before now carry the key they were sealed with: they still restore as they are.",
        "",
      ].join("\n"),
    );
    return 0;
  }
  process.stdout.write(
    [
      `Rotated secret.key: ${result.resealed} stored secret${result.resealed === 1 ? "" : "s"} re-sealed in one transaction.`,
      `The previous key is kept as ${result.oldKeyFile} (nothing was deleted).`,
      "Archives made before now carry the key they were sealed with: they still restore as they are.",
      "Back up now, so that the newest archive carries the new key.",
      "",
    ].join("\n"),
  );
  return 0;
}
