/** traces' version: `traces --version`, and recorded in every report.json (test/package.test.ts checks it against package.json). */
export const TRACES_VERSION = '0.1.0';
