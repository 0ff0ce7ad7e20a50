import net from "node:net";

/**
 * A TCP proxy in front of a test server, to make the network fail on cue: `down()` drops every connection and
 * refuses new ones (as a crashed server would), `up()` brings it back with the server's state intact, and
 * `cutAfter(n)` drops the next connection after n bytes from the server (a dropped download).
 */
export async function startProxy(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let cutBudget: number | null = null;
  let server: net.Server;
  let port = 0;

  const listen = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, "127.0.0.1");
        sockets.add(client).add(upstream);
        let sent = 0;
        const limit = cutBudget;
        cutBudget = null;
        upstream.on("data", (chunk: Buffer) => {
          if (limit !== null && sent + chunk.length > limit) {
            client.write(chunk.subarray(0, limit - sent));
            client.destroy();
            upstream.destroy();
            return;
          }
          sent += chunk.length;
          client.write(chunk);
        });
        client.on("data", (chunk) => upstream.write(chunk));
        const close = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on("close", close).on("error", close);
        upstream.on("close", close).on("error", close);
      });
      server.listen(port, "127.0.0.1", () => {
        port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });

  await listen();
  return {
    get port() {
      return port;
    },
    get endpoint() {
      return `http://127.0.0.1:${port}`;
    },
    async down() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
    up: listen,
    cutAfter(bytes: number) {
      cutBudget = bytes;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
