import { resolveDataDir } from "../config/data-volume.js";
import { openVolume, type OpenVolume } from "../ops/open-volume.js";

/** Open the data volume for one short administrative command and close it afterwards. */
export async function withVolume<T>(dataDir: string | undefined, use: (volume: OpenVolume) => T | Promise<T>): Promise<T> {
  const volume = openVolume(resolveDataDir(dataDir));
  try {
    return await use(volume);
  } finally {
    volume.close();
  }
}
