// `ckpt store copy FROM TO`: copies a store between drivers (a folder ↔ a shared store URL) and
// verifies the copy (exit 5 when it does not check out). URLs are shown redacted only.
import type { Command } from 'commander';
import { pc } from '../colors.js';
import { CkptError, copyStore, machineId, openStore, storeLocation, type Store } from '../../index.js';
import { addCommands } from '../command-table.js';
import { progressBar } from '../progress.js';

export function registerStoreCommands(program: Command): void {
  const store = program.command('store').description('whole-store operations');
  addCommands(store, [
    {
      use: 'copy <from> <to>',
      description: 'copy a store (folder or postgres://…?blobs=s3://… URL) into a new, empty one and verify the copy',
      run: async ([fromArg, toArg], ctx, out) => {
        const where = (s: string): string => storeLocation(s, ctx.io.cwd);
        const opened: Store[] = [];
        try {
          const from = await openStore({ dir: where(fromArg as string), existing: true });
          opened.push(from);
          const to = await openStore({ dir: where(toArg as string) });
          opened.push(to);
          if (from.dir === to.dir) throw new CkptError('INVALID_ARGUMENT', 'FROM and TO are the same store');
          const bar = await progressBar(ctx.io, out.json);
          let result;
          try {
            const rekey = from.shared !== to.shared ? { fromShared: from.shared, toShared: to.shared, machine: await machineId(ctx.io.env) } : undefined;
            result = await copyStore(from.ctx, to.ctx, { onProgress: bar.update, ...(rekey ? { rekey } : {}) });
          } finally {
            bar.stop();
          }
          out.result({ from: from.dir, to: to.dir, ...result }, (r) =>
            [
              `copied ${r.objects} object(s), ${r.bytes} bytes: ${r.from} -> ${r.to}`,
              r.verified ? pc.green(`verified${r.problems.length > 0 ? ` (${r.problems.length} interrupted restore(s), copied as they are: the next command in that session finishes them)` : ''}`) : pc.red(`${r.problems.length} problem(s)`),
              ...r.problems.map((p) => `  ${p.kind}: ${'message' in p ? p.message : JSON.stringify(p)}`),
            ].join('\n'),
          );
          if (!result.verified) throw new CkptError('BLOB_CORRUPT', `the copy did not verify: ${result.problems.length} problem(s)`, { problems: result.problems.length });
        } finally {
          await Promise.all(opened.map((s) => s.close()));
        }
      },
    },
  ]);
}
