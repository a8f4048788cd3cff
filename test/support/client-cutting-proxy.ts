/**
 * A TCP proxy in front of the service that can cut the next upload: once armed, the first connection that starts
 * a `PUT /v1/uploads/` is destroyed (both sides, as a dropped network does) after `afterBytes` bytes went through.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CuttingProxy {
  url: string;
  /** Where connections go (the service's port, known once it listens). */
  setTarget(port: number): void;
  /** Cut the next upload after this many bytes from the client; `onCut` runs at the cut, before the client sees it. */
  armCut(afterBytes: number, onCut?: () => void): void;
  readonly cuts: number;
  close(): Promise<void>;
}

export async function startCuttingProxy(): Promise<CuttingProxy> {
  let targetPort = 0;
  let armed: { afterBytes: number; onCut?: () => void } | null = null;
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let seen = 0;
    let cut: { afterBytes: number; onCut?: () => void } | null = null;
    let first = true;
    client.on('data', (chunk: Buffer) => {
      if (first) {
        first = false;
        if (armed !== null && chunk.subarray(0, 16).toString('latin1') === 'PUT /v1/uploads/') {
          cut = armed;
          armed = null;
        }
      }
      seen += chunk.length;
      if (cut !== null && seen >= cut.afterBytes) {
        cuts++;
        cut.onCut?.();
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setTarget: (port) => {
      targetPort = port;
    },
    armCut: (afterBytes, onCut) => {
      armed = { afterBytes, onCut };
    },
    get cuts() {
      return cuts;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
