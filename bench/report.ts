// Result entries (one per figure, named as in the benchmark issue) and their two renderings: a
// readable table for people and one JSON document for machines. ratio = ckpt ÷ baseline.
import pc from 'picocolors';
import type { Machine } from './machine.js';
import { machineLine } from './machine.js';
import type { Sample } from './measure.js';

export type Entry = { name: string } & Record<string, unknown>;

const round = (n: number, digits = 3): number => Math.round(n * 10 ** digits) / 10 ** digits;

export function ratio(a: number | undefined | null, b: number | undefined | null): number | null {
  return a != null && b != null && b > 0 ? round(a / b) : null;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export interface EntryInput {
  name: string;
  unit: 'ms' | 'bytes';
  ckpt?: Sample | number | Error;
  baseline: string;
  base?: Sample | number | Error;
  goal?: string;
  extra?: Record<string, unknown>;
}

export const value = (s: Sample | number | Error | undefined): number | null =>
  s === undefined || s instanceof Error ? null : typeof s === 'number' ? s : s.median;

/** Builds an entry in the published shape: name, ckpt_<unit>, baseline, baseline_<unit>, ratio, extras. */
export function makeEntry(input: EntryInput): Entry {
  const c = value(input.ckpt);
  const b = value(input.base);
  const digits = input.unit === 'ms' ? 2 : 0;
  const e: Entry = {
    name: input.name,
    [`ckpt_${input.unit}`]: c === null ? null : round(c, digits),
    baseline: input.baseline,
    [`baseline_${input.unit}`]: b === null ? null : round(b, digits),
    ratio: ratio(c, b),
  };
  if (input.ckpt instanceof Error) e.error = errorText(input.ckpt);
  if (input.base instanceof Error) e.baseline_error = errorText(input.base);
  if (input.ckpt && typeof input.ckpt === 'object' && !(input.ckpt instanceof Error)) e.runs = input.ckpt.runs;
  else if (input.base && typeof input.base === 'object' && !(input.base instanceof Error)) e.runs = input.base.runs;
  if (input.goal) e.goal = input.goal;
  Object.assign(e, input.extra);
  return e;
}

/** An extra comparison `<prefix>_<unit>` and `<prefix>_ratio` (ckpt ÷ it) for an entry. */
export function extraComparison(prefix: string, unit: 'ms' | 'bytes', ckpt: Sample | number | Error | undefined, other: Sample | number | Error | undefined): Record<string, unknown> {
  const c = value(ckpt);
  const o = value(other);
  const out: Record<string, unknown> = {
    [`${prefix}_${unit}`]: o === null ? null : round(o, unit === 'ms' ? 2 : 0),
    [`${prefix}_ratio`]: ratio(c, o),
  };
  if (other instanceof Error) out[`${prefix}_error`] = errorText(other);
  return out;
}

export interface Report {
  machine: Machine;
  tree: Record<string, unknown>;
  results: Entry[];
}

export function toJson(report: Report): string {
  return JSON.stringify({ machine: report.machine, tree: report.tree, results: report.results }, null, 2);
}

function fmt(v: unknown, unit: 'ms' | 'bytes'): string {
  if (typeof v !== 'number') return '—';
  if (unit === 'bytes') return v >= 1e9 ? `${(v / 1e9).toFixed(2)} GB` : `${(v / 1e6).toFixed(1)} MB`;
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(v < 10 ? 2 : 1)} ms`;
}

const fmtRatio = (v: unknown): string => (typeof v === 'number' ? `${v.toFixed(v < 10 ? 2 : 1)}×` : '—');

function pad(s: string, n: number): string {
  // eslint-disable-next-line no-control-regex
  const visible = s.replace(/\x1b\[[0-9;]*m/g, '').length;
  return s + ' '.repeat(Math.max(0, n - visible));
}

export function toTable(report: Report, color: boolean): string {
  const c = pc.createColors(color);
  const rows: string[][] = [['figure', 'ckpt', 'baseline', '', 'ratio', 'also vs', '']];
  for (const e of report.results) {
    const unit = 'ckpt_bytes' in e ? 'bytes' : 'ms';
    const ckpt = e.error ? c.yellow(String(e.error)) : fmt(e[`ckpt_${unit}`], unit);
    const alsoKey = Object.keys(e).find((k) => k.startsWith('vs_') && k.endsWith('_ratio'));
    const also = alsoKey ? alsoKey.slice(3, -6) : '';
    const alsoVal = alsoKey ? `${fmt(e[`vs_${also}_${unit}`], unit)} → ${fmtRatio(e[alsoKey])}` : '';
    rows.push([
      c.bold(e.name),
      ckpt,
      String(e.baseline),
      e.baseline_error ? c.red(String(e.baseline_error)) : fmt(e[`baseline_${unit}`], unit),
      fmtRatio(e.ratio),
      also,
      alsoVal,
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').replace(/\x1b\[[0-9;]*m/g, '').length))); // eslint-disable-line no-control-regex
  const lines = rows.map((r) => r.map((cell, i) => pad(cell, widths[i] ?? 0)).join('  ').trimEnd());
  const goals = report.results.filter((e) => e.goal).map((e) => `  ${e.name}: ${String(e.goal)}`);
  return [
    c.dim(machineLine(report.machine)),
    c.dim(`tree: ${String(report.tree.files)} files, ${fmt(report.tree.bytes, 'bytes')}, seed ${String(report.tree.seed)}`),
    '',
    c.bold(lines[0] ?? ''),
    ...lines.slice(1),
    '',
    c.dim('ratio = ckpt ÷ baseline (lower is better). Goals:'),
    ...goals.map((g) => c.dim(g)),
  ].join('\n');
}

/** The results as a Markdown table (for docs/BENCHMARKS.md). */
export function toMarkdown(report: Report): string {
  const lines = [
    `Machine: ${machineLine(report.machine)}  `,
    `Tree: ${String(report.tree.files)} files, ${fmt(report.tree.bytes, 'bytes')}, seed ${String(report.tree.seed)}${report.tree.quick ? ' (--quick)' : ''}; whole run ${String(report.tree.total_s)} s`,
    '',
    '| figure | ckpt | baseline | baseline value | ratio | also | goal |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const e of report.results) {
    const unit = 'ckpt_bytes' in e ? 'bytes' : 'ms';
    const alsoKey = Object.keys(e).find((k) => k.startsWith('vs_') && k.endsWith('_ratio'));
    const also = alsoKey ? `${alsoKey.slice(3, -6)}: ${fmt(e[`${alsoKey.slice(0, -6)}_${unit}`], unit)} → ${fmtRatio(e[alsoKey])}` : '';
    const ckpt = e.error ? `_${String(e.error)}_` : fmt(e[`ckpt_${unit}`], unit);
    const base = String(e.baseline ?? '').replace(/\|/g, '\\|');
    lines.push(`| ${e.name} | ${ckpt} | ${base} | ${fmt(e[`baseline_${unit}`], unit)} | ${fmtRatio(e.ratio)} | ${also} | ${String(e.goal ?? '')} |`);
  }
  return lines.join('\n');
}
