import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReplayResult } from '../replay/replay';
import { htmlReport } from './html-report';
import { policySvg, sharedScales } from './policy-svg';

/** A file name for a policy's chart: `'gcra 10r/s burst=20'` → `'gcra-10r-s-burst-20'`. */
export function policySlug(label: string): string {
  return (
    label
      .toLowerCase()
      .replace(/[^a-z0-9.]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'policy'
  );
}

/**
 * Every policy's chart as an SVG document, by file name (`<slug>.svg`; a repeated policy gets
 * `-2`, `-3`): what `--svg <dir>` writes and `pnpm docs:charts` commits.
 */
export function policySvgFiles(result: ReplayResult, topKeys: number): Map<string, string> {
  const files = new Map<string, string>();
  const scales = sharedScales(result, topKeys);
  if (scales === undefined) return files;
  result.policies.forEach((policy, i) => {
    const slug = policySlug(policy.label);
    let name = `${slug}.svg`;
    for (let n = 2; files.has(name); n++) name = `${slug}-${n}.svg`;
    files.set(name, policySvg(result, i, scales, topKeys));
  });
  return files;
}

/**
 * Writes the charts asked for: the HTML report to `html`, the SVGs into `svgDir` (created if
 * missing).
 * @returns the paths written
 */
export async function writeCharts(
  result: ReplayResult,
  { html, svgDir, topKeys }: { html: string | undefined; svgDir: string | undefined; topKeys: number },
): Promise<string[]> {
  const written: string[] = [];
  if (html !== undefined) {
    await writeFile(html, htmlReport(result, topKeys));
    written.push(html);
  }
  if (svgDir !== undefined) {
    await mkdir(svgDir, { recursive: true });
    for (const [name, svg] of policySvgFiles(result, topKeys)) {
      const path = join(svgDir, name);
      await writeFile(path, svg);
      written.push(path);
    }
  }
  return written;
}
