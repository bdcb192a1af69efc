/**
 * For the benchmark: seconds from launching the browser on `roots` to its first rendered
 * record row, Node's start-up and module loading included. The browser runs in a child
 * process (first-row-probe.js) the way `traces browse` starts, drawing into an in-memory
 * 100x30 terminal, so no pseudo-terminal is needed.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export async function measureFirstRow(roots: readonly string[], timeoutSeconds = 60): Promise<number> {
  const probe = fileURLToPath(new URL('./first-row-probe.js', import.meta.url));
  const started = performance.now();
  const child = spawn(process.execPath, [probe, ...roots], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise<number>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const finish = (error: Error | null, seconds = 0): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error !== null) {
        child.kill();
        reject(error);
      } else resolve(seconds);
    };
    const timer = setTimeout(() => finish(new Error(`no record row within ${timeoutSeconds} s`)), timeoutSeconds * 1000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('first-row')) finish(null, (performance.now() - started) / 1000);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => finish(error));
    child.on('exit', (code) => finish(new Error(`first-row probe exited with ${code} before a record row: ${stderr.trim()}`)));
  });
}
