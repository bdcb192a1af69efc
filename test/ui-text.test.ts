import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { textWidth } from '../src/ui/text.js';

describe('terminal cell widths', () => {
  it('counts emoji of every common block, CJK and accents as a terminal draws them', () => {
    assert.equal(textWidth('Planet? 🚀'), 10, 'transport and map symbols are wide');
    assert.equal(textWidth('😀🥇🌍'), 6);
    assert.equal(textWidth('東京'), 4);
    assert.equal(textWidth('é'), 1);
    assert.equal(textWidth('e\u0301'), 1, 'a combining accent takes no cell');
  });
});
