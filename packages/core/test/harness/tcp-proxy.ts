import { connect, createServer, type Server, type Socket } from 'node:net';

/** A loopback TCP proxy whose faults a test switches on and off. */
export interface TcpProxy {
  readonly port: number;
  /** Delays every chunk, both ways, by `ms` (0: none). */
  setLatency(ms: number): void;
  /**
   * `true`: deliver nothing either way, keeping connections open, as a network dropping every
   * packet; `false`: the network heals and TCP's retransmissions deliver what was held, in order.
   */
  setBlackhole(on: boolean): void;
  /** Closes the listener and every connection. */
  close(): Promise<void>;
}

/**
 * Starts a proxy on a free 127.0.0.1 port that forwards to `targetPort` on 127.0.0.1. A few
 * lines of `net`: enough to put latency or packet loss between a Redis client and its server.
 */
export function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let latencyMs = 0;
  let blackhole = false;
  const held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const forward = (from: Socket, to: Socket): void => {
    from.on('data', (chunk) => {
      const deliver = (): void => {
        if (!to.destroyed) to.write(chunk);
      };
      if (blackhole) held.push(deliver);
      else if (latencyMs === 0) deliver();
      else setTimeout(deliver, latencyMs);
    });
    from.on('close', () => to.destroy());
    from.on('error', () => to.destroy());
  };
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('proxy has no port'));
      resolve({
        port: address.port,
        setLatency: (ms) => {
          latencyMs = ms;
        },
        setBlackhole: (on) => {
          blackhole = on;
          if (!on) for (const deliver of held.splice(0)) deliver();
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
