"""code_exec's compare="prime_code" passes exactly the outputs verl's prime_code passes."""

from __future__ import annotations

import itertools
from types import ModuleType

from verl_rewards_code.compare_prime import prime_code_match

OUTPUTS = [
    "3\n", "3", " 3 \n", "3\n\n", "\n3\n", "3 \n4\n", "3\n4\n", "3 4\n", "03\n", "3.0\n", "3.00002\n", "3.0001\n",
    "-0\n", "inf\n", "nan\n", "1_0\n", "yes\n", "a  b\n", "3\r\n", "", " \n", "1\n2\n3\n", "1 2 3\n", "１\n",
    "²\n", "1.0\n2\n", "1\n\n2\n", "1\u20282\n",
]
EXPECTED = ["3\n", "3", "3.0\n", "3 4\n", "3\n4\n", "Yes\n", "", "inf\n", "1\n 2 \n", " \n", "²\n", "1e1\n", "0.0\n"]


def test_every_pair_gets_verls_verdict(peers: ModuleType) -> None:
    pairs = list(itertools.product(OUTPUTS, EXPECTED))
    verl = peers.verl_output_verdicts(pairs)
    ours = [prime_code_match(stdout, expected) for stdout, expected in pairs]
    assert [(p, a, b) for p, a, b in zip(pairs, ours, verl) if a != b] == []
    assert (sum(verl), len(pairs)) == (39, 364)  # passes and failures both
