// `npm run demo`: builds ckpt step by step with progress on stderr (the build's steps are those of
// package.json's "build" script, ~30 s on a busy 2-core machine, silent before), then runs
// `ckpt demo` with the arguments given.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setInterval, clearInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const steps = JSON.parse(readFileSync(`${root}package.json`, 'utf8')).scripts.build.split(' && ');
const label = (cmd) =>
  /^tsc\b/.test(cmd) ? 'compiling TypeScript (tsc)' : /bundle-web/.test(cmd) ? 'building the web page' : /bundle\.js/.test(cmd) ? 'bundling the CLI (esbuild)' : cmd;
const bin = `${root}node_modules/.bin`;
for (const [i, cmd] of steps.entries()) {
  const started = Date.now();
  const head = `building ckpt [${i + 1}/${steps.length}] ${label(cmd)}…`;
  const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  process.stderr.write(head);
  // On a terminal the elapsed time counts up while a step runs.
  const tick = process.stderr.isTTY ? setInterval(() => process.stderr.write(`\r${head} ${seconds()}`), 1000) : undefined;
  const child = spawn(cmd, { cwd: root, shell: true, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
  const code = await new Promise((resolve) => child.on('close', (c, signal) => resolve(c ?? signal)));
  clearInterval(tick);
  if (code !== 0) {
    process.stderr.write(`${tick ? `\r${head}` : ''} failed (exit ${code})\n`);
    process.exit(typeof code === 'number' ? code : 1);
  }
  process.stderr.write(`${tick ? `\r${head}` : ''} ${seconds()}\n`);
}
process.stderr.write('\n');
const demo = spawnSync(process.execPath, [`${root}bin/ckpt.js`, 'demo', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(demo.status ?? 1);
