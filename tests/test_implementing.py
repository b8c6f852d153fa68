"""docs/implementing.md: each language's snippet is extracted from the markdown and RUN against
the JDK's SplittableRandom vectors (tests/fixtures/splittable_random.json) and the engine's own
``sample`` and acceptance test on random inputs.

Each language gets a small driver (below, test code, not in the docs) appended to its snippet; the
driver reads commands on stdin and prints one line each:

- ``D seed n`` -> ``m hex``: the draw's 53-bit integer m = u * 2^53 and the raw value's 16 hex digits;
- ``S u total w_0 ... w_k`` -> the index ``sample`` returns;
- ``A u a b c d`` -> 1 if ``accepts(u, a/b, c/d)`` else 0.
"""

import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from specdec_service.engine import Dist, Draw, accepts, draw, sample

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "implementing.md").read_text(encoding="utf-8")
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "splittable_random.json").read_text(encoding="utf-8"))


def snippet(language: str) -> str:
    """The one fenced block of ``language`` in the document."""
    blocks = re.findall(rf"^```{language}\n(.*?)^```$", DOC, flags=re.M | re.S)
    assert len(blocks) == 1, f"docs/implementing.md must hold exactly one {language} block, not {len(blocks)}"
    return blocks[0]


PY_DRIVER = r'''
import sys
for line in sys.stdin:
    cmd, *args = line.split()
    if cmd == "D":
        seed, n = int(args[0]), int(args[1])
        print(int(next_double(seed, n) * 2 ** 53), hex16(splitmix64(seed, n)))
    elif cmd == "S":
        print(sample([int(w) for w in args[2:]], int(args[1]), float(args[0])))
    else:
        print(int(accepts(float(args[0]), *map(int, args[1:]))))
'''

JS_DRIVER = r'''
const lines = require("fs").readFileSync(0, "utf8").trim().split("\n");
const out = [];
for (const line of lines) {
  const [cmd, ...args] = line.split(" ");
  if (cmd === "D") {
    const seed = BigInt(args[0]), n = BigInt(args[1]);
    out.push(`${BigInt(nextDouble(seed, n) * 2 ** 53)} ${hex16(splitmix64(seed, n))}`);
  } else if (cmd === "S") {
    out.push(String(sample(args.slice(2).map(BigInt), BigInt(args[1]), Number(args[0]))));
  } else {
    const [a, b, c, d] = args.slice(1).map(BigInt);
    out.push(accepts(Number(args[0]), a, b, c, d) ? "1" : "0");
  }
}
process.stdout.write(out.join("\n") + "\n");
'''

JAVA_DRIVER = r'''
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class Driver {
    public static void main(String[] argv) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        for (String line; (line = in.readLine()) != null; ) {
            String[] a = line.trim().split(" ");
            if (a[0].equals("D")) {
                long seed = Long.parseLong(a[1]), n = Long.parseLong(a[2]);
                out.append((long) (SpecdecPrimitives.nextDouble(seed, n) * 0x1.0p53)).append(' ')
                   .append(SpecdecPrimitives.hex16(SpecdecPrimitives.splitmix64(seed, n))).append('\n');
            } else if (a[0].equals("S")) {
                long[] w = new long[a.length - 3];
                for (int i = 3; i < a.length; i++) w[i - 3] = Long.parseLong(a[i]);
                out.append(SpecdecPrimitives.sample(w, Long.parseLong(a[2]), Double.parseDouble(a[1]))).append('\n');
            } else {
                boolean ok = SpecdecPrimitives.accepts(Double.parseDouble(a[1]), Long.parseLong(a[2]), Long.parseLong(a[3]),
                                                       Long.parseLong(a[4]), Long.parseLong(a[5]));
                out.append(ok ? "1" : "0").append('\n');
            }
        }
        System.out.print(out);
    }
}
'''

C_DRIVER = r'''
#include <stdlib.h>
#include <string.h>

int main(void) {
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        char *cmd = strtok(line, " \n");
        if (!cmd) continue;
        if (strcmp(cmd, "D") == 0) {
            uint64_t seed = strtoull(strtok(NULL, " \n"), NULL, 10), n = strtoull(strtok(NULL, " \n"), NULL, 10);
            char hex[17];
            hex16(splitmix64(seed, n), hex);
            printf("%llu %s\n", (unsigned long long)(next_double(seed, n) * 0x1.0p53), hex);
        } else if (strcmp(cmd, "S") == 0) {
            double u = strtod(strtok(NULL, " \n"), NULL);
            uint64_t total = strtoull(strtok(NULL, " \n"), NULL, 10), w[64];
            int size = 0;
            for (char *t; (t = strtok(NULL, " \n")); ) w[size++] = strtoull(t, NULL, 10);
            printf("%d\n", sample(w, size, total, u));
        } else {
            double u = strtod(strtok(NULL, " \n"), NULL);
            uint64_t v[4];
            for (int i = 0; i < 4; i++) v[i] = strtoull(strtok(NULL, " \n"), NULL, 10);
            printf("%d\n", accepts(u, v[0], v[1], v[2], v[3]));
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


LINES, EXPECTED = commands()


def check(argv: list[str], cwd: Path) -> None:
    result = subprocess.run(argv, input="\n".join(LINES) + "\n", capture_output=True, text=True, cwd=cwd, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    got = result.stdout.split("\n")[:-1]
    assert len(got) == len(EXPECTED)
    wrong = [(LINES[i], EXPECTED[i], g) for i, g in enumerate(got) if g != EXPECTED[i]]
    assert not wrong, f"{len(wrong)} wrong answers, first: {wrong[:3]}"


def test_the_commands_cover_the_fixture_and_both_decisions():
    assert sum(line.startswith("D ") for line in LINES) == 4 * FIXTURE["count"] == 4000
    samples = [e for line, e in zip(LINES, EXPECTED) if line.startswith("S ")]
    decisions = [e for line, e in zip(LINES, EXPECTED) if line.startswith("A ")]
    assert len(set(samples)) >= 5 and set(decisions) == {"0", "1"}
    assert EXPECTED[0] == f"{int(0.8833108082136426 * 2 ** 53)} {draw(0, 0).hex}"  # SPEC section 2 test vector


def test_python_snippet(tmp_path):
    (tmp_path / "primitives.py").write_text(snippet("python") + PY_DRIVER, encoding="utf-8")
    check([sys.executable, "primitives.py"], tmp_path)


@pytest.mark.skipif(shutil.which("node") is None, reason="node (Node.js) is not installed (bash .ci/run installs it): the JavaScript snippet cannot run")
def test_javascript_snippet(tmp_path):
    (tmp_path / "primitives.js").write_text(snippet("javascript") + JS_DRIVER, encoding="utf-8")
    check([shutil.which("node"), "primitives.js"], tmp_path)


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                    reason="javac/java (a JDK) is not installed (bash .ci/run installs it): the Java snippet cannot be compiled")
def test_java_snippet(tmp_path):
    (tmp_path / "SpecdecPrimitives.java").write_text(snippet("java"), encoding="utf-8")
    (tmp_path / "Driver.java").write_text(JAVA_DRIVER, encoding="utf-8")
    compiled = subprocess.run([shutil.which("javac"), "SpecdecPrimitives.java", "Driver.java"], capture_output=True,
                              text=True, cwd=tmp_path, timeout=180)
    assert compiled.returncode == 0, compiled.stderr
    check([shutil.which("java"), "-cp", ".", "Driver"], tmp_path)


@pytest.mark.skipif(shutil.which("cc") is None, reason="cc (a C compiler) is not installed (bash .ci/run installs it): the C snippet cannot be compiled")
def test_c_snippet(tmp_path):
    (tmp_path / "primitives.c").write_text(snippet("c") + C_DRIVER, encoding="utf-8")
    compiled = subprocess.run([shutil.which("cc"), "-std=gnu11", "-O1", "-Wall", "-Werror", "-o", "primitives", "primitives.c"],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert compiled.returncode == 0, compiled.stderr
    check(["./primitives"], tmp_path)
