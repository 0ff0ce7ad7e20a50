import fs from "node:fs";

/**
 * `text` with every mention of the folder `root` (as given, and as its real path) replaced by `label`: for messages
 * that reach clients, which must name no file of the server (issue 39).
 */
export function withoutPath(text: string, root: string, label = "<data volume>"): string {
  let real = root;
  try {
    real = fs.realpathSync(root);
  } catch {
    // a folder that is gone: its path as given is the one to hide
  }
  let hidden = text;
  for (const path of new Set([root, real])) hidden = hidden.split(path).join(label);
  return hidden;
}
