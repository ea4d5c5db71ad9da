// Test-only kill points for a ckpt child on the shared store (issue 33), the counterpart of
// test/reliability/fault-fs.ts: loaded with `node --import <this file, compiled>`, it counts every
// request the process starts towards the store's servers — a PostgreSQL query (a simple `Q` or an
// extended-protocol `P` message) or an S3 HTTP request (its request line) — as one *store step*, and
// every workspace write as a *workspace step* (fault-fs.ts, unchanged). With `CKPT_NET_FAULT` = JSON
// {ports, workspace, side?, step?, report?} the process SIGKILLs itself just before the `step`-th
// step of `side`. The driver and the SDKs are bundled into the CLI, so the seam is below them: the
// socket (`net.Socket.prototype.write`), keyed by the port each socket connected to. Production code
// is not changed; without the preload nothing here runs.
import fs from 'node:fs';
import net from 'node:net';
import { installFaultFs, type Side, type TraceEntry } from '../reliability/fault-fs.js';

export interface NetFaultConfig {
  /** The servers' ports (PostgreSQL, S3): requests to them are store steps. */
  ports: number[];
  workspace: string;
  side?: Side;
  step?: number;
  /** A file that gets {counts, trace} when the process exits normally. */
  report?: string;
}

export interface NetFaultReport {
  counts: Record<Side, number>;
  trace: TraceEntry[];
}

const HTTP_METHOD = /^(GET|PUT|POST|HEAD|DELETE) (\S+)/;

/** What a write to a server starts, or undefined for the rest of a request (body, later pg messages). */
function requestStart(data: unknown): string | undefined {
  const buf = typeof data === 'string' ? Buffer.from(data.slice(0, 200)) : Buffer.isBuffer(data) || data instanceof Uint8Array ? Buffer.from(data.subarray(0, 200)) : undefined;
  if (!buf || buf.length === 0) return undefined;
  const head = buf.toString('latin1');
  const m = HTTP_METHOD.exec(head);
  if (m) return `s3 ${m[1]} ${m[2]!.replace(/\?.*$/, '')}`;
  const type = head[0];
  if (type !== 'Q' && type !== 'P' || buf.length < 6) return undefined;
  // Q: int32 length, query text; P: int32 length, statement name (NUL-terminated), query text.
  let text = head.slice(5);
  if (type === 'P') text = text.slice(text.indexOf('\0') + 1);
  return `pg ${text.split('\0')[0]!.replace(/\s+/g, ' ').slice(0, 80)}`;
}

export function installFaultNet(config: NetFaultConfig): { report(): NetFaultReport } {
  const fsFaults = installFaultFs({
    // No store folder: the store is on the servers.
    store: '/nonexistent/ckpt-shared-store',
    workspace: config.workspace,
    ...(config.side === 'workspace' && config.step ? { side: 'workspace' as const, step: config.step, action: 'kill' as const } : {}),
  });
  const ports = new Set(config.ports);
  const portOf = new WeakMap<object, number>();
  let storeSteps = 0;
  const trace: TraceEntry[] = [];

  const proto = net.Socket.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const connect = proto.connect!;
  proto.connect = function (this: object, ...args: unknown[]) {
    // socket.connect(port, host) (pg), or the normalized [options, cb] array net.connect passes.
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    const port = typeof first === 'object' && first !== null ? Number((first as { port?: unknown }).port) : Number(first);
    if (Number.isInteger(port)) portOf.set(this, port);
    return connect.apply(this, args);
  };
  const write = proto.write!;
  proto.write = function (this: object, ...args: unknown[]) {
    const port = portOf.get(this);
    if (port !== undefined && ports.has(port)) {
      const what = requestStart(args[0]);
      if (what) {
        const n = ++storeSteps;
        if (trace.length < 20_000) trace.push({ side: 'store', step: n, op: what.slice(0, 2), path: what.slice(3) });
        if (config.side === 'store' && config.step === n) process.kill(process.pid, 'SIGKILL');
      }
    }
    return write.apply(this, args);
  };
  return {
    report() {
      const fsReport = fsFaults.report();
      return { counts: { store: storeSteps, workspace: fsReport.counts.workspace }, trace: [...trace, ...fsReport.trace] };
    },
  };
}

// ---- preload entry: configured by CKPT_NET_FAULT ----------------------------------------------------
const raw = process.env.CKPT_NET_FAULT;
if (raw) {
  const config = JSON.parse(raw) as NetFaultConfig;
  const writeReport = fs.writeFileSync;
  const faults = installFaultNet(config);
  if (config.report) {
    const reportFile = config.report;
    process.on('exit', () => writeReport(reportFile, JSON.stringify(faults.report())));
  }
}
