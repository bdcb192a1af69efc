/** Credentials: vendor keys recognised by their prefixes, plus structural forms (PEM, JWT, URLs, assignments). */
import { makeAssignmentDetector } from './assignment.js';
import { includesAny, type Detector } from './detector.js';
import { sharedGate } from './gate.js';
import { looksRandom } from './entropy.js';

// A key is matched by its own shape and boundary, not by what sits beside it: a file name's
// suffix (`…_backup.json`, `…-old`), an env-var prefix (`KEY_…`) or a path (`creds/…`) leaves
// it a key. On the left, the prefix must not continue a word or number (a letter or digit
// there: `task-sk-…` is a key, `tasksk-…` and `XAKIA…` are not). The check sits after the
// literal prefix, so each pattern starts with a literal the engine can search for fast.
// Text that still holds JSON escapes (a string that is not valid JSON, so was not decoded)
// may put the letter of an escape there: the `n` of `\n`, the last digit of `\u0020`. Those
// end a word too. Inside a base64 blob a prefix plus a body of the key's exact shape is rare
// (a few in 10^8 per position for AKIA or AIza, none for eyJ, whose dots base64 never holds),
// and blobs of 512+ characters are not scanned at all (segments.ts).
const escapeBefore = (prefixLength: number): string =>
  `(?<=\\\\[\\s\\S]{${prefixLength + 1}})|(?<=\\\\u[0-9A-Fa-f]{4}[\\s\\S]{${prefixLength}})`;
const tokenStart = (prefixLength: number): string =>
  `(?:${escapeBefore(prefixLength)}|(?<![A-Za-z0-9][\\s\\S]{${prefixLength}}))`;
/** On the right a key ends where its own alphabet ends: `alphabet` is the class its body is drawn from. */
const tokenEnd = (alphabet: string): string => `(?![${alphabet}])`;

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
  pattern: new RegExp(`sk-ant-${tokenStart(7)}[A-Za-z0-9_-]{20,}${tokenEnd('A-Za-z0-9_-')}`, 'g'),
  accept: (value) => hasDigitAndLetter(value.slice(7)),
};

const openai: Detector = {
  name: 'openai',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  // sk-ant- belongs to anthropic. Real keys are mixed-case base62, which slugs like
  // sk-learn-tutorial-2024 are not.
  pattern: new RegExp(`sk-${tokenStart(3)}(?!ant-)[A-Za-z0-9_-]{20,}${tokenEnd('A-Za-z0-9_-')}`, 'g'),
  accept: (value) => hasDigitAndBothCases(value.slice(3)),
};

const awsAccessKeyId: Detector = {
  name: 'aws_access_key_id',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  pattern: new RegExp(`A[KS]IA${tokenStart(4)}[A-Z0-9]{16}${tokenEnd('A-Z0-9')}`, 'g'),
};

const github: Detector = {
  name: 'github',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  pattern: new RegExp(`g(?:h[pousr]_${tokenStart(4)}[A-Za-z0-9]{36,251}${tokenEnd('A-Za-z0-9')}|ithub_pat_${tokenStart(11)}[A-Za-z0-9_]{50,251}${tokenEnd('A-Za-z0-9_')})`, 'g'),
};

const googleApiKey: Detector = {
  name: 'google_api_key',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  // 39 characters exactly; the body may hold '_' and '-', so one after it (`…_backup`) ends it.
  pattern: new RegExp(`AIza${tokenStart(4)}[0-9A-Za-z_-]{35}${tokenEnd('0-9A-Za-z')}`, 'g'),
};

const slack: Detector = {
  name: 'slack',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  // xoxb-/xoxp-/xoxa-/xoxo-/xoxs-/xoxr- tokens and xoxe(.xoxp)- refresh tokens: a numeric team part, then more.
  pattern: new RegExp(`xox${tokenStart(3)}(?:[abposr]|e(?:\\.xox[bp])?)-[0-9]+-[0-9A-Za-z-]{10,}${tokenEnd('0-9A-Za-z-')}`, 'g'),
};

const stripe: Detector = {
  name: 'stripe',
  kind: 'secret',
  rank: 85,
  mayMatch: mayHoldPrefix,
  // Publishable keys (pk_) are public by design and deliberately not matched.
  pattern: new RegExp(`[sr]k_(?:live|test)_${tokenStart(8)}[0-9A-Za-z]{16,}${tokenEnd('0-9A-Za-z')}`, 'g'),
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
  pattern: new RegExp(`eyJ${tokenStart(3)}[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*${tokenEnd('A-Za-z0-9_-')}`, 'g'),
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
