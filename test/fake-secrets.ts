/** Fake credentials for tests, shared by the detector tests and the export redaction tests. */
// Fake credentials are assembled at run time: well-formed for the detectors, but no
// complete token sits in the source for secret scanners (e.g. push protection) to trip on.
export const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export function fakeToken(length: number, seed: number): string {
  let x = seed;
  let out = '';
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out += BASE62[Math.floor(x / 65536) % 62];
  }
  return out;
}
export const b64url = (json: object): string => Buffer.from(JSON.stringify(json)).toString('base64url');

export const OPENAI_KEY = 'sk-' + 'proj-' + fakeToken(48, 1);
export const OPENAI_LEGACY_KEY = 'sk-' + fakeToken(48, 2);
export const ANTHROPIC_KEY = 'sk-' + 'ant-' + 'api03-' + fakeToken(93, 3) + 'AA';
export const AWS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE'; // AWS's documented example
export const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'; // AWS's documented example
export const GITHUB_TOKEN = 'ghp' + '_' + fakeToken(36, 4);
export const GITHUB_PAT = 'github' + '_pat_' + fakeToken(22, 5) + '_' + fakeToken(59, 6);
export const GOOGLE_KEY = 'AI' + 'za' + fakeToken(35, 7);
export const SLACK_TOKEN = 'xo' + 'xb-' + '123456789012-1234567890123-' + fakeToken(24, 8);
export const STRIPE_KEY = 'sk' + '_live_' + fakeToken(24, 9);
export const STRIPE_TEST_KEY = 'sk' + '_test_' + fakeToken(24, 10);
export const JWT = [b64url({ alg: 'HS256', typ: 'JWT' }), b64url({ sub: '1234567890', name: 'Test User' }), fakeToken(43, 11)].join('.');
export const BEARER_TOKEN = fakeToken(40, 12);
export const PEM_BODY = [fakeToken(64, 13), fakeToken(64, 14), fakeToken(20, 15) + '=='].join('\n');
export const PRIVATE_KEY = `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----`;
export const DB_PASSWORD = 's3cr3t-P4ss-' + fakeToken(8, 16);
export const RANDOM_SECRET = 'f8Kq2LmZ9xR4tY7wB1nC3vD5';
export const RANDOM_PASSWORD = 'Xk9#mQ2$vL7p';

