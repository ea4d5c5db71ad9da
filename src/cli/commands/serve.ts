// `ckpt serve [--port P] [--socket PATH] [--host H [--allow-remote]] [--print-token] [--max-event-streams N]` (DESIGN §9, §10 "Daemon"): the
// resident HTTP daemon of the store. Runs until SIGINT/SIGTERM, then finishes the requests in flight.
import { join } from 'node:path';
import { pc } from '../colors.js';
import { CkptError, daemonToken, invalidValue } from '../../index.js';
import type { CommandSpec } from '../command-table.js';
import { commandHint } from '../hint.js';
import { tuneForResidentProcess } from '../resident-process.js';
import { scanInChild } from '../scan-in-child.js';
import { VERSION } from '../version.js';
import { webLoginUrl } from '../web-login-url.js';
import { DEFAULT_STREAM_LIMITS, parseStreamLimit } from '../../http/stream-gate.js';

export const serveCommand: CommandSpec = {
  use: 'serve',
  description: 'run the HTTP daemon of the store (127.0.0.1 only unless --host; bearer token required)',
  options: [
    ['--port <port>', 'TCP port (default: the port of the last start when free, else any free port; the address is printed and kept in the store)'],
    ['--socket <path>', 'listen on a unix socket instead of TCP'],
    ['--host <host>', 'listen on this address instead of 127.0.0.1 (a non-loopback one needs --allow-remote)'],
    ['--allow-remote', 'with --host: really listen beyond this machine (token, cookie and files in clear text; warns)'],
    ['--print-token', 'print the bearer token (made on first use) and exit'],
    ['--idle-exit <seconds>', 'exit after this long without a request (the daemon hooks start on demand); not once an agent\'s HTTP hooks posted to it (they name its port)'],
    ['--no-login-url', 'make no one-time login address for the web page (`ckpt open` makes one): the daemon hooks start writes its output to a log file'],
    ['--max-event-streams <n>', 'live /events streams open at once, all clients (default 256, or CKPT_MAX_EVENT_STREAMS; 429 beyond)'],
    ['--max-event-streams-per-client <n>', 'live /events streams one client may hold (default 32, or CKPT_MAX_EVENT_STREAMS_PER_CLIENT; 429 beyond)'],
  ],
  run: async ([opts], ctx, out) => {
    const flags = opts as { port?: string; socket?: string; host?: string; printToken?: boolean; idleExit?: string; loginUrl?: boolean; allowRemote?: boolean; maxEventStreams?: string; maxEventStreamsPerClient?: string };
    const store = await ctx.store();
    if (flags.printToken) {
      const token = await daemonToken(store.daemonCtx);
      out.result({ token, file: join(store.daemonCtx.dir, 'daemon', 'token') }, (r) => r.token);
      return;
    }
    if (flags.socket && (flags.port || flags.host)) throw new CkptError('INVALID_ARGUMENT', '--socket cannot be combined with --port or --host', {});
    const port = flags.port === undefined ? undefined : Number(flags.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) throw invalidValue('--port', flags.port, `--port must be 0..65535, got ${flags.port}`, { port: flags.port });
    const idleSeconds = flags.idleExit === undefined ? undefined : Number(flags.idleExit);
    if (idleSeconds !== undefined && !(Number.isFinite(idleSeconds) && idleSeconds > 0)) throw invalidValue('--idle-exit', flags.idleExit, `--idle-exit must be a positive number of seconds, got ${flags.idleExit}`, { idleExit: flags.idleExit });
    // Flags first, then the environment (the on-demand daemon that hooks start takes no flags).
    const total = flags.maxEventStreams ?? process.env.CKPT_MAX_EVENT_STREAMS;
    const perClient = flags.maxEventStreamsPerClient ?? process.env.CKPT_MAX_EVENT_STREAMS_PER_CLIENT;
    const streamLimits = {
      total: total === undefined ? DEFAULT_STREAM_LIMITS.total : parseStreamLimit(total, '--max-event-streams'),
      perClient: perClient === undefined ? DEFAULT_STREAM_LIMITS.perClient : parseStreamLimit(perClient, '--max-event-streams-per-client'),
    };
    tuneForResidentProcess();
    // Loaded here, not with the CLI: the HTTP stack is compiled only by the command that serves.
    const { startDaemon } = await import('../../http/daemon.js');
    let stopOnIdle = (): void => {};
    const daemon = await startDaemon({
      store,
      port,
      host: flags.host,
      allowRemote: flags.allowRemote === true,
      streamLimits,
      socket: flags.socket,
      version: VERSION,
      log: (line) => ctx.io.stderr.write(`${line}\n`),
      // This CLI, run again: the script node was started with (bin/ckpt.js, or the npm bin link).
      ...(process.argv[1] && !store.shared ? { fullScan: scanInChild(process.argv[1], store.dir) } : {}),
      ...(idleSeconds !== undefined ? { idle: { ms: idleSeconds * 1000, onIdle: () => stopOnIdle() } } : {}),
    });
    // The page's address with a one-time code (5 minutes, once); `ckpt open` makes a fresh one. Not
    // for a daemon whose output goes to a file (--no-login-url: the one hooks start logs to
    // daemon/serve.log), where a code would be a secret at rest.
    const open = flags.socket || flags.loginUrl === false ? undefined : await webLoginUrl(store, daemon.info).catch(() => undefined);
    out.result({ url: daemon.url, pid: daemon.info.pid, store: store.dir, tokenFile: join(store.daemonCtx.dir, 'daemon', 'token'), ...(open ? { open } : {}) }, (r) =>
      [
        `ckpt daemon listening on ${pc.bold(r.url)} (pid ${r.pid})`,
        // The hints name the store this daemon serves (--store given): without it they would reach another.
        `store ${r.store}; token: ${commandHint(ctx, ['serve', '--print-token'])}`,
        ...(r.open ? [`web timeline: open ${pc.bold(r.open)} (one-time code; ${commandHint(ctx, ['open'])} makes a new one)`] : flags.socket ? [] : [`web timeline: ${commandHint(ctx, ['open'])}`]),
      ].join('\n'),
    );
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        void daemon.close().then(resolve, resolve);
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      stopOnIdle = stop;
    });
  },
};
