// Polling for a state a real agent's run leaves behind (a daemon's claim, a file), with a deadline.
export async function waitFor<T>(what: string, get: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  for (const until = Date.now() + ms; Date.now() < until; ) {
    const v = await get();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
