// `ckpt export SESSION TAG DIR [--workspace WID] [--dry-run]` (issue 33): the tree a tag names, written
// into a new or empty folder — from any machine that reaches the store; the workspace is never touched.
import { resolve } from 'node:path';
import { pc } from '../colors.js';
import { exportSession, pathText } from '../../index.js';
import type { CommandSpec } from '../command-table.js';

export const exportCommand: CommandSpec = {
  use: 'export <session> <tag> <dir>',
  tags: ['tag'],
  reads: true,
  description: "write the whole tree a tag names into a new or empty folder (any workspace of the store, from any machine; the workspace itself is not touched)",
  options: [
    ['--workspace <wid>', 'look for the session in this workspace only (when its id is in several)'],
    ['--dry-run', 'list what would be written, write nothing'],
  ],
  run: async ([sessionRef, tag, dir, opts], ctx, out) => {
    const flags = opts as { workspace?: string; dryRun?: boolean };
    const store = await ctx.store();
    const target = resolve(ctx.io.cwd, dir as string);
    if (flags.dryRun) {
      const plan = await exportSession(store, sessionRef as string, tag as string, target, { workspace: flags.workspace, dryRun: true });
      out.result({ ...plan, dir: target, dryRun: true }, (r) =>
        [
          `export of tag ${pc.bold(r.tag)} of session ${r.session} (workspace ${r.root}) into ${r.dir} would write ${r.entries.length} path(s):`,
          ...r.entries.map((e) => `  ${pathText(e.path)}${e.state === 'dir' ? '/' : e.state === 'symlink' ? ` -> ${pathText(e.target ?? '')}` : ''}`),
          ...skippedLines(r.skipped),
        ].join('\n'),
      );
      return;
    }
    const r = await exportSession(store, sessionRef as string, tag as string, target, { workspace: flags.workspace });
    const { entries: _entries, ...summary } = r;
    out.result(summary, (v) =>
      [
        `exported tag ${pc.bold(v.tag)} of session ${v.session} (workspace ${v.root}) into ${v.dir}: ${v.files} file(s), ${v.dirs} folder(s), ${v.symlinks} link(s), ${v.bytes} bytes`,
        ...skippedLines(v.skipped),
      ].join('\n'),
    );
  },
};

function skippedLines(skipped: readonly { path: string; why: string }[]): string[] {
  if (skipped.length === 0) return [];
  return [pc.yellow(`${skipped.length} path(s) not written:`), ...skipped.map((s) => pc.yellow(`  ${pathText(s.path)} (${s.why})`))];
}
