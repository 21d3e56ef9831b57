import type { IncomingMessage, ServerResponse } from 'node:http';

/** A client whose socket holds more unsent than this is too slow to follow, and is dropped. */
const MAX_BUFFERED_BYTES = 256 * 1024;

/**
 * The server-sent-events clients of one dashboard, at most `maxClients` at once and
 * `maxPerAddress` of them from one client address (so that one client, a local process say,
 * cannot hold every place): each gets every update as it is sent; one that cannot keep up (its
 * unsent data past 256 kB) is disconnected, so a stalled browser costs a bounded buffer, not a
 * growing one.
 */
export class EventStream {
  readonly #clients = new Set<ServerResponse>();
  /** Streams open per client address (only addresses with one or more). */
  readonly #perAddress = new Map<string, number>();

  constructor(
    private readonly maxClients: number,
    private readonly maxPerAddress: number,
  ) {}

  get size(): number {
    return this.#clients.size;
  }

  /**
   * Answers `req` with an event stream and keeps it, then sends it `first` (the history a new
   * page draws from). When `maxClients` are connected, answers 503 with `Retry-After` instead;
   * when its address has `maxPerAddress`, 429.
   */
  open(req: IncomingMessage, res: ServerResponse, first: () => string): void {
    // Gone already (it left while an async `authorize` or middleware decided): its `close` has
    // been emitted, so kept, it would hold a place for good, until every page got 503.
    if (res.destroyed || res.closed || req.socket.destroyed) return;
    const address = clientAddress(req);
    const fromAddress = this.#perAddress.get(address) ?? 0;
    if (this.#clients.size >= this.maxClients || fromAddress >= this.maxPerAddress) {
      const full = this.#clients.size >= this.maxClients;
      res.writeHead(full ? 503 : 429, {
        'Content-Type': 'text/plain; charset=utf-8',
        'Retry-After': '10',
        'Cache-Control': 'no-store',
      });
      res.end(
        full
          ? `at most ${this.maxClients} dashboard pages at once\n`
          : `at most ${this.maxPerAddress} dashboard pages at once from one address\n`,
      );
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      // nginx would otherwise hold the events back in its buffer.
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    this.#clients.add(res);
    this.#perAddress.set(address, fromAddress + 1);
    // On `close`, whether the client left or `send` dropped it: its address's place comes back then.
    const leave = (): void => {
      this.#clients.delete(res);
      const open = (this.#perAddress.get(address) ?? 1) - 1;
      if (open > 0) this.#perAddress.set(address, open);
      else this.#perAddress.delete(address);
    };
    res.once('close', leave);
    req.socket.setNoDelay(true);
    res.write(`retry: 2000\n\n${first()}`);
  }

  /** Sends one event to every client. */
  send(event: string, data: string): void {
    const message = eventText(event, data);
    for (const res of this.#clients) {
      if (res.destroyed || res.writableLength > MAX_BUFFERED_BYTES) {
        this.#clients.delete(res);
        res.destroy();
        continue;
      }
      res.write(message);
    }
  }

  /** Ends every stream. */
  close(): void {
    for (const res of this.#clients) res.end();
    this.#clients.clear();
    this.#perAddress.clear();
  }
}

/** The client's address as one text per client: an IPv4 client seen by a dual-stack socket as `::ffff:a.b.c.d` is `a.b.c.d`. */
function clientAddress(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? '';
  return address.toLowerCase().startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** One event in the stream's text format (`data` is one line of JSON). */
export function eventText(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}
