// A yes/no question on the terminal (stderr), for commands that change or remove things a person may
// not mean to: only an explicit y or yes is a yes; end of input or Ctrl-C is a no.
import { createInterface } from 'node:readline';
import type { CliIo } from './io.js';

export function askYesNo(io: CliIo, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  return new Promise((resolve) => {
    let answered = false;
    const finish = (yes: boolean) => {
      if (answered) return;
      answered = true;
      rl.close();
      resolve(yes);
    };
    rl.on('SIGINT', () => {
      io.stderr.write('\n');
      finish(false);
    });
    rl.on('close', () => finish(false));
    rl.question(`${question} [y/N] `, (answer) => finish(/^y(es)?$/i.test(answer.trim())));
  });
}
