import { COOLDOWN_MS, Circuits, FAILURE_THRESHOLD, UNASKED_MS } from '../../src/resilience/circuits';

/** Circuits on a clock the test moves; by default keys `a…` on node A and `b…` on node B (`null`: no `nodeOf`). */
function circuitsOn(nodeOf: ((key: string) => string | undefined) | null = (key) => key[0]) {
  let now = 1_000_000;
  const told: boolean[] = [];
  const circuits = new Circuits({
    nodeOf: nodeOf ?? undefined,
    now: () => now,
    timeoutMs: 100,
    up: (up) => told.push(up),
  });
  const open = (key: string) => {
    for (let i = 0; i < FAILURE_THRESHOLD; i++) circuits.failed(key);
  };
  return { circuits, told, open, advance: (ms: number) => (now += ms) };
}

test('one node failing opens its circuit only: the other nodes keys still go to the store', () => {
  const { circuits, open } = circuitsOn();
  open('a1');
  expect(circuits.allow('a2')).toBe(false);
  expect(circuits.allow('b1')).toBe(true);
  expect(circuits.of('a1')).toBe(circuits.of('a2'));
  expect(circuits.of('a1')).not.toBe(circuits.of('b1'));
});

test('without nodeOf, or for a key whose node is unknown or whose nodeOf throws, one circuit for the whole store', () => {
  const whole = circuitsOn(null);
  whole.open('a1');
  expect(whole.circuits.allow('b1')).toBe(false);

  const { circuits, open } = circuitsOn((key) => {
    if (key === 'boom') throw new Error('nodeOf broke');
    return key.startsWith('?') ? undefined : key[0];
  });
  open('?1');
  expect(circuits.allow('?2')).toBe(false);
  expect(circuits.allow('boom')).toBe(false); // the whole store's circuit
  expect(circuits.allow('a1')).toBe(true);
});

test('down when a circuit opens; up only once no open circuit is still asked for', () => {
  const { circuits, told, open, advance } = circuitsOn();
  circuits.failed('a1');
  expect(told).toEqual([]); // one failure opens nothing
  open('a1');
  open('b1');
  expect(told.every((up) => !up)).toBe(true);
  told.length = 0;

  advance(COOLDOWN_MS);
  expect(circuits.allow('a1')).toBe(true); // A's probe
  expect(circuits.answered('a1')).toEqual({ downMs: COOLDOWN_MS, failures: FAILURE_THRESHOLD + 1 });
  expect(told).toEqual([]); // B is still down, and asked for just now (its cooldown began)

  // Nothing asks for B any more (its master was replaced): after UNASKED_MS it no longer holds the store down.
  advance(UNASKED_MS);
  expect(circuits.answered('a2')).toBeUndefined();
  expect(told).toEqual([true]);
});

test('an open circuit that requests keep asking for keeps the store down', () => {
  const { circuits, told, open, advance } = circuitsOn();
  open('b1');
  told.length = 0;
  for (let t = 0; t < 3 * UNASKED_MS; t += 100) {
    advance(100);
    if (circuits.allow('b1')) circuits.failed('b1'); // the probe fails too
    circuits.answered('a1');
  }
  expect(told).not.toContain(true);
});

test('a probe that never reports back lapses: the next one goes after twice the timeout and a cooldown', () => {
  const { circuits, open, advance } = circuitsOn();
  open('a1');
  advance(COOLDOWN_MS);
  expect(circuits.allow('a1')).toBe(true); // the probe, whose answer goes elsewhere (its slot moved)
  advance(2 * 100 + COOLDOWN_MS - 1);
  expect(circuits.allow('a2')).toBe(false);
  advance(1);
  expect(circuits.allow('a2')).toBe(true);
  expect(circuits.allow('a3')).toBe(false);
});

test('circuits are bounded: past 1 024 nodes, those without failures are forgotten first', () => {
  const { circuits, open } = circuitsOn((key) => key);
  open('failing');
  for (let i = 0; i < 2000; i++) circuits.of(`node-${i}`);
  expect(circuits.allow('failing')).toBe(false); // kept: it has failures to remember
  expect(circuits.allow('node-1999')).toBe(true);
});
