"""Generated IFEval boundary cases: every instruction type, its kwargs set at and around the response's count.

Shared by tests/test_lm_eval_parity.py (loaded by path, like every_instruction.py).
``generate(reference, seed)`` builds responses from fragments chosen for the edges
(abbreviations that Punkt does or does not know, ellipses, numbered and bulleted
lists, decimals, quotes and brackets after a period, unicode, markdown emphasis,
a preamble line and a closing line for the loose variants) and, for each of the
25 instruction types, kwargs whose threshold is the count IFEval's own code
measures on that response, one less and one more (N-1, N, N+1), under both
relations. ``reference`` supplies IFEval's counts (lm-eval's functions with real
nltk), so the thresholds sit exactly at IFEval's boundaries.

Kwargs stay inside what IFEval itself evaluates deterministically: counts >= 1
(lm-eval drops a falsy kwarg and draws a random one), keywords and markers
that are plain words (IFEval reads them as regular expressions), ASCII letters.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Case = tuple[str, dict[str, Any], str]  # instruction id, kwargs, response


@dataclass(frozen=True)
class Reference:
    """IFEval's own counts, from the evaluator under test."""

    count_sentences: Callable[[str], int]
    count_words: Callable[[str], int]
    word_tokenize: Callable[[str], list[str]]


RELATIONS = ("less than", "at least")

SENTENCES = [
    "The river runs through the old town.",
    "It floods every spring, etc. and the people move uphill.",
    "Bring fruit, e.g. apples or pears.",
    "Use a map, i.e. the one from the office.",
    "See fig. 3 for the bridge.",
    "Compare vol. 2 of the guide, cf. the appendix.",
    "The museum is no. 4 on the list.",
    "It is approx. ten miles long.",
    "Dr. Smith met Mr. Jones at 5 p.m. on Jan. 5.",
    "She has a Ph.D. in hydrology.",
    "The U.S. and the U.K. signed it.",
    "J. R. R. Tolkien liked rivers.",
    "Wait... what happened next?",
    "Then... Silence fell.",
    "It costs 3.50 dollars.",
    "Really?! Yes!",
    'He said "stop." Then he left.',
    "(See above.) The next one is short.",
    "a lowercase start. still a break here.",
    "The end is near…",
    "Ça va. Très bien!",
    "Der Fluss ist lang. Er ist schön.",
    "你好。再见。",
    "Use 1. a boat 2. a bridge.",
    "Visit www.example.com for more.",
    "It was great!!! Really great.",
    "The Rev. Brown arrived at approx. 3 p.m. and left.",
    "The team won, i.e., they came first.",
    "Etc. is not a word. It is short.",
    "Numbers like 2.5 and 3. are odd.",
    "“Quoted.” Next sentence.",
    "Inc. and Ltd. are suffixes, e.g. Acme Inc. Then more.",
    "He arrived at 10 a.m. The rain stopped.",
    "What about no. 9? Nothing.",
    "THE CAPITAL SENTENCE IS HERE. IT'S LOUD!",
    "WE CANNOT STOP, DON'T YOU SEE? GONNA WIN.",
    "Mixed CASE words like NASA and U.S.A. appear.",
    "Emoji 😀 are fine. Right?",
]
LIST_BLOCKS = [
    "1. First item.\n2. second item.\n3. Third item.",
    "* alpha point\n* beta point\n* gamma point",
    "- one\n- two",
    "** not a bullet\n*also a bullet",
    "  * indented bullet\n\t- tabbed bullet",
    "a) first\nb) second",
]
PREAMBLES = ["Sure! Here it is:", "Here is my answer.", "**Answer**", "<<Title line>>", "Okay, so"]
CLOSINGS = ["Hope this helps!", "Let me know.", "***", "P.S. Thanks for reading.", "Is there anything else I can help with?"]
EMPHASIS = ["*important*", "**very important**", "* not closed", "*a* and *b*", "** **", "*\n*"]
KEYWORDS = ["river", "bridge", "town", "rain", "map", "boat", "point", "item", "the", "is"]
FOREIGN = {
    "fr": "Je pense que la rivière traverse la vieille ville et que les gens aiment marcher le long des quais.",
    "de": "Ich glaube, dass der Fluss durch die alte Stadt fließt und die Menschen gern am Ufer spazieren gehen.",
    "es": "Creo que el río atraviesa la ciudad vieja y que a la gente le gusta pasear por la orilla.",
    "it": "Penso che il fiume attraversi la città vecchia e che alla gente piaccia passeggiare lungo le rive.",
    "en": "I think the river runs through the old town and that people like to walk along its banks.",
}


def _thresholds(count: int) -> list[int]:
    return sorted({max(1, count - 1), max(1, count), count + 1})


def _responses(rng: random.Random, count: int) -> Iterator[str]:
    """Responses made of edge fragments, with preambles, closings and emphasis for the loose variants."""
    for _ in range(count):
        parts = rng.sample(SENTENCES, rng.randint(1, 5))
        if rng.random() < 0.3:
            parts.insert(rng.randint(0, len(parts)), rng.choice(LIST_BLOCKS))
        if rng.random() < 0.3:
            parts.insert(rng.randint(0, len(parts)), rng.choice(EMPHASIS))
        joiner = rng.choice([" ", " ", "\n", "\n\n", "  "])
        text = joiner.join(parts)
        if rng.random() < 0.4:
            text = rng.choice(PREAMBLES) + "\n" + text
        if rng.random() < 0.4:
            text = text + "\n" + rng.choice(CLOSINGS)
        text = _decorate(rng, text)
        if rng.random() < 0.15:
            text = text.upper()
        elif rng.random() < 0.15:
            text = text.lower()
        yield text


def _decorate(rng: random.Random, text: str) -> str:
    """Now and then the shapes instruction types ask for, whole or nearly (each on its own roll)."""
    if rng.random() < 0.12:
        text = text.replace("the ", rng.choice(["the [place] ", "[the] ", "the [ ] "]), rng.randint(1, 3))
    if rng.random() < 0.12:
        marker = rng.choice(["Section", "SECTION", "Part"])
        text = "\n".join(f"{marker} {i + 1}\n{line}" for i, line in enumerate(text.split("\n")))
    if rng.random() < 0.1:
        text = text.replace("\n", rng.choice(["\n***\n", "\n\n", " *** "]), rng.randint(1, 3))
    if rng.random() < 0.1:
        text = text + rng.choice(["\nMy answer is yes.", " My answer is no.", "\nmy answer is maybe.",
                                  "\nMy answer is maybe"])
    if rng.random() < 0.1:
        text = rng.choice(["<<A river>>\n", "<<>>\n", "<< x >> ", "<<two\nlines>>\n"]) + text
    if rng.random() < 0.1:
        text = text + rng.choice(["\n******\n", "\n******\n******\n", " ****** "]) + rng.choice(SENTENCES)
    if rng.random() < 0.1:
        text = rng.choice(['"', '"', " \"", "“"]) + text + rng.choice(['"', '"\n', "”"])
    return text


def _with(instruction: str, kwargs_list: list[dict[str, Any]], text: str) -> Iterator[Case]:
    for kwargs in kwargs_list:
        yield instruction, kwargs, text


def _relation_kwargs(count: int, value_key: str, relation_key: str) -> list[dict[str, Any]]:
    return [{value_key: value, relation_key: relation}
            for value in _thresholds(count) for relation in RELATIONS]


def _count_cases(text: str, ref: Reference, rng: random.Random) -> Iterator[Case]:
    yield from _with("length_constraints:number_sentences",
                     _relation_kwargs(ref.count_sentences(text), "num_sentences", "relation"), text)
    yield from _with("length_constraints:number_words",
                     _relation_kwargs(ref.count_words(text), "num_words", "relation"), text)
    capitals = sum(1 for word in ref.word_tokenize(text) if word.isupper())
    yield from _with("change_case:capital_word_frequency",
                     _relation_kwargs(capitals, "capital_frequency", "capital_relation"), text)
    keyword = rng.choice(KEYWORDS)
    occurrences = text.lower().count(keyword)
    yield from _with("keywords:frequency",
                     [{"keyword": keyword, **k} for k in _relation_kwargs(occurrences, "frequency", "relation")], text)
    letter = rng.choice(string.ascii_letters)
    letters = text.lower().count(letter.lower())
    yield from _with("keywords:letter_frequency",
                     [{"letter": letter, **k} for k in _relation_kwargs(letters, "let_frequency", "let_relation")],
                     text)


def _shape_counts(text: str) -> dict[str, int]:
    """Counts that place the thresholds (IFEval's expressions; the verdicts come from IFEval itself)."""
    highlights = [h for h in re.findall(r"\*[^\n\*]*\*", text) if h.strip("*").strip()]
    doubles = [h for h in re.findall(r"\*\*[^\n\*]*\*\*", text) if h.strip("*").strip()]
    return {
        "bullets": len(re.findall(r"^\s*\*[^\*].*$", text, flags=re.MULTILINE))
        + len(re.findall(r"^\s*-.*$", text, flags=re.MULTILINE)),
        "placeholders": len(re.findall(r"\[.*?\]", text)),
        "highlights": len(highlights) + len(doubles),
        "paragraphs": len(re.split(r"\s?\*\*\*\s?", text)),
        "blank_paragraphs": len([p for p in text.split("\n\n") if p.strip()]),
    }


def _shape_cases(text: str, rng: random.Random) -> Iterator[Case]:
    counts = _shape_counts(text)
    yield from _with("detectable_format:number_bullet_lists",
                     [{"num_bullets": n} for n in _thresholds(counts["bullets"])], text)
    yield from _with("detectable_content:number_placeholders",
                     [{"num_placeholders": n} for n in _thresholds(counts["placeholders"])], text)
    yield from _with("detectable_format:number_highlighted_sections",
                     [{"num_highlights": n} for n in _thresholds(counts["highlights"])], text)
    yield from _with("length_constraints:number_paragraphs",
                     [{"num_paragraphs": n} for n in _thresholds(counts["paragraphs"])], text)
    paragraphs = counts["blank_paragraphs"]
    for num in _thresholds(paragraphs):
        for nth in sorted({1, num, rng.randint(1, num)}):
            chunks = text.split("\n\n")
            first = chunks[nth - 1].split()[0].strip("'\"").lower() if nth <= len(chunks) and chunks[nth - 1].split() else "the"
            first = first.split(".")[0].split(",")[0].split("?")[0].split("!")[0]
            for word in sorted({first or "the", "the"}):
                yield ("length_constraints:nth_paragraph_first_word",
                       {"num_paragraphs": num, "nth_paragraph": nth, "first_word": word}, text)
    yield from _with("keywords:existence", [{"keywords": rng.sample(KEYWORDS, 2)}, {"keywords": [rng.choice(KEYWORDS)]}], text)
    yield from _with("keywords:forbidden_words", [{"forbidden_words": rng.sample(KEYWORDS, 2)}], text)
    for instruction in ("detectable_format:constrained_response", "detectable_format:json_format",
                        "detectable_format:title", "combination:two_responses", "change_case:english_capital",
                        "change_case:english_lowercase", "punctuation:no_comma", "startend:quotation"):
        yield instruction, {}, text
    yield "language:response_language", {"language": rng.choice(sorted(FOREIGN))}, text
    marker = next((m for m in ("SECTION", "Section", "Part") if m in text), rng.choice(["Section", "Part"]))
    sections = len(re.split(r"\s?" + marker + r"\s?\d+\s?", text)) - 1
    yield from _with("detectable_format:multiple_sections",
                     [{"section_spliter": marker, "num_sections": n} for n in _thresholds(sections)], text)
    yield "detectable_content:postscript", {"postscript_marker": rng.choice(["P.S.", "P.P.S", "Note"])}, text
    words = text.split()
    yield "combination:repeat_prompt", {"prompt_to_repeat": " ".join(words[: rng.randint(1, 4)]) or "x"}, text
    yield "startend:end_checker", {"end_phrase": " ".join(words[-rng.randint(1, 3):]) or "x"}, text
    yield "startend:end_checker", {"end_phrase": "Any other questions?"}, text


def _special_texts(rng: random.Random) -> Iterator[str]:
    """Responses aimed at the instruction types that need a shape: JSON, titles, two responses, sections..."""
    payload = {"river": "Seine", "bridges": rng.randint(1, 40)}
    yield json.dumps(payload)
    yield "```json\n" + json.dumps(payload, indent=2) + "\n```"
    yield "```JSON\n" + json.dumps(payload) + "\n```"
    yield "Here is JSON:\n" + json.dumps(payload)
    yield "{'river': 'Seine'}"
    yield "<<A Poem of Rivers>>\nThe river flows."
    yield "<< >>\nNo title here."
    yield "<<Broken\ntitle>> text"
    yield "First answer about the river.\n******\nSecond answer about the bridge."
    yield "Same.\n******\nSame."
    yield "One.\n******\n******\nTwo."
    yield "******\nOnly one."
    yield "Section 1\nThe river.\nSection 2\nThe bridge.\nSECTION 3\nThe town."
    yield "Part 1: intro. Part 2: body. Part 3 end"
    yield "My answer is yes."
    yield "Well... My answer is maybe. I think."
    yield "my answer is no."
    yield '"The river runs through the town. It is long."'
    yield '"Unclosed quotation.'
    yield 'He said: "quoted" and left'
    yield "The river runs.\nP.S. I love rivers."
    yield "The river runs.\np. s. lowercase postscript"
    yield "The river runs.\nP.P.S another one"
    yield "Note: rivers are long."
    yield "First paragraph.\n***\nSecond paragraph.\n***\nThird paragraph."
    yield "***\nOnly paragraph.\n***"
    yield "First.\n* * *\nSecond.\n*** ***\nThird."
    yield "Fill in [name] at [address], then [date]."
    yield "Brackets [across\nlines] and [] and [x]."
    yield "First paragraph starts here.\n\nThe second paragraph.\n\n\n\nthird one."
    yield "\n\nLeading blank.\n\nSecond."
    yield "*highlighted section* and **bold section** and *another*."
    yield "** ** and * * and *x*"
    for sentence in FOREIGN.values():
        yield sentence
        yield sentence.upper()
        yield sentence.lower()
    yield "12345 67890"
    yield "THE RIVER RUNS THROUGH THE OLD TOWN AND THE PEOPLE WALK ALONG THE BANKS EVERY DAY."
    yield "the river runs through the old town, and the people walk along the banks every day."


def generate(ref: Reference, seed: int = 33, responses: int = 150) -> list[Case]:
    """The cases: every instruction type at least a few dozen times, thresholds at IFEval's counts."""
    rng = random.Random(seed)
    texts = list(_responses(rng, responses)) + list(_special_texts(rng))
    cases: list[Case] = []
    for text in texts:
        cases.extend(_count_cases(text, ref, rng))
        cases.extend(_shape_cases(text, rng))
    return cases
