import type { JobLease } from "../store/records.js";
import { snippetWriterOf, type OpenVolume } from "../volume/open-volume.js";
import { embeddingText, estimateTokens, type Snippet } from "./snippet.js";
import { purgeRetiredBatches, yieldTurn } from "./purge-retired.js";
import { oldGarbageCollector } from "../util/young-garbage.js";
import { probeOf, type ProbeSearch } from "./new-batch-probe.js";
import { delaypoint } from "../util/failpoint.js";

/**
 * Snippets written per transaction: a few milliseconds of SQLite and vector work each, so that a server answers
 * requests between them, and all the memory an ingestion holds of a repository's snippets at a time.
 */
export const WRITE_CHUNK = 250;

/** 4,000 snippets: the 2,000-file repository of bench/ingest.js (60,000 snippets) then runs 15 major collections of 2-3 ms. */
const GC_EVERY_CHUNKS = 16;

export interface ReplaceOptions {
  /** The error when the source produced no snippet: an empty set never replaces a library's content. */
  whenEmpty?: () => Error;
  signal?: AbortSignal;
  /** A job runner's lease on the job: the publication happens only while it holds (store.ts, publishBatch). */
  lease?: JobLease;
}

/**
 * Replace the snippets and vectors of a library version ("" = its current content) with `snippets`, read as they
 * come (a generator parses one file at a time) so that memory stays flat however large the repository. They are
 * written as a new batch that readers do not see, chunk by chunk, then published in one small transaction:
 * a reader sees the old set or the new one, never a mix, and the server never waits on a transaction the size of
 * a library. In the server, a large batch's search parts are built before it is published, so that it goes live
 * warm (SearchIndex.prepare). The replaced batch is deleted afterwards, a chunk at a time. A crash leaves the old content served
 * and an unfinished batch, which the next ingestion of the library retires and deletes.
 */
export async function replaceLibrarySnippets(volume: OpenVolume, libraryId: string, snippets: Iterable<Snippet> | AsyncIterable<Snippet>, version = "", options: ReplaceOptions = {}): Promise<number> {
  const { store, embedder } = volume;
  const writer = snippetWriterOf(volume);
  const batch = await store.snippets.openBatch(libraryId, version);
  const target = { libraryId, version, batch };
  let count = 0;
  /** The first snippet's title and vector: the new batch's first search, made below once it is live. */
  let probe: ProbeSearch | undefined;
  // The chunk being written while the next one is parsed and embedded: in the server the writer is a thread of
  // its own, so the two overlap (a command writes at once, inline). One chunk at most waits, so memory stays flat.
  let writing: Promise<void> = Promise.resolve();
  // For the tests of two ingestions of one version at once: this one's batch is open while the other starts.
  await delaypoint("ingestion-batch-open", 20_000, options.signal);
  // A command's peak memory then stays where it is, wherever the scavenges fall (young-garbage.ts).
  const collectOldGarbage = oldGarbageCollector(GC_EVERY_CHUNKS);
  try {
    for await (const chunk of inChunks(snippets, WRITE_CHUNK)) {
      options.signal?.throwIfAborted();
      const embedded = await embedder.embed(chunk.map(embeddingText), { signal: options.signal });
      probe ??= probeOf(chunk[0]!.title, embedded[0]!);
      // Each step in a turn of its own: a local embedder resolves at once, and awaiting a resolved promise does not
      // let the event loop answer the requests waiting (parsing, embedding and writing a chunk take 5-30 ms each).
      await yieldTurn();
      await writing;
      // Posted together: the writer takes its requests in order, the chunk then a step of the index's upkeep.
      writing = Promise.all([writer.append(target, chunk.map(storedRow), embedded), writer.tidy()]).then(() => {});
      // Awaited before the next chunk or the publication; a failure meanwhile must not count as unhandled.
      writing.catch(() => {});
      count += chunk.length;
      collectOldGarbage();
      await yieldTurn();
    }
    // Every chunk's snippets and vectors are in before the batch is published (snippet-writer.ts says why).
    await writing;
    if (count === 0 && options.whenEmpty) throw options.whenEmpty();
    await volume.index.prepare({ libraryId, version, batch }, count, options.signal);
    options.signal?.throwIfAborted();
    const replaced = await store.snippets.liveBatch(libraryId, version);
    await store.snippets.publishBatch(libraryId, version, batch, options.lease);
    volume.index.retire({ libraryId, version, batch: replaced });
  } catch (err) {
    await writing.catch(() => {});
    await store.snippets.discardBatch(libraryId, version, batch);
    await purgeRetiredBatches(volume);
    throw err;
  }
  await purgeRetiredBatches(volume);
  // One search of a large new batch as a reader's would be, before the library shows finalized (SearchIndex.probe),
  // and a read of the rows it found: the first real search after a refresh then pays no first-time costs.
  if (probe) await store.snippets.load(libraryId, version, await volume.index.probe({ libraryId, version, batch }, count, probe, options.signal)).catch(() => []);
  return count;
}

function storedRow(s: Snippet) {
  return {
    kind: s.kind,
    title: s.title,
    description: s.description,
    language: s.language,
    content: s.content,
    sourcePath: s.anchor ? `${s.sourcePath}#${s.anchor}` : s.sourcePath,
    tokens: estimateTokens(s.content),
    pageTitle: s.pageTitle ?? null,
  };
}

async function* inChunks<T>(items: Iterable<T> | AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let chunk: T[] = [];
  for await (const item of items) {
    chunk.push(item);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length) yield chunk;
}
