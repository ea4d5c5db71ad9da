#!/usr/bin/env node
// Entry point of the `ckpt` command. Hooks start it once per tool call, so start-up matters: an exact
// hook call (`ckpt [--store DIR] [--workspace DIR] hook <agent> [--daemon]`) first runs the thin hook
// client, which loads no ckpt engine and forwards the event to the store's daemon; only when no daemon
// answers does it load the lean in-process hook entry. A scan (`ckpt [global flags] scan [--tool T]`)
// runs the lean scan entry, which loads the scan command only. Everything else runs the whole CLI: the esbuild
// bundle (dist/bundle/, built by `npm run build`) when present, else tsc's dist/.
// This file is CommonJS (bin/package.json): a hook or scan runs the build's CommonJS copies of the hook
// client, the in-process hook and the scan entry (hook-client.cjs, hook-main.cjs, scan-main.cjs), so
// that such a process never starts Node's ES module loader — ~40 ms less CPU per in-process hook on
// Node 20 (DESIGN §10 "The hook path in CommonJS"). The rest of the CLI is ES modules, via import().
// Node ≥ 22.1 caches compiled code itself (feature-detected); on older Node the CommonJS entries keep
// V8's code cache beside them (requireEntry).
'use strict';
const { closeSync, existsSync, openSync, readFileSync, readlinkSync, renameSync, statSync, unlinkSync, writeSync } = require('node:fs');
const { Buffer } = require('node:buffer');
const module_ = require('node:module');
const { dirname, join } = require('node:path');
const { pathToFileURL } = require('node:url');

module_.enableCompileCache?.();
const argv = process.argv.slice(2);
const bundle = join(__dirname, '..', 'dist', 'bundle');
const bundled = existsSync(join(bundle, 'main.js'));
const code = (bundleFile, distFile) => pathToFileURL(bundled ? join(bundle, bundleFile) : join(__dirname, '..', 'dist', distFile)).href;
// A build from before the CommonJS hook entries (a clone pulled but not rebuilt) has the ESM ones only.
const hookCjs = bundled && existsSync(join(bundle, 'hook-client.cjs')) && existsSync(join(bundle, 'hook-main.cjs'));

/**
 * Loads a CommonJS entry of the build (hook client, in-process hook, scan). Node ≥ 22.1 caches its
 * compiled code (enableCompileCache above). Older Node compiled the 570 KB hook entry in ~16 ms of
 * every hook process, and the functions it ran while it ran: there V8's code cache of the entry is
 * kept beside it (`<entry>.<node version>-<arch>.v8cache`, in the build's own folder: whoever may
 * write there may change the code itself). It is written once, when the process exits, so it holds
 * what ran (lazily compiled functions too), by a process that found none or had it refused — V8
 * refuses a cache of another version, other flags or another source. A folder that cannot be written
 * (an install owned by another user) just goes without. CKPT_CODE_CACHE=0 turns it off.
 */
function requireEntry(stable) {
  const vm = require('node:vm');
  // An import() in a vm script needs Node's loader, experimental on Node 20 (a warning on stderr): the
  // entries take built-in modules by process.getBuiltinModule (Node ≥ 20.16) instead, and the loader
  // (Node ≥ 20.12) is only there should one import() all the same. Older Node goes without the cache.
  const loader = vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (module_.enableCompileCache || !loader || !process.getBuiltinModule || process.env.CKPT_CODE_CACHE === '0') return require(stable);
  // The stable entry is one line naming the current build's file (scripts/bundle.js): the code is there.
  const target = /^module\.exports = require\('(\.\.\/builds\/[\w-]+\/bundle\/[\w-]+\.cjs)'\);$/m.exec(readFileSync(stable, 'utf8'));
  if (!target) return require(stable);
  const file = join(dirname(stable), target[1]);
  const cachePath = `${file}.${process.version}-${process.arch}.v8cache`;
  // V8 checks a cache against the source's length only: the file's identity heads the cache, so an
  // edit in place (same length) never runs the old code.
  const st = statSync(file);
  const key = Buffer.from(`ckpt-v8cache ${st.dev} ${st.ino} ${st.size} ${st.mtimeMs}\n`);
  let cachedData;
  try {
    const data = readFileSync(cachePath);
    if (data.subarray(0, key.length).equals(key)) cachedData = data.subarray(key.length);
  } catch {}
  const script = new vm.Script(module_.wrap(readFileSync(file, 'utf8')), { filename: file, importModuleDynamically: loader, ...(cachedData ? { cachedData } : {}) });
  if (!cachedData || script.cachedDataRejected) process.once('exit', () => writeCodeCache(script, key, cachePath));
  // Registered as require would: a later require of either name gets these exports, never a second copy.
  const entry = new module_(file, module);
  entry.filename = file;
  require.cache[file] = entry;
  try {
    script.runInThisContext().call(entry.exports, entry.exports, module_.createRequire(file), entry, file, dirname(file));
  } catch (err) {
    delete require.cache[file];
    throw err;
  }
  entry.loaded = true;
  const named = new module_(stable, module);
  named.filename = stable;
  named.exports = entry.exports;
  named.loaded = true;
  require.cache[stable] = named;
  return entry.exports;
}

/** Replaces the cache at `cachePath` (`key`, then V8's data) in one rename: readers see the old or the new one whole. Failures are ignored. */
function writeCodeCache(script, key, cachePath) {
  const tmp = `${cachePath}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, 'wx', 0o644);
    try {
      writeSync(fd, Buffer.concat([key, script.createCachedData()]));
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, cachePath);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {}
  }
}

/**
 * The folder a hook runs from. When it was removed (the agent deleted the folder it was working in),
 * process.cwd() throws; a hook must still answer, so it moves to the nearest folder above it that
 * exists (Linux names the removed one in /proc) — the event's own `cwd` names the workspace.
 */
function hookDir() {
  try {
    return process.cwd();
  } catch {
    let dir = '/';
    try {
      dir = readlinkSync('/proc/self/cwd').replace(/ \(deleted\)$/, '');
    } catch {}
    while (!existsSync(dir)) dir = dirname(dir);
    process.chdir(dir);
    return dir;
  }
}

async function run() {
  if (argv.includes('hook')) {
    const { hookClient, parseHookArgs } = hookCjs ? requireEntry(join(bundle, 'hook-client.cjs')) : await import(code('hook-client.js', 'hooks/client/hook-client.js'));
    const args = parseHookArgs(argv);
    if (args) {
      const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: hookDir() };
      const answer = await hookClient(args, { ...io, script: __filename });
      if ('exitCode' in answer) process.exitCode = answer.exitCode;
      else {
        const { hookMain } = hookCjs ? requireEntry(join(bundle, 'hook-main.cjs')) : await import(code('hook-main.js', 'hooks/hook-main.js'));
        process.exitCode = await hookMain(args, { ...io, input: answer.input, ...(answer.note ? { note: answer.note } : {}) });
      }
    }
  }
  // A build from before the scan entry existed (a clone pulled but not rebuilt) runs the whole CLI.
  const scanEntry = argv.includes('scan') ? code('scan-main.js', 'cli/scan-main.js') : undefined;
  if (process.exitCode === undefined && scanEntry && existsSync(new URL(scanEntry))) {
    const scanCjs = bundled ? join(bundle, 'scan-main.cjs') : undefined;
    const { isScanCall, scanMain } = scanCjs && existsSync(scanCjs) ? requireEntry(scanCjs) : await import(scanEntry);
    if (isScanCall(argv)) process.exitCode = await scanMain(argv);
  }
  if (process.exitCode === undefined) {
    // A restore flushes every file it writes and every folder it touches at once, and ext4 folds
    // concurrent fsyncs into shared journal commits — but libuv's 4 threads let only 4 wait at a time
    // (600 fsyncs: ~70 ms with 4 threads, ~30 with 32 on this machine). Set before the thread pool
    // starts; a hook or an exact scan, answered above, keeps Node's 4 (64 threads take ~2 ms to
    // start). The user's own setting wins.
    process.env.UV_THREADPOOL_SIZE ??= '32';
    const { main } = await import(code('main.js', 'cli/main.js'));
    process.exitCode = await main(argv);
  }
}

// As an uncaught error at the top level of an ES module would: printed, exit 1. A clone that was
// never built has no dist/: said in one line, and a hook still exits 0 (it never breaks its agent).
run().catch((err) => {
  const unbuilt = err && err.code === 'ERR_MODULE_NOT_FOUND' && !existsSync(join(__dirname, '..', 'dist'));
  if (!unbuilt) {
    console.error(err);
    process.exitCode = 1;
    return;
  }
  process.stderr.write(`ckpt is not built in ${join(__dirname, '..')}: run npm ci && npm run build there\n`);
  const strict = /^(1|true|yes|on)$/i.test(process.env.CKPT_HOOK_STRICT || '');
  process.exitCode = argv.includes('hook') ? (strict ? 2 : 0) : 1;
});
