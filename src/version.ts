import { readFileSync } from "node:fs";

/** The version of this LDS, from package.json, written into every archive and checked by restore. */
export const APP_VERSION: string = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
