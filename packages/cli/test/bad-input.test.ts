import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT } from '../src/main';
import { replay } from '../src/replay/replay';
import { runCli } from './run-cli';

const POLICY = ['--policy', 'gcra 10r/s burst=20'];
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-cli-bad-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('bad input: a clear message, and a non-zero exit when nothing could be replayed', () => {
  test('a missing file', async () => {
    const run = await runCli(['replay', 'no-such.log', ...POLICY], dir);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe(`sluice: cannot read ${join(dir, 'no-such.log')}: no such file (ENOENT)\n`);
    expect(run.stdout).toBe('');
  });

  test('a directory', async () => {
    const run = await runCli(['replay', '.', ...POLICY], dir);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('it is a directory (EISDIR)');
  });

  test('a log in no format it knows', async () => {
    const path = file('weird.log', 'Nov 24 12:00:00 host sshd[42]: Accepted publickey for root\n');
    const run = await runCli(['replay', path, ...POLICY], dir);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain(`${path}: unknown log format: line 1 ("Nov 24 12:00:00 host sshd[42]`);
    expect(run.stderr).toContain('pass --format combined|json|csv');
  });

  test('an unknown --format', async () => {
    const run = await runCli(['replay', 'access.log', '--format', 'xml', ...POLICY]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe('sluice: --format "xml": expected auto, combined, json, csv\n');
  });

  test('a CSV whose header names no time', async () => {
    const path = file('no-time.csv', 'when,remote_addr\n1714564800,192.0.2.1\n');
    const run = await runCli(['replay', path, '--format', 'csv', ...POLICY], dir);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('names no time field');
    const named = await runCli(['replay', path, '--time-field', 'when', ...POLICY], dir);
    expect(named.code).toBe(EXIT.ok);
  });

  test('lines that do not parse are counted and listed with their numbers; the rest is replayed', async () => {
    const lines = ['{"time": 1714564800, "remote_addr": "192.0.2.1"}'];
    for (let i = 0; i < 30; i++)
      lines.push(i % 2 === 0 ? 'garbage' : '{"time": 1714564801, "remote_addr": "192.0.2.1"}');
    const run = await runCli(['replay', file('mixed.jsonl', lines.join('\n')), ...POLICY], dir);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain('16 requests');
    expect(run.stdout).toContain('15 of 31 lines could not be read and were skipped');
    expect(run.stdout).toContain('  line 2: not JSON: "garbage"');
    expect(run.stdout).toContain('  line 30: not JSON: "garbage"');
    expect(run.stdout).not.toContain('line 32:');
    // 20 listed at most, the rest counted.
    expect(run.stdout).not.toContain('  line 31:');
  });

  test('a policy the core refuses: its SluiceConfigError message', async () => {
    const run = await runCli(['replay', 'access.log', '--policy', 'gcra 10r/x']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe('sluice: --policy "gcra 10r/x": rate "10r/x": unit must be r/s or r/m\n');
    const burst = await runCli(['replay', 'access.log', '--policy', 'fixed-window 600/1m nodelay']);
    expect(burst.stderr).toBe(
      "sluice: --policy \"fixed-window 600/1m nodelay\": nodelay true: only applies to algorithm 'leaky-bucket' (got 'fixed-window')\n",
    );
  });

  test('a policy with a word that means nothing', async () => {
    const run = await runCli(['replay', 'access.log', '--policy', 'gcra 10r/s burts=20']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain(
      '--policy "gcra 10r/s burts=20": unknown word "burts=20"; expected an algorithm (gcra,',
    );
  });

  test('no policy, an unknown option, a bad key', async () => {
    expect((await runCli(['replay', 'access.log'])).stderr).toContain('give at least one --policy');
    const unknown = await runCli(['replay', 'access.log', '--polcy', 'gcra 1r/s']);
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.stderr).toContain("Unknown option '--polcy'");
    const key = await runCli(['replay', 'access.log', '--key', '$remote_adr', ...POLICY]);
    expect(key.code).toBe(EXIT.usage);
    expect(key.stderr).toContain('--key: key "$remote_adr": unknown variable $remote_adr');
  });

  test('an option of one value given twice is refused, naming both values; --policy repeats', async () => {
    const twice = await runCli(['replay', 'access.log', '--format', 'json', '--format', 'csv', ...POLICY]);
    expect(twice.code).toBe(EXIT.usage);
    expect(twice.stderr).toBe('sluice: --format given twice ("json", "csv"): give it once\n');
    const flag = await runCli(['replay', 'access.log', '--json', '--json', ...POLICY]);
    expect(flag.stderr).toBe('sluice: --json given twice: give it once\n');
    const policies = await runCli(['replay', 'access.log', ...POLICY, '--policy', 'fixed-window 600/1m']);
    expect(policies.code).toBe(EXIT.ok);
  });

  test('nothing replayed: every line bad, or every key empty, or an empty log: exit 1', async () => {
    const bad = await runCli(['replay', 'access.log', '--format', 'json', ...POLICY]);
    expect(bad.code).toBe(EXIT.nothingReplayed);
    expect(bad.stderr).toContain('nothing could be replayed: none of the 15 lines could be read as json');
    const noKey = await runCli(['replay', 'access.log', '--key', '$http_user_id', ...POLICY]);
    expect(noKey.code).toBe(EXIT.nothingReplayed);
    expect(noKey.stderr).toContain('every request had an empty key ($http_user_id)');
    const empty = await runCli(['replay', file('empty.log', '\n\n'), ...POLICY], dir);
    expect(empty.code).toBe(EXIT.nothingReplayed);
    expect(empty.stderr).toContain('the log is empty');
  });

  test('a corrupt .gz', async () => {
    const run = await runCli(['replay', file('access.log.gz', 'not gzip at all'), ...POLICY], dir);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/cannot read .*access\.log\.gz: incorrect header check/);
  });

  test('times no date can hold, huge or deeply nested time values: each line counted as bad, the rest replayed', async () => {
    const good = '{"time": 1714564800, "remote_addr": "192.0.2.1"}';
    const deep = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
    const lines = [
      good,
      '{"time": "9999999999999999", "remote_addr": "192.0.2.1"}', // past the last date (8.64e15 ms)
      '{"time": 1e308, "remote_addr": "192.0.2.1"}',
      `{"time": "${'9'.repeat(1_000_000)}", "remote_addr": "192.0.2.1"}`,
      `{"time": ${deep}, "remote_addr": "192.0.2.1"}`,
    ];
    for (const out of [[], ['--out', join(dir, 'times.html')]]) {
      const run = await runCli(
        ['replay', file('times.log', `${lines.join('\n')}\n`), ...POLICY, ...out],
        dir,
      );
      expect(run.stderr).toBe(out.length === 0 ? '' : `wrote ${join(dir, 'times.html')}\n`);
      expect(run.code).toBe(EXIT.ok);
      expect(run.stdout).toContain('line 2: time "9999999999999999" is not a time');
      expect(run.stdout).toContain('line 3: time 1e+308 is not a time');
      // The value is shortened in the report, as the lines are: never a copy of a megabyte.
      expect(run.stdout).toMatch(/line 4: time "9{10,80}\.\.\." is not a time/);
      expect(run.stdout).toContain('line 5: time [an array] is not a time');
      expect(run.stdout.length).toBeLessThan(10_000);
    }
  });

  test('one line far ahead of the lines around it is a bad time, left out: the lines after it keep their own times', async () => {
    const at = (seconds: number) => `{"time": ${seconds}, "remote_addr": "192.0.2.${seconds % 3}"}`;
    const start = 1714564800;
    const lines = [
      at(start),
      at(start + 1),
      at(8_000_000_000_000),
      at(start + 2),
      at(start + 3),
      at(start + 4),
    ];
    const result = await replay({
      input: { kind: 'log', path: file('jump.log', `${lines.join('\n')}\n`) },
      policies: ['gcra 10r/s burst=20'],
    });
    expect(result.requests).toBe(5);
    expect(result.outOfOrder).toBe(0);
    expect(result.lastMs).toBe((start + 4) * 1000);
    expect(result.unparsed).toBe(1);
    expect(result.lineErrors).toEqual([
      {
        line: 3,
        reason: expect.stringMatching(/more than a minute ahead of the lines before and after it/) as unknown,
        text: JSON.stringify(lines[2]),
      },
    ]);
    // A gap in the log (a quiet night) is no bad time: the lines after it are as late.
    const gap = [at(start), at(start + 1), at(start + 36_000), at(start + 36_001)];
    const quiet = await replay({
      input: { kind: 'log', path: file('gap.log', `${gap.join('\n')}\n`) },
      policies: ['gcra 10r/s burst=20'],
    });
    expect([quiet.requests, quiet.unparsed, quiet.outOfOrder]).toEqual([4, 0, 0]);
    // The last line of a log has none after it: kept.
    const last = await replay({
      input: {
        kind: 'log',
        path: file('last.log', `${[...gap.slice(0, 2), at(start + 36_000)].join('\n')}\n`),
      },
      policies: ['gcra 10r/s burst=20'],
    });
    expect([last.requests, last.unparsed, last.lastMs]).toEqual([3, 0, (start + 36_000) * 1000]);
  });

  test('a first line far ahead of the two after it is a bad time, left out; one line after it far behind is only out of order', async () => {
    const at = (seconds: number) => `{"time": ${seconds}, "remote_addr": "192.0.2.${seconds % 3}"}`;
    const start = 1714564800;
    const run = (name: string, lines: string[]) =>
      replay({
        input: { kind: 'log', path: file(name, `${lines.join('\n')}\n`) },
        policies: ['gcra 10r/s burst=20'],
      });
    const first = [at(8_000_000_000_000), at(start), at(start + 1), at(start + 2)];
    const bad = await run('first.log', first);
    expect([bad.requests, bad.unparsed, bad.outOfOrder]).toEqual([3, 1, 0]);
    expect([bad.firstMs, bad.lastMs]).toEqual([start * 1000, (start + 2) * 1000]);
    expect(bad.lineErrors).toEqual([
      {
        line: 1,
        reason: expect.stringMatching(/more than a minute ahead of the two lines after it/) as unknown,
        text: JSON.stringify(first[0]),
      },
    ]);
    // The first line is good and the second far behind it: the second is the odd one, replayed
    // at the latest time as any line out of order, and the log keeps its span.
    const behind = await run('behind.log', [at(start), at(1), at(start + 1), at(start + 2)]);
    expect([behind.requests, behind.unparsed, behind.outOfOrder]).toEqual([4, 0, 1]);
    expect([behind.firstMs, behind.lastMs]).toEqual([start * 1000, (start + 2) * 1000]);
    // Two lines, a minute or more apart: nothing says which is bad, both are kept.
    const two = await run('two.log', [at(start + 3600), at(start)]);
    expect([two.requests, two.unparsed, two.outOfOrder]).toEqual([2, 0, 1]);
    // A log of one line keeps it.
    const one = await run('one.log', [at(start)]);
    expect([one.requests, one.unparsed, one.lastMs]).toEqual([1, 0, start * 1000]);
  });

  test('a pattern too big to generate is refused at once, naming what to lower', async () => {
    const huge = await runCli(
      [
        'replay',
        '--pattern',
        'steady',
        '--rps',
        '1000000',
        '--keys',
        '100000',
        '--duration',
        '365d',
        ...POLICY,
      ],
      dir,
    );
    expect(huge.code).toBe(EXIT.usage);
    expect(huge.stderr).toBe(
      'sluice: --pattern steady: 100000 keys × 1000000 r/s × 31536000 s come to about 3.15e+18 requests; at most 50,000,000 are generated: lower --duration, --rps or --keys\n',
    );
    const windows = await runCli(
      ['replay', '--pattern', 'boundary', '--window', '1ms', '--duration', '1d', '--rps', '0.001', ...POLICY],
      dir,
    );
    expect(windows.code).toBe(EXIT.usage);
    expect(windows.stderr).toBe(
      'sluice: --pattern boundary: 86400 s are 8.64e+7 windows of 1 ms; at most 1,000,000: lower --duration or raise --window\n',
    );
    // Under the bounds it runs.
    const fits = await runCli(
      ['replay', '--pattern', 'steady', '--rps', '100', '--duration', '10s', ...POLICY],
      dir,
    );
    expect(fits.code).toBe(EXIT.ok);
  });

  test('a field named like what every JSON object inherits is a field like any other', async () => {
    const path = file('own.jsonl', '{"time": 1714564800, "remote_addr": "192.0.2.1"}\n');
    const time = await runCli(['replay', path, '--time-field', 'constructor', ...POLICY], dir);
    expect(time.code).toBe(EXIT.nothingReplayed);
    expect(time.stdout).toContain('line 1: no "constructor" field');
    const key = await runCli(['replay', path, '--key-field', 'toString', ...POLICY], dir);
    expect(key.stdout).not.toContain('function');
  });
});
