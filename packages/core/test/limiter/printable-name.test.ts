import fc from 'fast-check';
import { createLimiter, MemoryStore, type LimiterInfo, type MetricsSink } from '../../src';

const PRINTABLE = /^[\x20-\x7e]{1,128}$/;
const store = new MemoryStore();

/** The name a limiter without `name` reports under, from its prefix. */
function defaultName(prefix: string): string {
  let seen: LimiterInfo | undefined;
  const sink: MetricsSink = {
    limiter(info) {
      seen = info;
      return {
        decided() {},
        storeCall() {},
        storeError() {},
        storeUp() {},
        blockCacheHit() {},
        leaseCall() {},
      };
    },
  };
  createLimiter({ rate: '1r/s', prefix, metrics: sink, store });
  return (seen as LimiterInfo).name;
}

/** The documented reading of a name: each `\uXXXX` is that UTF-16 code unit; nothing else is escaped. */
function unescaped(name: string): string {
  return name.replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

describe('default limiter names (the prefix, made printable)', () => {
  test('two long routes sharing their first 128 characters get two names', () => {
    const base =
      '/api/v1/organizations/:organizationId/projects/:projectId/environments/:environmentId/deployments/:deploymentId';
    const stdout = `sluice:GET ${base}/logs/stdout`;
    const stderr = `sluice:GET ${base}/logs/stderr`;
    expect(stdout.length).toBe(134);
    const [a, b] = [defaultName(stdout), defaultName(stderr)];
    expect(a).not.toBe(b);
    for (const name of [a, b]) {
      expect(name).toMatch(PRINTABLE);
      expect(name).toHaveLength(128);
      // A readable head, then a digest of the whole name.
      expect(name).toMatch(/^sluice:GET \/api\/v1\/organizations\/.*\.\.\.#[0-9a-f]{16}$/);
    }
    expect(defaultName(stdout)).toBe(a);
  });

  test('printable names of up to 128 characters stay as they are', () => {
    for (const prefix of [
      'sluice',
      'sluice:GET /users/:id',
      'C:\\rate\\limits',
      'back\\slash \\x41 \\u00e',
      'x'.repeat(128),
      `${'x'.repeat(110)}...#0123456789abcdef`.slice(-127),
    ]) {
      expect(defaultName(prefix)).toBe(prefix);
    }
    expect(defaultName('zone-\u00e9')).toBe('zone-\\u00e9');
  });

  test('escaping is one-to-one: the text `\\u0007` and the control character print differently', () => {
    const literal = defaultName('bell-\\u0007');
    const control = defaultName('bell-\u0007');
    expect(literal).not.toBe(control);
    expect(control).toBe('bell-\\u0007');
    expect(unescaped(literal)).toBe('bell-\\u0007');
    expect(defaultName('\\\u0007')).not.toBe(defaultName('\\u005c\u0007'));
  });

  test('a long name is bounded even when escaping makes it longer', () => {
    const a = defaultName('\u00e9'.repeat(40));
    const b = defaultName(`${'\u00e9'.repeat(39)}\u00ea`);
    expect(a).toMatch(PRINTABLE);
    expect(a).not.toBe(b);
  });

  test('property: every name is printable; one not digested reads back as its prefix', () => {
    // Pieces that spell escapes, and the characters they stand for.
    const unit = fc.constantFrom('\\', 'u', '\\u', '00', '07', 'e9', 'E9', '\u0007', '\u00e9', '\ud800', 'x');
    fc.assert(
      fc.property(fc.string({ unit, minLength: 1, maxLength: 30 }), (prefix) => {
        const name = defaultName(prefix);
        expect(name).toMatch(PRINTABLE);
        if (!/\.\.\.#[0-9a-f]{16}$/.test(name)) expect(unescaped(name)).toBe(prefix);
      }),
    );
  });

  test('property: distinct prefixes get distinct names, long or short', () => {
    const unit = fc.constantFrom('\\', 'u', '\\u', '00', '07', '\u0007', 'x');
    // A common head of 100 characters: names differ only around and past the bound.
    const prefix = fc.string({ unit, maxLength: 20 }).map((tail) => `${'h'.repeat(100)}${tail}`);
    fc.assert(
      fc.property(prefix, prefix, (a, b) => {
        fc.pre(a !== b);
        expect(defaultName(a)).not.toBe(defaultName(b));
      }),
    );
    // A printable name of exactly 128 characters that looks digested is digested too.
    const lookalike = `${'h'.repeat(108)}...#0123456789abcdef`;
    expect(defaultName(lookalike)).toMatch(/^h{108}\.\.\.#[0-9a-f]{16}$/);
    expect(defaultName(lookalike)).not.toBe(lookalike);
  });
});
