import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { parseCombinedLine } from '../src/input/combined-format';
import { splitCsvLine } from '../src/input/csv-fields';
import { forEachLine, MAX_LINE_BYTES } from '../src/input/lines';
import { EXIT } from '../src/main';
import { replay } from '../src/replay/replay';
import { runCli } from './run-cli';

// Logs written by someone else: a client controls its user agent, a CSV writer quotes what it
// is given, a file may be corrupt or a decompression bomb. Reading must stay bounded and a bad
// line must stay one bad line.

const MIB = 1024 * 1024;
const POLICY = 'gcra 10r/s burst=20';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-cli-hostile-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

function combined(second: number, userAgent = 'ua', address = '192.0.2.1'): string {
  return `${address} - - [01/May/2024:12:00:${String(second).padStart(2, '0')} +0000] "GET /sku?id=1 HTTP/1.1" 200 5 "-" "${userAgent}"`;
}

async function replayed(path: string, input: { key?: string; format?: 'csv' | 'json' | 'combined' } = {}) {
  return replay({ input: { kind: 'log', path, ...input }, policies: [POLICY] });
}

/** A combined line of exactly `bytes` bytes: its user agent `x`s, then as many `unit`s as fit. */
function combinedOfBytes(bytes: number, unit: string): { line: string; userAgent: string } {
  const room = bytes - Buffer.byteLength(combined(0, ''));
  const count = Math.floor(room / Buffer.byteLength(unit));
  const raw = 'x'.repeat(room - count * Buffer.byteLength(unit)) + unit.repeat(count);
  const line = combined(0, raw);
  expect(Buffer.byteLength(line)).toBe(bytes);
  return { line, userAgent: raw.replaceAll('\\"', '"') };
}

describe('a line longer than the bound is one bad line, and reading goes on', () => {
  test('the bound is 1 MiB', () => {
    expect(MAX_LINE_BYTES).toBe(MIB);
  });

  test('a combined line with a 10 M-character user agent: listed, skipped, the rest replayed', async () => {
    const path = file('long.log', [combined(0), combined(1, 'A'.repeat(10_000_000)), combined(2)].join('\n'));
    const run = await runCli(['replay', path, '--policy', POLICY], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain('2 requests');
    expect(run.stdout).toContain('1 of 3 lines could not be read and were skipped');
    expect(run.stdout).toContain(
      `  line 2: line longer than 1048576 bytes: ${JSON.stringify(`${combined(1, 'A'.repeat(80)).slice(0, 77)}...`)}`,
    );
  });

  test('the bound is in bytes of UTF-8, not characters: a line of exactly 1 MiB is read, one byte more is not', async () => {
    const exact = combinedOfBytes(MAX_LINE_BYTES, '€').line; // 3 bytes a character
    const over = combinedOfBytes(MAX_LINE_BYTES + 1, '€').line;
    expect(over.length).toBeLessThan(MAX_LINE_BYTES / 2);
    const result = await replayed(file('bytes.log', [exact, over, combined(1)].join('\r\n')));
    expect(result.lines).toBe(3);
    expect(result.requests).toBe(2);
    expect(result.lineErrors.map(({ line, reason }) => ({ line, reason }))).toEqual([
      { line: 2, reason: 'line longer than 1048576 bytes' },
    ]);
  });

  test('a combined line just under the bound parses, with plain text or escapes (no regexp stack overflow)', async () => {
    const plain = combinedOfBytes(MAX_LINE_BYTES, 'A');
    const escapes = combinedOfBytes(MAX_LINE_BYTES, '\\"'); // half a million escaped quotes
    expect(parseCombinedLine(plain.line)?.request.headers?.['user-agent']).toBe(plain.userAgent);
    expect(parseCombinedLine(escapes.line)?.request.headers?.['user-agent']).toBe(escapes.userAgent);
    const path = file('under.log', [plain.line, escapes.line, combined(2)].join('\n'));
    const result = await replayed(path, { key: '$http_user_agent' });
    expect(result.unparsed).toBe(0);
    expect(result.requests).toBe(3);
  });

  test('the combined parser itself does not overflow on a 20 M-character line', () => {
    const line = combined(0, 'A'.repeat(20_000_000));
    expect(parseCombinedLine(line)?.request.headers?.['user-agent']).toHaveLength(20_000_000);
  });

  test('a gzip bomb (540 MiB without a newline) is one bad line; memory does not grow with it', async () => {
    const member = gzipSync(Buffer.alloc(MIB, 'A'));
    const bomb = Buffer.concat([
      ...Array.from({ length: 540 }, () => member),
      gzipSync('\n{"time": 1714564800, "remote_addr": "192.0.2.1"}\n'),
    ]);
    const before = process.memoryUsage().rss;
    const result = await replayed(file('bomb.log.gz', bomb), { format: 'json' });
    // Holding the line would take 540 MiB at least (and fail: longer than a string may be).
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * MIB);
    expect(result.lines).toBe(2);
    expect(result.requests).toBe(1);
    expect(result.lineErrors).toEqual([
      { line: 1, reason: 'line longer than 1048576 bytes', text: `"${'A'.repeat(77)}..."` },
    ]);
  }, 60_000);

  test('a line longer than the bound split across many small chunks is dropped as it comes', async () => {
    const lines: Array<[number, string]> = [];
    const tooLong: number[] = [];
    const chunks = ['a\n', ...Array.from({ length: 3000 }, () => 'B'.repeat(1000)), '\nc'];
    const total = await forEachLine(
      Readable.from(
        chunks.map((chunk) => Buffer.from(chunk)),
        { objectMode: false },
      ),
      {
        line: (text, lineNumber) => lines.push([lineNumber, text]),
        tooLong: (head, lineNumber) => {
          expect(head.length).toBeLessThanOrEqual(100);
          tooLong.push(lineNumber);
        },
      },
    );
    expect(lines).toEqual([
      [1, 'a'],
      [3, 'c'],
    ]);
    expect(tooLong).toEqual([2]);
    expect(total).toBe(3);
  });
});

describe('CSV records per RFC 4180: a quoted field may hold newlines', () => {
  // What Python's csv.writer writes for a user agent holding newlines: records end in \r\n, the
  // field is quoted and its newlines are kept as they are.
  const forged = Array.from({ length: 40 }, (_, i) => `2024-05-01T12:00:03.0${i}Z,198.51.100.66,forged`);
  const header = 'time,remote_addr,http_user_agent';
  const records = [
    '2024-05-01T12:00:00Z,192.0.2.1,normal',
    `2024-05-01T12:00:01Z,192.0.2.2,"x\n${forged.join('\n')}\nsays ""hi"""`,
    '2024-05-01T12:00:02Z,192.0.2.1,normal',
    'not,a record',
  ];

  test.each([
    ['\r\n', 'crlf'],
    ['\n', 'lf'],
  ])('the field is one field of one record, never forged requests (records end in %j)', async (eol, name) => {
    const path = file(`inj-${name}.csv`, `${header}${eol}${records.join(eol)}${eol}`);
    const result = await replayed(path, { key: '$http_user_agent' });
    expect(result.format).toBe('csv');
    expect(result.requests).toBe(3);
    expect(result.lines).toBe(46);
    expect(result.hotKeys.map(({ key, requests }) => ({ key, requests }))).toEqual([
      { key: 'normal', requests: 2 },
      { key: `x\n${forged.join('\n')}\nsays "hi"`, requests: 1 },
    ]);
    // Line numbers stay the file's: the bad record after the long one is line 46.
    expect(result.lineErrors.map(({ line, reason }) => ({ line, reason }))).toEqual([
      { line: 46, reason: '2 fields where the header has 3' },
    ]);
    expect(result.lastMs).toBe(Date.UTC(2024, 4, 1, 12, 0, 2));
  });

  test('a record longer than the bound is one bad record: the lines inside its quotes are not replayed', async () => {
    const path = file(
      'long-record.csv',
      [
        header,
        records[0],
        `2024-05-01T12:00:01Z,192.0.2.2,"${'A'.repeat(2 * MIB)}`,
        ...forged,
        '"',
        records[2],
      ].join('\n'),
    );
    const result = await replayed(path);
    expect(result.requests).toBe(2);
    expect(result.hotKeys.map(({ key }) => key)).toEqual(['192.0.2.1']);
    expect(result.lines).toBe(45);
    expect(result.lineErrors.map(({ line, reason }) => ({ line, reason }))).toEqual([
      { line: 3, reason: 'record longer than 1048576 bytes (lines 3 to 44: a quote left open?)' },
    ]);
  });

  test('a quote left open at the end of the log: one bad record', async () => {
    const path = file(
      'open.csv',
      [header, records[0], `2024-05-01T12:00:01Z,192.0.2.2,"x`, ...forged].join('\n'),
    );
    const result = await replayed(path);
    expect(result.requests).toBe(1);
    expect(result.lines).toBe(43);
    expect(result.lineErrors.map(({ line, reason }) => ({ line, reason }))).toEqual([
      { line: 3, reason: 'an unterminated or misplaced quote' },
    ]);
  });

  test('a stray quote (not from a CSV writer) costs its own line only', async () => {
    const path = file(
      'stray.csv',
      [
        header,
        '2024-05-01T12:00:00Z,192.0.2.2,"x',
        '2024-05-01T12:00:01Z,192.0.2.1,"normal"',
        records[2],
      ].join('\n'),
    );
    const result = await replayed(path, { key: '$http_user_agent' });
    expect(result.requests).toBe(2);
    expect(result.hotKeys.map(({ key }) => key)).toEqual(['normal']);
    expect(result.lineErrors.map(({ line, reason }) => ({ line, reason }))).toEqual([
      { line: 2, reason: 'an unterminated or misplaced quote' },
    ]);
  });

  test('a quote inside an unquoted field is a character, as before', async () => {
    const path = file(
      'inner-quote.csv',
      [header, '2024-05-01T12:00:00Z,192.0.2.1,say "hi', records[2]].join('\n'),
    );
    const result = await replayed(path, { key: '$http_user_agent' });
    expect(result.unparsed).toBe(0);
    expect(result.hotKeys.map(({ key }) => key).sort()).toEqual(['normal', 'say "hi']);
  });

  test('any records written as CSV come back as they were, however the stream is cut', async () => {
    const field = fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r', ' ', 'é') });
    const record = fc.array(field, { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(record, { minLength: 1, maxLength: 8 }),
        fc.constantFrom('\n', '\r\n'),
        fc.array(fc.nat(), { maxLength: 10 }),
        async (rows, eol, cuts) => {
          const write = (fields: string[]) =>
            fields.length === 1 && fields[0] === ''
              ? '""'
              : fields.map((f) => (/[",\r\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f)).join(',');
          const text = `header${eol}${rows.map(write).join(eol)}${eol}`;
          const bytes = Buffer.from(text);
          const at = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
          const chunks = [0, ...at].map((start, i) => bytes.subarray(start, at[i] ?? bytes.length));
          const seen: Array<[number, string[] | undefined]> = [];
          const handlers = {
            csv: false,
            line(line: string, lineNumber: number) {
              if (lineNumber === 1) handlers.csv = true;
              else seen.push([lineNumber, splitCsvLine(line)]);
            },
            tooLong() {
              throw new Error('no line is that long');
            },
          };
          const total = await forEachLine(Readable.from(chunks, { objectMode: false }), handlers);
          let lineNumber = 2;
          const expected = rows.map((fields): [number, string[]] => {
            const at = lineNumber;
            lineNumber += (write(fields).match(/\n/g) ?? []).length + 1;
            return [at, fields];
          });
          expect(seen).toEqual(expected);
          expect(total).toBe(lineNumber - 1);
        },
      ),
    );
  });
});

describe('a UTF-8 byte-order mark is not part of the first line', () => {
  const BOM = '\uFEFF';
  test.each([
    [
      'bom.jsonl',
      [
        '{"time": 1714564800, "remote_addr": "192.0.2.1"}',
        '{"time": 1714564801, "remote_addr": "192.0.2.1"}',
      ],
    ],
    ['bom.log', [combined(0), combined(1)]],
    ['bom.csv', ['time,remote_addr', '1714564800,192.0.2.1', '1714564801,192.0.2.1']],
  ])('%s: every line replayed, detected or named', async (name, lines) => {
    const path = file(name, `${BOM}${lines.join('\n')}\n`);
    for (const format of [
      undefined,
      name.endsWith('.log') ? 'combined' : name.endsWith('.csv') ? 'csv' : 'json',
    ] as const) {
      const result = await replayed(path, format === undefined ? {} : { format });
      expect(result.unparsed).toBe(0);
      expect(result.requests).toBe(2);
    }
  });
});
