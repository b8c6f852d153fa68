// A student's implementation of SPEC.md in Node.js, written from docs/SPEC.md and
// docs/trace-format.md alone: reads one config as JSON on stdin, prints its trace on stdout.
//
//     node student.js [--plant no-bonus|inverted-ratio]
//
// Exact rationals are [numerator, denominator] pairs of BigInt; draws use BigInt SplitMix64.
"use strict";

const PLANT = process.argv[2] === "--plant" ? process.argv[3] : null;
const MASK = (1n << 64n) - 1n;
const TWO53 = 1n << 53n;
const TOY = { vocab: ["A", "B", "C"], start: [0.5, 0.3, 0.2],
  next: { A: [0.2, 0.6, 0.2], B: [0.55, 0.15, 0.3], C: [0.25, 0.25, 0.5] } };
const BIASED = { vocab: ["A", "B", "C"], start: [0.8, 0.15, 0.05],
  next: { A: [0.8, 0.15, 0.05], B: [0.8, 0.15, 0.05], C: [0.8, 0.15, 0.05] } };
const BUILTIN = { toy: TOY, aligned: TOY, biased: BIASED };

function draw(seed, n) {
  let z = (BigInt(seed) + BigInt(n + 1) * 0x9E3779B97F4A7C15n) & MASK;
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK;
  z = z ^ (z >> 31n);
  const m = z >> 11n;
  return { record: { position: n, u: Number(m) / 2 ** 53, hex: z.toString(16).padStart(16, "0") }, m };
}

const gcd = (a, b) => { while (b) [a, b] = [b, a % b]; return a < 0n ? -a : a; };
const frac = (n, d) => { const g = gcd(n, d) || 1n; return [n / g, d / g]; };
const add = (a, b) => frac(a[0] * b[1] + b[0] * a[1], a[1] * b[1]);
const sub = (a, b) => frac(a[0] * b[1] - b[0] * a[1], a[1] * b[1]);
const div = (a, b) => frac(a[0] * b[1], a[1] * b[0]);
const less = (a, b) => a[0] * b[1] < b[0] * a[1];
const toFloat = (a) => Number(a[0]) / Number(a[1]); // exact enough: small numerators and denominators

function decimal(x) { // the decimal a JSON number is written as, exactly (SPEC section 1)
  const [mant, exp] = String(x).toLowerCase().split("e");
  const [whole, part = ""] = mant.split(".");
  let n = BigInt(whole + part), d = 10n ** BigInt(part.length);
  const e = Number(exp || 0);
  if (e > 0) n *= 10n ** BigInt(e); else d *= 10n ** BigInt(-e);
  return frac(n, d);
}

function model(spec) {
  if (typeof spec === "string") spec = BUILTIN[spec];
  const row = (values) => {
    const exact = values.map(decimal);
    const total = exact.reduce(add, [0n, 1n]);
    return exact.map((x) => div(x, total));
  };
  const rows = new Map([[null, row(spec.start)]]);
  spec.vocab.forEach((t, i) => rows.set(i, row(spec.next[t])));
  return { vocab: spec.vocab, rows };
}

// SPEC 9: temperature, top-k, top-p, min-p, in that order, each renormalising exactly. A
// temperature whose 1/T is not an integer uses Math.pow (not correctly rounded: approximate).
function normalised(row) {
  const total = row.reduce(add, ZERO);
  return row.map((x) => div(x, total));
}

function processRow(row, s) {
  if (s.temperature !== undefined) {
    const t = decimal(s.temperature);
    if (t[0] === 0n) {
      const best = argmax(row);
      row = row.map((_, i) => (i === best ? ONE : ZERO));
    } else if (!(t[0] === 1n && t[1] === 1n)) {
      const e = div(ONE, t);
      row = normalised(row.map((x) => (e[1] === 1n ? [x[0] ** e[0], x[1] ** e[0]]
        : decimal(Math.pow(toFloat(x), toFloat(e))))));
    }
  }
  if (s.top_k !== undefined && s.top_k < row.length) {
    const kth = row.slice().sort((a, b) => (less(b, a) ? -1 : less(a, b) ? 1 : 0))[s.top_k - 1];
    row = normalised(row.map((x) => (less(x, kth) ? ZERO : x)));
  }
  if (s.top_p !== undefined) {
    const p = decimal(s.top_p), order = row.map((_, i) => i).sort((i, j) => (less(row[j], row[i]) ? -1 : less(row[i], row[j]) ? 1 : i - j));
    const kept = row.map(() => ZERO);
    let before = ZERO;
    for (const i of order) {
      if (less(before, p)) kept[i] = row[i];
      before = add(before, row[i]);
    }
    row = normalised(kept);
  }
  if (s.min_p !== undefined) {
    const bound = mul(decimal(s.min_p), row.reduce((a, b) => (less(a, b) ? b : a)));
    row = normalised(row.map((x) => (less(x, bound) ? ZERO : x)));
  }
  return row;
}

function sample(d, m) { // first i with u < d[0] + ... + d[i], u = m / 2^53
  let total = [0n, 1n];
  for (let i = 0; i < d.length; i++) {
    total = add(total, d[i]);
    if (m * total[1] < total[0] * TWO53) return i;
  }
  return d.length - 1;
}

function argmax(d) {
  let best = 0;
  d.forEach((p, i) => { if (less(d[best], p)) best = i; });
  return best;
}

const mul = (a, b) => frac(a[0] * b[0], a[1] * b[1]);
const ONE = [1n, 1n], ZERO = [0n, 1n];
const min1 = (a) => (less(ONE, a) ? ONE : a);
const exactStr = (a) => (a[1] === 1n ? a[0].toString() : `${a[0]}/${a[1]}`);

// SPEC 10: weights, thresholds, all k eta draws, tau the last passing; the correction from
// max(w_tau p - q, 0) normalised, or null when tau = k.
function blockVerify(proposal, last, target, draft, vocab, seed, start, label, floats) {
  let n = start;
  const ctxs = [last].concat(proposal.slice(0, -1));
  const ps = ctxs.map((c) => target.rows.get(c)), qs = ctxs.map((c) => draft.rows.get(c));
  const w = [ONE];
  proposal.forEach((tok, i) => w.push(min1(mul(w[i], div(ps[i][tok], qs[i][tok])))));
  const k = proposal.length, h = [];
  const scaled = (i, wi) => ps[i].map((a, j) => { const x = sub(mul(wi, a), qs[i][j]); return less(ZERO, x) ? x : ZERO; });
  for (let i = 1; i < k; i++) {
    const s = scaled(i, w[i]).reduce(add, ZERO), den = sub(add(s, ONE), w[i]);
    h.push(den[0] === 0n ? ONE : div(s, den));
  }
  h.push(w[k]);
  const etas = proposal.map(() => draw(seed, n++));
  const below = etas.map((d, i) => d.m * h[i][1] < h[i][0] * TWO53);
  let tau = 0;
  below.forEach((b, i) => { if (b) tau = i + 1; });
  const verification = proposal.map((tok, i) => ({ index: i + 1, context: label(ctxs[i]), token: vocab[tok],
    p: floats(ps[i]), q: floats(qs[i]), p_token: toFloat(ps[i][tok]), q_token: toFloat(qs[i][tok]),
    ratio: toFloat(div(ps[i][tok], qs[i][tok])), weight: toFloat(w[i + 1]), weight_exact: exactStr(w[i + 1]),
    threshold: toFloat(h[i]), threshold_exact: exactStr(h[i]), draw: etas[i].record, below_threshold: below[i],
    accepted: i < tau }));
  let correction = null;
  if (tau < k) {
    const diff = scaled(tau, w[tau]), total = diff.reduce(add, ZERO), r = diff.map((x) => div(x, total));
    const d = draw(seed, n++);
    correction = { index: tau + 1, context: label(ctxs[tau]), weight: toFloat(w[tau]), weight_exact: exactStr(w[tau]),
      distribution: floats(r), draw: d.record, token: vocab[sample(r, d.m)] };
  }
  return { verification, tau, correction, accepted: proposal.slice(0, tau), n };
}

const str = (a) => (a[1] === 1n ? `${a[0]}` : `${a[0]}/${a[1]}`);

function residual(r, q) { // max(r - q, 0) normalised (SPEC 11.2)
  const diff = r.map((x, j) => (less(q[j], x) ? sub(x, q[j]) : [0n, 1n]));
  const total = diff.reduce(add, [0n, 1n]);
  return diff.map((x) => div(x, total));
}

function treeBlock(config, target, draft, out, n0) { // SPEC 11: D chains, depth by depth
  const vocab = target.vocab, { seed, limit } = config;
  const eos = config.eos === null ? null : vocab.indexOf(config.eos);
  const label = (t) => (t === null ? null : vocab[t]);
  const floats = (d) => d.map(toFloat);
  let n = n0;
  const last = out.length ? out[out.length - 1] : null, k = Math.min(config.width, limit - out.length);
  const chains = [], steps = [];
  for (let j = 0; j < config.drafts; j++) {
    const chain = [];
    let ctx = last;
    for (let i = 0; i < k; i++) {
      const q = draft.rows.get(ctx), d = draw(seed, n++), tok = sample(q, d.m);
      chain.push(tok);
      steps.push({ chain: j + 1, index: i + 1, context: label(ctx), q: floats(q), draw: d.record, token: vocab[tok], drafted: true });
      if (tok === eos) break;
      ctx = tok;
    }
    chains.push(chain);
  }
  const tests = [], accepted = [];
  let alive = chains.map((_, j) => j), ctx = last, correction = null;
  for (;;) {
    const depth = accepted.length, candidates = alive.filter((j) => chains[j].length > depth);
    if (!candidates.length) break;
    const p = target.rows.get(ctx), q = draft.rows.get(ctx);
    let r = p, chosen = null;
    const left = candidates.slice();
    for (const j of candidates) {
      const y = chains[j][depth], d = draw(seed, n++);
      const ok = d.m * q[y][0] * r[y][1] < r[y][0] * q[y][1] * TWO53; // u * q(y) < r(y)
      left.splice(left.indexOf(j), 1);
      alive = ok ? candidates.filter((a) => chains[a][depth] === y) : left.slice();
      const ratio = div(r[y], q[y]);
      tests.push({ depth: depth + 1, chain: j + 1, context: label(ctx), token: vocab[y], p: floats(p), q: floats(q),
        r: floats(r), r_exact: r.map(str), r_token: toFloat(r[y]), q_token: toFloat(q[y]), ratio: toFloat(ratio),
        ratio_exact: str(ratio), draw: d.record, accepted: ok, alive: alive.map((a) => a + 1) });
      if (ok) { chosen = y; break; }
      r = residual(r, q);
    }
    if (chosen === null) {
      const d = draw(seed, n++);
      correction = { index: depth + 1, context: label(ctx), distribution: floats(r), draw: d.record, token: vocab[sample(r, d.m)] };
      break;
    }
    accepted.push(chosen);
    ctx = chosen;
    if (chosen === eos) break;
  }
  const committed = accepted.slice();
  let bonus = null, noBonus = null;
  if (correction) { committed.push(vocab.indexOf(correction.token)); noBonus = "rejection"; }
  else if (accepted.length && accepted[accepted.length - 1] === eos) noBonus = "eos";
  else if (out.length + accepted.length >= limit) noBonus = "limit";
  else if (PLANT !== "no-bonus") {
    const p = target.rows.get(ctx), d = draw(seed, n++), tok = sample(p, d.m);
    bonus = { context: label(ctx), p: floats(p), draw: d.record, token: vocab[tok] };
    committed.push(tok);
  }
  const tested = new Set(tests.map((t) => `${t.chain - 1},${t.depth - 1}`));
  const discarded = [];
  chains.forEach((c, j) => c.forEach((t, i) => { if (!tested.has(`${j},${i}`)) discarded.push(t); }));
  const flat = chains.flat();
  const counters = { target_passes: 1, draft_steps: flat.length, accepted: accepted.length,
    rejected: tests.length - accepted.length, discarded: discarded.length, bonus_tokens: bonus ? 1 : 0,
    committed: committed.length, draws: n - n0 };
  return { n, committed, counters, block: { proposal: { tokens: flat.map(label), steps, chains: chains.map((c) => c.map(label)) },
    verification: tests, correction, discarded: discarded.map(label), bonus, no_bonus: noBonus, sample: null } };
}

function main(config) {
  const target = model(config.target), draft = model(config.draft);
  if (config.sampling) { // SPEC 9: p' always, q' unless the draft rows are "raw"
    for (const [c, r] of target.rows) target.rows.set(c, processRow(r, config.sampling));
    if ((config.sampling.draft || "processed") === "processed") {
      for (const [c, r] of draft.rows) draft.rows.set(c, processRow(r, config.sampling));
    }
  }
  const vocab = target.vocab;
  const { mode, width, seed, limit } = config;
  const eos = config.eos === null ? null : vocab.indexOf(config.eos);
  const label = (t) => (t === null ? null : vocab[t]);
  const floats = (d) => d.map(toFloat);
  const names = ["target_passes", "draft_steps", "accepted", "rejected", "discarded", "bonus_tokens", "committed", "draws"];
  const totals = Object.fromEntries(names.map((k) => [k, 0]));
  const out = [], blocks = [];
  let n = 0;
  while (out.length < limit && !(out.length && out[out.length - 1] === eos)) {
    const start = n, prefix = out.slice(), last = out.length ? out[out.length - 1] : null;
    if (mode === "tree") {
      const tree = treeBlock(config, target, draft, out, n);
      n = tree.n;
      out.push(...tree.committed);
      names.forEach((k) => { totals[k] += tree.counters[k]; });
      const done = out[out.length - 1] === eos ? "eos" : out.length >= limit ? "limit" : null;
      blocks.push({ mode, prefix: prefix.map(label), position: start, ...tree.block,
        committed: tree.committed.map(label), counters: tree.counters, next_position: n, done });
      continue;
    }
    const steps = [], proposal = [], verification = [], accepted = [];
    let correction = null, bonus = null, noBonus = null, sampleRec = null, discarded = [], committed = [], tau = null;
    if (mode === "autoregressive") {
      const p = target.rows.get(last), d = draw(seed, n++);
      const tok = sample(p, d.m);
      sampleRec = { context: label(last), p: floats(p), draw: d.record, token: vocab[tok] };
      committed = [tok];
    } else {
      let ctx = last;
      for (let i = 0; i < Math.min(width, limit - out.length); i++) {
        const q = draft.rows.get(ctx), d = mode === "speculative" || mode === "block" ? draw(seed, n++) : null;
        const tok = d ? sample(q, d.m) : argmax(q);
        proposal.push(tok);
        steps.push({ index: i + 1, context: label(ctx), q: floats(q), draw: d && d.record, token: vocab[tok], drafted: true });
        if (tok === eos) break;
        ctx = tok;
      }
      ctx = last;
      if (mode === "block") {
        const v = blockVerify(proposal, last, target, draft, vocab, seed, n, label, floats);
        verification.push(...v.verification);
        accepted.push(...v.accepted);
        tau = v.tau;
        n = v.n;
        if (v.correction) {
          correction = v.correction;
          discarded = proposal.slice(tau + 1);
          committed = accepted.concat([vocab.indexOf(correction.token)]);
          noBonus = "rejection";
        }
      }
      for (let i = 0; i < (mode === "block" ? 0 : proposal.length); i++) {
        const tok = proposal[i], p = target.rows.get(ctx), q = draft.rows.get(ctx);
        let d = null, ok, ratio = null;
        if (mode === "greedy") ok = tok === argmax(p);
        else {
          d = draw(seed, n++);
          const r = PLANT === "inverted-ratio" ? div(q[tok], p[tok]) : div(p[tok], q[tok]);
          ok = d.m * r[1] < r[0] * TWO53; // u < ratio, exactly: u * q < p
          ratio = toFloat(r);
        }
        verification.push({ index: i + 1, context: label(ctx), token: vocab[tok], p: floats(p), q: floats(q),
          p_token: toFloat(p[tok]), q_token: toFloat(q[tok]), ratio, draw: d && d.record, accepted: ok });
        if (!ok) {
          let r, fix, cd = null;
          if (mode === "greedy") { r = p; fix = argmax(p); } else {
            const diff = p.map((x, j) => (less(q[j], x) ? sub(x, q[j]) : [0n, 1n]));
            const total = diff.reduce(add, [0n, 1n]);
            r = diff.map((x) => div(x, total));
            cd = draw(seed, n++);
            fix = sample(r, cd.m);
          }
          correction = { index: i + 1, context: label(ctx), distribution: floats(r), draw: cd && cd.record, token: vocab[fix] };
          discarded = proposal.slice(i + 1);
          committed = accepted.concat([fix]);
          noBonus = "rejection";
          break;
        }
        accepted.push(tok);
        if (tok === eos) break;
        ctx = tok;
      }
      if (correction === null) {
        committed = accepted.slice();
        const end = accepted.length ? accepted[accepted.length - 1] : last;
        if (accepted.length && end === eos) noBonus = "eos";
        else if (out.length + accepted.length >= limit) noBonus = "limit";
        else if (PLANT !== "no-bonus") {
          const p = target.rows.get(end), d = mode === "speculative" || mode === "block" ? draw(seed, n++) : null;
          const tok = d ? sample(p, d.m) : argmax(p);
          bonus = { context: label(end), p: floats(p), draw: d && d.record, token: vocab[tok] };
          committed.push(tok);
        }
      }
    }
    out.push(...committed);
    const counters = { target_passes: 1, draft_steps: proposal.length, accepted: accepted.length,
      rejected: correction ? 1 : 0, discarded: discarded.length, bonus_tokens: bonus ? 1 : 0,
      committed: committed.length, draws: n - start };
    names.forEach((k) => { totals[k] += counters[k]; });
    const done = out[out.length - 1] === eos ? "eos" : out.length >= limit ? "limit" : null;
    blocks.push({ mode, prefix: prefix.map(label), position: start,
      proposal: { tokens: proposal.map(label), steps }, verification, ...(mode === "block" ? { tau } : {}), correction,
      discarded: discarded.map(label), bonus, no_bonus: noBonus, sample: sampleRec,
      committed: committed.map(label), counters, next_position: n, done });
  }
  return { format: "specdec-trace/1", config, blocks, output: out.map(label), counters: totals, position: n,
    done: blocks[blocks.length - 1].done };
}

let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => { process.stdout.write(JSON.stringify(main(JSON.parse(input))) + "\n"); });
