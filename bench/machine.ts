// The machine line printed with every result set.
import os from 'node:os';

export interface Machine {
  node: string;
  cpus: number;
  cpuModel: string;
  memGB: number;
  platform: string;
  date: string;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    node: process.version,
    cpus: cpus.length,
    cpuModel: (cpus[0]?.model ?? 'unknown').replace(/\s+/g, ' ').trim(),
    memGB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString(),
  };
}

export function machineLine(m: Machine): string {
  return `${m.date.slice(0, 10)} · node ${m.node} · ${m.cpus}× ${m.cpuModel} · ${m.memGB} GB · ${m.platform}`;
}
