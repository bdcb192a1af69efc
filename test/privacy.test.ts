import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  DETECTOR_NAMES,
  RulesFileError,
  findAll,
  findAllInField,
  loadRulesFile,
  maskPreview,
  redactJsonString,
  redactText,
  redactValue,
  scanValue,
  type Finding,
  type Kind,
  type PrivacyOptions,
} from '../src/privacy/index.js';
import { fakeToken, b64url, OPENAI_KEY, OPENAI_LEGACY_KEY, ANTHROPIC_KEY, AWS_KEY_ID, AWS_SECRET, GITHUB_TOKEN, GITHUB_PAT, GOOGLE_KEY, SLACK_TOKEN, STRIPE_KEY, STRIPE_TEST_KEY, JWT, BEARER_TOKEN, PEM_BODY, PRIVATE_KEY, DB_PASSWORD, RANDOM_SECRET, RANDOM_PASSWORD } from './fake-secrets.js';
import { tempDir } from './helpers.js';

const ALL: ReadonlySet<Kind> = new Set<Kind>(['secret', 'pii']);
const OPTIONS: PrivacyOptions = { kinds: ALL };

function spans(text: string, kinds: ReadonlySet<Kind> = ALL): Array<[string, string]> {
  return findAll(text, kinds).map((f) => [f.detector, text.slice(f.start, f.end)]);
}

function detectorsIn(text: string): string[] {
  return findAll(text, ALL).map((f) => f.detector);
}

interface DetectorCase {
  detector: string;
  /** [text, the exact sensitive part the finding must cover] */
  hits: Array<[string, string]>;
  /** Near misses: the detector must stay silent on each. */
  misses: string[];
}

const CASES: DetectorCase[] = [
  {
    detector: 'openai',
    hits: [
      [`use ${OPENAI_KEY} for the eval`, OPENAI_KEY],
      [`OPENAI_API_KEY=${OPENAI_LEGACY_KEY}`, OPENAI_LEGACY_KEY],
    ],
    misses: ['key sk-' + fakeToken(10, 20) + ' is too short', 'see sk-learn-classification-tutorial-2024 for details'],
  },
  {
    detector: 'anthropic',
    hits: [[`"x-api-key": "${ANTHROPIC_KEY}"`, ANTHROPIC_KEY]],
    misses: ['sk-ant-api03-short'],
  },
  {
    detector: 'aws_access_key_id',
    hits: [
      [`aws_access_key_id = ${AWS_KEY_ID}`, AWS_KEY_ID],
      ['ASIA' + 'Y34FZKBOKMUTVV7A in the session', 'ASIA' + 'Y34FZKBOKMUTVV7A'],
    ],
    misses: ['AKIAIOSFODNN7EXAMP is one short', 'akiaiosfodnn7example in lower case', 'XAKIAIOSFODNN7EXAMPLE'],
  },
  {
    detector: 'aws_secret_access_key',
    hits: [
      [`aws_secret_access_key = ${AWS_SECRET}`, AWS_SECRET],
      [`{"SecretAccessKey": "${AWS_SECRET}"}`, AWS_SECRET],
    ],
    misses: [`aws_secret_access_key = ${AWS_SECRET.slice(1)}`, `commit ${'da39a3ee5e6b4b0d3255bfef95601890afd80709'}`],
  },
  {
    detector: 'github',
    hits: [
      [`token ${GITHUB_TOKEN}`, GITHUB_TOKEN],
      [`GH_TOKEN=${GITHUB_PAT}`, GITHUB_PAT],
    ],
    misses: ['ghp' + '_' + fakeToken(10, 21), 'the ghp_ prefix marks classic tokens'],
  },
  {
    detector: 'google_api_key',
    hits: [[`?key=${GOOGLE_KEY}&q=1`, GOOGLE_KEY]],
    misses: ['AI' + 'za' + fakeToken(20, 22)],
  },
  {
    detector: 'slack',
    hits: [[`SLACK_BOT_TOKEN: ${SLACK_TOKEN}`, SLACK_TOKEN]],
    misses: ['xoxb-notatoken', 'xoxo hugs and kisses'],
  },
  {
    detector: 'stripe',
    hits: [
      [`Stripe.api_key = "${STRIPE_KEY}"`, STRIPE_KEY],
      [`key ${STRIPE_TEST_KEY}`, STRIPE_TEST_KEY],
    ],
    misses: ['pk' + '_live_' + fakeToken(24, 23) + ' is publishable', 'sk' + '_live_short'],
  },
  {
    detector: 'jwt',
    hits: [[`cookie: session=${JWT}; Path=/`, JWT]],
    misses: [
      ['eyJ' + fakeToken(20, 24), fakeToken(20, 25), fakeToken(20, 26)].join('.'), // header is not JSON
      [b64url({ alg: 'HS256' }), b64url({ sub: '1' })].join('.'), // two parts only
    ],
  },
  {
    detector: 'bearer',
    hits: [
      [`Authorization: Bearer ${BEARER_TOKEN}`, BEARER_TOKEN],
      [`curl -H 'authorization: bearer ${BEARER_TOKEN}'`, BEARER_TOKEN],
    ],
    misses: ['Bearer tokens are sent in the Authorization header', 'Authorization: Bearer YOUR_ACCESS_TOKEN_HERE'],
  },
  {
    detector: 'private_key',
    hits: [
      [`key:\n${PRIVATE_KEY}\nend`, PRIVATE_KEY],
      // JSON-escaped newlines, as in a raw JSONL line.
      [`{"pem": "${PRIVATE_KEY.replace(/\n/g, '\\n')}"}`, PRIVATE_KEY.replace(/\n/g, '\\n')],
    ],
    misses: [
      `-----BEGIN PUBLIC KEY-----\n${PEM_BODY}\n-----END PUBLIC KEY-----`,
      `-----BEGIN CERTIFICATE-----\n${PEM_BODY}\n-----END CERTIFICATE-----`,
    ],
  },
  {
    detector: 'url_password',
    hits: [
      [`DATABASE_URL=postgres://alice:${DB_PASSWORD}@db.internal:5432/app`, DB_PASSWORD],
      ['https://bob:p@ss' + 'w0rd@example.com/x', 'p@ss' + 'w0rd'],
    ],
    misses: [
      'http://localhost:11434',
      'https://user@example.com/path',
      'https://example.com:8443/a?b=c@d',
      'postgres://app:${DB_PASSWORD}@db/app',
    ],
  },
  {
    detector: 'generic_secret',
    hits: [
      [`password=${RANDOM_PASSWORD}`, RANDOM_PASSWORD],
      [`{"api_key": "${RANDOM_SECRET}"}`, RANDOM_SECRET],
      [`{"user": "alice", "password": "${RANDOM_PASSWORD}"}`, RANDOM_PASSWORD],
      [`DB_PASSWORD='${RANDOM_PASSWORD}'`, RANDOM_PASSWORD],
      [`const client = new Client({ clientSecret: "${RANDOM_SECRET}" })`, RANDOM_SECRET],
      [`{\\"token\\": \\"${RANDOM_SECRET}\\"}`, RANDOM_SECRET],
    ],
    misses: [
      'password=hunter2', // deliberately: low entropy values are not flagged
      'def login(password: str, token: str) -> None:',
      'token = process.env.API_TOKEN',
      '"max_tokens": 1024, "prompt_tokens": 812',
      '"password": "********"',
      '"api_key": "YOUR_API_KEY"',
      `bypass=${RANDOM_PASSWORD}`,
      `if (password == "${RANDOM_PASSWORD}")`,
      'secret: ./config/secrets/production.yaml',
    ],
  },
  {
    detector: 'email',
    hits: [
      ['Contact alice.smith+ml@example.co.uk today', 'alice.smith+ml@example.co.uk'],
      ['mailto:bob@example.org', 'bob@example.org'],
    ],
    misses: ['user@localhost', '@dataclass', 'icon@2x.png', 'git@github.com:org/repo.git', 'npm i left-pad@1.3.0'],
  },
  {
    detector: 'phone',
    hits: [
      ['call +1 415 555 2671 now', '+1 415 555 2671'],
      ['UK office: +44 20 7946 0958.', '+44 20 7946 0958'],
      ['(415) 555-2671', '(415) 555-2671'],
      ['cell 415-555-2671', '415-555-2671'],
      ['portable 06 12 34 56 78', '06 12 34 56 78'],
      ['+33 6 12 34 56 78', '+33 6 12 34 56 78'],
    ],
    misses: ['2026-07-07', 'pi is 3.14159265', 'v0.9.014', 'ts 1720000000123', '123-456-7890', 'growth +100000000', 'order 1234567890'],
  },
  {
    detector: 'ipv4',
    hits: [
      ['client 203.0.113.42 connected', '203.0.113.42'],
      ['host=10.0.0.12.', '10.0.0.12'],
    ],
    misses: ['0.9.014', '1.2.3', '127.0.0.1', '0.0.0.0', '255.255.255.0', 'version 1.2.3.4', '999.1.1.1'],
  },
  {
    detector: 'ipv6',
    hits: [
      ['from 2001:db8::8a2e:370:7334 via', '2001:db8::8a2e:370:7334'],
      ['[2001:0db8:85a3:0000:0000:8a2e:0370:7334]', '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    ],
    misses: ['::1', 'at 12:34:56', 'std::vector<int>', 'a[1::2]', 'mac 00:1A:2B:3C:4D:5E', 'dead::beef'],
  },
  {
    detector: 'credit_card',
    hits: [
      ['card 4111 1111 1111 1111 exp 12/29', '4111 1111 1111 1111'],
      ['4111-1111-1111-1111', '4111-1111-1111-1111'],
      ['amex 3782 822463 10005', '3782 822463 10005'],
      ['{"pan": "5555555555554444"}', '5555555555554444'],
    ],
    misses: [
      '4111 1111 1111 1112', // fails Luhn
      'ts 1720000000123', // ms timestamp
      '12345678-1234-1234-1234-123456789012',
      '4111 1111-1111 1111', // mixed separators
    ],
  },
  {
    detector: 'iban',
    hits: [
      ['IBAN DE89 3704 0044 0532 0130 00', 'DE89 3704 0044 0532 0130 00'],
      ['to GB82WEST12345698765432.', 'GB82WEST12345698765432'],
    ],
    misses: ['DE89 3704 0044 0532 0130 01', 'XX89370400440532013000', 'DE89370400440532013'],
  },
  {
    detector: 'home_path',
    hits: [
      ['open /home/alice/projects/app.py', 'alice'],
      ['/Users/bob/Desktop/notes.md', 'bob'],
      ['C:\\Users\\Carol Smith\\Documents\\a.txt', 'Carol Smith'],
      ['{"path": "C:\\\\Users\\\\dave\\\\x.csv"}', 'dave'],
    ],
    misses: ['cd /home/', '/Users/Shared/file', 'https://example.com/home/about', 'ls /home/user/'],
  },
];

describe('detectors: a true positive and near misses for each', () => {
  it('covers every built-in detector', () => {
    assert.deepEqual(new Set(CASES.map((c) => c.detector)), DETECTOR_NAMES);
  });

  for (const { detector, hits, misses } of CASES) {
    it(`${detector} finds the sensitive part`, () => {
      for (const [text, value] of hits) {
        assert.deepEqual(spans(text).filter(([d]) => d === detector), [[detector, value]], text);
      }
    });
    it(`${detector} ignores near misses`, () => {
      for (const text of misses) assert.deepEqual(detectorsIn(text).filter((d) => d === detector), [], text);
    });
  }
});

describe('no false alarms on ordinary record content', () => {
  const smallImage = 'data:image/png;base64,' + Buffer.from(fakeToken(300, 30)).toString('base64');
  const bigImage = 'data:image/jpeg;base64,' + Buffer.from(fakeToken(30_000, 31)).toString('base64');
  const benign: Record<string, string> = {
    sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    uuid: '550e8400-e29b-41d4-a716-446655440000',
    version: 'synalinks 0.9.014',
    date: '2026-07-07',
    timestamp: '2026-07-07T12:34:56.789Z',
    epoch: '1751880000.123456',
    localhost: 'base_url: http://localhost:11434',
    model: 'openai/gpt-4o-mini and anthropic/claude-3-5-sonnet-20241022',
    smallImage,
    bigImage,
    prose:
      'Please summarise the following document in three bullet points. The key decisions were made on ' +
      'March 3rd; costs rose 12.5% to $1,204.50 and the team (8 people) shipped 3 releases.',
    code: 'def score(items: list[dict]) -> float:\n    total = 0.0\n    for i, item in enumerate(items):\n        total += item["weight"] * 0.5 + i\n    return total / max(len(items), 1)',
    json: JSON.stringify({
      call_id: '550e8400-e29b-41d4-a716-446655440000',
      inputs_hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      model: 'openai/gpt-4o-mini',
      usage: { prompt_tokens: 812, completion_tokens: 96, total_tokens: 908 },
      cost: 0.000213,
      tool_calls: [{ id: 'call_a1B2c3D4e5F6g7H8i9J0k1L2', function: { name: 'search', arguments: '{"query":"weather","limit":5}' } }],
    }),
  };
  for (const [name, text] of Object.entries(benign)) {
    it(`finds nothing in ${name}`, () => assert.deepEqual(spans(text), []));
  }

  it('skips long base64 runs but still finds secrets after them, at the right offset', () => {
    const text = `${bigImage} and then ${OPENAI_KEY}`;
    assert.deepEqual(spans(text), [['openai', OPENAI_KEY]]);
  });
});

describe('overlaps', () => {
  it('reports an Anthropic key as anthropic only', () => {
    assert.deepEqual(spans(`ANTHROPIC_API_KEY=${ANTHROPIC_KEY}`), [['anthropic', ANTHROPIC_KEY]]);
  });
  it('prefers the specific detector over bearer and generic assignments', () => {
    assert.deepEqual(spans(`Authorization: Bearer ${JWT}`), [['jwt', JWT]]);
    assert.deepEqual(spans(`"api_key": "${OPENAI_KEY}"`), [['openai', OPENAI_KEY]]);
  });
  it('returns findings sorted and non-overlapping', () => {
    const text = `mail alice@example.com from 203.0.113.7 with ${GITHUB_TOKEN} and password=${RANDOM_PASSWORD}`;
    const found = findAll(text, ALL);
    assert.deepEqual(found.map((f) => f.detector), ['email', 'ipv4', 'github', 'generic_secret']);
    for (let i = 1; i < found.length; i++) assert.ok(found[i - 1].end <= found[i].start);
  });
  it('runs only the requested kinds', () => {
    const text = `alice@example.com ${GITHUB_TOKEN}`;
    assert.deepEqual(spans(text, new Set<Kind>(['pii'])), [['email', 'alice@example.com']]);
    assert.deepEqual(spans(text, new Set<Kind>(['secret'])), [['github', GITHUB_TOKEN]]);
  });
});

describe('masked previews', () => {
  it('shows at most two characters at each end', () => {
    assert.equal(maskPreview(OPENAI_KEY), 'sk…' + OPENAI_KEY.slice(-2));
    assert.equal(maskPreview('Xk9#mQ2$vL7p'), 'X…p');
    assert.equal(maskPreview('hunter2'), '…');
  });
  it('never leaks the middle of any finding', () => {
    for (const { hits } of CASES) {
      for (const [text] of hits) {
        for (const f of findAll(text, ALL)) {
          const value = text.slice(f.start, f.end);
          assert.ok([...f.preview].length <= 5, `${f.detector}: ${f.preview}`);
          if (value.length >= 8) assert.ok(!f.preview.includes(value.slice(2, -2)), f.detector);
        }
      }
    }
  });
});

describe('redactText', () => {
  it('replaces only the sensitive part', () => {
    const text = `postgres://alice:${DB_PASSWORD}@db/app; Authorization: Bearer ${BEARER_TOKEN}; password=${RANDOM_PASSWORD}; cd /home/alice/x`;
    const { text: out, counts } = redactText(text, OPTIONS);
    assert.equal(
      out,
      'postgres://alice:[REDACTED:url_password]@db/app; Authorization: Bearer [REDACTED:bearer]; ' +
        'password=[REDACTED:generic_secret]; cd /home/[REDACTED:home_path]/x',
    );
    assert.deepEqual(counts, { url_password: 1, bearer: 1, generic_secret: 1, home_path: 1 });
  });
  it('is idempotent: redacted text has nothing left to find', () => {
    const { text } = redactText(`key=${OPENAI_KEY} mail alice@example.com password="${RANDOM_PASSWORD}"`, OPTIONS);
    assert.deepEqual(findAll(text, ALL), []);
  });
  it('leaves clean text untouched with empty counts', () => {
    assert.deepEqual(redactText('nothing to see at http://localhost:11434', OPTIONS), {
      text: 'nothing to see at http://localhost:11434',
      counts: {},
    });
  });
});

describe('redactValue and JSON strings', () => {
  const messages = [
    { role: 'system', content: 'You are helpful.' },
    { role: 'user', content: `My key is ${OPENAI_KEY}, mail me at alice@example.com` },
    {
      role: 'assistant',
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: {
            name: 'send',
            arguments: JSON.stringify({ to: 'bob@example.org', api_key: RANDOM_SECRET, note: 'He said "hi"\n' }),
          },
        },
      ],
    },
  ];

  it('redacts string values, keeps arguments valid JSON, and counts', () => {
    const { value, counts } = redactValue(messages, OPTIONS);
    assert.equal(value[1].content, 'My key is [REDACTED:openai], mail me at [REDACTED:email]');
    const args = JSON.parse(value[2].tool_calls![0].function.arguments) as Record<string, string>;
    assert.deepEqual(args, { to: '[REDACTED:email]', api_key: '[REDACTED:generic_secret]', note: 'He said "hi"\n' });
    assert.deepEqual(counts, { openai: 1, email: 2, generic_secret: 1 });
  });

  it('does not mutate the input and shares untouched parts', () => {
    const before = JSON.stringify(messages);
    const { value } = redactValue(messages, OPTIONS);
    assert.equal(JSON.stringify(messages), before);
    assert.equal(value[0], messages[0]);
    assert.notEqual(value[1], messages[1]);
  });

  it('judges a value by its key when parsed JSON separates them', () => {
    const { value, counts } = redactValue({ headers: { 'x-api-key': RANDOM_SECRET, 'content-type': 'application/json' } }, OPTIONS);
    assert.deepEqual(value, { headers: { 'x-api-key': '[REDACTED:generic_secret]', 'content-type': 'application/json' } });
    assert.deepEqual(counts, { generic_secret: 1 });
    assert.deepEqual(findAllInField('password', 'hunter2', ALL), []);
    assert.deepEqual(
      findAllInField('SecretAccessKey', AWS_SECRET, ALL).map((f) => [f.detector, f.start, f.end]),
      [['aws_secret_access_key', 0, AWS_SECRET.length]],
    );
  });

  it('a text found clean once is judged again wherever its key, its options or its place could change the answer', () => {
    const note = `deployment note ${RANDOM_SECRET}`;
    const contact = 'write to carol.jones@example.net for access';
    const secretsOnly: PrivacyOptions = { kinds: new Set<Kind>(['secret']) };
    for (let round = 0; round < 2; round++) {
      // Clean as content, in a list, and as a whole tool-call arguments text ...
      assert.deepEqual(redactValue({ content: RANDOM_SECRET, list: [note] }, OPTIONS).counts, {});
      assert.deepEqual(redactValue({ content: contact }, secretsOnly).counts, {});
      // ... a secret under a key a field detector reads, an address when pii is asked for,
      assert.deepEqual(redactValue({ api_key: RANDOM_SECRET }, OPTIONS).value, { api_key: '[REDACTED:generic_secret]' });
      assert.deepEqual(redactValue({ headers: { 'X-Auth-Token': RANDOM_SECRET } }, OPTIONS).counts, { generic_secret: 1 });
      assert.deepEqual(redactValue({ content: contact }, OPTIONS).value, { content: 'write to [REDACTED:email] for access' });
      // ... and a custom rule's options are other options, whatever object carries them.
      const rules = { kinds: new Set<Kind>(), rules: [{ name: 'deploy_note', pattern: /deployment note/ }] };
      assert.deepEqual(redactValue({ content: note }, structuredClone(rules)).counts, { deploy_note: 1 });
      // Inside JSON text the key is the inner one.
      const args = JSON.stringify({ password: RANDOM_PASSWORD, note });
      assert.deepEqual(JSON.parse(redactValue({ arguments: args }, OPTIONS).value.arguments), { password: '[REDACTED:generic_secret]', note });
      // The same findings, with their paths, when scanned.
      assert.deepEqual([...scanValue({ content: note, token: RANDOM_SECRET }, OPTIONS, '$')].map((f) => [f.detector, f.path]), [['generic_secret', '$.token']]);
    }
  });

  it('redacts object keys too (a dict keyed by address or token leaks like a value), in order, losing no member', () => {
    const { value, counts } = redactValue({ first: 1, 'alice@example.com': 'present', 'bob@example.org': 'away', last: 2 }, OPTIONS);
    assert.deepEqual(Object.entries(value), [
      ['first', 1],
      ['[REDACTED:email]', 'present'],
      ['[REDACTED:email] #2', 'away'],
      ['last', 2],
    ]);
    assert.deepEqual(counts, { email: 2 });
  });

  it('redactJsonString rewrites only the redacted strings: numbers, spacing, order and other escapes stay as recorded', () => {
    const recorded = '{\n  "q": "write to alice@example.com",\n  "n": 1.0, "big": 18446744073709551615, "e": 1E+2,\n  "s": "caf\\u00e9 \\/ ok"\n}';
    const valid = redactJsonString(recorded, OPTIONS);
    assert.equal(valid.text, recorded.replace('alice@example.com', '[REDACTED:email]'));
    assert.deepEqual(valid.counts, { email: 1 });
    const broken = redactJsonString('{"q": "alice@example.com", ', OPTIONS);
    assert.equal(broken.text, '{"q": "[REDACTED:email]", ');
    const clean = '{ "q" : "weather" }';
    assert.equal(redactJsonString(clean, OPTIONS).text, clean);
  });
});

describe('scanValue', () => {
  it('reports paths, descending into JSON-string arguments', () => {
    const record = {
      messages: [
        { role: 'system', content: 'hi' },
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          tool_calls: [{ function: { name: 'search', arguments: JSON.stringify({ query: 'phone +44 20 7946 0958' }) } }],
        },
        { role: 'tool', content: `found ${GITHUB_TOKEN}` },
      ],
    };
    const found = [...scanValue(record, OPTIONS)].map((f) => [f.path, f.detector, f.preview]);
    assert.deepEqual(found, [
      ['messages[2].tool_calls[0].function.arguments.query', 'phone', '+4…58'],
      ['messages[3].content', 'github', 'gh…' + GITHUB_TOKEN.slice(-2)],
    ]);
    const rooted = [...scanValue(record.messages, OPTIONS, 'messages')].map((f) => f.path);
    assert.deepEqual(rooted, ['messages[2].tool_calls[0].function.arguments.query', 'messages[3].content']);
  });

  it('gives offsets inside the string at the path', () => {
    const [finding] = [...scanValue({ 'odd key': ['mail alice@example.com'] }, OPTIONS)];
    assert.equal(finding.path, '["odd key"][0]');
    assert.equal('mail alice@example.com'.slice(finding.start, finding.end), 'alice@example.com');
  });
});

describe('custom rules', () => {
  const dir = tempDir('traces-privacy-');
  const write = (name: string, content: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, content);
    return file;
  };

  it('loads {"rules": [...]} and bare arrays, and applies them', () => {
    const fromObject = loadRulesFile(write('rules.json', JSON.stringify({ rules: [{ name: 'employee_id', pattern: 'EMP-\\d{6}' }] })));
    const fromArray = loadRulesFile(
      write('array.json', JSON.stringify([{ name: 'ticket', pattern: 'ticket=(?<value>[A-Z]{3}-\\d+)', kind: 'pii', flags: 'i' }])),
    );
    const text = 'EMP-123456 filed TICKET=ABC-42';
    const found = findAll(text, ALL, [...fromObject, ...fromArray]);
    assert.deepEqual(
      found.map((f: Finding) => [f.detector, f.kind, text.slice(f.start, f.end)]),
      [
        ['employee_id', 'secret', 'EMP-123456'],
        ['ticket', 'pii', 'ABC-42'],
      ],
    );
    assert.equal(redactText(text, { kinds: new Set(), rules: fromObject }).text, '[REDACTED:employee_id] filed TICKET=ABC-42');
  });

  it('outranks built-in detectors on overlap', () => {
    const rules = loadRulesFile(write('corp.json', JSON.stringify([{ name: 'corp_email', pattern: '[a-z]+@corp\\.example' }])));
    assert.deepEqual(
      findAll('alice@corp.example', ALL, rules).map((f) => f.detector),
      ['corp_email'],
    );
  });

  it('accepts RegExp objects built in code, whatever their flags', () => {
    assert.deepEqual(
      findAll('a EMP-1 b EMP-2', ALL, [{ name: 'emp', pattern: /EMP-\d/ }]).map((f) => f.start),
      [2, 10],
    );
  });

  it('names the file and the rule when a regex is invalid', () => {
    const file = write('bad.json', JSON.stringify({ rules: [{ name: 'ok', pattern: 'a+' }, { name: 'broken', pattern: 'EMP-(\\d+' }] }));
    assert.throws(
      () => loadRulesFile(file),
      (error: unknown) => {
        assert.ok(error instanceof RulesFileError);
        assert.match(error.message, new RegExp(`^${file.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}: rule 2 \\("broken"\\): invalid regex "EMP-\\(\\\\\\\\d\\+": `));
        return true;
      },
    );
  });

  it('rejects malformed files with a clear message', () => {
    const cases: Array<[string, RegExp]> = [
      ['{not json', /: not valid JSON: /],
      ['{"rules": {}}', /expected \{"rules": \[\.\.\.\]\}/],
      ['[{"name": "x"}]', /rule 1 \("x"\): "pattern" must be a non-empty string/],
      ['[{"name": "bad name", "pattern": "x"}]', /rule 1 \("bad name"\): "name" must be/],
      ['[{"name": "a", "pattern": "x"}, {"name": "a", "pattern": "y"}]', /rule 2 \("a"\): duplicate name "a"/],
      ['[{"name": "email", "pattern": "x"}]', /clashes with the built-in detector "email"/],
      ['[{"name": "e", "pattern": "x*"}]', /matches the empty string/],
      ['[{"name": "f", "pattern": "x", "flags": "g"}]', /"flags" may only contain/],
    ];
    for (const [content, message] of cases) {
      const file = write('case.json', content);
      assert.throws(() => loadRulesFile(file), message, content);
    }
    assert.throws(() => loadRulesFile(path.join(dir, 'missing.json')), /missing\.json: cannot read rules file/);
  });
});

describe('robustness', () => {
  it('stays linear on adversarial input', () => {
    const n = 50_000;
    const inputs = [
      '1'.repeat(n),
      '1 '.repeat(n / 2),
      'a@'.repeat(n / 2),
      ':'.repeat(n),
      'password='.repeat(n / 9),
      'eyJaaaaaaaaa.'.repeat(n / 13),
      '-----BEGIN PRIVATE KEY-----\n'.repeat(n / 28),
      'http://u:p'.repeat(n / 10),
      'C:\\Users\\a b c d e f '.repeat(n / 20),
      '01 '.repeat(n / 3),
    ];
    for (const input of inputs) {
      const started = performance.now();
      findAll(input, ALL);
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 2000, `${JSON.stringify(input.slice(0, 20))}…: ${elapsed.toFixed(0)} ms`);
    }
  });
});

describe('secrets behind JSON escapes (issue 11)', () => {
  const SECRETS = [OPENAI_KEY, ANTHROPIC_KEY, AWS_KEY_ID, GITHUB_TOKEN, GITHUB_PAT, SLACK_TOKEN, STRIPE_KEY, GOOGLE_KEY, JWT];
  // What JSON text holds before the secret once the decoded text has these characters there.
  const BEFORE = ['\n', '\t', '\r', '"', '\\', '/', '\b', '\f', '\u0001', ' '];
  const leaks = (out: string, secret: string): boolean => out.includes(secret) || out.includes(JSON.stringify(secret).slice(1, -1));

  it('a secret after any escape, in JSON held in a string, is redacted and scanned at its decoded path', () => {
    for (const secret of SECRETS) {
      for (const before of BEFORE) {
        const recorded = `{"settings":${JSON.stringify(`region=eu${before}${secret}`)},"n":153133.0}`;
        const { value, counts } = redactValue({ content: recorded }, OPTIONS);
        assert.ok(!leaks(value.content, secret), `${JSON.stringify(before)} ${secret.slice(0, 8)}: ${value.content}`);
        assert.ok(Object.values(counts).reduce((a, b) => a + b, 0) >= 1);
        assert.ok(value.content.endsWith(',"n":153133.0}'), 'number text kept');
        const paths = [...scanValue({ content: recorded }, OPTIONS)].map((f) => f.path);
        assert.ok(paths.includes('content.settings'), `${JSON.stringify(before)} ${secret.slice(0, 8)} scanned`);
      }
    }
  });

  it('unicode escapes: before a secret, inside one, in JSON and in text that is not JSON', () => {
    const spelled = `${OPENAI_KEY.slice(0, 3)}\\u0070${OPENAI_KEY.slice(4)}`; // sk-\u0070roj-…
    for (const text of [`{"a":"x\\u0020${OPENAI_KEY}"}`, `{"a":"${spelled}"}`, `{"a":"${spelled}", "truncated`, `print("\\u0020${spelled}")`]) {
      const { value, counts } = redactValue([text], OPTIONS);
      assert.deepEqual(counts, { openai: 1 }, text);
      assert.ok(!value[0].includes(OPENAI_KEY.slice(4)), value[0]);
    }
    const aws = redactText(`aws_secret_access_key=${AWS_SECRET}`, OPTIONS);
    assert.deepEqual(aws.counts, { aws_secret_access_key: 1 });
    const escapedSlash = redactValue([`{"cfg": "aws_secret_access_key=${AWS_SECRET.replace(/\//g, '\\/')}"`], OPTIONS);
    assert.deepEqual(escapedSlash.counts, { aws_secret_access_key: 1 }, 'truncated JSON with \\/ in the secret');
  });

  it('doubly and triply encoded JSON is walked, and re-encoded around the redacted string only', () => {
    let text = JSON.stringify({ inner: `tab\t${GITHUB_TOKEN}`, n: 1 });
    for (let level = 0; level < 2; level++) text = `{"payload":${JSON.stringify(text)},"x":22.0}`;
    const { value, counts } = redactValue({ content: text }, OPTIONS);
    assert.deepEqual(counts, { github: 1 });
    assert.ok(!value.content.includes(GITHUB_TOKEN));
    assert.equal(value.content.replace('[REDACTED:github]', GITHUB_TOKEN), text);
    assert.deepEqual([...scanValue({ content: text }, OPTIONS)].map((f) => f.path), ['content.payload.payload.inner']);
  });

  it('keys of JSON in strings are judged, and paths never print a secret key', () => {
    const text = `{"${OPENAI_KEY}": {"note": "mail alice@example.com"}, "n": 1.50}`;
    const { text: redacted, counts } = redactJsonString(text, OPTIONS);
    assert.equal(redacted, '{"[REDACTED:openai]": {"note": "mail [REDACTED:email]"}, "n": 1.50}');
    assert.deepEqual(counts, { openai: 1, email: 1 });
    const found = [...scanValue({ args: text }, OPTIONS)];
    assert.deepEqual(found.map((f) => f.path), ['args["[REDACTED:openai]"] (key)', 'args["[REDACTED:openai]"].note']);
    for (const f of found) assert.ok(!JSON.stringify(f).includes(OPENAI_KEY));
  });

  it('the walk is iterative: nesting 100000 deep costs no stack', () => {
    let deep: unknown = `key ${OPENAI_KEY}`;
    for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { k: deep };
    assert.deepEqual(redactValue(deep, OPTIONS).counts, { openai: 1 });
    assert.equal([...scanValue(deep, OPTIONS)].length, 1);
  });
});

describe('vendor keys glued to words (issue 39)', () => {
  // Each key is matched by its own shape and boundary: what sits beside it (a file name's
  // suffix, an env-var prefix, a path) is not part of the test.
  const KEYS: Array<[string, string]> = [
    ['openai', OPENAI_KEY],
    ['openai', OPENAI_LEGACY_KEY],
    ['anthropic', ANTHROPIC_KEY],
    ['aws_access_key_id', AWS_KEY_ID],
    ['github', GITHUB_TOKEN],
    ['github', GITHUB_PAT],
    ['google_api_key', GOOGLE_KEY],
    ['slack', SLACK_TOKEN],
    ['stripe', STRIPE_KEY],
    ['stripe', STRIPE_TEST_KEY],
    ['jwt', JWT],
  ];
  const BEFORE = ['', 'KEY_', 'OPENAI_API_KEY_', 'old-', 'creds/', 'creds\\', 'x.', 'k=', '__'];
  const AFTER = ['', '_backup', '-old', '_2', '-v2', '.json', '_backup.json', '__', '/x'];

  it('each key is found and redacted whatever word, path or suffix is glued to it', () => {
    const missed: string[] = [];
    for (const [detector, key] of KEYS) {
      for (const before of BEFORE) {
        for (const after of AFTER) {
          const text = `file ${before}${key}${after} here`;
          const found = findAll(text, ALL).filter((f) => f.detector === detector && f.start <= text.indexOf(key) && f.end >= text.indexOf(key) + key.length);
          const redacted = redactText(text, OPTIONS).text;
          if (found.length !== 1 || redacted.includes(key.slice(-12))) missed.push(`${detector}: ${before}…${after}`);
        }
      }
    }
    assert.deepEqual(missed, []);
  });

  it('a suffix outside the key is left as written where the key has a fixed shape', () => {
    assert.equal(redactText(`creds/${STRIPE_KEY}_backup.json`, OPTIONS).text, 'creds/[REDACTED:stripe]_backup.json');
    assert.equal(redactText(`${AWS_KEY_ID}-old`, OPTIONS).text, '[REDACTED:aws_access_key_id]-old');
    assert.equal(redactText(`KEY_${GITHUB_TOKEN}_backup`, OPTIONS).text, 'KEY_[REDACTED:github]_backup');
    assert.equal(redactText(`KEY_${GOOGLE_KEY}-old`, OPTIONS).text, 'KEY_[REDACTED:google_api_key]-old');
  });

  it('a key continuing a longer run of its own alphabet is still no key', () => {
    for (const text of [`X${AWS_KEY_ID}`, `${AWS_KEY_ID}9`, `${GOOGLE_KEY}x`, `task${OPENAI_KEY}`, `x${GITHUB_TOKEN}`, `${GITHUB_TOKEN.slice(0, 20)}`]) {
      assert.deepEqual(findAll(text, ALL).filter((f) => f.detector !== 'generic_secret'), [], text);
    }
  });
});
