import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { htmlReport } from '../src/charts/html-report';
import { replay } from '../src/replay/replay';
import { runCli } from './run-cli';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-cli-charts-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('charts', () => {
  test('--out writes one self-contained page and --svg one chart per policy', async () => {
    const run = await runCli(
      [
        'replay',
        '--pattern',
        'flash-sale',
        '--keys',
        '20',
        '--duration',
        '2m',
        '--policy',
        'gcra 10r/s burst=20',
        '--policy',
        'fixed-window 600/1m',
        '--policy',
        'gcra 10r/s burst=20',
        '--out',
        'report.html',
        '--svg',
        'charts',
      ],
      dir,
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`wrote ${join(dir, 'report.html')}`);
    expect(readdirSync(join(dir, 'charts')).sort()).toEqual([
      'fixed-window-600-1m.svg',
      'gcra-10r-s-burst-20-2.svg',
      'gcra-10r-s-burst-20.svg',
    ]);
    const html = readFileSync(join(dir, 'report.html'), 'utf8');
    // Nothing is fetched when the page is viewed: no script, stylesheet, image or font by address.
    expect(html).not.toMatch(/\b(src|href)\s*=/i);
    expect(html).not.toMatch(/url\(|@import|<script|<link/i);
    expect(html.match(/<svg /g)?.length).toBeGreaterThanOrEqual(3 + 4 * 3); // a chart per policy, and per hot key
    expect(html).toContain('client-1');
    const svg = readFileSync(join(dir, 'charts', 'fixed-window-600-1m.svg'), 'utf8');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="640"/);
    expect(svg).toContain('Hottest keys');
    expect(svg).toContain('fixed-window 600/1m');
  });

  test('keys from a log are text, never markup', async () => {
    const path = join(dir, 'hostile.jsonl');
    const key = '<script>alert(1)</script>&"\'';
    const line = (t: number) => JSON.stringify({ time: 1714564800 + t, user: key });
    const other = (t: number) => JSON.stringify({ time: 1714564800 + t, user: 'someone' });
    writeFileSync(
      path,
      [0, 0, 0, 1, 1]
        .map(line)
        .concat([other(0), other(1)])
        .join('\n'),
    );
    const result = await replay({ input: { kind: 'log', path, keyField: 'user' }, policies: ['gcra 1r/s'] });
    const html = htmlReport(result, 4);
    expect(html).not.toContain('<script>');
    expect(html).toContain('&#60;script&#62;alert(1)&#60;/script&#62;&#38;&#34;&#39;');
  });

  test('a long log widens its buckets instead of growing', async () => {
    // One request a minute for two weeks: 20 160 minutes, far more than a series' 4 096 buckets.
    const path = join(dir, 'long.csv');
    const lines = ['msec,remote_addr'];
    for (let minute = 0; minute < 20_160; minute++)
      lines.push(`${1714564800 + minute * 60},192.0.2.${minute % 3}`);
    writeFileSync(path, lines.join('\n'));
    const result = await replay({ input: { kind: 'log', path }, policies: ['gcra 1r/s'] });
    const series = result.policies[0]?.series;
    expect(series?.widthMs).toBe(600_000);
    const total = series?.values(0, 600_000, series.startMs ?? 0, 4096).reduce((a, b) => a + b, 0);
    expect(total).toBe(20_160);
    expect(htmlReport(result, 4)).toContain('<svg');
  });
});
