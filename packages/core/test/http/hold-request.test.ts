import { EventEmitter } from 'node:events';
import { heldRequestCount, holdRequest } from '../../src';

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
