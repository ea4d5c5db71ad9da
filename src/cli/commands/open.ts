// `ckpt open [--print]` (DESIGN §9): opens the web timeline of the store's running daemon in a
// browser, on an address with a fresh one-time login code (xdg-open / open / start); prints the
// address when no browser can be launched or with --print.
import { spawn } from 'node:child_process';
import { CkptError, runningDaemon } from '../../index.js';
import type { CommandSpec } from '../command-table.js';
import { webLoginUrl } from '../web-login-url.js';

export const openCommand: CommandSpec = {
  use: 'open',
  description: "open the web timeline of the store's daemon in a browser (one-time login code)",
  options: [['--print', 'only print the address (with its one-time code)']],
  run: async ([opts], ctx, out) => {
    const flags = opts as { print?: boolean };
    const store = await ctx.store();
    const daemon = await runningDaemon(store.daemonCtx);
    if (!daemon) throw new CkptError('NOT_FOUND', 'no daemon runs for this store: start one with ckpt serve', { store: store.dir });
    const url = await webLoginUrl(store, daemon);
    const launched = flags.print ? false : await launchBrowser(url);
    // --print is for scripts (`URL=$(ckpt open --print)`): the address alone, as its help says.
    out.result({ url, launched }, (r) => (flags.print ? r.url : r.launched ? `opened the web timeline in a browser` : `open ${r.url} in a browser (the code works once, for 5 minutes)`));
  },
};

/** Starts the platform's opener detached; false when there is none (or it fails to start). */
function launchBrowser(url: string): Promise<boolean> {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer.exe' : 'xdg-open';
  if (cmd === 'xdg-open' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(cmd, [url], { stdio: 'ignore', detached: true });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}
