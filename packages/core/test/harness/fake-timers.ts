/**
 * Fakes only the timers (`setTimeout`, `setInterval` and their clears): promises, I/O callbacks,
 * `setImmediate`, the clocks and `performance` stay real, so a test on a real Redis advances the
 * renewal and retry timers by hand while its calls go and come back.
 */
export function fakeTimersOnly(): void {
  jest.useFakeTimers({
    doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'Date', 'hrtime', 'performance'],
  });
}
