/** Personal data: contact details, network addresses, payment numbers, and user names inside paths. */
import { cardNumberValid, ibanValid } from './checksums.js';
import { includesAny, type Detector } from './detector.js';
import { sharedGate } from './gate.js';


// Every card number, phone number and (practically) every IBAN holds a run of 6+ digits and
// separators starting with two digits and ending with one. Strings without one skip all
// three detectors after a single, fast regex pass (computed once per text).
const mayHoldNumber = sharedGate('\\d\\d[\\d .()-]{3,}\\d');

// Handles such as icon@2x.png or pkg@x.js are file names, not addresses.
const FILE_EXTENSION_TLD = /^(?:png|jpe?g|gif|svg|webp|ico|bmp|m?js|cjs|tsx?|jsx|s?css|html?|json|ya?ml|txt|lock|map)$/i;

const email: Detector = {
  name: 'email',
  kind: 'pii',
  rank: 35,
  mayMatch: includesAny(['@']),
  // Starts at the '@' (fast to search for) and captures the local part in a lookbehind,
  // which must begin at a run boundary; the finding spans local part through domain.
  pattern:
    /(?<=(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]{1,64}))@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-])/dg,
  span: (match) => {
    const local = match.indices?.[1];
    return local === undefined ? undefined : [local[0], match.index + match[0].length];
  },
  accept: (value) => !FILE_EXTENSION_TLD.test(value.slice(value.lastIndexOf('.') + 1)) && !value.startsWith('git@'),
};

// Three shapes: international (+CC …), North American ((415) 555-2671, 415-555-2671) and
// trunk-prefixed national numbers (06 12 34 56 78, 020 7946 0958) whose separators agree.
// Bare digit runs, dates, decimals and versions have none of these shapes.
const PHONE =
  /(?<![\w+.\-/])(?:\+[1-9]\d{0,2}(?:[ -]?(?:\(0?\d{1,4}\)|\d{1,6})){1,6}|\([2-9]\d{2}\)[ ]?[2-9]\d{2}[-. ]\d{4}|[2-9]\d{2}(?<nsep>[-.])[2-9]\d{2}\k<nsep>\d{4}|0[1-9]\d{0,3}(?<tsep>[ .-])\d{2,6}(?:\k<tsep>\d{2,6}){0,4})(?![\w/]|[.,-]\d)/g;

function phoneDigitsPlausible(value: string): boolean {
  const digits = value.replace(/\D/g, '');
  const min = value.startsWith('+') ? 8 : value.startsWith('0') ? 9 : 10;
  // "+100000000" is a count, not a number anyone answers.
  return digits.length >= min && digits.length <= 15 && new Set(digits).size > 2;
}

const phone: Detector = {
  name: 'phone',
  kind: 'pii',
  rank: 20,
  mayMatch: mayHoldNumber,
  pattern: PHONE,
  accept: phoneDigitsPlausible,
};

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const VERSION_CONTEXT = /\b(?:version|ver|release)\s*[:=]?\s*["']?$/i;

function ipv4Identifying(value: string, match: RegExpExecArray, text: string): boolean {
  const first = Number(value.slice(0, value.indexOf('.')));
  // Loopback, "this host", and netmasks/broadcast say nothing about anyone. Private ranges
  // (10/8, 172.16/12, 192.168/16) are kept: they map internal networks.
  if (first === 0 || first === 127 || first === 255) return false;
  return !VERSION_CONTEXT.test(text.slice(Math.max(0, match.index - 16), match.index));
}

const ipv4: Detector = {
  name: 'ipv4',
  kind: 'pii',
  rank: 30,
  mayMatch: sharedGate('\\d\\.\\d{1,3}\\.\\d'),
  // Octets without leading zeros, so 0.9.014-style versions never parse as addresses.
  pattern: new RegExp(`(?<![\\w.-])(?:${OCTET}\\.){3}${OCTET}(?![\\w-]|\\.\\d)`, 'g'),
  accept: ipv4Identifying,
};

function ipv6Valid(value: string): boolean {
  const halves = value.split('::');
  if (halves.length > 2) return false;
  const groups = halves.flatMap((half) => (half === '' ? [] : half.split(':')));
  if (groups.some((g) => g.length === 0 || g.length > 4)) return false;
  if (halves.length === 1 ? groups.length !== 8 : groups.length > 7) return false;
  // Slices (a[1::2]), C++/Rust paths (dead::beef) and loopback ::1 are not addresses of anyone.
  const hexChars = groups.join('');
  return hexChars.length >= 5 && /\d/.test(hexChars);
}

// Compressed forms hold '::'; full forms a run of hex:hex:hex:. JSON's "key": value and
// clock times (12:34:56) fail both, so the costly pattern rarely runs.
const FULL_IPV6_HINT = /[0-9A-Fa-f]:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:/;
const mayHoldIpv6 = (text: string): boolean => text.includes(':') && (text.includes('::') || FULL_IPV6_HINT.test(text));

const ipv6: Detector = {
  name: 'ipv6',
  kind: 'pii',
  rank: 30,
  mayMatch: mayHoldIpv6,
  pattern:
    /(?<![\w:.])(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{0,4}){2,7}|::[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6})(?![\w:]|\.\w)/g,
  accept: ipv6Valid,
};

function cardFormatted(value: string): boolean {
  const separators = new Set(value.replace(/\d/g, ''));
  if (separators.size > 1) return false;
  // Grouped numbers start with a group of four (4-4-4-4, Amex 4-6-5).
  if (separators.size === 1 && !/^\d{4}[ -]/.test(value)) return false;
  return cardNumberValid(value.replace(/\D/g, ''));
}

const creditCard: Detector = {
  name: 'credit_card',
  kind: 'pii',
  rank: 40,
  mayMatch: mayHoldNumber,
  // Lookarounds reject slices of longer digit groups (uuids of digits, phone lists).
  pattern: /(?<![\w.]|\d[ -])\d(?:[ -]?\d){12,18}(?![\w]|[ .-]\d)/g,
  accept: cardFormatted,
};

const iban: Detector = {
  name: 'iban',
  kind: 'pii',
  rank: 40,
  mayMatch: mayHoldNumber,
  pattern: /(?<![A-Za-z0-9+/_-])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])/g,
  accept: (value) => ibanValid(value.replace(/ /g, '')),
};

// Names that are not a person: shared profiles, and placeholders written in docs.
const NON_PERSONAL_USER = /^(?:shared|public|default|default user|all users|guest|user|username|you|me|yourname|your_?username|[<{$%*~.].*)$/i;

const homePath: Detector = {
  name: 'home_path',
  kind: 'pii',
  rank: 35,
  mayMatch: includesAny(['/home/', 'Users']),
  // /home/<u>, /Users/<u>, WSL /mnt/c/Users/<u>, C:\Users\<u> (also JSON-escaped \\ and C:/).
  // Windows and macOS names may hold spaces; those are taken up to the next separator.
  pattern:
    /(?<![\w.~-])(?:(?:\/mnt\/[a-z])?\/(?:home|Users)\/|[A-Za-z]:(?:\\\\|\\|\/)Users(?:\\\\|\\|\/))([^\s/\\:*?"'<>|]{1,64}(?: [^\s/\\:*?"'<>|]{1,64}){1,3}(?=[\\/])|[^\s/\\:*?"'<>|]{1,64})/dg,
  valueGroups: [1],
  accept: (value) => !NON_PERSONAL_USER.test(value),
};

export const PII_DETECTORS: readonly Detector[] = [creditCard, iban, email, homePath, ipv6, ipv4, phone];
