import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { embeddingSettingsFromEnv, type EmbeddingSettings } from "../../src/config/embedding-settings.js";
import { isLdsError } from "../../src/errors.js";
import { createHashingEmbedder } from "../../src/vectors/embedder.js";
import { createRemoteEmbedder } from "../../src/vectors/remote-embedder.js";
import { startEmbeddingServer, type EmbeddingServer } from "../helpers/embedding-server.js";

let provider: EmbeddingServer;
const settings = (overrides: Partial<EmbeddingSettings> = {}): EmbeddingSettings => ({
  provider: "openai",
  url: provider.openaiUrl,
  model: "test-embed",
  dimensions: 16,
  apiKey: "sk-test-key",
  batch: 4,
  timeoutMs: 2000,
  queryTimeoutMs: 500,
  ...overrides,
});
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e as Error & { code?: string; hint?: string },
  );

beforeAll(async () => {
  provider = await startEmbeddingServer();
});
afterAll(() => provider.close());
beforeEach(() => {
  provider.requests.length = 0;
  Object.assign(provider.knobs, { delayMs: 0, failTimes: 0, dimensions: undefined, down: false, shuffle: false });
});

describe("embedding providers (issue 13)", () => {
  it("send OpenAI-compatible batches with the key, and put answers back in input order", async () => {
    provider.knobs.shuffle = true;
    const texts = Array.from({ length: 10 }, (_, i) => `text number ${i} about retries and timeouts ${"x".repeat(i)}`);
    const vectors = await createRemoteEmbedder(settings()).embed(texts);
    expect(provider.requests.map((r) => r.path)).toEqual(["/v1/embeddings", "/v1/embeddings", "/v1/embeddings"]);
    expect(provider.requests[0]).toEqual({ path: "/v1/embeddings", authorization: "Bearer sk-test-key", body: { model: "test-embed", input: texts.slice(0, 4), encoding_format: "float", dimensions: 16 } });
    expect(provider.requests.map((r) => r.body.input.length)).toEqual([4, 4, 2]);
    const expected = await createHashingEmbedder(16).embed(texts);
    vectors.forEach((v, i) => expect(Array.from(v).map((x) => x.toFixed(5))).toEqual(Array.from(expected[i]!).map((x) => x.toFixed(5))));
  });

  it("speak Ollama's /api/embed", async () => {
    const vectors = await createRemoteEmbedder(settings({ provider: "ollama", url: provider.ollamaUrl, apiKey: undefined })).embed(["one text", "another"]);
    expect(vectors).toHaveLength(2);
    expect(provider.requests).toEqual([{ path: "/api/embed", authorization: undefined, body: { model: "test-embed", input: ["one text", "another"] } }]);
  });

  it("retry a busy provider, and fail clearly on one that times out or answers the wrong dimension", async () => {
    provider.knobs.failTimes = 2;
    expect(await createRemoteEmbedder(settings()).embed(["x"])).toHaveLength(1);
    expect(provider.requests).toHaveLength(3);

    provider.knobs.delayMs = 400;
    const slow = await failure(createRemoteEmbedder(settings({ timeoutMs: 150 })).embed(["x"]));
    expect(isLdsError(slow, "embedding_failed")).toBe(true);
    expect(slow.message).toBe(`The embedding provider at ${provider.openaiUrl}/embeddings did not answer within 150 ms (3 attempts).`);
    expect(slow.message).not.toContain("sk-test-key");

    provider.knobs.delayMs = 0;
    provider.knobs.dimensions = 8;
    const wrong = await failure(createRemoteEmbedder(settings()).embed(["x"]));
    expect(wrong.message).toContain("answered 8 dimensions, but LDS_EMBEDDINGS_DIMENSIONS is 16");

    provider.knobs.down = true;
    const down = await failure(createRemoteEmbedder(settings()).embed(["x"], { attempts: 1 }));
    expect(down.message).toMatch(/cannot be reached \(/);
  });

  it("are configured by LDS_EMBEDDINGS_*, refusing what cannot work before anything starts", () => {
    expect(embeddingSettingsFromEnv({})).toBeNull();
    expect(
      embeddingSettingsFromEnv({ LDS_EMBEDDINGS_URL: "http://127.0.0.1:11434", LDS_EMBEDDINGS_PROVIDER: "ollama", LDS_EMBEDDINGS_MODEL: "nomic-embed-text", LDS_EMBEDDINGS_DIMENSIONS: "768" }),
    ).toMatchObject({
      provider: "ollama",
      url: "http://127.0.0.1:11434",
      dimensions: 768,
      batch: 64,
      timeoutMs: 30_000,
      queryTimeoutMs: 2_000,
    });
    for (const [env, message] of [
      [{ LDS_EMBEDDINGS_URL: "http://127.0.0.1:1/v1", LDS_EMBEDDINGS_DIMENSIONS: "8" }, /LDS_EMBEDDINGS_MODEL is required/],
      [{ LDS_EMBEDDINGS_URL: "http://127.0.0.1:1/v1", LDS_EMBEDDINGS_MODEL: "m" }, /LDS_EMBEDDINGS_DIMENSIONS must be a whole number/],
      [{ LDS_EMBEDDINGS_URL: "http://u:p@127.0.0.1:1/v1", LDS_EMBEDDINGS_MODEL: "m", LDS_EMBEDDINGS_DIMENSIONS: "8" }, /must not hold credentials/],
      [{ LDS_EMBEDDINGS_URL: "http://127.0.0.1:1/v1", LDS_EMBEDDINGS_MODEL: "m", LDS_EMBEDDINGS_DIMENSIONS: "8", LDS_EMBEDDINGS_PROVIDER: "bert" }, /must be openai or ollama/],
      [
        { LDS_EMBEDDINGS_URL: "http://127.0.0.1:1/v1", LDS_EMBEDDINGS_MODEL: "m", LDS_EMBEDDINGS_DIMENSIONS: "8", LDS_EMBEDDINGS_API_KEY_FILE: "/nonexistent/key" },
        /LDS_EMBEDDINGS_API_KEY_FILE cannot be read \(ENOENT\)/,
      ],
    ] as const) {
      expect(() => embeddingSettingsFromEnv(env), JSON.stringify(env)).toThrow(message);
    }
  });
});
