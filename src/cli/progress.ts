// Progress on a terminal for long operations (scan, gc, verify): a bar on an interactive stderr,
// nothing with --json or without a terminal (hooks and scripts). The bar's library is loaded only when
// there is a terminal to draw on: scripts and hooks that run `ckpt scan` do not pay for loading it.
import type { CliIo } from './io.js';

export interface Progress {
  phase: string;
  done: number;
  total: number;
}

/** A progress bar on an interactive stderr (nothing otherwise). */
export async function progressBar(io: CliIo, json: boolean): Promise<{ update: (p: Progress) => void; stop: () => void }> {
  if (json || !io.stderr.isTTY) return { update: () => {}, stop: () => {} };
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar(
    { stream: io.stderr as NodeJS.WritableStream as NodeJS.WriteStream, format: ' {phase} [{bar}] {value}/{total}', clearOnComplete: true, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let phase: string | undefined;
  return {
    update(p) {
      if (phase !== p.phase) {
        if (phase) bar.stop();
        phase = p.phase;
        bar.start(p.total, p.done, { phase: p.phase.padEnd(7) });
      } else bar.update(p.done);
    },
    stop: () => {
      if (phase) bar.stop();
    },
  };
}
