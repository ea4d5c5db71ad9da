// `ckpt demo` (DESIGN §9): runs the scripted agent session of src/demo on the store in force
// (the default store unless --store is given) and narrates it. The scratch folder and the demo's
// session are removed afterwards unless --keep.
import { runDemo } from '../../demo/run-demo.js';
import type { CommandSpec } from '../command-table.js';
import { colorsFor } from '../colors.js';
import { shellQuote } from '../shell.js';

export const demoCommand: CommandSpec = {
  use: 'demo',
  description: 'run a scripted agent session in a scratch folder and show what ckpt records and restores',
  options: [['--keep', 'keep the scratch folder and the session to explore them afterwards']],
  run: async ([opts], ctx, out) => {
    const store = await ctx.store();
    const command = ctx.io.invokedAs ?? 'ckpt';
    const report = await runDemo(store, (line) => (out.json ? undefined : ctx.io.stdout.write(`${line}\n`)), {
      keep: Boolean((opts as { keep?: boolean }).keep),
      style: colorsFor(ctx.io.stdout, ctx.io.env),
      // A command that works as printed: the folder is found as the workspace from inside it.
      exploreHint: (root) => `cd ${shellQuote(root)} && ${command} --store ${shellQuote(store.dir)} log`,
    });
    out.result(report, () => '');
  },
};
