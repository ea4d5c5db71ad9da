// Probe (DESIGN §10 "diff looks too"): random sessions — tool writes/edits/deletes/chmods/symlinks
// captured and settled, turns (each scans first), and hand changes after the last turn (files and
// folders made, edited, removed, renamed, chmod'ed, symlinks) — then for every tag N: the paths
// `diff N` lists must be the non-folder paths `restore N --dry-run` plans, its drift among them, the
// `unrecorded` ones drift or beneath a drifted folder, a folder listed only for a mode change the plan makes; then a forced `restore N` must
// give the tree at N exactly. Run: npx tsx findings/diff-dryrun-probe.ts [rounds] [seed]
// PROBE_GIT=1: the workspace is a git work tree whose start files are committed before ckpt's
// baseline (which then references git's blobs: the look reads their content from git).
import { chmod, lstat, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { makeWorld, snapshot, type World } from '../test/fixtures/restore-world.js';
import { makeTempDirs } from '../test/helpers/temp.js';
import { openBaseWorld } from '../test/helpers/worlds.js';
import { capture } from '../src/capture/capture.js';
import { settle } from '../src/capture/settle.js';

const rounds = Number(process.argv[2] ?? 20);
let seed = Number(process.argv[3] ?? 1);
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const NAMES = ['a.txt', 'b.txt', 'c.sh', 'd/e.txt', 'd/f.txt', 'g/h/i.txt', 'link', 'd/link2'];

let checked = 0;
let problems = 0;
for (let round = 0; round < rounds; round++) {
  const w = process.env.PROBE_GIT ? await gitWorld() : await makeWorld({ prefix: 'ckpt-diff-probe-' });
  const exists = async (rel: string) => (await lstat(w.at(rel)).catch(() => undefined)) !== undefined;
  const randomChange = (rel: string, to = pick(NAMES)) => change(rel, to).catch(() => {}); // a folder where a file's parent should be: skipped
  const change = async (rel: string, to: string) => {
    const r = rand();
    if (r < 0.45) {
      await mkdir(dirname(w.at(rel)), { recursive: true });
      if ((await lstat(w.at(rel)).catch(() => undefined))?.isDirectory()) return;
      await rm(w.at(rel), { force: true });
      await writeFile(w.at(rel), `${rel} ${Math.floor(rand() * 1000)}\n`);
    } else if (r < 0.6) await rm(w.at(rel), { force: true, recursive: true });
    else if (r < 0.75) {
      if (await exists(rel)) await chmod(w.at(rel), pick([0o644, 0o755, 0o600])).catch(() => {});
    } else if (r < 0.85) {
      await mkdir(dirname(w.at(rel)), { recursive: true });
      await rm(w.at(rel), { force: true, recursive: true });
      await symlink(pick(['a.txt', 'nowhere', '../b.txt']), w.at(rel));
    } else {
      if (to !== rel && (await exists(rel)) && !to.startsWith(`${rel}/`)) {
        await mkdir(dirname(w.at(to)), { recursive: true });
        await rm(w.at(to), { force: true, recursive: true });
        await rename(w.at(rel), w.at(to));
      }
    }
  };
  if (!process.env.PROBE_GIT) for (const n of NAMES.slice(0, 3)) await w.write(n, `${n} start\n`);
  let trees: Record<string, Awaited<ReturnType<typeof snapshot>>> = {};
  const turns = 1 + Math.floor(rand() * 3);
  // PROBE_CLEAR=1: now and then the agent's /clear starts a new session of the workspace (the earlier
  // one's captures stay in the timeline); tags are then the new session's.
  let s = w.session;
  let t = 0;
  const tool = async (paths: string[], fn: () => Promise<void>) => {
    const c = await capture(s, paths, { tool: 'Write' });
    await fn();
    await settle(s, paths, { tag: c.tag ?? undefined });
  };
  for (let n = 1; n <= turns; n++) {
    if (process.env.PROBE_CLEAR && n > 1 && rand() < 0.5) {
      s = await w.ws.create({ title: 'after /clear' });
      trees = {};
      t = 0;
    }
    await s.turn();
    t++;
    trees[String(t)] = await snapshot(w.root);
    for (let k = Math.floor(rand() * 4); k > 0; k--) {
      // A tool captures every path it changes (a rename: both names), as the agents' hooks do.
      const rel = pick(NAMES);
      const to = pick(NAMES);
      await tool(to === rel ? [rel] : [rel, to], () => randomChange(rel, to));
    }
  }
  // By hand, after the last turn: no prompt since.
  for (let k = 1 + Math.floor(rand() * 4); k > 0; k--) await randomChange(pick([...NAMES, 'new.txt', 'n/m.txt', 'd']));
  if (rand() < 0.3) await mkdir(w.at('emptydir')).catch(() => {});
  const handTree = await snapshot(w.root);
  const say = (msg: string) => {
    problems++;
    console.log(`round ${round} (seed ${process.argv[3] ?? 1}): ${msg}`);
  };
  for (const tag of Object.keys(trees)) {
    const diff = await s.diff(tag);
    const dry = await s.restore(tag, { dryRun: true });
    const entries = dry.plan!.entries;
    // A path the plan writes or links, or deletes where no folder is: what diff lists as A/M/D (a
    // folder shows through its files, and only a mode change of one kept as a folder is listed; a
    // folder put back where a file or symlink is now is that entry's D).
    const fileLike = new Set(entries.filter((e) => e.action === 'write' || e.action === 'symlink' || (e.action === 'delete' && handTree[e.path]?.type !== 'dir') || (e.action === 'mkdir' && handTree[e.path] !== undefined && handTree[e.path]!.type !== 'dir')).map((e) => e.path));
    const folderMode = (c: (typeof diff.changes)[number]) => c.mode !== undefined && handTree[c.path]?.type === 'dir';
    const planned = [...fileLike].sort();
    const listed = diff.changes.filter((c) => !folderMode(c)).map((c) => c.path).sort();
    if (JSON.stringify(planned) !== JSON.stringify(listed)) {
      say(`tag ${tag}: plan ${JSON.stringify(planned)} diff ${JSON.stringify(listed)}`);
      const odd = [...planned, ...listed].filter((p) => !planned.includes(p) || !listed.includes(p));
      if (process.env.PROBE_LOG) console.log(JSON.stringify({ odd, diff: diff.changes.filter((c) => odd.includes(c.path)), plan: entries.filter((e) => odd.includes(e.path)), unchanged: dry.plan!.unchanged.filter((p) => odd.includes(p)), skipped: dry.plan!.skipped, hand: Object.fromEntries(odd.map((p) => [p, handTree[p]])), at: Object.fromEntries(odd.map((p) => [p, trees[tag]![p]])) }));
    }
    for (const c of diff.changes.filter(folderMode)) if (!entries.some((e) => e.path === c.path && e.action === 'mkdir')) say(`tag ${tag}: diff lists folder mode ${c.path}, not planned`);
    const drift = dry.plan!.drift.filter((p) => fileLike.has(p)).sort();
    const unrecorded = diff.changes.filter((c) => c.unrecorded && !folderMode(c)).map((c) => c.path).sort();
    // Drift the look found is `unrecorded`; drift of a recorded path is listed too. An unrecorded path
    // the plan does not call drift lies beneath a folder a tool captured since (the restore puts it
    // back as the tool's: "A restore looks first"), which is itself drift here.
    const lookDrift = drift.filter((p) => !listed.includes(p) || unrecorded.includes(p));
    const notListed = drift.filter((p) => !listed.includes(p));
    if (notListed.length) say(`tag ${tag}: drift not in diff ${JSON.stringify(notListed)}`);
    const ancestorDrift = (p: string) => dry.plan!.drift.some((d) => p.startsWith(`${d}/`));
    const odd = unrecorded.filter((p) => !lookDrift.includes(p) && !ancestorDrift(p));
    if (odd.length) say(`tag ${tag}: unrecorded, not drift, under no drifted folder: ${JSON.stringify(odd)} (drift ${JSON.stringify(drift)})`);
    if (diff.skipped.length) say(`tag ${tag}: diff skipped ${JSON.stringify(diff.skipped)}`);
    checked++;
  }
  // The promise itself: a forced restore of the last turn gives its tree, its undo the hand state.
  const last = String(t);
  const r = await s.restore(last, { force: true });
  const got = await snapshot(w.root);
  if (JSON.stringify(got) !== JSON.stringify(trees[last])) {
    const want = trees[last]!;
    const paths = [...new Set([...Object.keys(got), ...Object.keys(want)])].filter((p) => JSON.stringify(got[p]) !== JSON.stringify(want[p]));
    say(`restore ${last}: tree differs at ${paths.map((p) => `${p} want ${JSON.stringify(want[p])} got ${JSON.stringify(got[p])}`).join('; ')}`);
    if (process.env.PROBE_LOG) console.log(JSON.stringify((await s.events()).filter((e) => e.type === 'capture' || e.type === 'settle' || e.type === 'turn').map((e) => [e.seq, e.type, (e as { tool?: string }).tool, ((e as { files?: { path: string; state: string }[] }).files ?? []).map((f) => `${f.path}:${f.state}`).join(' ')])));
  }
  if (r.undo) {
    await s.restore(r.undo, { force: true });
    if (JSON.stringify(await snapshot(w.root)) !== JSON.stringify(handTree)) say(`undo ${r.undo}: tree differs from the hand state`);
  }
  await w.dirs.cleanup();
}
console.log(JSON.stringify({ rounds, seed: process.argv[3] ?? 1, tagsChecked: checked, problems }));

/** A world whose start files are committed to git before the session's baseline. */
async function gitWorld(): Promise<World> {
  const dirs = await makeTempDirs('ckpt-diff-probe-git-');
  for (const n of [...NAMES.slice(0, 5)]) {
    await mkdir(dirname(join(dirs.workspace, n)), { recursive: true });
    await writeFile(join(dirs.workspace, n), `${n} start\n`);
  }
  const git = (...args: string[]) => spawnSync('git', ['-c', 'user.name=p', '-c', 'user.email=p@p', ...args], { cwd: dirs.workspace });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'start');
  const base = await openBaseWorld(dirs, { title: 'probe (git)' });
  const world: World = {
    ...base,
    async write(rel, content, mode = 0o644) {
      await mkdir(dirname(base.at(rel)), { recursive: true });
      await rm(base.at(rel), { force: true });
      await writeFile(base.at(rel), content, { mode });
      await chmod(base.at(rel), mode);
    },
    async tool(paths, change, tool = 'Write') {
      const c = await capture(world.session, paths, { tool });
      await change();
      await settle(world.session, paths, { tag: c.tag ?? undefined });
      return c.tag!;
    },
    turn: async () => (await world.session.turn()).tag,
  };
  return world;
}
