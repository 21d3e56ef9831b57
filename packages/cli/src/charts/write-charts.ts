import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReplayResult } from '../replay/replay';
import { describeFsError, ReplayInputError } from '../errors';
import { htmlReport } from './html-report';
import { refuseTheLog } from './output-paths';
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
 * missing). Nothing is written over the log being replayed; a write that fails is reported
 * naming its option and path.
 *
 * @returns the paths written
 * @throws {@link ReplayInputError} when a path is the log or cannot be written
 */
export async function writeCharts(
  result: ReplayResult,
  {
    html,
    svgDir,
    topKeys,
    log,
  }: { html: string | undefined; svgDir: string | undefined; topKeys: number; log: string | undefined },
): Promise<string[]> {
  const svgs =
    svgDir === undefined
      ? []
      : [...policySvgFiles(result, topKeys)].map(([name, svg]) => ({ path: join(svgDir, name), svg }));
  // Every target is checked before the first is written: a refusal leaves nothing half done.
  if (html !== undefined) await refuseTheLog(html, { log, subject: `--out ${html}: it`, what: 'report' });
  for (const { path } of svgs)
    await refuseTheLog(path, { log, subject: `--svg ${svgDir ?? ''}: ${path}`, what: 'charts' });
  const written: string[] = [];
  if (html !== undefined) {
    await write(html, htmlReport(result, topKeys), (why) => `--out ${html}: cannot write there: ${why}`);
    written.push(html);
  }
  if (svgDir !== undefined) {
    try {
      await mkdir(svgDir, { recursive: true });
    } catch (error) {
      throw new ReplayInputError(`--svg ${svgDir}: cannot write charts there: ${describeFsError(error)}`);
    }
    for (const { path, svg } of svgs) {
      await write(path, svg, (why) => `--svg ${svgDir}: cannot write ${path}: ${why}`);
      written.push(path);
    }
  }
  return written;
}

async function write(path: string, text: string, message: (why: string) => string): Promise<void> {
  try {
    await writeFile(path, text);
  } catch (error) {
    throw new ReplayInputError(message(describeFsError(error)));
  }
}
