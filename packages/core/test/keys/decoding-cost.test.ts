import { createHttpLimiter, type HttpRequest } from '../../src/adapter';
import { decodeKeyText } from '../../src/keys/key-text';

/** 5 000 escapes that start a UTF-8 sequence none completes: the probe of issue #16, item 3. */
const INVALID = '%C3'.repeat(5000);
/** As long, every escape part of a character: what decoding valid text costs. */
const VALID = '%C3%A9'.repeat(2500);
/**
 * As long, and as long once keyed: each escape decodes to '%', written back '%25', as each invalid
 * byte is written back '%C3'. The benign twin of a key that reads the hostile value.
 */
const PERCENT = '%25'.repeat(5000);
/** As long, nothing to decode. */
const PLAIN = 'a'.repeat(INVALID.length);

/** The least time of `rounds` rounds of `calls` calls, in ns per call: the figure noise inflates least. */
function nsPerCall(run: () => void, calls: number, rounds = 7): number {
  let best = Infinity;
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) run();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / calls);
  }
  return best;
}

/** Hostile over benign cost, each measured after a warm-up, in one run on one machine. */
function costRatio(hostile: () => void, benign: () => void, calls = 20): number {
  nsPerCall(hostile, 2, 1);
  nsPerCall(benign, calls, 2);
  return nsPerCall(hostile, calls) / nsPerCall(benign, calls);
}

/** The limiter's whole cost for one request, on its synchronous (in-memory) path. */
function decider(key: string): (request: HttpRequest) => () => void {
  const limits = createHttpLimiter<object, () => void>({ key, rate: '1000000000/1s' });
  return (request) => () => {
    if (limits.decideSync({}, request)?.kind !== 'next') throw new Error('expected an admission');
  };
}

const request = (url: string, headers: HttpRequest['headers'] = {}): HttpRequest => ({
  remoteAddress: '203.0.113.9',
  url,
  headers,
});

// Issue #16, item 3: decoding ran before the decision, threw and caught per invalid byte, and
// decoded every argument: ?x=<5000 × %C3>&sku_id=1 cost ~33 ms per request. A key now costs what
// reading its text costs: hostile input within a small factor of benign input of the same length.
describe('decoding cost: linear, without exceptions, only what the key reads', () => {
  test('decodeKeyText: 5 000 invalid escapes cost about what 5 000 valid ones do', () => {
    expect(decodeKeyText(INVALID)).toBe(INVALID);
    expect(
      costRatio(
        () => decodeKeyText(INVALID),
        () => decodeKeyText(VALID),
      ),
    ).toBeLessThan(3);
  });

  test('$arg_sku_id: an argument the key does not read is not decoded', () => {
    const decide = decider('$arg_sku_id');
    const hostile = decide(request(`/sku?x=${INVALID}&sku_id=1`));
    const benign = decide(request(`/sku?x=${PLAIN}&sku_id=1`));
    expect(costRatio(hostile, benign)).toBeLessThan(3);
  });

  test('$arg_x: the argument the key reads is decoded in linear time', () => {
    const decide = decider('$arg_x');
    expect(
      costRatio(decide(request(`/sku?x=${INVALID}`)), decide(request(`/sku?x=${PERCENT}`))),
    ).toBeLessThan(3);
  });

  test('$cookie_session: another cookie is not decoded; the one read is, in linear time', () => {
    const session = decider('$cookie_session');
    const other = (value: string) => request('/', { cookie: `x=${value}; session=1` });
    expect(costRatio(session(other(INVALID)), session(other(PLAIN)))).toBeLessThan(3);
    const x = decider('$cookie_x');
    expect(costRatio(x(other(INVALID)), x(other(PERCENT)))).toBeLessThan(3);
  });

  test('$uri: a path of invalid escapes is decoded in linear time', () => {
    const decide = decider('$uri');
    expect(costRatio(decide(request(`/${INVALID}`)), decide(request(`/${PERCENT}`)))).toBeLessThan(3);
  });
});
