import { get, type IncomingMessage } from 'node:http';

/** One server-sent event. */
export interface ServerEvent {
  readonly event: string;
  readonly data: unknown;
}

/** A connection to an event stream, reading events as they come. */
export interface EventReader {
  readonly response: IncomingMessage;
  /** Resolves with the first event (from the start of the stream) that `match` accepts. */
  next(match: (event: ServerEvent) => boolean, timeoutMs?: number): Promise<ServerEvent>;
  close(): void;
}

/** Opens `url` (an event stream) and parses its events; from `localAddress` when given (another loopback address). */
export function readEvents(
  url: string,
  headers: Record<string, string> = {},
  localAddress?: string,
): Promise<EventReader> {
  return new Promise((resolve, reject) => {
    const request = get(url, { headers, ...(localAddress && { localAddress }) }, (response) => {
      const events: ServerEvent[] = [];
      const waiting = new Set<() => void>();
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = Object.fromEntries(
            block
              .split('\n')
              .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
          ) as Record<string, string>;
          if (fields.event !== undefined)
            events.push({ event: fields.event, data: JSON.parse(fields.data ?? 'null') as unknown });
        }
        for (const wake of waiting) wake();
      });
      let seen = 0;
      resolve({
        response,
        next(match, timeoutMs = 10_000) {
          return new Promise((found, fail) => {
            const look = (): void => {
              for (; seen < events.length; seen++) {
                const event = events[seen] as ServerEvent;
                if (match(event)) {
                  seen++;
                  waiting.delete(look);
                  clearTimeout(timer);
                  found(event);
                  return;
                }
              }
            };
            const timer = setTimeout(() => {
              waiting.delete(look);
              fail(new Error(`no matching event within ${timeoutMs} ms`));
            }, timeoutMs);
            waiting.add(look);
            look();
          });
        },
        close() {
          request.destroy();
        },
      });
    });
    request.on('error', reject);
  });
}
