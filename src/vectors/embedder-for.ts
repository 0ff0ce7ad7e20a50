import type { EmbeddingSettings } from "../config/embedding-settings.js";
import { createHashingEmbedder, type Embedder } from "./embedder.js";
import { createRemoteEmbedder } from "./remote-embedder.js";

/** The embedder the settings name: a provider's (LDS_EMBEDDINGS_URL set), else the offline hashing embedder. */
export function embedderFor(settings: EmbeddingSettings | null): Embedder {
  return settings ? createRemoteEmbedder(settings) : createHashingEmbedder();
}
