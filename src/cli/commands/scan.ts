// `ckpt scan` (DESIGN §9): record what changed in the workspace since ckpt last looked. Its own module,
// apart from the other checkpoint commands, so that the lean scan entry (scan-main.ts) loads this and
// not the rest of the CLI.
import { pc } from '../colors.js';
import { invalidValue, pathText, publicScanResult, scan, scanViaDaemon } from '../../index.js';
import type { CommandSpec } from '../command-table.js';
import { progressBar } from '../progress.js';
import { counted } from '../counted.js';

export const scanCommand: CommandSpec = {
  use: 'scan',
  existing: true,
  description: 'record what changed in the workspace since ckpt last looked (shell side effects)',
  options: [
    ['--tool <name>', 'the tool whose effects are being recorded', 'scan'],
    ['--budget <ms>', 'stop walking after this many milliseconds and report what was left'],
  ],
  run: async ([opts], ctx, out) => {
    const { tool, budget } = opts as { tool: string; budget?: string };
    // A bad value is a usage error before any look-up (not "no session", exit 3, as it was).
    const budgetMs = budget === undefined ? undefined : parseCount(budget, '--budget');
    const session = await ctx.session();
    const bar = await progressBar(ctx.io, out.json);
    let r;
    try {
      // Through the store's daemon when one runs (it watches the workspace), else in-process.
      r = (budget === undefined ? await scanViaDaemon(await ctx.store(), session, tool, ctx.io.env) : undefined) ??
        (await scan(session, { tool, budgetMs, onProgress: bar.update }));
    } finally {
      bar.stop();
    }
    const body = publicScanResult(r);
    out.result(body, (v) => {
      if (v.disabled) return 'capture is disabled (CKPT_DISABLE): nothing scanned';
      const head = v.baseline
        ? `baseline recorded: ${v.scanned} files in ${v.ms} ms`
        : v.tag
          ? `captured ${pc.bold(v.tag)}: ${v.files.length} changed path(s) (${scannedText(v.scanned)} in ${v.ms} ms)`
          : `${v.truncated ? 'nothing recorded' : 'no changes'} (${scannedText(v.scanned)} in ${v.ms} ms)`;
      // A checkout or an `rm -rf` changes thousands of paths: the first few, as `log` shows them (--json has all).
      const shown = v.files.slice(0, LISTED);
      const lines = [head, ...shown.map((f) => `  ${String(f.change).padEnd(8)} ${pathText(f.path)}`)];
      if (v.files.length > shown.length) lines.push(`  … ${v.files.length - shown.length} more (ckpt log --files lists them all)`);
      if (v.warning) lines.push(pc.yellow(`warning: ${v.warning}`));
      if (v.truncated) lines.push(pc.yellow(`scan cut short by --budget: ${v.pending?.length ?? 0} folder(s) not reached, nothing recorded for them`));
      for (const s of v.skipped ?? []) lines.push(pc.yellow(`  skipped ${pathText(s.path)} (${s.why})`));
      // Warnings go to stderr with every command's (cli/io.ts), once.
      return lines.join('\n');
    });
  },
};

/** Changed paths listed in the human summary. */
const LISTED = 20;

/** A non-negative integer argument, or INVALID_ARGUMENT naming the flag. */
export function parseCount(text: string, flag = '--message-count'): number {
  if (!/^(0|[1-9][0-9]*)$/.test(text)) throw invalidValue(flag, text, `${flag} must be a non-negative integer, got ${JSON.stringify(text)}`, { [flag]: text });
  return Number(text);
}

function scannedText(n: number): string {
  return `${counted(n, 'file')} scanned`;
}
