import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkPatternSize,
  generatePattern,
  MAX_PATTERN_REQUESTS,
  patternRequestBound,
  PATTERNS,
  type PatternOptions,
} from '../src/patterns/patterns';
import { replay } from '../src/replay/replay';
import { runCli } from './run-cli';

const base: PatternOptions = {
  name: 'steady',
  durationMs: 10_000,
  rps: 20,
  keys: 1,
  windowMs: 10_000,
  seed: 1,
};

function count(options: PatternOptions): number {
  let n = 0;
  generatePattern(options, { request: () => n++ });
  return n;
}

const DAY = 86_400_000;

describe('pattern sizes', () => {
  test('every pattern generates no more than its bound, and the bound is close', () => {
    const shapes: Array<Partial<PatternOptions>> = [
      { durationMs: 10_000, rps: 20, keys: 1, windowMs: 10_000 },
      { durationMs: 7_300, rps: 0.3, keys: 7, windowMs: 1000 },
      { durationMs: 60_000, rps: 5, keys: 40, windowMs: 2 },
      { durationMs: 2_000, rps: 0.001, keys: 300, windowMs: 2 },
      { durationMs: 100_000, rps: 3, keys: 3, windowMs: 333 },
    ];
    for (const name of PATTERNS) {
      for (const shape of shapes) {
        const options = { ...base, ...shape, name };
        const generated = count(options);
        const bound = patternRequestBound(options);
        expect({ options, within: generated <= bound }).toEqual({ options, within: true });
        // Never an estimate far above what comes (flash-sale, Poisson: a margin of standard
        // deviations): a pattern that fits is not refused.
        const close = bound <= 1.05 * generated + options.keys + 10 * Math.sqrt(generated) + 10;
        expect({ options, close }).toEqual({ options, close: true });
      }
    }
  });

  test('boundary counts its window-opening requests: the audit repro is refused up front', () => {
    const options: PatternOptions = {
      ...base,
      name: 'boundary',
      windowMs: 2,
      durationMs: 2_000_000,
      keys: 1000,
      rps: 0.001,
    };
    // 500 000 cycles of two windows, each with one probe per key.
    expect(patternRequestBound(options)).toBeGreaterThan(4.9e8);
    expect(() => checkPatternSize(options)).toThrow(/requests.*lower --duration.*--keys.*raise --window/);
  });

  test('the command refuses it at once, naming what to lower', async () => {
    const started = performance.now();
    const run = await runCli([
      'replay',
      '--pattern',
      'boundary',
      '--policy',
      'fixed-window 1/2ms',
      '--window',
      '2ms',
      '--duration',
      '2000s',
      '--keys',
      '1000',
      '--rps',
      '0.001',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^sluice: --pattern boundary: .*5\.00e\+8 requests.*lower --duration/);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test('every pattern just over the cap is refused, just under it is not', () => {
    for (const name of PATTERNS) {
      const options: PatternOptions = { ...base, name, durationMs: DAY, keys: 1000, windowMs: 60_000 };
      // The rps at which the pattern's bound comes to the cap (flash-sale's mean is under rps).
      const guess = (MAX_PATTERN_REQUESTS * 1000) / (options.keys * options.durationMs);
      const atCap = (guess * MAX_PATTERN_REQUESTS) / patternRequestBound({ ...options, rps: guess });
      expect(() => checkPatternSize({ ...options, rps: atCap * 1.1 })).toThrow(/at most 50,000,000/);
      expect(() => checkPatternSize({ ...options, rps: atCap * 0.9 })).not.toThrow();
    }
  });

  test('flash-sale over a year at a low rate: time and memory follow the requests, not the seconds', () => {
    const started = performance.now();
    const generated = count({ ...base, name: 'flash-sale', durationMs: 365 * DAY, rps: 0.001, keys: 1 });
    // 0.001 r/s for a year is 31 536 requests' worth at the surge's mean (Poisson: about).
    expect(generated).toBeGreaterThan(20_000);
    expect(generated).toBeLessThan(40_000);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test('few requests over many periods and keys take little time whatever the duration', () => {
    const started = performance.now();
    for (const name of PATTERNS) {
      count({ ...base, name, durationMs: 365 * DAY, rps: 1e-6, keys: 1000, windowMs: 3_600_000 * 24 });
    }
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('the store-filled note', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-max-keys-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A JSON-lines log: one request per `[second, key]`. */
  function log(name: string, requests: ReadonlyArray<[number, string]>): string {
    const lines = requests.map(([second, key]) =>
      JSON.stringify({ msec: 1_700_000_000 + second, remote_addr: key, request_uri: '/' }),
    );
    writeFileSync(join(dir, name), `${lines.join('\n')}\n`);
    return join(dir, name);
  }
  const NOTE = /store reached --max-keys/;

  test('keys that went idle and expired fill the store without forgetting anything live: no note', async () => {
    // 30 addresses, 10 s apart: gcra 10r/s keeps each one's state 100 ms.
    const path = log(
      'idle.jsonl',
      Array.from({ length: 30 }, (_, i) => [i * 10, `192.0.2.${i + 1}`] as [number, string]),
    );
    const result = await replay({ input: { kind: 'log', path }, policies: ['gcra 10r/s'], maxKeys: 10 });
    expect(result.policies[0]?.forgotten).toBe(0);
    const run = await runCli(['replay', path, '--policy', 'gcra 10r/s', '--max-keys', '10'], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(NOTE);
  });

  test('exactly --max-keys keys, all live: the store is full but forgets none: no note', async () => {
    const requests: Array<[number, string]> = [];
    for (let second = 0; second < 5; second++)
      for (let i = 0; i < 10; i++) requests.push([second, `192.0.2.${i + 1}`]);
    const path = log('full.jsonl', requests);
    const run = await runCli(['replay', path, '--policy', 'fixed-window 100/1h', '--max-keys', '10'], dir);
    expect(run.stdout).not.toMatch(NOTE);
  });

  test('more live keys than --max-keys: the note', async () => {
    const requests: Array<[number, string]> = [];
    for (let second = 0; second < 5; second++)
      for (let i = 0; i < 30; i++) requests.push([second, `192.0.2.${i + 1}`]);
    const path = log('live.jsonl', requests);
    const result = await replay({
      input: { kind: 'log', path },
      policies: ['fixed-window 100/1h'],
      maxKeys: 10,
    });
    // 30 live keys in turn through 10 places: 20 forgotten in the first second, then all 30 in
    // each of the next four.
    expect(result.policies[0]?.forgotten).toBe(20 + 4 * 30);
    const run = await runCli(['replay', path, '--policy', 'fixed-window 100/1h', '--max-keys', '10'], dir);
    expect(run.stdout).toMatch(NOTE);
  });
});
