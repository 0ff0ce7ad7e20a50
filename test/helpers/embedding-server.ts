import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHashingEmbedder } from "../../src/vectors/embedder.js";

/**
 * A fixture embedding provider on loopback that speaks the two wire formats LDS supports, exactly as their
 * providers document them: OpenAI's POST /v1/embeddings ({model, input, encoding_format, dimensions} →
 * {object: "list", data: [{object: "embedding", index, embedding}], model, usage}) and Ollama's POST /api/embed
 * ({model, input} → {model, embeddings}). The vectors are real embeddings of the text (LDS's own hashing embedder
 * at the asked width), so search quality with them is meaningful. Knobs make it slow, failing or wrong.
 */
export interface EmbeddingServer {
  /** Base addresses as LDS_EMBEDDINGS_URL takes them. */
  openaiUrl: string;
  ollamaUrl: string;
  requests: Array<{ path: string; authorization?: string; body: any }>;
  knobs: { delayMs: number; failTimes: number; dimensions?: number; down: boolean; shuffle: boolean };
  close(): Promise<void>;
}

export async function startEmbeddingServer(): Promise<EmbeddingServer> {
  const requests: EmbeddingServer["requests"] = [];
  const knobs: EmbeddingServer["knobs"] = { delayMs: 0, failTimes: 0, down: false, shuffle: false };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      if (knobs.down) return req.socket.destroy();
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      requests.push({ path: req.url ?? "", authorization: req.headers.authorization, body });
      if (knobs.delayMs) await new Promise((r) => setTimeout(r, knobs.delayMs));
      if (knobs.failTimes > 0) {
        knobs.failTimes--;
        res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "overloaded" } }));
        return;
      }
      const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
      const width = knobs.dimensions ?? body.dimensions ?? 16;
      const vectors = (await createHashingEmbedder(width).embed(input)).map((v) => Array.from(v));
      const send = (answer: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      if (req.method === "POST" && req.url === "/v1/embeddings") {
        const data = vectors.map((embedding, index) => ({ object: "embedding", index, embedding }));
        if (knobs.shuffle) data.reverse();
        return send({ object: "list", data, model: body.model, usage: { prompt_tokens: input.length, total_tokens: input.length } });
      }
      if (req.method === "POST" && req.url === "/api/embed") return send({ model: body.model, embeddings: vectors });
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    openaiUrl: `${base}/v1`,
    ollamaUrl: base,
    requests,
    knobs,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
