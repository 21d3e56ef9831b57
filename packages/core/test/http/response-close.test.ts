import { EventEmitter } from 'node:events';
import { onResponseClose, releaseOnEnd, type ListenableResponse } from '../../src/http/response-close';

/** A socket as Node's HTTP server hands it out: `destroyed` once closed, then `close`. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  close(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

/** A response of a pipelined request: queued (no socket of its own) until it gets its turn. */
class FakeResponse extends EventEmitter {
  closed = false;
  socket: FakeSocket | null = null;
  readonly req: { socket: FakeSocket };
  constructor(socket: FakeSocket) {
    super();
    this.req = { socket };
  }
  /** What `end` was called with, in order. */
  readonly ends: unknown[][] = [];
  /** Ended by the handler: what Node's `end` answers is the response itself. */
  end(...args: unknown[]): this {
    this.ends.push(args);
    return this;
  }
  /** Sent: Node emits `close` once it is written. */
  send(): void {
    this.closed = true;
    this.emit('close');
  }
}

/** A permit that counts its releases. */
const counted = () => ({
  releases: 0,
  release() {
    this.releases++;
  },
});

const listening = (response: FakeResponse) => response as unknown as ListenableResponse;

describe('releaseOnEnd: the handler ending the response gives the permit back', () => {
  test('at end(), queued or not, once: a close or the socket closing after it gives nothing more', () => {
    const socket = new FakeSocket();
    const permits = [counted(), counted()];
    const [first, queued] = permits.map((permit, i) => {
      const response = new FakeResponse(socket);
      if (i === 0) response.socket = socket; // the response being written; the other waits
      expect(releaseOnEnd(listening(response), permit)).toBe(true);
      return response;
    }) as [FakeResponse, FakeResponse];
    expect(permits.map((permit) => permit.releases)).toEqual([0, 0]);
    const callback = (): void => undefined;
    expect(queued.end('body', 'utf8', callback)).toBe(queued);
    expect(queued.ends).toEqual([['body', 'utf8', callback]]);
    expect(permits.map((permit) => permit.releases)).toEqual([0, 1]);
    first.end();
    first.end(); // a second end (Node ignores it) releases nothing more
    expect(permits.map((permit) => permit.releases)).toEqual([1, 1]);
    first.send();
    socket.close();
    queued.emit('close');
    expect(permits.map((permit) => permit.releases)).toEqual([1, 1]);
  });

  test('an end that throws gives the permit back all the same, and throws', () => {
    const response = new FakeResponse(new FakeSocket());
    response.end = () => {
      throw new TypeError('bad chunk');
    };
    const permit = counted();
    releaseOnEnd(listening(response), permit);
    expect(() => response.end()).toThrow('bad chunk');
    expect(permit.releases).toBe(1);
  });

  test('a response never ended keeps its permit until its connection closes; one without end gives it back at close', () => {
    const socket = new FakeSocket();
    const never = counted();
    releaseOnEnd(listening(new FakeResponse(socket)), never);
    const endless = new FakeResponse(socket);
    Object.defineProperty(endless, 'end', { value: undefined }); // a response shape without end
    const plain = counted();
    releaseOnEnd(listening(endless), plain);
    expect([never.releases, plain.releases]).toEqual([0, 0]);
    socket.close();
    expect([never.releases, plain.releases]).toEqual([1, 1]);
  });

  test('a response closed already: the permit goes back at once, and false', () => {
    const response = new FakeResponse(new FakeSocket());
    response.closed = true;
    const permit = counted();
    expect(releaseOnEnd(listening(response), permit)).toBe(false);
    expect(permit.releases).toBe(1);
  });
});

describe('releaseOnEnd on queued pipelined responses', () => {
  test('batch after batch on one socket: each permit back once, when its response closes or the socket does', () => {
    const socket = new FakeSocket();
    const sent = Array.from({ length: 10 }, () => counted());
    for (const permit of sent) {
      const response = new FakeResponse(socket);
      releaseOnEnd(listening(response), permit);
      response.send();
    }
    expect(sent.map((permit) => permit.releases)).toEqual(Array(10).fill(1));
    // The next batch reuses the queue the first one left empty; the connection drops under it.
    const dropped = Array.from({ length: 10 }, () => counted());
    const responses = dropped.map((permit) => {
      const response = new FakeResponse(socket);
      releaseOnEnd(listening(response), permit);
      return response;
    });
    responses[0]?.send();
    socket.close();
    expect(dropped.map((permit) => permit.releases)).toEqual(Array(10).fill(1));
    expect(sent.map((permit) => permit.releases)).toEqual(Array(10).fill(1));
    // A response that closes after its socket did gives nothing back twice.
    responses[1]?.emit('close');
    expect(dropped[1]?.releases).toBe(1);
  });

  test('past the queue’s slots (a client that never lets its queue drain): every permit back once, one socket listener', () => {
    const socket = new FakeSocket();
    const permits = Array.from({ length: 1500 }, () => counted());
    const responses = permits.map((permit) => {
      const response = new FakeResponse(socket);
      releaseOnEnd(listening(response), permit);
      return response;
    });
    expect(socket.listenerCount('close')).toBe(1);
    for (const response of responses.slice(1024, 1200)) response.send();
    for (const response of responses.slice(0, 100)) response.send();
    expect(permits.filter((permit) => permit.releases === 1)).toHaveLength(276);
    socket.close();
    expect(permits.every((permit) => permit.releases === 1)).toBe(true);
  });

  test('onResponseClose: a watch stopped while queued is never called, the others once', () => {
    const socket = new FakeSocket();
    const calls = [0, 0, 0];
    const stops = calls.map((_, i) =>
      onResponseClose(listening(new FakeResponse(socket)), () => calls[i]!++),
    );
    stops[1]?.();
    socket.close();
    expect(calls).toEqual([1, 0, 1]);
  });
});
