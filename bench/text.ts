/** Deterministic random numbers and text for the benchmark generator. */

export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    // splitmix32 to spread the seed, then sfc32.
    let x = (seed >>> 0) ^ 0x9e3779b9;
    const next = (): number => {
      x = (x + 0x9e3779b9) | 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    for (let i = 0; i < 16; i++) this.u32();
  }

  u32(): number {
    const t = (((this.s0 + this.s1) | 0) + this.s3) | 0;
    this.s3 = (this.s3 + 1) | 0;
    this.s0 = this.s1 ^ (this.s1 >>> 9);
    this.s1 = (this.s2 + (this.s2 << 3)) | 0;
    this.s2 = (this.s2 << 21) | (this.s2 >>> 11);
    this.s2 = (this.s2 + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1) with 53 random bits, so values print with full precision. */
  next(): number {
    return ((this.u32() >>> 5) * 67108864 + (this.u32() >>> 6)) / 9007199254740992;
  }

  uniform(a: number, b: number): number {
    return a + (b - a) * this.next();
  }

  /** Integer in [a, b]. */
  int(a: number, b: number): number {
    return a + Math.floor(this.next() * (b - a + 1));
  }

  logUniform(a: number, b: number): number {
    return Math.exp(this.uniform(Math.log(a), Math.log(b)));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  weighted<T>(items: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (const [, w] of items) total += w;
    let r = this.next() * total;
    for (const [item, w] of items) {
      r -= w;
      if (r < 0) return item;
    }
    return items[items.length - 1][0];
  }

  hex(n: number): string {
    let s = '';
    while (s.length < n) s += this.u32().toString(16).padStart(8, '0');
    return s.slice(0, n);
  }

  uuid4(): string {
    const h = this.hex(32);
    const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n + 4);
    for (let i = 0; i < n; i += 4) b.writeUInt32LE(this.u32(), i);
    return b.subarray(0, n);
  }

  token(n: number, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.u32() % alphabet.length];
    return s;
  }
}

const EN_WORDS = (
  'the model data answer question result value system user input output training dataset example ' +
  'function call tool agent step query context document summary report analysis customer order ' +
  'invoice payment account service request response error latency throughput network server client ' +
  'database table index record field schema version release update feature product team project ' +
  'meeting deadline budget revenue growth market price cost margin quarter year month week day hour ' +
  'minute second temperature pressure energy battery vehicle engine route city country river mountain ' +
  'ocean forest climate weather policy law court contract clause party evidence source citation paper ' +
  'author journal study experiment sample measurement error bias variance mean median distribution ' +
  'probability estimate forecast trend signal noise filter layer weight gradient loss accuracy recall ' +
  'precision token prompt completion reasoning thought plan goal task subtask constraint requirement ' +
  'is are was were be has have had will would can could should may might must does did ' +
  'and or but because although while since unless however therefore moreover meanwhile ' +
  'of to in for on with as by from at about into over after before between under during without ' +
  'new old large small fast slow high low early late simple complex clear precise robust stable ' +
  'important relevant possible likely recent current previous next final first last main other ' +
  'compute check verify compare measure estimate explain describe summarize translate classify extract ' +
  'improve reduce increase handle process store retrieve send receive build deploy test monitor'
).split(' ');

const FR_WORDS = (
  'le la les un une des du de et ou mais donc car avec sans pour par sur sous dans entre vers chez ' +
  'modèle données réponse question résultat valeur système utilisateur entrée sortie exemple fonction ' +
  'outil agent étape requête contexte document résumé rapport analyse client commande facture paiement ' +
  'compte service demande erreur réseau serveur base table index champ schéma version mise à jour ' +
  'équipe projet réunion échéance budget chiffre affaires croissance marché prix coût marge trimestre ' +
  'année mois semaine jour heure minute température pression énergie batterie véhicule moteur trajet ' +
  'ville pays fleuve montagne océan forêt climat météo politique loi tribunal contrat clause preuve ' +
  'source étude expérience échantillon mesure écart moyenne médiane probabilité prévision tendance ' +
  'est sont était étaient sera serait peut pourrait doit devrait fait a ont avait ' +
  'nouveau ancien grand petit rapide lent élevé faible précis stable important récent actuel précédent ' +
  'suivant dernier premier principal général spécifique déjà très plutôt assez où ça être côté ' +
  'calculer vérifier comparer mesurer expliquer décrire résumer traduire classer extraire améliorer ' +
  'réduire augmenter traiter stocker récupérer envoyer recevoir déployer tester surveiller élève île ' +
  'cœur œuvre noël français égalité hôpital château fenêtre forêt garçon leçon reçu déçu naïf maïs'
).split(' ');

const JA_SENTENCES = [
  '機械学習モデルの評価には時間がかかります。',
  'このデータセットには約三万件のレコードが含まれています。',
  '推論の結果を確認してから次のステップに進んでください。',
  '東京の明日の天気は晴れのち曇りでしょう。',
  'ユーザーの質問に対して簡潔に答えてください。',
  '請求書の金額は税込みで一万二千円です。',
  'エラーが発生したため、処理を再試行します。',
  'この関数は二つの数値を受け取り、その積を返します。',
];

const ZH_SENTENCES = [
  '这个问题的答案取决于上下文。',
  '请用中文回答这个问题。',
  '模型在测试集上的准确率为百分之九十二。',
  '我们需要先计算总价，然后加上增值税。',
  '北京今天的气温是二十三摄氏度。',
  '这份报告总结了第三季度的销售情况。',
  '数据已经成功保存到数据库中。',
  '吉野家的𠮷字在某些字体中显示不同。',
];

const KO_SENTENCES = ['데이터를 분석했습니다.', '결과를 확인해 주세요.', '오늘 서울의 날씨는 맑습니다.'];

export const EMOJI = ['🚀', '✅', '😀', '🔴', '☔', '👍', '🎉', '📈', '🤖', '❗', '💡', '🔥', '🙏', '❤️', '🇫🇷', '👩‍💻'];

export type Lang = 'en' | 'fr' | 'ja' | 'zh' | 'mixed';

/** Pools of pre-built sentences, so generating hundreds of megabytes of text stays fast. */
export class TextPool {
  private readonly en: string[] = [];
  private readonly fr: string[] = [];
  private readonly ja: string[] = [];
  private readonly zh: string[] = [];

  constructor(private readonly rng: Rng) {
    for (let i = 0; i < 6000; i++) this.en.push(this.buildSentence(EN_WORDS, 'en'));
    for (let i = 0; i < 3000; i++) this.fr.push(this.buildSentence(FR_WORDS, 'fr'));
    for (let i = 0; i < 400; i++) {
      this.ja.push(this.cjk(JA_SENTENCES));
      this.zh.push(this.cjk(ZH_SENTENCES));
    }
  }

  private cjk(base: readonly string[]): string {
    const r = this.rng;
    let s = r.pick(base);
    if (r.chance(0.3)) s += r.pick(base);
    if (r.chance(0.15)) s += r.pick(KO_SENTENCES);
    if (r.chance(0.2)) s += ` (${r.int(1, 999)} ${r.pick(EN_WORDS)})`;
    if (r.chance(0.1)) s += r.pick(EMOJI);
    return s;
  }

  private buildSentence(words: readonly string[], lang: 'en' | 'fr'): string {
    const r = this.rng;
    const n = r.int(5, 22);
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      let w = r.pick(words);
      const x = r.next();
      if (x < 0.04) w = String(r.int(0, 100000));
      else if (x < 0.06) w = `${r.int(0, 999)}.${r.int(0, 99)}`;
      else if (x < 0.075) w = `"${w}"`;
      else if (x < 0.085) w = lang === 'fr' ? `« ${w} »` : `'${w}'`;
      else if (x < 0.09) w = `${w}'s`;
      else if (x < 0.095) w = `C:\\Users\\${w}\\data.csv`;
      else if (x < 0.1) w = `\`${w}()\``;
      else if (x < 0.105) w = r.pick(EMOJI);
      else if (x < 0.11) w = `${r.int(1, 99)} %`;
      else if (x < 0.113) w = `${w}/${r.pick(words)}`;
      parts.push(w);
      if (i < n - 1 && r.chance(0.07)) parts.push(r.pick([',', ';', ':', ' —']));
    }
    let s = parts.join(' ').replace(/ ([,;:])/g, lang === 'fr' ? ' $1' : '$1');
    s = s[0].toUpperCase() + s.slice(1);
    return s + r.pick(['.', '.', '.', '.', '?', '!', '…']);
  }

  sentence(lang: Lang): string {
    const r = this.rng;
    switch (lang) {
      case 'en':
        return r.pick(this.en);
      case 'fr':
        return r.pick(this.fr);
      case 'ja':
        return r.pick(this.ja);
      case 'zh':
        return r.pick(this.zh);
      default:
        return this.sentence(r.pick(['en', 'en', 'fr', 'ja', 'zh'] as const));
    }
  }

  /** Several sentences joined by spaces (CJK: no space). */
  sentences(lang: Lang, n: number): string {
    const parts: string[] = [];
    for (let i = 0; i < n; i++) parts.push(this.sentence(lang));
    return parts.join(lang === 'ja' || lang === 'zh' ? '' : ' ');
  }

  /** Roughly `chars` characters of paragraphs, sometimes with lists, tabs and code. */
  text(lang: Lang, chars: number): string {
    const r = this.rng;
    const paragraphs: string[] = [];
    let length = 0;
    while (length < chars) {
      let p: string;
      const x = r.next();
      if (x < 0.08) {
        const items: string[] = [];
        for (let i = r.int(2, 6); i > 0; i--) items.push(`- ${this.sentence(lang)}`);
        p = items.join('\n');
      } else if (x < 0.1) {
        p = `\`\`\`python\ndef f(x):\n\treturn x * ${r.int(2, 9)}  # "${r.pick(EN_WORDS)} ${r.pick(EN_WORDS)}"\n\`\`\``;
      } else if (x < 0.12) {
        p = `| name | value |\n|---|---|\n| ${r.pick(EN_WORDS)} | ${r.int(0, 9999)} |\n| ${r.pick(EN_WORDS)} | ${r.uniform(0, 1).toFixed(3)} |`;
      } else {
        p = this.sentences(lang, r.int(2, 7));
      }
      paragraphs.push(p);
      length += p.length + 2;
    }
    return paragraphs.join('\n\n');
  }

  word(lang: Lang = 'en'): string {
    return this.rng.pick(lang === 'fr' ? FR_WORDS : EN_WORDS);
  }

  lang(): Lang {
    return this.rng.weighted<Lang>([
      ['en', 68],
      ['fr', 20],
      ['ja', 4],
      ['zh', 4],
      ['mixed', 4],
    ]);
  }
}
