"""docs/implementing.md: each language's snippets are extracted from the markdown, built into one
program per language (once per session) and RUN:

- the primitives (SPEC 2-4) against the JDK's SplittableRandom vectors
  (tests/fixtures/splittable_random.json) and the engine's own ``sample`` and acceptance test on
  random inputs;
- row processing (SPEC 9, the ``rows`` blocks) against the engine's ``process`` on 70 rows x 24
  settings (SPEC 9's worked example among them, and exact ties of a square root);
- block verification (SPEC 10, ``block``) and tree verification (SPEC 11, ``tree``) against every
  block of the service's own traces (``POST /v1/runs``, built-in and custom models, EOS, limits,
  widths 1-5, D = 1..4, without and with seven SPEC 9 settings), and under
  five SPEC 9 settings against the second implementation (tests/spec_reference.py): proposals,
  tau, committed tokens and next positions;
- draft trees and tree verifiers (SPEC 12, ``trees``) against every block of the service's traces
  with a ``tree`` setting (every shape x verifier, widths 1-4, D = 1..4, branching lists,
  thresholds, built-in and custom models, EOS, SPEC 9 settings, SPEC 12.6's examples): the
  nodes, every test with its position, decision and compared numbers, the correction's law,
  committed and next position; planted mistakes in the Python snippets must fail them.

Each language gets a small driver (below, test code, not in the docs) appended to its snippets;
the driver reads commands on stdin and prints one line each:

- ``D seed n`` -> ``m hex``: the draw's 53-bit integer m = u * 2^53 and the raw value's 16 hex digits;
- ``S u total w_0 ... w_k`` -> the index ``sample`` returns;
- ``A u a b c d`` -> 1 if ``accepts(u, a/b, c/d)`` else 0;
- ``P T K P M w_0 ... w_k`` -> the processed weights (settings as ``num/den``, ``-`` when unset);
- ``B`` / ``T width room drafts seed n last eos T K P M draft V p-table q-table`` -> one block of
  mode block / tree from position n after token ``last`` (-1: the empty prefix), the tables'
  rows raw (row 0 after the empty prefix, row c + 1 after token c) and processed by the driver:
  ``tokens | w | h | tau | committed | next`` (block) or ``chains | tests | committed | next`` (tree);
- ``G shape verify branching single acc`` then a ``T`` line's fields -> one SPEC 12 block
  (branching ``2,1``, thresholds ``num/den``, ``-`` when unset): ``nodes | tests | correction |
  committed | next``, a node ``parent:depth:token:law`` (the law's entries ``w/sum``, or a beam
  node's score), a test ``node:token:position:accepted:r(y):s(y)`` (residual) or
  ``node:token:position:accepted:acc_j:by`` (target_only), the correction's law or ``-``.
"""

import contextlib
import io
import itertools
import json
import math
import random
import re
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import spec_reference as R
from specdec_service import create_app
from specdec_service.engine import Dist, Draw, accepts, draw, sample
from specdec_service.engine.sampling import Sampling, process

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "implementing.md").read_text(encoding="utf-8")
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "splittable_random.json").read_text(encoding="utf-8"))


def snippet(language: str, part: str = "") -> str:
    """The one fenced block of ``language`` (and ``part``: rows, block, tree) in the document."""
    info = f"{language} {part}" if part else language
    blocks = re.findall(rf"^```{info}\n(.*?)^```$", DOC, flags=re.M | re.S)
    assert len(blocks) == 1, f"docs/implementing.md must hold exactly one {info} block, not {len(blocks)}"
    return blocks[0]


PARTS = ("rows", "block", "tree", "trees")
"""The fenced parts after the primitives: SPEC 9 (rows), 10 (block), 11 (tree), 12 (trees)."""


PY_DRIVER = r'''
import sys


def rational(t):
    return None if t == "-" else tuple(int(x) for x in t.split("/"))


def listed(xs):
    return " ".join(map(str, xs))


def law(w):
    return ",".join(f"{x}/{sum(w)}" for x in w)


def trees_case(tree, p_rows, q_rows, last, k, room, drafts, eos, seed, n):
    shape, verify, branching, single, scale = tree
    if shape == "beam":
        nodes = beam_tree(q_rows, last, k, drafts, eos)
    elif shape == "distinct":
        levels = [drafts] if branching == "-" else [int(b) for b in branching.split(",")]
        nodes, n = distinct_tree(q_rows, last, k, levels, eos, seed, n)
    else:
        chains = []
        for _ in range(drafts):
            chain, n = draft(q_rows, last, k, eos, seed, n)
            chains.append(chain)
        nodes = chains_trie(q_rows, chains, last)
    choose = residual if verify == "residual" else target_only(rational(single) or (1, 1), rational(scale) or (1, 1))
    tests, committed, r, n = walk(p_rows, nodes, last, room, eos, seed, n, choose)
    return " | ".join([listed(f"{pa}:{d}:{y}:{law(w) if w else f'{s[0]}/{s[1]}'}" for pa, d, y, w, s in nodes),
                       listed(":".join(map(str, (c, y, at, int(ok), x, by))) for c, y, at, ok, x, by in tests),
                       law(r) if r else "-", listed(committed), str(n)])


for line in sys.stdin:
    cmd, *a = line.split()
    tree, a = (a[:5], a[5:]) if cmd == "G" else (None, a)
    if cmd == "D":
        seed, n = int(a[0]), int(a[1])
        print(int(next_double(seed, n) * 2 ** 53), hex16(splitmix64(seed, n)))
    elif cmd == "S":
        print(sample([int(w) for w in a[2:]], int(a[1]), float(a[0])))
    elif cmd == "A":
        print(int(accepts(float(a[0]), *map(int, a[1:]))))
    elif cmd == "P":
        settings = (rational(a[0]), None if a[1] == "-" else int(a[1]), rational(a[2]), rational(a[3]))
        print(listed(process([int(w) for w in a[4:]], *settings)))
    else:  # B, T or G (after shape verify branching single acc): width room drafts seed n last eos T K P M draft V, then the p and q tables
        width, room, drafts, seed, n, last, eos = map(int, a[:7])
        settings = (rational(a[7]), None if a[8] == "-" else int(a[8]), rational(a[9]), rational(a[10]))
        size, numbers = int(a[12]), [int(x) for x in a[13:]]
        rows = [numbers[i * size:(i + 1) * size] for i in range(2 * size + 2)]
        p_rows = [process(r, *settings) for r in rows[:size + 1]]
        q_rows = [process(r, *settings) for r in rows[size + 1:]] if a[11] == "processed" else rows[size + 1:]
        k = min(width, room)
        if cmd == "B":
            tokens, n = draft(q_rows, last, k, eos, seed, n)
            w, h, tau, committed, n = verify_block(p_rows, q_rows, last, tokens, room, eos, seed, n)
            print(listed(tokens), "|", listed(f"{x}/{y}" for x, y in w), "|", listed(f"{x}/{y}" for x, y in h),
                  "|", tau, "|", listed(committed), "|", n)
        elif tree:
            print(trees_case(tree, p_rows, q_rows, last, k, room, drafts, eos, seed, n))
        else:
            chains = []
            for _ in range(drafts):
                chain, n = draft(q_rows, last, k, eos, seed, n)
                chains.append(chain)
            tests, committed, n = verify_tree(p_rows, q_rows, last, chains, room, eos, seed, n)
            print(listed(",".join(map(str, c)) for c in chains), "|", listed(f"{d}:{c}:{y}:{int(ok)}" for d, c, y, ok in tests),
                  "|", listed(committed), "|", n)
'''

JS_DRIVER = r'''
const lines = require("fs").readFileSync(0, "utf8").trim().split("\n");
const out = [];
const rational = (t) => (t === "-" ? null : t.split("/").map(BigInt));
const settingsOf = (a) => [rational(a[0]), a[1] === "-" ? null : Number(a[1]), rational(a[2]), rational(a[3])];
const lawOf = (w) => w.map((x) => `${x}/${sumOf(w)}`).join(",");
const valueOf = (x) => (Array.isArray(x) ? `${x[0]}/${x[1]}` : x);
function draftChains(qRows, last, k, eos, seed, n, drafts) {  // SPEC 11.1: D chains, one after the other
  const chains = [];
  for (let c = 0; c < drafts; c++) {
    let chain;
    [chain, n] = draft(qRows, last, k, eos, seed, n);
    chains.push(chain);
  }
  return [chains, n];
}
function treesCase(tree, pRows, qRows, last, k, room, drafts, eos, seed, n) {
  const [shape, verify, branching, single, scale] = tree;
  let nodes;
  if (shape === "beam") nodes = beamTree(qRows, last, k, drafts, eos);
  else if (shape === "distinct") {
    [nodes, n] = distinctTree(qRows, last, k, branching === "-" ? [drafts] : branching.split(",").map(Number), eos, seed, n);
  } else {
    let chains;
    [chains, n] = draftChains(qRows, last, k, eos, seed, n, drafts);
    nodes = chainsTrie(qRows, chains, last);
  }
  const choose = verify === "residual" ? residual : targetOnly(rational(single) || [1n, 1n], rational(scale) || [1n, 1n]);
  const [tests, committed, r, next] = walk(pRows, nodes, last, room, eos, seed, n, choose);
  return [nodes.map((o) => `${o.parent}:${o.depth}:${o.token}:${o.law ? lawOf(o.law) : valueOf(o.score)}`).join(" "),
          tests.map(([c, y, at, ok, x, by]) => `${c}:${y}:${at}:${ok ? 1 : 0}:${valueOf(x)}:${valueOf(by)}`).join(" "),
          r ? lawOf(r) : "-", committed.join(" "), next].join(" | ");
}
for (const line of lines) {
  let [cmd, ...args] = line.split(" "), tree = null;
  if (cmd === "G") [tree, args] = [args.slice(0, 5), args.slice(5)];
  if (cmd === "D") {
    const seed = BigInt(args[0]), n = BigInt(args[1]);
    out.push(`${BigInt(nextDouble(seed, n) * 2 ** 53)} ${hex16(splitmix64(seed, n))}`);
  } else if (cmd === "S") {
    out.push(String(sample(args.slice(2).map(BigInt), BigInt(args[1]), Number(args[0]))));
  } else if (cmd === "A") {
    const [a, b, c, d] = args.slice(1).map(BigInt);
    out.push(accepts(Number(args[0]), a, b, c, d) ? "1" : "0");
  } else if (cmd === "P") {
    out.push(processRow(args.slice(4).map(BigInt), ...settingsOf(args)).join(" "));
  } else {  // B or T: width room drafts seed n last eos T K P M draft V, then the p and q tables
    const [width, room, drafts] = args.slice(0, 3).map(Number), seed = BigInt(args[3]);
    let n = BigInt(args[4]);
    const [last, eos] = args.slice(5, 7).map(Number), settings = settingsOf(args.slice(7)), size = Number(args[12]);
    const numbers = args.slice(13).map(BigInt), rows = [];
    for (let i = 0; i < 2 * size + 2; i++) rows.push(numbers.slice(i * size, (i + 1) * size));
    const pRows = rows.slice(0, size + 1).map((r) => processRow(r, ...settings));
    const qRows = args[11] === "processed" ? rows.slice(size + 1).map((r) => processRow(r, ...settings)) : rows.slice(size + 1);
    const k = Math.min(width, room), fraction = ([x, y]) => `${x}/${y}`;
    if (cmd === "B") {
      let tokens;
      [tokens, n] = draft(qRows, last, k, eos, seed, n);
      const [w, h, tau, committed, next] = verifyBlock(pRows, qRows, last, tokens, room, eos, seed, n);
      out.push([tokens.join(" "), w.map(fraction).join(" "), h.map(fraction).join(" "), tau, committed.join(" "), next].join(" | "));
    } else if (tree) {
      out.push(treesCase(tree, pRows, qRows, last, k, room, drafts, eos, seed, n));
    } else {
      let chains;
      [chains, n] = draftChains(qRows, last, k, eos, seed, n, drafts);
      const [tests, committed, next] = verifyTree(pRows, qRows, last, chains, room, eos, seed, n);
      out.push([chains.map((c) => c.join(",")).join(" "), tests.map(([d, c, y, ok]) => `${d}:${c}:${y}:${ok ? 1 : 0}`).join(" "),
                committed.join(" "), next].join(" | "));
    }
  }
}
process.stdout.write(out.join("\n") + "\n");
'''

JAVA_DRIVER = r'''
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

public class Driver {
    static BigInteger[] rational(String t) {
        return t.equals("-") ? null : Arrays.stream(t.split("/")).map(BigInteger::new).toArray(BigInteger[]::new);
    }

    static BigInteger[] numbers(String[] a, int from, int to) {
        return Arrays.stream(a, from, to).map(BigInteger::new).toArray(BigInteger[]::new);
    }

    static BigInteger[] process(BigInteger[] row, String[] a, int at) {  // the settings T K P M at a[at..]
        return SpecdecRows.process(row, rational(a[at]), a[at + 1].equals("-") ? null : Integer.valueOf(a[at + 1]),
                                   rational(a[at + 2]), rational(a[at + 3]));
    }

    static String joined(List<?> xs, String sep) {
        return xs.stream().map(String::valueOf).collect(Collectors.joining(sep));
    }

    static String law(BigInteger[] w) {
        BigInteger total = SpecdecRows.sum(w);
        return Arrays.stream(w).map(x -> x + "/" + total).collect(Collectors.joining(","));
    }

    static String treesCase(String[] tree, BigInteger[][] pRows, BigInteger[][] qRows, int last, int k, int room, int drafts,
                            int eos, long seed, long n) {
        List<SpecdecTrees.Node> nodes = new ArrayList<>();
        if (tree[0].equals("beam")) {
            nodes = SpecdecTrees.beamTree(qRows, last, k, drafts, eos);
        } else if (tree[0].equals("distinct")) {
            int[] branching = tree[2].equals("-") ? new int[] {drafts}
                                                  : Arrays.stream(tree[2].split(",")).mapToInt(Integer::parseInt).toArray();
            n = SpecdecTrees.distinctTree(nodes, qRows, last, k, branching, eos, seed, n);
        } else {
            List<List<Integer>> chains = new ArrayList<>();
            for (int c = 0; c < drafts; c++) {
                chains.add(SpecdecBlock.draft(qRows, last, k, eos, seed, n));
                n += chains.get(c).size();
            }
            nodes = SpecdecTrees.chainsTrie(qRows, chains, last);
        }
        BigInteger[] one = {BigInteger.ONE, BigInteger.ONE};
        SpecdecTrees.Verifier verifier = tree[1].equals("residual") ? SpecdecTrees::residual
            : SpecdecTrees.targetOnly(tree[3].equals("-") ? one : rational(tree[3]), tree[4].equals("-") ? one : rational(tree[4]));
        SpecdecTrees.Result r = SpecdecTrees.walk(pRows, nodes, last, room, eos, seed, n, verifier);
        return nodes.stream().map(o -> o.parent() + ":" + o.depth() + ":" + o.token() + ":"
                                       + (o.law() != null ? law(o.law()) : o.score()[0] + "/" + o.score()[1]))
                    .collect(Collectors.joining(" "))
               + " | " + r.tests().stream().map(t -> t.node() + ":" + t.token() + ":" + t.position() + ":" + (t.accepted() ? 1 : 0)
                                                   + ":" + t.compared()[0] + "/" + t.compared()[1] + ":"
                                                   + (t.detail() instanceof BigInteger[] f ? f[0] + "/" + f[1] : t.detail()))
                                   .collect(Collectors.joining(" "))
               + " | " + (r.correction() == null ? "-" : law(r.correction())) + " | " + joined(r.committed(), " ") + " | " + r.n();
    }

    static String fractions(List<BigInteger[]> xs) {
        return xs.stream().map(f -> f[0] + "/" + f[1]).collect(Collectors.joining(" "));
    }

    public static void main(String[] argv) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            String[] a = line.trim().split(" "), tree = null;
            if (a[0].equals("G")) {  // shape verify branching single acc, then as T
                tree = Arrays.copyOfRange(a, 1, 6);
                String[] rest = Arrays.copyOfRange(a, 5, a.length);
                rest[0] = "G";
                a = rest;
            }
            if (a[0].equals("D")) {
                long seed = Long.parseLong(a[1]), n = Long.parseLong(a[2]);
                out.append((long) (SpecdecPrimitives.nextDouble(seed, n) * 0x1.0p53)).append(' ')
                   .append(SpecdecPrimitives.hex16(SpecdecPrimitives.splitmix64(seed, n))).append('\n');
            } else if (a[0].equals("S")) {
                out.append(SpecdecPrimitives.sample(numbers(a, 3, a.length), new BigInteger(a[2]), Double.parseDouble(a[1])))
                   .append('\n');
            } else if (a[0].equals("A")) {
                BigInteger[] v = numbers(a, 2, 6);
                out.append(SpecdecPrimitives.accepts(Double.parseDouble(a[1]), v[0], v[1], v[2], v[3]) ? "1" : "0").append('\n');
            } else if (a[0].equals("P")) {
                out.append(joined(Arrays.asList(process(numbers(a, 5, a.length), a, 1)), " ")).append('\n');
            } else {  // B or T: width room drafts seed n last eos T K P M draft V, then the p and q tables
                int width = Integer.parseInt(a[1]), room = Integer.parseInt(a[2]), drafts = Integer.parseInt(a[3]);
                long seed = Long.parseLong(a[4]), n = Long.parseLong(a[5]);
                int last = Integer.parseInt(a[6]), eos = Integer.parseInt(a[7]), size = Integer.parseInt(a[13]);
                BigInteger[][] pRows = new BigInteger[size + 1][], qRows = new BigInteger[size + 1][];
                for (int i = 0; i <= size; i++) {
                    pRows[i] = process(numbers(a, 14 + i * size, 14 + (i + 1) * size), a, 8);
                    qRows[i] = numbers(a, 14 + (size + 1 + i) * size, 14 + (size + 2 + i) * size);
                    if (a[12].equals("processed")) qRows[i] = process(qRows[i], a, 8);
                }
                int k = Math.min(width, room);
                if (a[0].equals("B")) {
                    List<Integer> tokens = SpecdecBlock.draft(qRows, last, k, eos, seed, n);
                    SpecdecBlock.Result r = SpecdecBlock.verifyBlock(pRows, qRows, last, tokens, room, eos, seed, n + tokens.size());
                    out.append(joined(tokens, " ")).append(" | ").append(fractions(r.w())).append(" | ").append(fractions(r.h()))
                       .append(" | ").append(r.tau()).append(" | ").append(joined(r.committed(), " ")).append(" | ").append(r.n())
                       .append('\n');
                } else if (tree != null) {
                    out.append(treesCase(tree, pRows, qRows, last, k, room, drafts, eos, seed, n)).append('\n');
                } else {
                    List<List<Integer>> chains = new ArrayList<>();
                    for (int c = 0; c < drafts; c++) {
                        chains.add(SpecdecBlock.draft(qRows, last, k, eos, seed, n));
                        n += chains.get(c).size();
                    }
                    SpecdecTree.Result r = SpecdecTree.verifyTree(pRows, qRows, last, chains, room, eos, seed, n);
                    out.append(chains.stream().map(c -> joined(c, ",")).collect(Collectors.joining(" "))).append(" | ")
                       .append(r.tests().stream().map(t -> t[0] + ":" + t[1] + ":" + t[2] + ":" + t[3]).collect(Collectors.joining(" ")))
                       .append(" | ").append(joined(r.committed(), " ")).append(" | ").append(r.n()).append('\n');
                }
            }
        }
        System.out.print(out);
    }
}
'''

C_DRIVER = r'''
#include <stdlib.h>
#include <string.h>

static char *next_token(void) { return strtok(NULL, " \n"); }

static unsigned long rational(unsigned long *den) {  /* "num/den" or "-" (den = 0) */
    char *t = next_token(), *slash = strchr(t, '/');
    *den = slash ? strtoul(slash + 1, NULL, 10) : 0;
    return slash ? strtoul(t, NULL, 10) : 0;
}

static void settings(sampling_t *s) {
    s->t_num = rational(&s->t_den);
    char *k = next_token();
    s->k = strcmp(k, "-") ? atoi(k) : 0;
    s->p_num = rational(&s->p_den);
    s->m_num = rational(&s->m_den);
}

static void print_fractions(mpz_t *num, mpz_t *den, int k) {
    for (int i = 0; i < k; i++) gmp_printf("%s%Zd/%Zd", i ? " " : "", num[i], den[i]);
}

static void print_ints(const int *xs, int count, const char *sep) {
    for (int i = 0; i < count; i++) printf("%s%d", i ? sep : "", xs[i]);
}

static void print_law(mpz_t *w, int size) {
    mpz_t total;
    mpz_init(total);
    sum_of(total, w, size);
    for (int y = 0; y < size; y++) gmp_printf("%s%Zd/%Zd", y ? "," : "", w[y], total);
    mpz_clear(total);
}

/* One G case: the tree of the shape, walked by the verifier; prints nodes | tests | correction | committed | next. */
static void trees_case(const char *shape, const char *verify, const char *branch, const thresholds_t *limits,
                       mpz_t **p_rows, mpz_t **q_rows, int size, int last, int k, int room, int drafts, int eos,
                       uint64_t seed, uint64_t n) {
    static node_t nodes[MAX_NODES];
    static tree_test_t tests[MAX_NODES];
    int count, tested, corrected, committed[MAX_WIDTH + 1], branching[16], levels = 0;
    for (const char *b = branch; *b != '-' && *b; b += *b == ',') branching[levels++] = (int)strtol(b, (char **)&b, 10);
    if (strcmp(shape, "beam") == 0) {
        count = beam_tree(nodes, q_rows, size, last, k, drafts, eos);
    } else if (strcmp(shape, "distinct") == 0) {
        if (levels == 0) branching[levels++] = drafts;
        count = distinct_tree(nodes, q_rows, size, last, k, branching, levels, eos, seed, &n);
    } else {
        int chains[8][MAX_WIDTH], lengths[8];
        for (int c = 0; c < drafts; c++) lengths[c] = draft(q_rows, size, last, k, eos, seed, &n, chains[c]);
        count = chains_trie(nodes, q_rows, size, chains, lengths, drafts, last);
    }
    mpz_t r[size];
    for (int y = 0; y < size; y++) mpz_init(r[y]);
    int done = walk(p_rows, size, nodes, count, last, room, eos, seed, &n, strcmp(verify, "residual") ? target_only : residual,
                    limits, tests, &tested, committed, &corrected, r);
    for (int i = 0; i < count; i++) {
        printf("%s%d:%d:%d:", i ? " " : "", nodes[i].parent, nodes[i].depth, nodes[i].token);
        if (nodes[i].law) print_law(nodes[i].law, size);
        else gmp_printf("%Zd/%Zd", nodes[i].score_num, nodes[i].score_den);
    }
    printf(" |");
    for (int i = 0; i < tested; i++) {
        tree_test_t *t = &tests[i];
        gmp_printf(" %d:%d:%llu:%d:%Zd/%Zd:", t->node, t->token, (unsigned long long)t->position, t->accepted, t->num, t->den);
        if (strcmp(verify, "residual") == 0) gmp_printf("%Zd/%Zd", t->s_num, t->s_den);
        else printf("%s", t->by);
        mpz_clears(t->num, t->den, t->s_num, t->s_den, NULL);
    }
    printf(" | ");
    if (corrected) print_law(r, size);
    else printf("-");
    printf(" | ");
    print_ints(committed, done, " ");
    printf(" | %llu\n", (unsigned long long)n);
    for (int y = 0; y < size; y++) mpz_clear(r[y]);
    free_nodes(nodes, count, size);
}

int main(void) {
    static char line[1 << 20];
    while (fgets(line, sizeof line, stdin)) {
        char *cmd = strtok(line, " \n");
        if (!cmd) continue;
        if (strcmp(cmd, "D") == 0) {
            uint64_t seed = strtoull(next_token(), NULL, 10), n = strtoull(next_token(), NULL, 10);
            char hex[17];
            hex16(splitmix64(seed, n), hex);
            printf("%llu %s\n", (unsigned long long)(next_double(seed, n) * 0x1.0p53), hex);
        } else if (strcmp(cmd, "S") == 0) {
            double u = strtod(next_token(), NULL);
            uint64_t total = strtoull(next_token(), NULL, 10), w[64];
            int size = 0;
            for (char *t; (t = next_token()); ) w[size++] = strtoull(t, NULL, 10);
            printf("%d\n", sample(w, size, total, u));
        } else if (strcmp(cmd, "A") == 0) {
            double u = strtod(next_token(), NULL);
            uint64_t v[4];
            for (int i = 0; i < 4; i++) v[i] = strtoull(next_token(), NULL, 10);
            printf("%d\n", accepts(u, v[0], v[1], v[2], v[3]));
        } else if (strcmp(cmd, "P") == 0) {
            sampling_t s;
            settings(&s);
            mpz_t w[64];
            int size = 0;
            for (char *t; (t = next_token()); ) mpz_init_set_str(w[size++], t, 10);
            process(w, size, &s);
            for (int i = 0; i < size; i++) gmp_printf("%s%Zd", i ? " " : "", w[i]);
            printf("\n");
            for (int i = 0; i < size; i++) mpz_clear(w[i]);
        } else {  /* B, T or G (after shape verify branching single acc): width room drafts seed n last eos T K P M draft V, then the tables */
            char *shape = NULL, *verify = NULL, *branch = NULL;
            thresholds_t limits;
            if (*cmd == 'G') {
                shape = next_token(), verify = next_token(), branch = next_token();
                limits.single_num = rational(&limits.single_den);
                limits.acc_num = rational(&limits.acc_den);
                if (!limits.single_den) limits.single_num = limits.single_den = 1;
                if (!limits.acc_den) limits.acc_num = limits.acc_den = 1;
            }
            int width = atoi(next_token()), room = atoi(next_token()), drafts = atoi(next_token());
            uint64_t seed = strtoull(next_token(), NULL, 10), n = strtoull(next_token(), NULL, 10);
            int last = atoi(next_token()), eos = atoi(next_token());
            sampling_t s;
            settings(&s);
            int processed = strcmp(next_token(), "processed") == 0, size = atoi(next_token());
            mpz_t cells[2 * (size + 1)][size], *p_rows[size + 1], *q_rows[size + 1];
            for (int i = 0; i < 2 * (size + 1); i++) {
                for (int y = 0; y < size; y++) mpz_init_set_str(cells[i][y], next_token(), 10);
                if (i <= size || processed) process(cells[i], size, &s);
                if (i <= size) p_rows[i] = cells[i]; else q_rows[i - size - 1] = cells[i];
            }
            int k = width < room ? width : room, tokens[MAX_WIDTH], committed[MAX_WIDTH * 8 + 1], count;
            if (*cmd == 'G') {
                trees_case(shape, verify, branch, &limits, p_rows, q_rows, size, last, k, room, drafts, eos, seed, n);
            } else if (*cmd == 'B') {
                mpz_t w_num[MAX_WIDTH], w_den[MAX_WIDTH], h_num[MAX_WIDTH], h_den[MAX_WIDTH];
                for (int i = 0; i < MAX_WIDTH; i++) mpz_inits(w_num[i], w_den[i], h_num[i], h_den[i], NULL);
                int drafted = draft(q_rows, size, last, k, eos, seed, &n, tokens);
                int tau = verify_block(p_rows, q_rows, size, last, tokens, drafted, room, eos, seed, &n, w_num, w_den,
                                       h_num, h_den, committed, &count);
                print_ints(tokens, drafted, " ");
                printf(" | ");
                print_fractions(w_num, w_den, drafted);
                printf(" | ");
                print_fractions(h_num, h_den, drafted);
                printf(" | %d | ", tau);
                print_ints(committed, count, " ");
                printf(" | %llu\n", (unsigned long long)n);
                for (int i = 0; i < MAX_WIDTH; i++) mpz_clears(w_num[i], w_den[i], h_num[i], h_den[i], NULL);
            } else {
                int chains[8][MAX_WIDTH], lengths[8];
                test_t tests[8 * MAX_WIDTH];
                for (int c = 0; c < drafts; c++) lengths[c] = draft(q_rows, size, last, k, eos, seed, &n, chains[c]);
                int tested = verify_tree(p_rows, q_rows, size, last, chains, lengths, drafts, room, eos, seed, &n, tests,
                                         committed, &count);
                for (int c = 0; c < drafts; c++) {
                    printf(c ? " " : "");
                    print_ints(chains[c], lengths[c], ",");
                }
                printf(" |");
                for (int i = 0; i < tested; i++)
                    printf(" %d:%d:%d:%d", tests[i].depth, tests[i].chain, tests[i].token, tests[i].accepted);
                printf(" | ");
                print_ints(committed, count, " ");
                printf(" | %llu\n", (unsigned long long)n);
            }
            for (int i = 0; i < 2 * (size + 1); i++)
                for (int y = 0; y < size; y++) mpz_clear(cells[i][y]);
        }
    }
    return 0;
}
'''


def commands() -> tuple[list[str], list[str]]:
    """The input lines and the expected output lines: the fixture's draws (JDK values, hex from
    the engine), then sample and accepts on random inputs and on the boundaries (expected from
    the engine's ``sample`` and ``accepts``)."""
    lines, expected = [], []
    for seed, values in FIXTURE["seeds"].items():
        for n, u in enumerate(values):
            lines.append(f"D {seed} {n}")
            expected.append(f"{int(u * 2 ** 53)} {draw(int(seed), n).hex}")
    rng = random.Random(13)
    for i in range(600):
        size = rng.randint(2, 8)
        weights = [rng.choice([0, rng.randint(1, 10 ** rng.randint(1, 12))]) for _ in range(size)]
        if not any(weights):
            weights[-1] = 1
        total = sum(weights)
        if i % 3 == 0:  # u exactly on a cumulative boundary: u < c must be strict
            total = 2 ** rng.randint(3, 40)
            cuts = sorted(rng.randint(0, total) for _ in range(size - 1))
            weights = [b - a for a, b in zip([0] + cuts, cuts + [total])]
            m = (sum(weights[:rng.randint(1, size)]) * 2 ** 53 // total) if i % 2 else 0
            m = min(m, 2 ** 53 - 1)
        else:
            m = draw(rng.randint(0, 2 ** 53 - 1), rng.randint(0, 10 ** 6)).mantissa
        u = m * 2.0 ** -53
        lines.append(f"S {u!r} {total} " + " ".join(map(str, weights)))
        expected.append(str(sample(Dist(tuple(weights), total), Draw(0, m, 0))))
    for i in range(600):
        b, d = rng.randint(1, 2 ** 31), rng.randint(1, 2 ** 31)
        a, c = rng.randint(0, b), rng.randint(1, d)
        if i % 4 == 0:  # u * q == p exactly (u = k / 2^23, q = 1/2, p = k / 2^24): not accepted, the test is strict
            k = rng.randint(0, 2 ** 23 - 1)
            m, a, b, c, d = k * 2 ** 30, k, 2 ** 24, 1, 2
        else:
            m = draw(rng.randint(0, 10 ** 9), i).mantissa
        u = m * 2.0 ** -53
        lines.append(f"A {u!r} {a} {b} {c} {d}")
        ok = accepts(Draw(0, m, 0), Dist((a, b - a), b), Dist((c, d - c), d), 0)
        expected.append("1" if ok else "0")
    return lines, expected


# ---------------------------------------------------------------- SPEC 9, 10, 11: the cases

def rational(x) -> str:
    """A setting as the drivers read it: ``num/den`` of the decimal written, ``-`` when unset."""
    if x is None:
        return "-"
    f = R.exact(x)
    return f"{f.numerator}/{f.denominator}"


def weights(row) -> list[int]:
    """An exact row (Fractions) as integer weights over a common denominator."""
    den = math.lcm(*(f.denominator for f in row))
    return [int(f * den) for f in row]


def normalised(numbers) -> list[Fraction]:
    numbers = [int(x) for x in numbers]
    return [Fraction(x, sum(numbers)) for x in numbers]


ROW_SETTINGS = [
    {"temperature": 0.5, "top_k": 2, "top_p": 0.8},  # SPEC 9's worked example
    {"temperature": 0}, {"temperature": 1}, {"temperature": 0.25}, {"temperature": 2}, {"temperature": 0.7},
    {"temperature": 1.3}, {"temperature": 0.05}, {"temperature": 20}, {"temperature": 0.15}, {"temperature": 3},
    {"top_k": 1}, {"top_k": 2}, {"top_k": 64}, {"top_p": 0.8}, {"top_p": 1}, {"top_p": 0.5}, {"top_p": 0.01},
    {"min_p": 0}, {"min_p": 0.2}, {"min_p": 1}, {"temperature": 0.7, "top_p": 0.9}, {"temperature": 2, "min_p": 0.2},
    {"temperature": 0.9, "top_k": 3, "top_p": 0.75, "min_p": 0.1},
]
"""SPEC 9 settings for the row cases: every step alone and in combination, integer and other
temperatures, the boundaries of each bound."""


def row_cases() -> tuple[list[str], list[list[Fraction]]]:
    """``P`` lines (SPEC 9: one row processed) and the engine's ``process`` of each, normalised.
    Rows: the built-in ones, ties, zeros and random ones of 2-8 entries."""
    rng = random.Random(9)
    rows = [list(R.TOY.start), *R.TOY.next.values(), list(R.BIASED.start), [Fraction(1, 4)] * 4,
            [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4), Fraction(0)], [Fraction(1)] + [Fraction(0)] * 2]
    for f in (2 ** 53 + 1, 2 ** 53 + 3):  # T = 2: the square root f / 2^54 is a tie between two float64s
        rows.append([Fraction(f * f, 2 ** 108), 1 - Fraction(f * f, 2 ** 108)])
    for _ in range(60):
        size = rng.randint(2, 8)
        rows.append(R.normalised(rng.choice([0, rng.randint(1, 10 ** rng.randint(1, 6))]) or 1 for _ in range(size)))
    lines, expected = [], []
    for row, settings in itertools.product(rows, ROW_SETTINGS):
        w = weights(row)
        lines.append(" ".join(["P", rational(settings.get("temperature")), str(settings.get("top_k", "-")),
                               rational(settings.get("top_p")), rational(settings.get("min_p")), *map(str, w)]))
        done = process(Dist.of_weights(w), Sampling.of(**settings))
        expected.append([Fraction(x, done.total) for x in done.weights])
    return lines, expected


def run_configs():
    """Configs of modes block and tree for ``POST /v1/runs``: toy with both drafts and custom models
    (2-5 tokens, an EOS or none), widths 1-5, limits 1-12, D = 1..4 in mode tree, many seeds; and
    SPEC 9 settings too when the service takes ``sampling``."""
    rng = random.Random(11)
    labels = ["A", "B", "C", "eos", "x y"]

    def table(vocab):
        def row():
            cuts = sorted(rng.randint(0, 100) for _ in range(len(vocab) - 1))
            return [(b - a) / 100 for a, b in zip([0] + cuts, cuts + [100])]
        return {"vocab": vocab, "start": row(), "next": {label: row() for label in vocab}}

    for i in range(48):
        for mode in ("block", "tree"):
            config = {"mode": mode, "width": 1 + i % 5, "seed": rng.randint(0, 2 ** 53 - 1),
                      "limit": (8, 1, 3, 5, 12, 2)[i % 6], "drafts": 1 + i % 4}
            if i % 3 == 2:
                vocab = labels[:rng.randint(2, 5)]
                config.update(target=table(vocab), draft=table(vocab), eos=rng.choice([None, *vocab]))
            else:
                config["draft"] = ("aligned", "biased")[i % 2]
            yield config
    yield {"draft": "biased", "mode": "block", "width": 2, "seed": 4}  # SPEC 10's worked example
    yield {"draft": "biased", "mode": "tree", "width": 2, "drafts": 2, "seed": 16}  # SPEC 11's


def tables(config) -> tuple[list, list]:
    """The target and draft tables as the drivers read them: row 0 after the empty prefix, row
    c + 1 after token c, each as integer weights."""
    target, draft = R.model(config.get("target", "toy")), R.model(config["draft"])
    return tuple([weights(m.start)] + [weights(m.next[label]) for label in m.vocab] for m in (target, draft))


def case_line(config: dict, prefix: list, position: int) -> str:
    """The ``B``, ``T`` or ``G`` line of the block of ``config`` after ``prefix`` from ``position``
    (``G``: a SPEC 12 tree, its shape, verifier, branching and thresholds first)."""
    vocab = R.model(config.get("target", "toy")).vocab
    index = {label: i for i, label in enumerate(vocab)}
    target, draft = tables(config)
    settings = config.get("sampling") or {}
    head = [config.get("width", 3), config.get("limit", 8) - len(prefix), config.get("drafts", 1), config["seed"], position,
            index[prefix[-1]] if prefix else -1, index[config["eos"]] if config.get("eos") is not None else -1,
            rational(settings.get("temperature")), settings.get("top_k", "-"), rational(settings.get("top_p")),
            rational(settings.get("min_p")), settings.get("draft", "processed"), len(vocab)]
    numbers = [x for row in target + draft for x in row]
    tree = config.get("tree") or {}
    if tree.get("shape", "chains") != "chains" or tree.get("verify", "residual") != "residual":
        levels = ",".join(map(str, tree["branching"])) if "branching" in tree else "-"
        return " ".join(map(str, ["G", tree.get("shape", "chains"), tree.get("verify", "residual"), levels,
                                  rational(tree.get("threshold_single")), rational(tree.get("threshold_acc")), *head, *numbers]))
    return " ".join(map(str, ["B" if config["mode"] == "block" else "T", *head, *numbers]))


def block_cases(client, sampling=None) -> tuple[list[str], list[str]]:
    """``B`` and ``T`` lines, one per block of each run's trace, and what the trace says the
    snippet must print: the proposal, w and h exactly, tau, the tests, committed, next position."""
    lines, expected = [], []
    for config in run_configs():
        if sampling is not None:
            config = {**config, "sampling": sampling}
        response = client.post("/v1/runs", json={"config": config})
        assert response.status_code == 200, response.get_json()
        trace = response.get_json()
        config = trace["config"]
        index = {label: i for i, label in enumerate(R.model(config["target"]).vocab)}
        for block in trace["blocks"]:
            lines.append(case_line(config, block["prefix"], block["position"]))
            committed = " ".join(str(index[t]) for t in block["committed"])
            if config["mode"] == "block":
                tests = block["verification"]
                expected.append(" | ".join([
                    " ".join(str(index[t]) for t in block["proposal"]["tokens"]),
                    " ".join(t["weight_exact"] for t in tests), " ".join(t["threshold_exact"] for t in tests),
                    str(block["tau"]), committed, str(block["next_position"])]))
            else:
                expected.append(" | ".join([
                    " ".join(",".join(str(index[t]) for t in chain) for chain in block["proposal"]["chains"]),
                    " ".join(f"{t['depth']}:{t['chain']}:{index[t['token']]}:{int(t['accepted'])}"
                             for t in block["verification"]),
                    committed, str(block["next_position"])]))
    return lines, expected


REFERENCE_SAMPLINGS = [{"temperature": 0.5, "top_k": 2, "top_p": 0.8}, {"temperature": 0.7, "top_p": 0.9},
                       {"temperature": 2, "min_p": 0.2}, {"temperature": 1.3, "draft": "raw"}, {"temperature": 0}]
"""SPEC 9 settings under which the block and tree snippets are also held against
tests/spec_reference.py (a second opinion beside the service's traces)."""


def reference_cases() -> tuple[list[str], list[str]]:
    """``B`` and ``T`` lines for the runs of ``run_configs`` under ``REFERENCE_SAMPLINGS``, with
    what the second implementation (tests/spec_reference.py) commits: the proposal, tau (its
    accepted count), committed and next position; w, h and the tree's tests are ``*`` (any)."""
    lines, expected = [], []
    for config, sampling in itertools.product(run_configs(), REFERENCE_SAMPLINGS):
        config = {"target": "toy", "eos": None, **config, "sampling": sampling}
        index = {label: i for i, label in enumerate(R.model(config["target"]).vocab)}
        prefix = []
        for block in R.run(config).blocks:
            lines.append(case_line(config, prefix, block.position))
            committed = " ".join(str(index[t]) for t in block.committed)
            chains = [" ".join(str(index[t]) for t in chain) for chain in block.proposal]
            end = str(block.position + block.counters["draws"])
            if config["mode"] == "block":
                expected.append(" | ".join([chains[0], "*", "*", str(block.counters["accepted"]), committed, end]))
            else:
                expected.append(" | ".join([" ".join(c.replace(" ", ",") for c in chains), "*", committed, end]))
            prefix += block.committed
    return lines, expected


def same_block(got: str, want: str) -> bool:
    """A driver's answer against the trace's, rationals compared as values (``10/16`` is ``5/8``),
    a field ``*`` matching anything."""
    got_fields, want_fields = got.split("|"), want.split("|")
    if len(got_fields) != len(want_fields):
        return False
    for g, w in zip(got_fields, want_fields):
        if w.strip() == "*":
            continue
        if [Fraction(x) for x in g.split()] != [Fraction(x) for x in w.split()] if "/" in g + w else g.split() != w.split():
            return False
    return True


LINES, EXPECTED = commands()
ROW_LINES, ROW_EXPECTED = row_cases()


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


TRACE_SAMPLINGS = ROW_SETTINGS[:6] + [{"temperature": 0.7, "draft": "raw"}]
"""SPEC 9 settings the block and tree traces are also taken under (and without ``sampling``)."""


@pytest.fixture(scope="module")
def trace_cases(client):
    """The block and tree cases from the service's traces: without ``sampling`` and under each of
    ``TRACE_SAMPLINGS``."""
    lines, expected = block_cases(client)
    for settings in TRACE_SAMPLINGS:
        more = block_cases(client, settings)
        lines += more[0]
        expected += more[1]
    return lines, expected


def build(language: str, root: Path) -> list[str]:
    """The program of ``language``: the primitives, the four parts and the driver, compiled in
    ``root``; returns its command line (or skips when the language's tools are missing)."""
    root.mkdir()
    code = [snippet(language)] + [snippet(language, part) for part in PARTS]
    if language == "python":
        (root / "program.py").write_text("\n".join(code) + PY_DRIVER, encoding="utf-8")
        return [sys.executable, str(root / "program.py")]
    if language == "javascript":
        if shutil.which("node") is None:
            pytest.skip("node (Node.js) is not installed (bash .ci/run installs it): the JavaScript snippets cannot run")
        (root / "program.js").write_text("\n".join(code) + JS_DRIVER, encoding="utf-8")
        return [shutil.which("node"), str(root / "program.js")]
    if language == "java":
        if shutil.which("javac") is None or shutil.which("java") is None:
            pytest.skip("javac/java (a JDK) is not installed (bash .ci/run installs it): the Java snippets cannot be compiled")
        names = ["SpecdecPrimitives", "SpecdecRows", "SpecdecBlock", "SpecdecTree", "SpecdecTrees"]
        for name, text in zip(names, code):
            (root / f"{name}.java").write_text(text, encoding="utf-8")
        (root / "Driver.java").write_text(JAVA_DRIVER, encoding="utf-8")
        compiled = subprocess.run([shutil.which("javac"), *(f"{n}.java" for n in names), "Driver.java"],
                                  capture_output=True, text=True, cwd=root, timeout=300)
        assert compiled.returncode == 0, compiled.stderr
        return [shutil.which("java"), "-cp", str(root), "Driver"]
    if shutil.which("cc") is None:
        pytest.skip("cc (a C compiler) is not installed (bash .ci/run installs it): the C snippets cannot be compiled")
    probe = subprocess.run([shutil.which("cc"), "-E", "-x", "c", "-"], input="#include <gmp.h>\n", capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("GMP's headers (libgmp-dev) are not installed (bash .ci/run installs them): the C snippets cannot be compiled")
    (root / "program.c").write_text("\n".join(code) + C_DRIVER, encoding="utf-8")
    compiled = subprocess.run([shutil.which("cc"), "-std=gnu11", "-O1", "-Wall", "-Werror", "-o", "program", "program.c",
                               "-lgmp"], capture_output=True, text=True, cwd=root, timeout=300)
    assert compiled.returncode == 0, compiled.stderr
    return [str(root / "program")]


LANGUAGES = ("python", "javascript", "java", "c")


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """Each language's program, built once for the module (a language without its tools skips)."""
    built = {}

    def get(language):
        if language not in built:
            try:
                built[language] = build(language, tmp_path_factory.mktemp("implementing") / language)
            except pytest.skip.Exception as skipped:
                built[language] = skipped
        if isinstance(built[language], pytest.skip.Exception):
            raise built[language]
        return built[language]
    return get


def run(argv: list[str], lines: list[str]) -> list[str]:
    """The program's answer lines to ``lines``, one each."""
    result = subprocess.run(argv, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    got = result.stdout.split("\n")[:-1]
    assert len(got) == len(lines), (len(got), len(lines), result.stderr[-2000:])
    return got


def test_the_commands_cover_the_fixture_and_both_decisions():
    assert sum(line.startswith("D ") for line in LINES) == 4 * FIXTURE["count"] == 4000
    samples = [e for line, e in zip(LINES, EXPECTED) if line.startswith("S ")]
    decisions = [e for line, e in zip(LINES, EXPECTED) if line.startswith("A ")]
    assert len(set(samples)) >= 5 and set(decisions) == {"0", "1"}
    assert EXPECTED[0] == f"{int(0.8833108082136426 * 2 ** 53)} {draw(0, 0).hex}"  # SPEC section 2 test vector


@pytest.mark.parametrize("language", LANGUAGES)
def test_primitives(programs, language):
    got = run(programs(language), LINES)
    wrong = [(LINES[i], EXPECTED[i], g) for i, g in enumerate(got) if g != EXPECTED[i]]
    assert not wrong, f"{len(wrong)} wrong answers, first: {wrong[:3]}"


def test_the_row_cases_hold_the_worked_example_of_section_9():
    # SPEC 9: toy and biased, T = 0.5, top_k 2, top_p 0.8: the engine's figures the snippets must give
    example = [e for line, e in zip(ROW_LINES, ROW_EXPECTED) if line.startswith("P 1/2 2 4/5 - ")]
    assert example[:5] == [[Fraction(25, 34), Fraction(9, 34), 0], [0, 1, 0], [Fraction(121, 157), 0, Fraction(36, 157)],
                           [Fraction(1, 5), 0, Fraction(4, 5)], [1, 0, 0]]
    assert len(ROW_LINES) == 70 * len(ROW_SETTINGS)


@pytest.mark.parametrize("language", LANGUAGES)
def test_row_processing(programs, language):
    # SPEC 9: every row case as the engine's process gives it (values: the weights normalised)
    got = run(programs(language), ROW_LINES)
    wrong = [(ROW_LINES[i][:80], ROW_EXPECTED[i], g) for i, g in enumerate(got) if normalised(g.split()) != ROW_EXPECTED[i]]
    assert not wrong, f"{len(wrong)} of {len(got)} rows differ, first: {wrong[:3]}"


def test_the_trace_cases_cover_both_modes_and_their_branches(trace_cases):
    lines, expected = trace_cases
    block = [e.split(" | ") for line, e in zip(lines, expected) if line.startswith("B ")]
    tree = [e.split(" | ") for line, e in zip(lines, expected) if line.startswith("T ")]
    assert len(block) >= 100 and len(tree) >= 100
    taus = {(int(b[3]), len(b[0].split())) for b in block}
    assert {(0, 2), (1, 2), (2, 2), (0, 1), (1, 1)} <= taus  # tau = 0, in between and k
    assert any(t[1].count(":0") >= 2 for t in tree)  # a depth with two rejected candidates
    assert {len(t[0].split()) for t in tree} == {1, 2, 3, 4}  # D = 1..4 chains
    # the worked examples (SPEC 10 and 11) are cases: their answers as SPEC states them
    assert "0 1 | 5/8 1 | 4/9 1 | 2 | 0 1 0 | 5" in expected
    assert "0,0 1,0 | 1:1:0:0 1:2:1:1 2:2:0:1 | 1 0 0 | 8" in expected
    # every SPEC 9 setting of TRACE_SAMPLINGS is there, in both modes (the rows processed by the drivers)
    heads = {(line[0], " ".join(line.split()[8:13])) for line in lines}
    assert {("B", "- - - - processed"), ("T", "1/2 2 4/5 - processed"), ("B", "7/10 - - - raw"),
            ("T", "0/1 - - - processed")} <= heads and len(heads) == 2 * (1 + len(TRACE_SAMPLINGS))


REFERENCE_LINES, REFERENCE_EXPECTED = reference_cases()


def test_the_reference_cases_cover_each_setting_and_both_modes():
    heads = [" ".join(line.split()[8:13]) for line in REFERENCE_LINES]
    assert {h for h in heads} == {"1/2 2 4/5 - processed", "7/10 - 9/10 - processed", "2/1 - - 1/5 processed",
                                  "13/10 - - - raw", "0/1 - - - processed"}
    assert {line[0] for line in REFERENCE_LINES} == {"B", "T"} and len(REFERENCE_LINES) >= 500
    # T = 0 makes the toy's target a point mass (A after the empty prefix and after B, B after A): every
    # toy block at T = 0 commits only A and B
    toy = " ".join(map(str, [x for row in tables({"draft": "biased"})[0] for x in row]))
    zero = [e for line, e in zip(REFERENCE_LINES, REFERENCE_EXPECTED) if " 0/1 - - - processed 3 " + toy in line]
    assert len(zero) >= 50 and all(set(e.split(" | ")[-2].split()) <= {"0", "1"} for e in zero)


@pytest.mark.parametrize("language", LANGUAGES)
def test_block_and_tree_verification_with_sampling(programs, language):
    # SPEC 9 + 10 + 11: the driver processes the tables with the snippet's own processing; the
    # proposals, tau, committed tokens and next positions are the second implementation's
    got = run(programs(language), REFERENCE_LINES)
    wrong = [(REFERENCE_LINES[i][:60], REFERENCE_EXPECTED[i], g) for i, g in enumerate(got)
             if not same_block(g, REFERENCE_EXPECTED[i])]
    assert not wrong, f"{len(wrong)} of {len(got)} blocks differ, first: {wrong[:3]}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_block_and_tree_verification(programs, trace_cases, language):
    # SPEC 10 and 11: each block of the service's traces: proposal, w, h, tau, tests, committed, next position
    lines, expected = trace_cases
    got = run(programs(language), lines)
    wrong = [(lines[i][:60], expected[i], g) for i, g in enumerate(got) if not same_block(g, expected[i])]
    assert not wrong, f"{len(wrong)} of {len(got)} blocks differ, first: {wrong[:3]}"


# ---------------------------------------------------------------- SPEC 12: draft trees and tree verifiers

TREE_SETTINGS = [{"shape": "chains", "verify": "target_only"}, {"shape": "distinct", "verify": "residual"},
                 {"shape": "distinct", "verify": "target_only"}, {"shape": "beam", "verify": "target_only"},
                 {"shape": "chains", "verify": "residual"}]
"""Every shape x verifier SPEC 12 allows (chains + residual is SPEC 11's tree, a ``T`` case)."""

BRANCHING = [[2, 1], [1, 2, 2], [3], [4, 1, 2, 1], [1], [2, 2, 2, 2]]
THRESHOLDS = [{"threshold_acc": 0.5}, {"threshold_single": 0.3}, {"threshold_acc": 0.25, "threshold_single": 0.6},
              {"threshold_acc": 0.8}, {"threshold_acc": 1, "threshold_single": 1}]

TREE_EXAMPLES = [  # SPEC 12.6's worked examples (target toy, draft biased, width 2, drafts 2)
    ({"shape": "chains", "verify": "target_only"}, 16), ({"shape": "beam", "verify": "target_only"}, 3),
    ({"shape": "beam", "verify": "target_only"}, 0), ({"shape": "beam", "verify": "target_only", "threshold_acc": 0.5}, 1),
    ({"shape": "distinct", "verify": "residual", "branching": [2, 1]}, 16)]


def tree_configs():
    """Configs of mode tree with setting ``tree`` for ``POST /v1/runs``: every shape x verifier,
    widths 1-4, D = 1..4, branching lists (and the default), thresholds 1 and below 1, toy with
    both drafts and custom models with an EOS or none, limits 1-12, a SPEC 9 setting on some;
    then SPEC 12.6's worked examples."""
    rng = random.Random(29)
    labels = ["A", "B", "C", "eos", "x y"]

    def row(size):
        cuts = sorted(rng.randint(0, 20) for _ in range(size - 1))
        return [(b - a) / 20 for a, b in zip([0] + cuts, cuts + [20])]  # coarse: ties and zeros are common

    for i in range(32):
        for setting in TREE_SETTINGS:
            tree = dict(setting)
            if tree["shape"] == "distinct" and i % 4:
                tree["branching"] = BRANCHING[(i + len(tree["verify"])) % len(BRANCHING)]
            if tree["verify"] == "target_only" and i % 3:
                tree.update(THRESHOLDS[(i + len(tree["shape"])) % len(THRESHOLDS)])
            config = {"mode": "tree", "width": 1 + i % 4, "drafts": 1 + (i // 4) % 4, "seed": rng.randint(0, 2 ** 53 - 1),
                      "limit": (8, 1, 3, 5, 12, 2)[i % 6], "tree": tree}
            if i % 3 == 2:
                vocab = labels[:rng.randint(2, 5)]
                model = {"vocab": vocab, "start": row(len(vocab)), "next": {label: row(len(vocab)) for label in vocab}}
                config.update(target=model, draft={**model, "start": row(len(vocab))}, eos=rng.choice([None, *vocab]))
            else:
                config["draft"] = ("aligned", "biased")[i % 2]
            if i % 5 == 4:
                config["sampling"] = ({"temperature": 0.7, "top_p": 0.9}, {"temperature": 1.3, "draft": "raw"})[i % 2]
            yield config
    for tree, seed in TREE_EXAMPLES:
        yield {"draft": "biased", "mode": "tree", "width": 2, "drafts": 2, "seed": seed, "tree": tree}


def tree_expected(config: dict, block: dict) -> str:
    """What a ``G`` line must print for one SPEC 12 block of the service's trace: the nodes
    (parent:depth:token:law, or the beam score), every test in order (node:token:position:
    accepted: r(y):s(y) for residual, acc_j:by for target_only), the correction's law, the
    committed tokens and the next position."""
    index = {label: i for i, label in enumerate(R.model(config["target"]).vocab)}
    nodes = block["proposal"]["nodes"]
    residual = config["tree"].get("verify", "residual") == "residual"
    shown = " ".join(f"{n['parent']}:{n['depth']}:{index[n['token']]}:" + (",".join(n["law_exact"]) if n["law_exact"]
                                                                          else n["score_exact"]) for n in nodes)
    tests = []
    for t in block["verification"]:
        y = index[t["token"]]
        compared = f"{t['r_exact'][y]}:{nodes[t['node'] - 1]['law_exact'][y]}" if residual else f"{t['acc_exact']}:{t['by'] or '-'}"
        tests.append(f"{t['node']}:{y}:{t['draw']['position']}:{int(t['accepted'])}:{compared}")
    correction = "-"
    if block.get("correction"):  # residual: the last residual exactly; target_only: p with the children zeroed (floats)
        correction = ",".join(block["verification"][-1]["residual_exact"] if residual
                              else map(repr, block["correction"]["distribution"]))
    committed = " ".join(str(index[t]) for t in block["committed"])
    return " | ".join([shown, " ".join(tests), correction, committed, str(block["next_position"])])


def same_tree(got: str, want: str) -> bool:
    """A ``G`` answer against the trace's: atom by atom (split at spaces, ``:`` and ``,``), rationals
    as values (``10/20`` is ``1/2``), the trace's floats (the correction of target_only) as the
    float64 of the exact value."""
    got_fields, want_fields = got.split("|"), want.split("|")
    if len(got_fields) != len(want_fields):
        return False
    for g, w in zip(got_fields, want_fields):
        g_atoms, w_atoms = re.split(r"[\s:,]+", g.strip()), re.split(r"[\s:,]+", w.strip())
        if len(g_atoms) != len(w_atoms):
            return False
        for a, b in zip(g_atoms, w_atoms):
            if a == b:
                continue
            try:
                if ("." in b and float(Fraction(a)) != float(b)) or ("." not in b and Fraction(a) != Fraction(b)):
                    return False
            except (ValueError, ZeroDivisionError):
                return False
    return True


def tree_cases(client) -> tuple[list[str], list[str]]:
    """The ``G`` (and, for chains + residual, ``T``) lines of every block of the runs of
    ``tree_configs``, with what the service's traces say each must print."""
    lines, expected = [], []
    for config in tree_configs():
        response = client.post("/v1/runs", json={"config": config})
        assert response.status_code == 200, (config, response.get_json())
        trace = response.get_json()
        config = trace["config"]
        index = {label: i for i, label in enumerate(R.model(config["target"]).vocab)}
        for block in trace["blocks"]:
            lines.append(case_line(config, block["prefix"], block["position"]))
            if lines[-1].startswith("G "):
                expected.append(tree_expected(config, block))
            else:
                expected.append(" | ".join([
                    " ".join(",".join(str(index[t]) for t in chain) for chain in block["proposal"]["chains"]),
                    " ".join(f"{t['depth']}:{t['chain']}:{index[t['token']]}:{int(t['accepted'])}" for t in block["verification"]),
                    " ".join(str(index[t]) for t in block["committed"]), str(block["next_position"])]))
    return lines, expected


@pytest.fixture(scope="module")
def tree_settings_cases(client):
    return tree_cases(client)


def test_the_tree_cases_cover_every_shape_verifier_and_branch(tree_settings_cases):
    lines, expected = tree_settings_cases
    heads = [line.split()[:3] for line in lines if line.startswith("G ")]
    assert {(h[1], h[2]) for h in heads} == {("chains", "target_only"), ("distinct", "residual"), ("distinct", "target_only"),
                                            ("beam", "target_only")}
    assert any(line.startswith("T ") for line in lines) and len(lines) >= 400
    g = [(line.split(), e.split(" | ")) for line, e in zip(lines, expected) if line.startswith("G ")]
    assert {int(f[6]) for f, _ in g} == {1, 2, 3, 4} and {int(f[8]) for f, _ in g} == {1, 2, 3, 4}  # widths and D
    assert {f[3] for f, _ in g} >= {"-", "2,1", "1,2,2", "3", "4,1,2,1", "1", "2,2,2,2"}  # branching lists
    assert {f[4] for f, _ in g} >= {"-", "3/10", "3/5"} and {f[5] for f, _ in g} >= {"-", "1/2", "1/4", "4/5"}  # thresholds
    tests = [t for _, e in g for t in e[1].split()]
    assert any(t.endswith(":single") for t in tests) and any(t.endswith(":acc") for t in tests)
    assert any(t.split(":")[3] == "0" for t in tests) and any(e[2] != "-" for _, e in g)  # rejections, corrections
    assert any(f[13] != "-" for f, _ in g) and any(f[17] == "raw" for f, _ in g)  # SPEC 9 settings, with either draft
    # SPEC 12.6's worked examples, as the SPEC states them (A = 0, B = 1, C = 2)
    walks = {" | ".join(e[1:]) for _, e in g}
    assert "1:0:4:0:1/2:- 3:1:4:1:4/5:acc 4:0:5:1:11/20:acc | - | 1 0 1 | 7" in walks  # chains + target_only, seed 16
    assert "1:0:0:1:1/2:acc 3:0:1:0:1/5:- 4:1:1:1:4/5:acc | - | 0 1 1 | 3" in walks  # beam, seed 3: A, then B by acc 4/5
    assert "1:0:0:0:1/2:- 2:1:0:0:4/5:- | 0.0,0.0,1.0 | 2 | 2" in walks  # seed 0: both rejected, r = [0, 0, 1], C
    assert "1:0:0:1:1/2:acc 3:0:1:0:1/5:- 4:1:1:1:4/5:acc | - | 0 1 2 | 3" in walks  # threshold_acc 1/2, seed 1
    # distinct + residual, seed 16: A rejected (r(A) = 1/2 against s(A) = 4/5), B accepted against s_2(B) = 3/4
    assert "1:0:4:0:1/2:4/5 2:1:5:1:1/2:3/4 4:0:6:1:11/20:4/5 | - | 1 0 0 | 8" in walks


@pytest.mark.parametrize("language", LANGUAGES)
def test_draft_trees_and_tree_verifiers(programs, tree_settings_cases, language):
    # SPEC 12: each block of the service's traces: the tree's nodes and laws (or scores), every
    # test with its position, decision and compared numbers, the correction's law, committed, next
    lines, expected = tree_settings_cases
    got = run(programs(language), lines)
    wrong = [(lines[i][:50], expected[i], g) for i, g in enumerate(got)
             if not (same_tree if lines[i].startswith("G ") else same_block)(g, expected[i])]
    assert not wrong, f"{len(wrong)} of {len(got)} blocks differ, first: {wrong[:3]}"


def python_program() -> str:
    """The Python snippets of the page (primitives and the four parts), as one program text."""
    return "\n".join([snippet("python")] + [snippet("python", part) for part in PARTS])


def python_answers(code: str, lines: list[str], monkeypatch) -> list[str]:
    """``code`` with the Python driver, run in this process on ``lines``: its answer lines."""
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    with contextlib.redirect_stdout(out):
        exec(compile(code + PY_DRIVER, "implementing.py", "exec"), {"__name__": "implementing"})
    return out.getvalue().split("\n")[:-1]


PLANTED = {
    "none (the page's code)": ("", ""),
    "a distinct sibling tested against the fixed q (s_1) instead of its own s_j":
        ("y, s = nodes[child - 1].token, nodes[child - 1].law", "y, s = nodes[child - 1].token, nodes[children[0] - 1].law"),
    "a repeated child tested twice (chains not merged into a trie)":
        ("same = [c for c in children_of(nodes, v) if nodes[c - 1].token == y]", "same = []"),
    "the residual not updated after a rejected sibling": ("        r = scaled_residual(r, s, 1, 1)\n", "\n"),
}
"""Mistakes of SPEC 12 planted into the Python snippets (the text replaced, and by what)."""


@pytest.mark.parametrize("bug", PLANTED)
def test_planted_tree_mistakes_fail_against_the_traces(tree_settings_cases, monkeypatch, bug):
    # each planted mistake gives a wrong answer on some block of the service's SPEC 12 traces
    # (with the same tree: the verifier's decisions or compared numbers are what differ, except
    # for the repeated child, whose tree differs too); the page's own code gives none
    old, new = PLANTED[bug]
    code = python_program()
    assert code.count(old) == 1 or not old
    lines, expected = [[x for line, x in zip(tree_settings_cases[0], xs) if line.startswith("G ")] for xs in tree_settings_cases]
    got = python_answers(code.replace(old, new) if old else code, lines, monkeypatch)
    wrong = [(g.split(" | "), expected[i].split(" | ")) for i, g in enumerate(got) if not same_tree(g, expected[i])]
    if not old:
        assert not wrong and len(got) == len(lines)
    elif "repeated" in bug:
        assert len(wrong) >= 10
    else:
        assert any(same_tree(g[0], e[0]) for g, e in wrong) and len(wrong) >= 3


def test_the_coin_test_is_strict_and_skips_a_child_of_probability_zero(monkeypatch):
    # SPEC 12.4 at u = 0 (no seed gives it: the page's target_only is run with next_double
    # replaced): the first child has p = 0, so acc_1 = 0 and u * threshold_acc < acc_1 fails;
    # the inclusive test u * threshold_acc <= acc_j (sglang#35771) would accept it
    namespace: dict = {"__name__": "implementing"}
    exec(compile(python_program(), "implementing.py", "exec"), namespace)
    namespace["next_double"] = lambda seed, n: 0.0
    node = namespace["Node"]
    nodes, tests = [node(0, 1, 0, None, (0, 1)), node(0, 1, 1, None, (1, 2))], []
    child, r, n = namespace["target_only"]()([0, 1, 1], nodes, [1, 2], 0, 7, tests)
    assert (child, r, n) == (2, None, 8)
    assert tests == [(1, 0, 7, False, 0, "-"), (2, 1, 7, True, Fraction(1, 2), "acc")]
    inclusive = python_program().replace("if p[y] and m * scale[0] * total < acc", "if m * scale[0] * total <= acc")
    exec(compile(inclusive, "implementing.py", "exec"), namespace)
    namespace["next_double"] = lambda seed, n: 0.0
    assert namespace["target_only"]()([0, 1, 1], nodes, [1, 2], 0, 7, [])[0] == 1  # the planted mistake accepts it
