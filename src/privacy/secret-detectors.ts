/** Credentials: vendor keys recognised by their prefixes, plus structural forms (PEM, JWT, URLs, assignments). */
import { makeAssignmentDetector } from './assignment.js';
import { includesAny, type Detector } from './detector.js';
import { sharedGate } from './gate.js';
import { looksRandom } from './entropy.js';

// A token must not continue a longer base64/base64url run on the left; this keeps prefix
// coincidences inside blobs (and words like task-sk-…) from matching. The check sits after
// the literal prefix, so each pattern starts with a literal the engine can search for fast.
// Text that still holds JSON escapes (a string that is not valid JSON, so was not decoded)
// may put the letter of an escape there: the `n` of `\n`, the `/` of `\/`, the last digit of
// `\u0020`. Those end a run too.
const escapeBefore = (prefixLength: number): string =>
  `(?<=\\\\[\\s\\S]{${prefixLength + 1}})|(?<=\\\\u[0-9A-Fa-f]{4}[\\s\\S]{${prefixLength}})`;
// A prefix holding '-' or '_' cannot sit inside standard base64 (no '-', '_'), and base64url
// has no '/' or '+': after those (a path, keys/sk-…) such a token starts.
const tokenStart = (prefixLength: number, prefix = ''): string =>
  `(?:${escapeBefore(prefixLength)}|(?<!${/[-_]/.test(prefix) ? '[A-Za-z0-9_-]' : '[A-Za-z0-9+/_-]'}[\\s\\S]{${prefixLength}}))`;
const TOKEN_END = '(?![A-Za-z0-9_-])';

// The vendor prefixes below, found in one pass: most strings hold none, and then all these
// detectors are skipped (one combined pass costs a third of the separate ones on real traces).
const mayHoldPrefix = sharedGate(
  'PRIVATE KEY|sk-|A[KS]IA|gh[pousr]_|github_pat_|AIza|xox|[sr]k_(?:live|test)_|eyJ|Bearer|bearer|BEARER',
);

const hasDigitAndLetter = (s: string): boolean => /\d/.test(s) && /[A-Za-z]/.test(s);
const hasDigitAndBothCases = (s: string): boolean => /\d/.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s);

const anthropic: Detector = {
  name: 'anthropic',
  kind: 'secret',
  rank: 90,
  mayMatch: mayHoldPrefix,
  pattern: new RegExp(`sk-ant-${tokenStart(7, 'sk-ant-')}[A-Za-z0-9_-]{20,}${TOKEN_END}`, 'g'),
  accept: (value) => hasDigitAndLetter(value.slice(7)),
};

const openai: Detector = {
  name: 'openai',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  // sk-ant- belongs to anthropic. Real keys are mixed-case base62, which slugs like
  // sk-learn-tutorial-2024 are not.
  pattern: new RegExp(`sk-${tokenStart(3, 'sk-')}(?!ant-)[A-Za-z0-9_-]{20,}${TOKEN_END}`, 'g'),
  accept: (value) => hasDigitAndBothCases(value.slice(3)),
};

const awsAccessKeyId: Detector = {
  name: 'aws_access_key_id',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  pattern: new RegExp(`A[KS]IA${tokenStart(4)}[A-Z0-9]{16}${TOKEN_END}`, 'g'),
};

const github: Detector = {
  name: 'github',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  pattern: new RegExp(`g(?:h[pousr]_${tokenStart(4, 'gh_')}[A-Za-z0-9]{36,251}|ithub_pat_${tokenStart(11, 'github_pat_')}[A-Za-z0-9_]{50,251})${TOKEN_END}`, 'g'),
};

const googleApiKey: Detector = {
  name: 'google_api_key',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  pattern: new RegExp(`AIza${tokenStart(4)}[0-9A-Za-z_-]{35}${TOKEN_END}`, 'g'),
};

const slack: Detector = {
  name: 'slack',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  // xoxb-/xoxp-/xoxa-/xoxo-/xoxs-/xoxr- tokens and xoxe(.xoxp)- refresh tokens: a numeric team part, then more.
  pattern: new RegExp(`xox${tokenStart(3, 'xoxb-')}(?:[abposr]|e(?:\\.xox[bp])?)-[0-9]+-[0-9A-Za-z-]{10,}${TOKEN_END}`, 'g'),
};

const stripe: Detector = {
  name: 'stripe',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  // Publishable keys (pk_) are public by design and deliberately not matched.
  pattern: new RegExp(`[sr]k_(?:live|test)_${tokenStart(8, 'sk_live_')}[0-9A-Za-z]{16,}${TOKEN_END}`, 'g'),
};

function jwtHeaderIsJson(token: string): boolean {
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && !Array.isArray(header);
  } catch {
    return false;
  }
}

const jwt: Detector = {
  name: 'jwt',
  kind: 'secret',
  rank: 80,
  mayMatch: mayHoldPrefix,
  // The signature may be empty (alg "none"); the header must decode to a JSON object.
  pattern: new RegExp(`eyJ${tokenStart(3)}[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*${TOKEN_END}`, 'g'),
  accept: jwtHeaderIsJson,
};

const privateKey: Detector = {
  name: 'private_key',
  kind: 'secret',
  rank: 95,
  mayMatch: mayHoldPrefix,
  // A whole PEM block (RSA, EC, OPENSSH, ENCRYPTED, PGP … BLOCK). When the END line was cut
  // off, the header plus the base64 lines that follow (raw or JSON-escaped newlines).
  pattern:
    /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----(?:[\s\S]*?-----END \1PRIVATE KEY\2-----|(?:(?:\\[nr]|\s)+[A-Za-z0-9+/=]{8,})*)/g,
};

const SCHEME_END = /^[A-Za-z0-9+.-]$/;
const PLACEHOLDER_PASSWORD = /^(?:\*+|x+|\$\{?\w+\}?|%\w+%)$/i;

const urlPassword: Detector = {
  name: 'url_password',
  kind: 'secret',
  rank: 70,
  mayMatch: includesAny(['@']),
  // scheme://user:password@host. The password may hold a raw '@' (greedy, backs off to the last one).
  // The pattern starts at the literal '://' (fast to search for); accept checks a scheme precedes it.
  pattern: /:\/\/[^\s:/?#@"'<>\\]{1,128}:([^\s/?#"'<>\\]{1,256})@(?=[A-Za-z0-9[])/dg,
  valueGroups: [1],
  accept: (value, match, text) => SCHEME_END.test(text[match.index - 1] ?? '') && !PLACEHOLDER_PASSWORD.test(value),
};

const bearer: Detector = {
  name: 'bearer',
  kind: 'secret',
  rank: 65,
  mayMatch: mayHoldPrefix,
  // Without the Authorization prefix too (header dicts, curl lines); the token must look random,
  // so prose like "Bearer tokens are…" does not match.
  pattern: new RegExp(`(?:Bearer|bearer|BEARER)(?:${escapeBefore(6)}|(?<![A-Za-z0-9][\\s\\S]{6}))[ \\t]+([A-Za-z0-9._~+/-]+=*)`, 'dg'),
  valueGroups: [1],
  accept: (value) => looksRandom(value, 16),
};

const awsSecretAccessKey = makeAssignmentDetector({
  name: 'aws_secret_access_key',
  kind: 'secret',
  rank: 75,
  keys: [
    ['secret', 'access', 'key'],
    ['aws', 'secret', 'key'],
  ],
  acceptValue: (value) => /^[A-Za-z0-9/+]{40}$/.test(value),
});

const PASSWORD_KEYS = new Set(['password', 'passwd', 'passphrase', 'pwd', 'pass']);

const genericSecret = makeAssignmentDetector({
  name: 'generic_secret',
  kind: 'secret',
  rank: 50,
  keys: [
    ['password'], ['passwd'], ['passphrase'], ['pwd'], ['pass'],
    ['secret'], ['token'], ['credential'], ['credentials'],
    ['api', 'key'], ['access', 'key'], ['secret', 'key'], ['private', 'key'], ['signing', 'key'],
    ['encryption', 'key'], ['master', 'key'], ['auth', 'key'],
  ],
  // Passwords are chosen by people and may be short; other keys hold generated values.
  // Low-entropy values (hunter2, changeme, identifiers) are left alone: in code and prose
  // they are far more often names, placeholders, or examples than leaked credentials.
  acceptValue: (value, key) => looksRandom(value, PASSWORD_KEYS.has(key.toLowerCase()) ? 8 : 16),
});

export const SECRET_DETECTORS: readonly Detector[] = [
  privateKey,
  anthropic,
  openai,
  awsAccessKeyId,
  github,
  googleApiKey,
  slack,
  stripe,
  jwt,
  awsSecretAccessKey.detector,
  urlPassword,
  bearer,
  genericSecret.detector,
];

/** Detectors that also judge a parsed JSON value by its key. */
export const FIELD_DETECTORS = [awsSecretAccessKey, genericSecret];
