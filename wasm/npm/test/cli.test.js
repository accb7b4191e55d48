// The package gives the same answers as the cargo-built `ozcheck` binary (OZCHECK_BIN, default
// target/debug/ozcheck, which the workspace's test build makes): every corpus filter through
// `checkFilter` against `ozcheck filter --format json`, and every corpus plugin file through
// `lintText` against `ozcheck lint --format json`, compared as parsed JSON.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ozcheck = require('..');

const root = path.resolve(__dirname, '../../..');
const bin = process.env.OZCHECK_BIN ?? path.join(root, 'target/debug/ozcheck');

/** Runs the CLI and parses its standard output, whatever its exit status. */
function cli(args, input) {
  try {
    return JSON.parse(execFileSync(bin, args, { cwd: root, encoding: 'utf8', input }));
  } catch (e) {
    if (e.stdout) return JSON.parse(e.stdout);
    throw e;
  }
}

function walk(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else out.push(full);
  }
  return out;
}

/**
 * The corpus's filters: the benchmark expressions, the parser's regression files, and every
 * one-line `filter:` and `sender:` value of the plugin files (block scalars are covered by the
 * lint comparison below, which checks them through the analyzer).
 */
function corpusFilters() {
  const found = [];
  const bench = JSON.parse(fs.readFileSync(path.join(root, 'corpus/events/expressions.json')));
  for (const e of bench.expressions) found.push({ name: `bench ${e.name}`, expr: e.expr, context: 'filter' });
  for (const key of ['trivial', 'expr_1024']) {
    found.push({ name: `bench ${key}`, expr: bench[key], context: 'filter' });
  }
  for (const file of walk(path.join(root, 'corpus/regressions')).filter((f) => f.endsWith('.cel'))) {
    const text = fs.readFileSync(file, 'utf8');
    // Through `--file`: a regression may hold a NUL byte, which no command-line argument can.
    found.push({ name: path.relative(root, file), expr: text.replace(/\n$/, ''), context: 'filter', file });
  }
  const line = /\b(filter|sender):\s*("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^|>"'\s#][^#\n]*?)\s*(?:[,}]\s*[^\n]*)?$/;
  for (const file of walk(path.join(root, 'corpus/plugins')).filter((f) => f.endsWith('.yaml'))) {
    for (const text of fs.readFileSync(file, 'utf8').split('\n')) {
      const m = line.exec(text);
      if (!m) continue;
      let expr = m[2];
      if (expr.startsWith('"')) expr = JSON.parse(expr);
      else if (expr.startsWith("'")) expr = expr.slice(1, -1).replace(/''/g, "'");
      found.push({ name: `${path.relative(root, file)} ${m[1]}`, expr, context: m[1] === 'sender' ? 'sender' : 'filter' });
    }
  }
  return found;
}

const filters = corpusFilters();

test('the corpus has filters to compare', () => {
  assert.ok(filters.length >= 20, `only ${filters.length} filters found`);
});

for (const { name, expr, context, file } of filters) {
  test(`checkFilter equals ozcheck filter --format json: ${name}`, () => {
    const input = file ? ['--file', file] : ['--', expr];
    const expected = cli(['filter', '--format', 'json', '--context', context, ...input]);
    assert.deepEqual(ozcheck.checkFilter(expr, { context }), expected);
  });
}

test('bounds, limit and witness cost equal the CLI', () => {
  const expr = 'event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))';
  const witnessFile = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'oz-')), 'w.json');
  const expected = cli(['filter', '--format', 'json', '--max-attributes', '2048', '--limit', '50000',
    '--witness', witnessFile, '--', expr]);
  const got = ozcheck.checkFilter(expr, { maxAttributes: 2048, limit: 50000, witness: true });
  assert.deepEqual(got, expected);
  const w = ozcheck.witness(expr, { maxAttributes: 2048, limit: 50000 });
  assert.deepEqual(w.event, JSON.parse(fs.readFileSync(witnessFile, 'utf8')));
  assert.equal(w.cost, expected.witness_cost);
});

// The rules that read the plugin's other files (its prompts, its agents) stay quiet when one
// buffer is linted alone, as `lintText` does; the CLI reads them from the disk.
const CROSS_FILE_RULES = new Set(['missing-instructions', 'unknown-agent', 'routine-missing-wait-tool']);

for (const file of walk(path.join(root, 'corpus/plugins')).filter((f) => f.endsWith('.yaml'))) {
  const rel = path.relative(root, file);
  test(`lintText equals ozcheck lint --format json alone on the file: ${rel}`, () => {
    const text = fs.readFileSync(file, 'utf8');
    const expected = cli(['lint', '--format', 'json', '--stdin-filename', rel, '-'], text);
    expected.diagnostics = expected.diagnostics.filter((d) => !CROSS_FILE_RULES.has(d.code));
    assert.deepEqual(ozcheck.lintText(text, rel), expected);
  });
}

test('evaluate equals ozcheck eval --format json (value and cost; the time differs)', () => {
  const eventFile = path.join(root, 'corpus/events/realistic.json');
  const event = fs.readFileSync(eventFile, 'utf8');
  const bench = JSON.parse(fs.readFileSync(path.join(root, 'corpus/events/expressions.json')));
  for (const { expr } of bench.expressions) {
    const expected = cli(['eval', '--format', 'json', '--event', eventFile, expr]);
    const got = ozcheck.evaluate(expr, event);
    delete expected.elapsed_us;
    delete got.elapsed_us;
    assert.deepEqual(got, expected, expr);
  }
});
