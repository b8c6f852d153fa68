"""A second, minimal implementation of the decoding rules, written from docs/SPEC.md alone.

It shares no code with the service's engine (it imports nothing from ``specdec_service``) so that
the tests can hold the two against each other: a reader checks this file against SPEC line by
line. Every probability is a ``fractions.Fraction``; every draw is the exact rational
u = (z >> 11) / 2^53. Plain functions and small dataclasses only; speed is no concern.

Entry point: ``run(config)`` decodes a whole session (SPEC sections 4-11) and returns a ``Run``
with the committed output, the final position, the session's counters and one ``Block`` per
target pass (its first position, committed tokens, counters and every draw it used, with the
draw's role and position).

``config`` is the service's JSON config (docs/service.md): ``target`` ("toy" or a custom model
``{"vocab", "start", "next"}``), ``draft`` ("aligned", "biased" or a custom model), ``mode``
("speculative", "greedy", "autoregressive", "block", "tree"), ``width``, ``seed``, ``limit``,
``eos``, ``sampling`` (SPEC 9), ``drafts`` (SPEC 11) and ``tree`` (SPEC 12), with the same
defaults.
"""

from __future__ import annotations

import decimal
import math
from dataclasses import dataclass, field
from fractions import Fraction

Row = tuple  # a distribution: a tuple of Fractions in vocabulary order

# ------------------------------------------------------------------ SPEC 1: vocabulary and models

TOY_VOCAB = ("A", "B", "C")


@dataclass(frozen=True)
class Model:
    """A bigram table (SPEC 1): ``start`` is the row after the empty prefix, ``next[label]`` the
    row after a prefix ending in ``label``. Rows are exact, normalised by their exact sum."""

    vocab: tuple
    start: Row
    next: dict


def exact(number) -> Fraction:
    """A JSON number read as the decimal it is written as (SPEC 1): 0.1 is 1/10. A Python float
    is taken by its shortest repr, which is how ``json.dumps`` writes it."""
    return Fraction(repr(number)) if isinstance(number, float) else Fraction(number)


def normalised(row) -> Row:
    """Divide a non-negative row by its exact sum (SPEC 1 and every "normalised" of SPEC 4-11)."""
    row = [Fraction(x) for x in row]
    total = sum(row, Fraction(0))
    return tuple(x / total for x in row)


def table(vocab, start, after) -> Model:
    """A model from written decimals: ``after[i]`` is the row after ``vocab[i]`` (SPEC 1)."""
    rows = {label: normalised(exact(x) for x in row) for label, row in zip(vocab, after)}
    return Model(tuple(vocab), normalised(exact(x) for x in start), rows)


TOY = table(TOY_VOCAB, ["0.50", "0.30", "0.20"],
            [["0.20", "0.60", "0.20"], ["0.55", "0.15", "0.30"], ["0.25", "0.25", "0.50"]])
ALIGNED = TOY
BIASED = table(TOY_VOCAB, ["0.80", "0.15", "0.05"], [["0.80", "0.15", "0.05"]] * 3)
BUILT_IN = {"toy": TOY, "aligned": ALIGNED, "biased": BIASED}


def model(spec) -> Model:
    """A built-in name (SPEC 1 table) or a custom model in the config's JSON form."""
    if isinstance(spec, str):
        return BUILT_IN[spec]
    return table(spec["vocab"], spec["start"], [spec["next"][label] for label in spec["vocab"]])


def row_after(m: Model, prefix) -> Row:
    """The row after ``prefix``: only its last token matters (SPEC 1)."""
    return m.next[prefix[-1]] if prefix else m.start


# ------------------------------------------------------------------ SPEC 2: SplitMix64 draws

MASK = 2**64 - 1


def raw_value(seed: int, n: int) -> int:
    """The raw 64-bit value of draw n (SPEC 2): z after ``z ^ (z >> 31)``."""
    z = (seed + (n + 1) * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def draw(seed: int, n: int) -> Fraction:
    """u of draw n, exactly: (z >> 11) * 2^-53, in [0, 1) (SPEC 2)."""
    return Fraction(raw_value(seed, n) >> 11, 2**53)


# ------------------------------------------------------------------ SPEC 3 and 5: sample, argmax

def sample(d: Row, u: Fraction) -> int:
    """The first index i with u < d[0] + ... + d[i] (SPEC 3)."""
    total = Fraction(0)
    for i, x in enumerate(d):
        total += x
        if u < total:
            return i
    raise ValueError("u is not below the row's total")


def argmax(d: Row) -> int:
    """The most probable index, ties to the earliest (SPEC 5, SPEC 9.1 at T = 0)."""
    return max(range(len(d)), key=lambda i: (d[i], -i))


def residual(p: Row, q: Row, w: Fraction = Fraction(1)) -> Row:
    """max(w * p - q, 0) normalised: SPEC 4.3 (w = 1), SPEC 10.5 (w = w_tau), SPEC 11.2 (p = r)."""
    return normalised(max(w * a - b, Fraction(0)) for a, b in zip(p, q))


# ------------------------------------------------------------------ SPEC 9: sampling parameters

def correctly_rounded_power(p: Fraction, e: Fraction) -> Fraction:
    """The float64 nearest to the real p^e (ties to even), as the exact rational it is (SPEC 9.1).

    p^e is computed to 80 significant digits with ``decimal``; the float64 rounding of that
    approximation is the correct one unless the true value lies within the approximation's error
    of a midpoint between two float64s; then the midpoint is compared exactly (p^e vs m is
    p^a vs m^b for e = a/b) and ties go to the even neighbour."""
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        approx = (decimal.Decimal(e.numerator) / decimal.Decimal(e.denominator)
                  * (decimal.Decimal(p.numerator).ln() - decimal.Decimal(p.denominator).ln())).exp()
    f = float(approx)
    for neighbour in (math.nextafter(f, 0.0), math.nextafter(f, 1.0)):
        mid = (Fraction(f) + Fraction(neighbour)) / 2
        if abs(Fraction(approx) - mid) <= mid * Fraction(1, 10**70):  # too close to tell: exact
            lhs, rhs = p ** e.numerator, mid ** e.denominator
            if lhs == rhs:  # a tie: the even one (an even last bit of the significand)
                even = f if (math.frexp(f)[0] * 2**53) % 2 == 0 else neighbour
                return Fraction(even)
            beyond = lhs > rhs if neighbour > f else lhs < rhs
            return Fraction(neighbour if beyond else f)
    return Fraction(f)


def with_temperature(row: Row, t: Fraction) -> Row:
    """SPEC 9.1: T = 0 a point mass at the argmax; T = 1 unchanged; else p^(1/T), exact when 1/T
    is an integer, else correctly rounded float64 read exactly; zero stays zero."""
    if t == 0:
        top = argmax(row)
        return tuple(Fraction(int(i == top)) for i in range(len(row)))
    if t == 1:
        return row
    e = 1 / t
    if e.denominator == 1:
        return normalised(x ** e.numerator for x in row)
    return normalised(Fraction(0) if x == 0 else correctly_rounded_power(x, e) for x in row)


def with_top_k(row: Row, k: int) -> Row:
    """SPEC 9.2: keep every token at least the k-th largest (ties kept), zero the rest."""
    if k >= len(row):
        return row
    kth = sorted(row, reverse=True)[k - 1]
    return normalised(x if x >= kth else Fraction(0) for x in row)


def with_top_p(row: Row, top_p: Fraction) -> Row:
    """SPEC 9.3: largest first (ties in vocabulary order); keep a token iff the mass before it is
    strictly less than top_p."""
    kept, before = [Fraction(0)] * len(row), Fraction(0)
    for i in sorted(range(len(row)), key=lambda i: (-row[i], i)):
        if before < top_p:
            kept[i] = row[i]
        before += row[i]
    return normalised(kept)


def with_min_p(row: Row, min_p: Fraction) -> Row:
    """SPEC 9.4: keep a token iff its probability is at least min_p times the row's largest."""
    floor = min_p * max(row)
    return normalised(x if x >= floor else Fraction(0) for x in row)


def processed(row: Row, sampling: dict) -> Row:
    """A row processed by ``sampling`` in SPEC 9's order: temperature, top_k, top_p, min_p."""
    if "temperature" in sampling:
        row = with_temperature(row, exact(sampling["temperature"]))
    if "top_k" in sampling:
        row = with_top_k(row, int(sampling["top_k"]))
    if "top_p" in sampling:
        row = with_top_p(row, exact(sampling["top_p"]))
    if "min_p" in sampling:
        row = with_min_p(row, exact(sampling["min_p"]))
    return row


# ------------------------------------------------------------------ a session (SPEC 6, 7, 8)

COUNTERS = ("target_passes", "draft_steps", "accepted", "rejected", "discarded",
            "bonus_tokens", "committed", "draws")


@dataclass
class Block:
    """One target pass: where its draws start, what it commits, its counters (SPEC 7) and each
    draw it used as (role, position, u) in the order used; roles: draft, verify, eta (SPEC 10),
    correction, bonus, sample (autoregressive)."""

    position: int
    committed: list = field(default_factory=list)
    counters: dict = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    draws: list = field(default_factory=list)
    proposal: list = field(default_factory=list)  # the drafted tokens (tree: every chain's)


@dataclass
class Session:
    """The rows and settings of a session, and its state: prefix, position n (SPEC 2, 8)."""

    target: Model
    draft: Model
    mode: str
    width: int
    seed: int
    limit: int
    eos: str | None
    sampling: dict
    drafts: int
    tree: dict = field(default_factory=dict)
    prefix: list = field(default_factory=list)
    n: int = 0
    memo: dict = field(default_factory=dict)

    def p(self, context) -> Row:
        """The target row after ``context``, processed when sampling is set (SPEC 9: always)."""
        return self.rows("p", context)

    def q(self, context) -> Row:
        """The draft row the proposals are drawn from: processed unless ``draft`` is "raw" (SPEC 9)."""
        return self.rows("q", context)

    def rows(self, which: str, context) -> Row:
        """Target ("p") or draft ("q") row after ``context``, processed once per context."""
        key = (which, context[-1] if context else None)
        if key not in self.memo:
            row = row_after(self.target if which == "p" else self.draft, context)
            draft_processed = self.sampling.get("draft", "processed") == "processed"
            if self.sampling and (which == "p" or draft_processed):
                row = processed(row, self.sampling)
            self.memo[key] = row
        return self.memo[key]

    def take(self, block: Block, role: str) -> Fraction:
        """Use the next draw: record it, advance the position by one (SPEC 2)."""
        u = draw(self.seed, self.n)
        block.draws.append((role, self.n, u))
        self.n += 1
        return u

    def token(self, i: int) -> str:
        return self.target.vocab[i]

    def index(self, token: str) -> int:
        return self.target.vocab.index(token)

    def done(self) -> bool:
        """SPEC 6: the session ends at the limit or after a committed EOS."""
        return len(self.prefix) >= self.limit or (self.eos is not None and self.prefix[-1:] == [self.eos])


def session(config: dict) -> Session:
    """The settings of SPEC 8 with the service's defaults (docs/service.md)."""
    return Session(target=model(config.get("target", "toy")), draft=model(config["draft"]),
                   mode=config.get("mode", "speculative"), width=config.get("width", 3),
                   seed=config["seed"], limit=config.get("limit", 8), eos=config.get("eos"),
                   sampling=config.get("sampling") or {}, drafts=config.get("drafts", 1),
                   tree=config.get("tree") or {})


# ------------------------------------------------------------------ drafting (SPEC 4.1, 5, 6)

def draft_chain(s: Session, block: Block, greedy: bool = False) -> list:
    """k = min(w, limit - L) proposals, each d_i = sample(q_i, draw(n)) (greedy: argmax q_i);
    drafting stops right after a drafted EOS (SPEC 4.1, 5, 6). Returns [(token, q_i), ...]."""
    chain, context = [], list(s.prefix)
    for _ in range(min(s.width, s.limit - len(s.prefix))):
        q = s.q(context)
        token = s.token(argmax(q) if greedy else sample(q, s.take(block, "draft")))
        chain.append((token, q))
        context.append(token)
        if token == s.eos:
            break
    block.counters["draft_steps"] += len(chain)
    block.proposal.append([t for t, _ in chain])
    return chain


def bonus(s: Session, block: Block, accepted: list, greedy: bool = False) -> list:
    """SPEC 4.4: one bonus from p after the accepted prefix, unless at the limit or after an
    accepted EOS (SPEC 6). Returns the tokens to commit after ``accepted``."""
    if len(s.prefix) + len(accepted) >= s.limit or (accepted and accepted[-1] == s.eos):
        return []
    p = s.p(s.prefix + accepted)
    block.counters["bonus_tokens"] += 1
    return [s.token(argmax(p) if greedy else sample(p, s.take(block, "bonus")))]


# ------------------------------------------------------------------ the modes

def speculative_block(s: Session, block: Block) -> list:
    """SPEC 4: draft all k first; verify each with its own draw, accept iff u * q(d) < p(d);
    at the first rejection sample the residual and discard the rest; else a bonus."""
    chain = draft_chain(s, block)
    accepted = []
    for i, (token, q) in enumerate(chain):
        p, x = s.p(s.prefix + accepted), s.index(token)
        if s.take(block, "verify") * q[x] < p[x]:
            accepted.append(token)
            continue
        block.counters["rejected"] = 1
        block.counters["discarded"] = len(chain) - i - 1
        block.counters["accepted"] = len(accepted)
        return accepted + [s.token(sample(residual(p, q), s.take(block, "correction")))]
    block.counters["accepted"] = len(accepted)
    return accepted + bonus(s, block, accepted)


def greedy_block(s: Session, block: Block) -> list:
    """SPEC 5 (greedy): the draft proposes its argmax; accepted while it equals the target's
    argmax; at the first mismatch the target's argmax instead; else its argmax as the bonus.
    No draws."""
    chain = draft_chain(s, block, greedy=True)
    accepted = []
    for i, (token, _) in enumerate(chain):
        top = s.token(argmax(s.p(s.prefix + accepted)))
        if token == top:
            accepted.append(token)
            continue
        block.counters.update(rejected=1, discarded=len(chain) - i - 1, accepted=len(accepted))
        return accepted + [top]
    block.counters["accepted"] = len(accepted)
    return accepted + bonus(s, block, accepted, greedy=True)


def autoregressive_block(s: Session, block: Block) -> list:
    """SPEC 5 (autoregressive): one token sample(p, draw(n)); no draft."""
    return [s.token(sample(s.p(s.prefix), s.take(block, "sample")))]


def weights_and_thresholds(p_rows: list, q_rows: list, tokens: list) -> tuple:
    """SPEC 10.2-3: w_0 = 1, w_i = min(1, w_(i-1) p_i(d_i) / q_i(d_i)); for i < k
    s_i = sum_y max(w_i p_(i+1)(y) - q_(i+1)(y), 0), h_i = s_i / (s_i + 1 - w_i) (1 when that
    is 0); h_k = w_k. Rows and tokens are indexed from 0 (row i - 1 is p_i). Returns (w, h) with
    w[0] = w_0 and h[i - 1] = h_i."""
    k, w = len(tokens), [Fraction(1)]
    for p, q, x in zip(p_rows, q_rows, tokens):
        w.append(min(Fraction(1), w[-1] * p[x] / q[x]))
    h = []
    for i in range(1, k):
        s_i = sum((max(w[i] * a - b, Fraction(0)) for a, b in zip(p_rows[i], q_rows[i])), Fraction(0))
        denominator = s_i + 1 - w[i]
        h.append(Fraction(1) if denominator == 0 else s_i / denominator)
    h.append(w[k])
    return w, h


def block_verification_block(s: Session, block: Block) -> list:
    """SPEC 10: draft as 4.1; weights and thresholds; all k eta draws; tau the largest i with
    eta_i < h_i (0 if none); commit d_1..d_tau and a bonus (tau = k) or a correction from
    max(w_tau p_(tau+1) - q_(tau+1), 0) normalised."""
    chain = draft_chain(s, block)
    tokens = [t for t, _ in chain]
    p_rows = [s.p(s.prefix + tokens[:i]) for i in range(len(chain))]
    q_rows = [q for _, q in chain]
    w, h = weights_and_thresholds(p_rows, q_rows, [s.index(t) for t in tokens])
    etas = [s.take(block, "eta") for _ in chain]
    tau = max((i + 1 for i, eta in enumerate(etas) if eta < h[i]), default=0)
    block.counters["accepted"] = tau
    if tau == len(chain):
        return tokens + bonus(s, block, tokens)
    block.counters["rejected"] = 1
    block.counters["discarded"] = len(chain) - tau - 1
    r = residual(p_rows[tau], q_rows[tau], w[tau])
    return tokens[:tau] + [s.token(sample(r, s.take(block, "correction")))]


def tree_block(s: Session, block: Block) -> list:
    """SPEC 12: the tree's shape drafts it and its verifier walks it; absent, or chains with
    residual, SPEC 11 exactly."""
    shape, verify = s.tree.get("shape", "chains"), s.tree.get("verify", "residual")
    if (shape, verify) == ("chains", "residual"):
        return chains_block(s, block)
    root = SHAPES[shape](s, block)
    return walk(s, block, root, verify)


@dataclass
class Node:
    """A node of a draft tree (SPEC 12): its token, its path from the committed prefix (the
    tokens up to and including it), its proposal law (None for beam), its beam score, and its
    ordered children."""

    token: str | None
    path: list
    law: Row | None = None
    score: Fraction = Fraction(1)
    children: list = field(default_factory=list)

    def child(self, token: str, law, score=Fraction(1)) -> "Node":
        node = Node(token, self.path + [token], law, score)
        self.children.append(node)
        return node


def chains_trie(s: Session, block: Block) -> Node:
    """SPEC 12.1.1 for target_only: the D chains of 11.1 (same draws) merged into a trie, a
    node's children the distinct next tokens in order of first appearance, chain 1 first."""
    root = Node(None, [])
    for _ in range(s.drafts):
        node = root
        for token, q in draft_chain(s, block):
            same = [c for c in node.children if c.token == token]
            node = same[0] if same else node.child(token, q)
    return root


def distinct_tree(s: Session, block: Block) -> Node:
    """SPEC 12.1.2: level order; each node of the previous depth (root first, an EOS node none)
    draws up to b_i children without replacement: y_j = sample(s_j, draw), s_(j+1) = s_j with
    y_j zeroed, normalised, while s_j has mass. Default branching [D, 1, 1, ...]."""
    branching = s.tree.get("branching", [s.drafts])
    root, level = Node(None, []), []
    level = [root]
    for i in range(1, min(s.width, s.limit - len(s.prefix)) + 1):
        b = branching[i - 1] if i <= len(branching) else 1
        next_level = []
        for node in level:
            if node.token is not None and node.token == s.eos:
                continue
            law = s.q(s.prefix + node.path)
            for _ in range(b):
                if sum(law) == 0:
                    break
                y = sample(law, s.take(block, "draft"))
                next_level.append(node.child(s.token(y), law))
                left = tuple(Fraction(0) if x == y else law[x] for x in range(len(law)))
                law = normalised(left) if sum(left) else left
        level = next_level
        block.counters["draft_steps"] += len(level)
        block.proposal.append([n.token for n in level])
    return root


def beam_tree(s: Session, block: Block) -> Node:
    """SPEC 12.1.3: no draws; depth 1 the D most probable tokens of q (ties in vocabulary
    order, probability 0 never); each later depth every node of the previous one (an EOS node
    none) offers its D most probable, a path scores the product of its draft probabilities, the
    D best offers are kept (ties: earlier parent, then vocabulary order)."""
    root, level = Node(None, []), []
    level = [root]
    for _ in range(min(s.width, s.limit - len(s.prefix))):
        offers = []
        for rank, node in enumerate(level):
            if node.token is not None and node.token == s.eos:
                continue
            q = s.q(s.prefix + node.path)
            best = sorted((x for x in range(len(q)) if q[x] > 0), key=lambda x: (-q[x], x))[:s.drafts]
            offers += [(node.score * q[x], rank, x, node) for x in best]
        offers.sort(key=lambda o: (-o[0], o[1], o[2]))
        level = [node.child(s.token(x), None, score) for score, _, x, node in offers[:s.drafts]]
        block.counters["draft_steps"] += len(level)
        block.proposal.append([n.token for n in level])
        if not level:
            break
    return root


SHAPES = {"chains": chains_trie, "distinct": distinct_tree, "beam": beam_tree}


def residual_choice(s: Session, block: Block, node: Node, p: Row):
    """SPEC 12.3: r = p; each child y in order: accept iff u * s(y) < r(y) (s its proposal
    law); on rejection r = max(r - s, 0) normalised. Returns (child or None, r)."""
    r = p
    for child in node.children:
        y = s.index(child.token)
        if s.take(block, "verify") * child.law[y] < r[y]:
            return child, r
        block.counters["rejected"] += 1
        r = residual(r, child.law)
    return None, r


def target_only_choice(s: Session, block: Block, node: Node, p: Row):
    """SPEC 12.4: one draw u; acc_j = p(y_1) + ... + p(y_j); accept the first y_j with
    p(y_j) > 0 and (u * threshold_acc < acc_j or p(y_j) >= threshold_single); none: r = p with
    the children zeroed, normalised. Returns (child or None, r)."""
    single = exact(s.tree.get("threshold_single", 1))
    scale = exact(s.tree.get("threshold_acc", 1))
    u, acc = s.take(block, "verify"), Fraction(0)
    for child in node.children:
        y = s.index(child.token)
        acc += p[y]
        if p[y] > 0 and (u * scale < acc or p[y] >= single):
            return child, None
        block.counters["rejected"] += 1
    tokens = {s.index(c.token) for c in node.children}
    return None, normalised(Fraction(0) if x in tokens else p[x] for x in range(len(p)))


def walk(s: Session, block: Block, root: Node, verify: str) -> list:
    """SPEC 12.2: from the root, the verifier accepts one child or none; accepted: commit it and
    go on (an accepted EOS ends the block); none: the correction sample(r, draw); a node without
    children: the bonus of 4.4."""
    choose = residual_choice if verify == "residual" else target_only_choice
    node, accepted = root, []
    while node.children:
        child, r = choose(s, block, node, s.p(s.prefix + accepted))
        if child is None:
            block.counters["accepted"] = len(accepted)
            return accepted + [s.token(sample(r, s.take(block, "correction")))]
        accepted.append(child.token)
        node = child
        if child.token == s.eos:
            break
    block.counters["accepted"] = len(accepted)
    return accepted + bonus(s, block, accepted)


def chains_block(s: Session, block: Block) -> list:
    """SPEC 11: D chains drafted one after another; depth by depth, the alive chains' tokens
    are tested in chain order against r (r = p, then max(r - q, 0) normalised after each
    rejection); all rejected: a correction from r; no alive chain with a next token: a bonus."""
    chains = [draft_chain(s, block) for _ in range(s.drafts)]
    alive, accepted = list(range(s.drafts)), []
    while True:
        depth = len(accepted)
        candidates = [j for j in alive if len(chains[j]) > depth]
        if not candidates:
            block.counters["accepted"] = len(accepted)
            return accepted + bonus(s, block, accepted)
        context = s.prefix + accepted
        p, q = s.p(context), s.q(context)
        r, chosen = p, None
        for j in candidates:
            y = s.index(chains[j][depth][0])
            if s.take(block, "verify") * q[y] < r[y]:
                chosen = chains[j][depth][0]
                break
            block.counters["rejected"] += 1
            r = residual(r, q)
        block.counters["accepted"] = len(accepted) + (chosen is not None)
        if chosen is None:
            return accepted + [s.token(sample(r, s.take(block, "correction")))]
        accepted.append(chosen)
        if chosen == s.eos:
            return accepted
        alive = [j for j in candidates if chains[j][depth][0] == chosen]


MODES = {"speculative": speculative_block, "greedy": greedy_block,
         "autoregressive": autoregressive_block, "block": block_verification_block,
         "tree": tree_block}


def step(s: Session) -> Block:
    """One block of the session's mode: commit its tokens and count its work (SPEC 7)."""
    block = Block(position=s.n)
    committed = MODES[s.mode](s, block)
    c = block.counters
    c["target_passes"] = 1
    c["committed"] = len(committed)
    c["draws"] = s.n - block.position
    if s.mode == "tree":  # SPEC 11.5: every drafted token is accepted, rejected or discarded
        c["discarded"] = c["draft_steps"] - c["accepted"] - c["rejected"]
    block.committed = committed
    s.prefix += committed
    return block


@dataclass
class Run:
    """A whole session: output, final position, the counters' totals and the blocks."""

    output: list
    position: int
    counters: dict
    blocks: list


def run(config: dict) -> Run:
    """Decode from the empty prefix until the session ends (SPEC 6)."""
    s = session(config)
    blocks = []
    while not s.done():
        blocks.append(step(s))
    totals = {name: sum(b.counters[name] for b in blocks) for name in COUNTERS}
    return Run(output=list(s.prefix), position=s.n, counters=totals, blocks=blocks)
