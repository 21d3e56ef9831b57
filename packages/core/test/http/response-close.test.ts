import { EventEmitter } from 'node:events';
import { onResponseClose, releaseOnClose, type ListenableResponse } from '../../src/http/response-close';

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

describe('releaseOnClose on queued pipelined responses', () => {
  test('batch after batch on one socket: each permit back once, when its response closes or the socket does', () => {
    const socket = new FakeSocket();
    const sent = Array.from({ length: 10 }, () => counted());
    for (const permit of sent) {
      const response = new FakeResponse(socket);
      releaseOnClose(listening(response), permit);
      response.send();
    }
    expect(sent.map((permit) => permit.releases)).toEqual(Array(10).fill(1));
    // The next batch reuses the queue the first one left empty; the connection drops under it.
    const dropped = Array.from({ length: 10 }, () => counted());
    const responses = dropped.map((permit) => {
      const response = new FakeResponse(socket);
      releaseOnClose(listening(response), permit);
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
      releaseOnClose(listening(response), permit);
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
