// daemon-scan-incremental: `ckpt serve` watches the tree; one file changes, then a scan is asked for
// over HTTP (POST /sessions/:id/scan) — the daemon looks only at the paths its watcher saw touched.
// Compared with shadow git `add -A` + `commit` of the same change. Also reports the daemon's resident
// memory while it watches the whole tree.
import { sessionId } from '../ckpt-api.js';
import type { BenchContext } from '../context.js';
import { shadowCheckpoint } from '../baselines/shadow-git.js';
import { measureInterleaved, timed } from '../measure.js';
import { startDaemon, type Daemon } from '../ops/daemon.js';
import { makeEntry, type Entry } from '../report.js';
import { baselineSession, fmtMs, shadowRepo, writeRel } from './shared.js';

export async function daemonScanIncrementalFigure(ctx: BenchContext): Promise<Entry> {
  const idx = ctx.mutable.incremental;
  const rel = ctx.tree.relPath(idx);
  const original = ctx.tree.content(idx);
  const open = await baselineSession(ctx);
  const repo = await shadowRepo(ctx);
  const root = ctx.tree.root;
  const id = sessionId(open.session);
  let daemon: Daemon | undefined;
  try {
    daemon = await startDaemon(open.storeDir);
    const d = daemon;
    // The first scan through the daemon is a full one (what changed before its watches existed is unknown).
    const first = await timed(() => d.call('POST', `/sessions/${id}/scan`, { workspace: root, tool: 'Bash' }));
    ctx.log(`  daemon first (full) scan: ${fmtMs(first)}`);
    let last: Record<string, unknown> | undefined;
    // Dirty pages flushed (untimed) before every call, as scan-incremental does: otherwise the
    // scan's first fsync pays for writing back the shadow commit before it (the page cache is shared).
    const r = await measureInterleaved(
      { ...ctx.light, flush: true },
      {
        ckpt: async (i) => {
          const ms = await timed(async () => {
            last = await d.call('POST', `/sessions/${id}/scan`, { workspace: root, tool: 'Bash' });
          });
          if (i < 3 || i % 10 === 0) ctx.log(`  daemon scan #${i}: ${fmtMs(ms)} (watched ${String(last?.watched)}, ${(last?.files as unknown[] | undefined)?.length} changed)`);
          if (last?.watched === undefined) throw new Error(`the daemon ran a full scan (run ${i}), not a watched one`);
          return ms;
        },
        git: (i) =>
          shadowCheckpoint(repo).then((ms) => {
            if (i < 3) ctx.log(`  shadow git #${i}: ${fmtMs(ms)}`);
            return ms;
          }),
      },
      (i) => writeRel(ctx, rel, Buffer.concat([original, Buffer.from(`// daemon bench edit ${i}\n`)])),
    );
    const health = await d.call('GET', '/health');
    const mem = d.memory();
    return makeEntry({
      name: 'daemon-scan-incremental',
      unit: 'ms',
      ckpt: r.ckpt,
      baseline: 'shadow git add -A + commit of the same change',
      base: r.git,
      goal: 'ckpt_ms ≤ 30 and ratio ≤ 0.1',
      extra: {
        first_full_scan_ms: Math.round(first),
        changed_files: (last?.files as unknown[] | undefined)?.length ?? null,
        watched_paths: last?.watched ?? null,
        watched_dirs: (health.watching as { dirs: number }[] | undefined)?.[0]?.dirs ?? null,
        daemon_rss_mb: mem ? Math.round(mem.rss / 1e5) / 10 : null,
        daemon_peak_rss_mb: mem ? Math.round(mem.peak / 1e5) / 10 : null,
        memory_goal: 'daemon RSS < 150 MB watching the tree',
      },
    });
  } finally {
    await daemon?.stop();
    await writeRel(ctx, rel, original);
  }
}
