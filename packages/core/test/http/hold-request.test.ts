import { EventEmitter } from 'node:events';
import {
  createHttpLimiter,
  heldRequestCount,
  holdRequest,
  type HttpOutcome,
  type LimitEvent,
  type RateLimitOptions,
} from '../../src/adapter';
import { fakeClock } from '../contract/fake-clock';

type Req = Record<string, never>;
type Handler = () => void;

/** A socket as Node's HTTP server hands it out: `destroyed` once closed, then `close`. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  close(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

/** A pipelined response: queued by Node, so no `socket` of its own and no `close` when the client leaves. */
const queuedResponse = (socket: FakeSocket) =>
  Object.assign(new EventEmitter(), { closed: false, socket: null, req: { socket } });

const settled = <T>(promise: Promise<T>) => {
  const state: { value?: T } = {};
  void promise.then((value) => (state.value = value));
  return state;
};

afterEach(() => jest.useRealTimers());

describe('holdRequest', () => {
  test('resolves true after the delay, false as soon as the client leaves', async () => {
    jest.useFakeTimers();
    const response = Object.assign(new EventEmitter(), { closed: false });
    const onLeave = jest.fn();
    const held = settled(holdRequest(500, response, onLeave));
    await jest.advanceTimersByTimeAsync(499);
    expect(held.value).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(held.value).toBe(true);
    expect(onLeave).not.toHaveBeenCalled();

    const left = holdRequest(500, response, onLeave);
    response.closed = true;
    response.emit('close');
    expect(await left).toBe(false);
    expect(onLeave).toHaveBeenCalledTimes(1); // the adapters give the turn back here
    expect(await holdRequest(500, response, onLeave)).toBe(false);
    expect(onLeave).toHaveBeenCalledTimes(2);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('pipelined requests: one listener on their socket, whose close releases them all and clears every timer', async () => {
    jest.useFakeTimers();
    const socket = new FakeSocket();
    const onLeave = jest.fn();
    const holds = Array.from({ length: 1000 }, (_, i) =>
      holdRequest(100 * (i + 1), queuedResponse(socket), onLeave),
    );
    expect(socket.listenerCount('close')).toBe(1);
    expect([heldRequestCount(), jest.getTimerCount()]).toEqual([1000, 1000]);
    socket.close();
    expect(await Promise.all(holds)).toEqual(Array(1000).fill(false));
    expect(onLeave).toHaveBeenCalledTimes(1000);
    expect([heldRequestCount(), jest.getTimerCount(), socket.listenerCount('close')]).toEqual([0, 0, 0]);
  });

  test('a kept-alive socket keeps no listener once its held requests ran', async () => {
    jest.useFakeTimers();
    const socket = new FakeSocket();
    const holds = [holdRequest(100, queuedResponse(socket)), holdRequest(200, queuedResponse(socket))];
    await jest.advanceTimersByTimeAsync(200);
    expect(await Promise.all(holds)).toEqual([true, true]);
    expect([heldRequestCount(), socket.listenerCount('close')]).toEqual([0, 0]);
  });

  test('the socket is checked again when the timer fires; a closed one is not held at all', async () => {
    jest.useFakeTimers();
    const socket = new FakeSocket();
    const onLeave = jest.fn();
    const held = settled(holdRequest(100, queuedResponse(socket), onLeave));
    socket.destroyed = true; // closed, its `close` not yet emitted
    await jest.advanceTimersByTimeAsync(100);
    expect(held.value).toBe(false);
    expect(await holdRequest(100, queuedResponse(socket), onLeave)).toBe(false);
    expect(onLeave).toHaveBeenCalledTimes(2);
    expect([heldRequestCount(), jest.getTimerCount(), socket.listenerCount('close')]).toEqual([0, 0, 0]);
  });
});

describe('maxHeld', () => {
  const delayed = { rate: '1r/s', burst: 10, algorithm: 'leaky-bucket' } as const;
  const limitsOf = (options: Partial<RateLimitOptions<Req, Handler>>) =>
    createHttpLimiter<Req, Handler>({ ...delayed, clock: fakeClock(), ...options } as RateLimitOptions<
      Req,
      Handler
    >);
  const request = { remoteAddress: '203.0.113.9', url: '/', headers: {} };
  const asDelay = (outcome: HttpOutcome<Handler>) => {
    if (outcome.kind !== 'delay') throw new Error(`expected a delay, got ${outcome.kind}`);
    return outcome;
  };

  test('past maxHeld a delayed request is refused as the limit refuses, and its turn given back', async () => {
    const limited: Array<LimitEvent<Req>> = [];
    const limits = limitsOf({ maxHeld: 2, status: 503, onLimit: (event) => limited.push(event) });
    const [limiter] = limits.limiters;
    expect((await limits.decide({}, request)).kind).toBe('next');
    const second = asDelay(await limits.decide({}, request));
    asDelay(await limits.decide({}, request));
    const before = await limiter!.peek(request.remoteAddress);
    const refused = await limits.decide({}, request);
    // Its turn would have come in 3 s.
    expect(refused).toMatchObject({ kind: 'reply', status: 503 });
    expect(refused.headers).toContainEqual(['Retry-After', '3']);
    expect(refused.headers).toContainEqual(['RateLimit', '"1r/s";r=0;t=4']);
    expect(limited).toEqual([
      expect.objectContaining({ dryRun: false, decision: expect.objectContaining({ allowed: false }) }),
    ]);
    expect(await limiter!.peek(request.remoteAddress)).toEqual(before);
    // A cancelled delay frees its slot: the next excess request is held again.
    second.cancel();
    second.cancel(); // once is all it takes
    asDelay(await limits.decide({}, request));
    expect((await limits.decide({}, request)).kind).toBe('reply');
  });

  test('a hold frees its slot when it ends; a static fallback answers a refusal', async () => {
    jest.useFakeTimers();
    const limits = limitsOf({ maxHeld: 1, fallback: { body: 'busy' } });
    await limits.decide({}, request);
    const held = asDelay(await limits.decide({}, request));
    expect(await limits.decide({}, request)).toMatchObject({ kind: 'reply', status: 200, body: 'busy' });
    const ran = settled(held.hold(Object.assign(new EventEmitter(), { closed: false })));
    await jest.advanceTimersByTimeAsync(held.delayMs);
    expect(ran.value).toBe(true);
    expect((await limits.decide({}, request)).kind).toBe('delay');
  });

  test('maxHeld 0 refuses every delay; Infinity, none', async () => {
    const none = limitsOf({ maxHeld: 0 });
    await none.decide({}, request);
    expect((await none.decide({}, request)).kind).toBe('reply');
    const all = limitsOf({ maxHeld: Infinity });
    await all.decide({}, request);
    for (let i = 0; i < 10; i++) expect((await all.decide({}, request)).kind).toBe('delay');
  });
});
