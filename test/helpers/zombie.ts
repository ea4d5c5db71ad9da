// A real zombie for liveness tests: a child that is killed while its parent never reaps it (as a
// container whose PID 1 does not reap leaves a killed daemon). The parent is `sh`, which starts the
// child, then becomes `sleep` (exec): sleep never waits, so the killed child stays in state Z.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Zombie {
  pid: number;
  /** Ends the parent; init then reaps the zombie. */
  release(): void;
}

/** Whether this system shows process states in /proc (Linux); zombie tests need it. */
export const CAN_SEE_ZOMBIES = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

export async function makeZombie(): Promise<Zombie> {
  // The kill comes from a subshell after the exec, so the sh can no longer reap the child itself.
  const parent: ChildProcess = spawn('sh', ['-c', 'sleep 1000 & c=$!; echo $c; (sleep 0.2; kill -9 $c) & exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const pid = await new Promise<number>((resolve, reject) => {
    let out = '';
    parent.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
    parent.on('error', reject);
  });
  const deadline = Date.now() + 5000;
  while (state(pid) !== 'Z') {
    if (Date.now() > deadline) throw new Error(`pid ${pid} did not become a zombie (state ${state(pid)})`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { pid, release: () => parent.kill('SIGKILL') };
}

function state(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}
