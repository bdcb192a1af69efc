/**
 * Finding planted secrets in what a command printed and wrote: the shared oracle of the tests
 * that plant keys as recorded names (secret-names, recorded-names).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** A planted secret, found by its telling parts. */
export interface Planted {
  /** What the secret was planted as (`synalinks program`, a detector name…), named in a leak. */
  label: string;
  text: string;
}

/**
 * The telling parts of each secret: its runs of letters and digits of 12 or more, less their
 * first character, lowercased. Found in any casing, so a name re-cased (CamelCase, as Ask's
 * class names are) or lowercased still counts as a leak.
 */
export function secretBodies(planted: readonly Planted[]): { label: string; body: string }[] {
  return planted.flatMap(({ label, text }) =>
    (text.match(/[A-Za-z0-9]{12,}/g) ?? [])
      .filter((run) => !/^aws_secret_access_key$/i.test(run) && !/^(BEGIN|END)/.test(run))
      .map((run) => ({ label, body: run.slice(1).toLowerCase() })),
  );
}

/** Every file below `dir` (or `dir` itself when it is a file). */
export function writtenFiles(dir: string): string[] {
  if (!statSync(dir).isDirectory()) return [dir];
  return readdirSync(dir).flatMap((entry) => writtenFiles(path.join(dir, entry)));
}

/** Secret bodies found in `texts` (any case), as "label in where". */
export function leaksIn(bodies: readonly { label: string; body: string }[], texts: readonly string[], where: string): string[] {
  const lowered = texts.map((t) => t.toLowerCase());
  return [...new Set(bodies.filter(({ body }) => lowered.some((t) => t.includes(body))).map(({ label }) => `${label} in ${where}`))];
}

/**
 * Secret bodies in what a run wrote below `dir`: in file and folder names, and in every file's
 * bytes, read raw and with JSON escapes (\n in a PEM, \/) read as spaces. `read` gives the text
 * of a file that is not text (Parquet rows), else null.
 */
export async function leaksInFiles(
  bodies: readonly { label: string; body: string }[],
  dir: string,
  read: (file: string) => Promise<string | null> = () => Promise.resolve(null),
): Promise<string[]> {
  const found: string[] = [];
  for (const file of writtenFiles(dir)) {
    const relative = path.relative(dir, file) || path.basename(file);
    found.push(...leaksIn(bodies, [relative], `the path ${relative}`));
    const raw = (await read(file)) ?? readFileSync(file, 'utf8');
    found.push(...leaksIn(bodies, [raw, raw.replace(/\\[nt"\\/]/g, ' ')], relative));
  }
  return [...new Set(found)];
}
