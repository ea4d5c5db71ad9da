// SIGSTOP that has taken effect: a stop lands once the process is scheduled, and a hook that checks
// before that (a loaded machine) sees it running, posts to it and waits out the client's answer
// timeout — a race of the client's (DESIGN "A stopped daemon is not waited on"), not the tests' subject.
import { readFileSync } from 'node:fs';

export async function stopProcess(pid: number): Promise<void> {
  process.kill(pid, 'SIGSTOP');
  for (let i = 0; i < 200 && !/\) [Tt]/.test(readFileSync(`/proc/${pid}/stat`, 'latin1')); i++) await new Promise((r) => setTimeout(r, 10));
}
