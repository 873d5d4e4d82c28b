"""How fast the ``ifeval`` reward scores, and how its scans grow against IFEval's expressions.

    python plugins/ifeval/benchmarks/bench_ifeval.py [--repeat 200]

Prints, on this machine and in this run:

1. the time per sample of a typical response (about 2 kB of prose with
   markdown) against a row holding every one of the 25 instruction types,
   strict and loose;
2. the time per instruction type on that response;
3. the linear scans against IFEval's own regular expressions (the baseline)
   on hostile text of growing size: the expressions grow quadratically;
4. all-capital word counting against nltk's Treebank tokenizer on 100 kB of
   prose;
5. sentence counting (nltk's Punkt, boundary verdicts memoized) against nltk's
   plain Punkt tokenizer with the same model, on 1 MB of prose and of hostile
   text, cold (caches cleared before each call).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from verl_rewards_ifeval import text as scan
from verl_rewards_ifeval.capitals import count_capital_words
from verl_rewards_ifeval.ground_truth import parse_ground_truth
from verl_rewards_ifeval.language import detect_language
from verl_rewards_ifeval.reward import compute_score, response_variants
from verl_rewards_ifeval.sentences import clear_caches, count_sentences, english_parameters, split_sentences

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from every_instruction import ROW

TRUTH = {"instruction_id_list": list(ROW), "kwargs": list(ROW.values())}
PARAGRAPH = (
    "The city grew along the river, and every *bridge* tells a part of its story. Merchants crossed "
    "the water at dawn; by noon the market at [square] was full. Section {n} of the guide covers the "
    "old town, the harbour and the **quiet streets** behind the cathedral, where the city keeps its "
    "oldest houses. Visitors who stay until evening see the lamps lit along the embankment.\n"
    "* walk the north bank\n* cross at the stone bridge\n- dine near [restaurant]\n"
)
RESPONSE = "<<A River City>>\n" + "\n\n".join(PARAGRAPH.format(n=n) for n in range(1, 5)) + \
    "\nP.S. Any other questions?"


def per_call(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds of ``fn()`` over ``repeat`` calls (after one warm-up), each a new text to
    the language cache (as every sample of a run is)."""
    fn()
    times = []
    for _ in range(repeat):
        detect_language.cache_clear()
        clear_caches()
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def typical(repeat: int) -> None:
    print(f"1. a {len(RESPONSE):,}-character response, all 25 instruction types in one row")
    for mode in ("strict", "loose"):
        seconds = per_call(lambda m=mode: compute_score("bench", RESPONSE, TRUTH, mode=m), repeat)
        print(f"   {mode:6} {seconds * 1e3:7.2f} ms per sample ({1 / seconds:,.0f} samples/s on one core)")
    print("2. per instruction type (strict, same response)")
    instructions = parse_ground_truth(TRUTH)
    rows = []
    for instruction in instructions:
        seconds = per_call(lambda i=instruction: i.kind.check(RESPONSE, i.kwargs), repeat)
        rows.append((seconds, instruction.kind.id))
    for seconds, name in sorted(rows, reverse=True):
        print(f"   {seconds * 1e6:9.1f} us  {name}")
    print(f"   (loose checks up to {len(response_variants(RESPONSE, 'loose'))} variants of the response)")


BASELINES: list[tuple[str, Callable[[str], object], Callable[[str], object], str]] = [
    ("placeholders on '[' * n", scan.count_placeholders, lambda s: re.findall(r"\[.*?\]", s), "["),
    ("bullets on '\\n' * n", scan.count_bullets,
     lambda s: re.findall(r"^\s*\*[^\*].*$", s, flags=re.M) + re.findall(r"^\s*-.*$", s, flags=re.M), "\n"),
    ("titles on '<<' * n/2", lambda s: list(scan.titles(s)), lambda s: re.findall(r"<<[^\n]+>>", s), "<"),
]


def hostile() -> None:
    print("3. linear scans against IFEval's expressions (baseline) on hostile text")
    for name, ours, theirs, char in BASELINES:
        for size in (5_000, 10_000, 20_000):
            text = char * size
            mine = per_call(lambda t=text, f=ours: f(t), 3)
            base = per_call(lambda t=text, f=theirs: f(t), 1)
            print(f"   {name:26} n={size:6,}: ours {mine * 1e3:8.2f} ms, IFEval's {base * 1e3:9.1f} ms "
                  f"({base / mine:,.0f}x)")
    for size in (1 << 20,):
        for char in ("*", "#", "[", "<", "\n", ". ", "a. "):
            text = char * (size // len(char))
            seconds = per_call(lambda t=text: compute_score("bench", t, TRUTH, mode="loose"), 1)
            print(f"   1 MB of {char!r:6}: the whole row, loose, {seconds:.2f} s")


def capitals() -> None:
    from nltk.tokenize.destructive import NLTKWordTokenizer

    tokenizer = NLTKWordTokenizer()
    text = ("The NASA team met at NOON. IT'S the BEST plan, they said; WE CANNOT wait. " * 1400)[:100_000]
    ours = per_call(lambda: count_capital_words(text), 3)
    theirs = per_call(lambda: sum(1 for s in split_sentences(text) for t in tokenizer.tokenize(s) if t.isupper()),
                      1)
    print(f"4. capital words on {len(text):,} chars: ours {ours * 1e3:.1f} ms, nltk's tokenizer "
          f"{theirs * 1e3:.1f} ms ({theirs / ours:.1f}x)")


def sentences() -> None:
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    plain = PunktSentenceTokenizer(english_parameters())
    mb = 1 << 20
    texts = {
        "prose": ("The answer follows from the steps above. " * (mb // 41))[:mb],
        "varied prose": " ".join(f"Step {i} adds {i * 7 % 13} to the sum." for i in range(mb // 30))[:mb],
        "'. ' * n": ". " * (mb // 2),
        "'a. ' * n": "a. " * (mb // 3),
    }
    print("5. sentences in 1 MB, cold: ours (Punkt, verdicts memoized) against nltk's plain Punkt")
    for name, text in texts.items():
        ours = per_call(lambda t=text: count_sentences(t), 1)
        try:
            theirs = per_call(lambda t=text: len(plain.tokenize(t)), 1)
            baseline = f"{theirs:6.2f} s ({theirs / ours:.1f}x)"
        except TimeoutError:  # nltk's regex guard: 5 s of wall clock per scan
            baseline = "TimeoutError (nltk's 5 s regex guard)"
        print(f"   {name:13} {count_sentences(text):7,} sentences: ours {ours:6.2f} s, nltk's {baseline}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    typical(args.repeat)
    hostile()
    capitals()
    sentences()


if __name__ == "__main__":
    main()
