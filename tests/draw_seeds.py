"""Seeds whose draw at a chosen position is a chosen u: exactly 0, or exactly 1/2 (SPEC section 2).

Draw n of a seed is u = (mix(z) >> 11) * 2^-53 with z = seed + (n + 1) * gamma mod 2^64 and
mix SplitMix64's finaliser: two xor-shift-multiply rounds and a last xor-shift. Each step is a
bijection of the 64-bit integers (``x ^ (x >> s)`` is undone by repeating it until the shifts
pass 64 bits; an odd multiplier has an inverse mod 2^64), so mix is invertible: u = 0 exactly
when mix(z) < 2^11, i.e. z = unmix(v) for one of the 2^11 values v < 2^11, and the seed is
z - (n + 1) * gamma mod 2^64 (u = k * 2^-53 likewise: v in [k * 2^11, (k + 1) * 2^11)). A seed
must lie in 0..2^53-1 (SPEC 8), which one such z in 2^11 gives: about one seed per position and
value, found by trying the 2^11 values of v.
"""


MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
M1, M2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _unshift(y: int, s: int) -> int:
    """The x with ``x ^ (x >> s) == y`` (64-bit)."""
    x = y
    for _ in range(64 // s + 1):
        x = y ^ (x >> s)
    return x


def unmix(v: int) -> int:
    """The z whose SplitMix64 finaliser is ``v``: the inverse of the three steps of SPEC 2."""
    z = _unshift(v, 31)
    z = (z * pow(M2, -1, 1 << 64)) & MASK
    z = _unshift(z, 27)
    z = (z * pow(M1, -1, 1 << 64)) & MASK
    return _unshift(z, 30)


def seeds_with_draw(position: int, mantissa: int = 0) -> list[int]:
    """Every seed in 0..2^53-1 whose draw ``position`` is u = ``mantissa`` * 2^-53, smallest first."""
    found = [(unmix((mantissa << 11) | low) - (position + 1) * GAMMA) & MASK for low in range(1 << 11)]
    return sorted(seed for seed in found if seed < 1 << 53)
