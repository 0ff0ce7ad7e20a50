import net from "node:net";

/**
 * A TCP proxy in front of a test server, to make the network fail on cue while the server keeps its state:
 * - `down()` drops every connection and refuses new ones (as a crashed server would);
 * - `downAfterUpload(n, forMs)`: go down once clients have sent n bytes (the middle of an upload) and come back forMs
 *   after that moment. The outage is timed from when it begins, never from when the test asked for it: on a busy
 *   machine the upload may reach n bytes late, and bringing the proxy "up" while it is still up used to fail to
 *   listen and leave the first listener serving, so the outage never happened.
 * - `cutDownloadAfter(n)`: drop the first connection whose response passes n bytes, once (a dropped download).
 */
export async function startProxy(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let server: net.Server;
  let port = 0;
  let uploaded = 0;
  let downAt: number | null = null;
  let outageMs = 0;
  let outage: Promise<void> | null = null;
  let cutAt: number | null = null;
  const stats = { cuts: 0, connections: 0 };

  const down = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        stats.connections++;
        const upstream = net.connect(targetPort, "127.0.0.1");
        sockets.add(client).add(upstream);
        let sent = 0;
        const close = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        upstream.on("data", (chunk: Buffer) => {
          const before = sent;
          sent += chunk.length;
          if (cutAt !== null && sent > cutAt) {
            // Deliver the bytes up to the cut, then close: the client sees a response that ends too early.
            const keep = Math.max(0, cutAt - before);
            cutAt = null;
            stats.cuts++;
            upstream.destroy();
            client.end(chunk.subarray(0, keep));
            return;
          }
          client.write(chunk);
        });
        client.on("data", (chunk: Buffer) => {
          uploaded += chunk.length;
          if (downAt !== null && uploaded > downAt) {
            downAt = null;
            outage = down()
              .then(() => new Promise((resolve) => setTimeout(resolve, outageMs)))
              .then(listen);
            return;
          }
          upstream.write(chunk);
        });
        client.on("close", close).on("error", close);
        upstream.on("close", close).on("error", close);
      });
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });

  await listen();
  return {
    stats,
    get endpoint() {
      return `http://127.0.0.1:${port}`;
    },
    down,
    downAfterUpload(bytes: number, forMs: number) {
      uploaded = 0;
      downAt = bytes;
      outageMs = forMs;
    },
    /** Resolves once an outage begun by downAfterUpload is over and the proxy listens again. */
    async backUp() {
      await outage;
    },
    cutDownloadAfter(bytes: number) {
      cutAt = bytes;
    },
    async close() {
      await outage?.catch(() => {});
      await down().catch(() => {});
    },
  };
}
