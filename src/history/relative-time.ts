// Times for people (log, status): how long ago, in the local time zone once it is more than a day back.

export function relativeTime(iso: string, now = Date.now()): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s >= 0 && s < 5) return 'just now';
  if (s >= 0 && s < 60) return `${s} s ago`;
  if (s >= 0 && s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s >= 0 && s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return localTime(t);
}

/** `2026-12-01 14:03` in the local time zone. */
export function localTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}
