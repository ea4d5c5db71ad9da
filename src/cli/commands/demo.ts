// `ckpt demo` (DESIGN §9): runs the scripted agent session of src/demo on the store in force
// (the default store unless --store is given) and narrates it.
import type { Command } from 'commander';
import { runDemo } from '../../demo/run-demo.js';
import { action } from '../action.js';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('run a scripted agent session in a scratch folder and show what ckpt records and restores')
    .action(
      action(async (_args, ctx, out) => {
        // How this process was started, so the closing hint can be pasted as is.
        const command = process.argv[1] ? `node ${process.argv[1]}` : 'ckpt';
        const report = await runDemo(await ctx.store(), (line) => (out.json ? undefined : ctx.io.stdout.write(`${line}\n`)), command);
        out.result(report, () => '');
      }),
    );
}
