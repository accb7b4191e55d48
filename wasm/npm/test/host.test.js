// What only the WebAssembly build has to show: the deadline read from the host's
// `performance.now()` stops a long evaluation, the analyzer's own evaluations (constant folding,
// the witness search) never touch the system clock that wasm32 lacks, a panic reaches
// JavaScript as an exception, and bad input gets an error rather than a crash.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const raw = require('../pkg/ozcheck_wasm.js');
const ozcheck = require('..');

/** An event whose attributes hold two lists of `n` distinct numbers. */
function smallEvent(n) {
  const a = Array.from({ length: n }, (_, i) => i);
  const b = Array.from({ length: n }, (_, i) => -1 - i);
  return JSON.stringify({ id: '1', source: 's', type: 't', text: '', attributes: { a, b } });
}

test('the deadline stops a nested loop over a large event (cost limit off)', () => {
  // The benchmark's adversarial event: 2,044 × 2,044 comparisons, far past a 20 ms deadline.
  const fs = require('node:fs');
  const path = require('node:path');
  const event = fs.readFileSync(path.resolve(__dirname, '../../../corpus/events/adv_int8k.json'), 'utf8');
  const expr = 'event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))';
  const got = ozcheck.evaluate(expr, event, { limit: 0, deadlineMs: 20, staticCheck: false });
  assert.equal(got.error?.kind, 'deadline', JSON.stringify(got));
  assert.ok(got.error.cost > 0);
});

test('the same loop without the deadline pressure finishes when small', () => {
  const expr = 'event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))';
  const got = ozcheck.evaluate(expr, smallEvent(10), { limit: 0, deadlineMs: 10000, staticCheck: false });
  assert.equal(got.value, false);
});

test('constant folding and the witness search run without a system clock', () => {
  // `1 + 2 == 3` is folded by the checker through a metered evaluation; the witness search
  // evaluates the filter on candidate events. Before both used a manual clock they read
  // `Instant::now()`, which panics on wasm32-unknown-unknown.
  const report = ozcheck.checkFilter("1 + 2 == 3 && event.text.contains('x')", { witness: true });
  assert.equal(report.verdict, 'accepted');
  const w = ozcheck.witness("event.attributes.labels.exists(l, l == 'urgent')");
  assert.ok(w.cost > 0 && w.event.attributes);
});

test('a panic becomes a JavaScript exception and the module goes on answering', () => {
  assert.throws(() => raw._panicForTest(), /ozcheck panicked: .*a panic asked for by a test/s);
  assert.equal(ozcheck.checkFilter("event.type == 'push'").verdict, 'accepted');
  // The standard library counts the first panic as still in progress (nothing unwinds on
  // wasm32), so a later one aborts before the hook runs: a `RuntimeError` without the message,
  // but still an exception, and the module still answers.
  assert.throws(() => raw._panicForTest(), WebAssembly.RuntimeError);
  assert.equal(ozcheck.checkFilter("event.type == 'push'").verdict, 'accepted');
});

test('a malformed event or options throw with the reason', () => {
  assert.throws(() => ozcheck.evaluate('true', '{"id": '), /event: /);
  assert.throws(() => ozcheck.evaluate('true', '{"id": "a", "id": "b"}'), /event: .*two values for the key `id`/);
  assert.throws(() => ozcheck.checkFilter('true', { limit: -1 }), /`limit` must be a whole number/);
  assert.throws(() => ozcheck.checkFilter('true', { context: 'nope' }), /`context` must be/);
  assert.throws(() => ozcheck.checkFilter('true', { extensions: 'nope' }), /options: /);
  assert.throws(() => ozcheck.lintText('a: 1', 'f.yaml', { config: '[rules' }), /ozcheck.toml: /);
});

test('arguments of the wrong type throw a TypeError', () => {
  assert.throws(() => ozcheck.checkFilter(42), TypeError);
  assert.throws(() => ozcheck.evaluate('true', 7), /must be a string|event: /);
  assert.throws(() => ozcheck.lintText(null, 'x.yaml'), TypeError);
  assert.equal(ozcheck.checkFilter('true').verdict, 'accepted');
});

test('hostile sources get diagnostics, not crashes', () => {
  assert.equal(ozcheck.checkFilter('('.repeat(100000)).verdict, 'refused');
  assert.equal(ozcheck.checkFilter('x'.repeat(2 * 1024 * 1024)).diagnostics[0].severity, 'error');
  assert.equal(ozcheck.lintText('a: [' + '['.repeat(100000), 'flows/x.yaml').diagnostics[0].severity, 'error');
});

test('fixText applies the safe fix of the sample flow and the finding goes', () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const rel = 'corpus/plugins/sample/flows/ci-watch.yaml';
  const text = fs.readFileSync(path.resolve(__dirname, '../../..', rel), 'utf8');
  const before = ozcheck.lintText(text, rel).diagnostics;
  const timeout = before.find((d) => d.code === 'compound-timeout');
  assert.deepEqual([timeout.line, timeout.column], [11, 16]);
  const fixed = ozcheck.fixText(text, rel);
  assert.ok(fixed.applied >= 1);
  assert.ok(!fixed.diagnostics.some((d) => d.code === 'compound-timeout'));
  assert.notEqual(fixed.text, text);
});

test('IANA time zones are in the module (chrono-tz was not dropped)', () => {
  const event = JSON.stringify({ id: '1', source: 's', type: 't', text: '', attributes: {} });
  const got = ozcheck.evaluate("timestamp('2026-07-01T12:00:00Z').getHours('Europe/Paris') == 14", event);
  assert.equal(got.value, true, JSON.stringify(got));
});

test('the rule catalogue lists every rule with its level', () => {
  const rules = ozcheck.rules();
  assert.ok(rules.some((r) => r.id === 'compound-timeout' && r.severity));
  assert.equal(new Set(rules.map((r) => r.id)).size, rules.length);
});
