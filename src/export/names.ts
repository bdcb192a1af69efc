/** Folder names built from record fields, made safe: they can never leave the output folder. */

const UNSAFE = /[^A-Za-z0-9._-]/g;

/** One path segment from a program or module name: no separators, no `..`, never empty. */
export function safeSegment(name: string): string {
  let segment = name.replace(UNSAFE, '_').slice(0, 120);
  if (segment === '' || /^\.+$/.test(segment)) segment = `_${segment}`;
  // Hidden folders are easy to miss, and `.` prefixes are how `..` sneaks in.
  if (segment.startsWith('.')) segment = `_${segment.slice(1)}`;
  return segment;
}
